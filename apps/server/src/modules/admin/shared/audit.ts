import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import type { Tx, WriteOp, WriteOptions } from '../../../store/index.js';
import { ApiError } from '../../../errors.js';
import { newId } from '../../../domain/ids.js';

// The audit log: one row per admin change, written by the admin scope's write wrapper in the
// very transaction of the change (as Kill Bill's Kaui records who, when and why on every write).
//
// How "no admin change without its audit row" is kept by construction rather than by each route:
// - every mutating admin route declares `config.audit`: what it changes (action, object type,
//   how to find the object and how to read it), or `{ exempt }` with why it changes no business
//   data (sign-in, sign-out, the split preview). A route that declares neither cannot be
//   registered: the app does not start;
// - for a declared route, the admin scope wraps `req.ctx.write`, the one write path a route has:
//   each write reads the object before, runs the change, reads it after and inserts the audit row,
//   all in the same transaction. The row exists if and only if the change committed;
// - when a reason is required (money-moving actions: settlement runs, live activation, activating
//   or changing an active split rule, reordering split rules, setting a payout bank account or the
//   checkout's embed origins), a missing or blank `reason` is a VALIDATION_ERROR and nothing is
//   written;
// - test/admin-backoffice.test.ts walks every registered admin mutating route and checks its row.

const MUTATING = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);
export const MAX_REASON_LENGTH = 500;
const MAX_USER_AGENT_LENGTH = 500;

export interface AuditSpec {
  // `<object type>.<verb>`, e.g. `split_rule.update`.
  action: string;
  objectType: string;
  // The changed object's id: from the request when it names it (an update), else from the
  // route's result (a create).
  objectId: (req: FastifyRequest, result?: unknown) => string | undefined;
  // The object as the audit log shows it, read inside the change's transaction (null: none yet).
  snapshot: (tx: Tx, id: string, req: FastifyRequest) => Promise<object | null>;
  // Whether the request must carry a `reason`; a function sees the object before the change.
  reasonRequired?: boolean | ((req: FastifyRequest, before: object | null) => boolean);
  // Said when the reason is missing.
  reasonHint?: string;
}

export type RouteAudit = AuditSpec | { exempt: string };

declare module 'fastify' {
  interface FastifyContextConfig {
    audit?: RouteAudit;
  }
}

export interface AuditEntryInput {
  actor: { id: string; email: string; role: string };
  action: string;
  objectType: string;
  objectId: string;
  before: object | null;
  after: object | null;
  reason: string | null;
  ip: string;
  userAgent: string | null;
  correlationId: string;
}

export async function insertAuditEntry(tx: Tx, entry: AuditEntryInput, nowMs: number): Promise<string> {
  const id = newId('auditEntry', nowMs);
  await tx.insertInto('admin_audit_log').values({
    id,
    actor_id: entry.actor.id,
    actor_email: entry.actor.email,
    actor_role: entry.actor.role,
    action: entry.action,
    object_type: entry.objectType,
    object_id: entry.objectId,
    before: entry.before === null ? null : JSON.stringify(entry.before),
    after: entry.after === null ? null : JSON.stringify(entry.after),
    reason: entry.reason,
    ip: entry.ip,
    user_agent: entry.userAgent,
    correlation_id: entry.correlationId,
    created_at: new Date(nowMs).toISOString(),
  }).execute();
  return id;
}

// The request's `reason`, trimmed; null when absent or blank.
// (The hook runs for every admin route, so the body is untyped here: checked, not cast.)
export function reasonOf(req: FastifyRequest): string | null {
  const { body } = req;
  if (typeof body !== 'object' || body === null || !('reason' in body) || typeof body.reason !== 'string') return null;
  const reason = body.reason.trim();
  return reason.length > 0 ? reason : null;
}

function missingReason(spec: AuditSpec): ApiError {
  return new ApiError('VALIDATION_ERROR', `reason is required: ${spec.reasonHint ?? 'say why, for the audit log'}.`, { param: 'reason' });
}

// Both halves of the construction: registration refuses an undeclared mutating route, and a
// preHandler (after the idempotency plugin's, which made req.ctx) wraps each declared route's
// writes.
export function auditAdminWrites(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => MUTATING.has(m))) return;
    const audit = route.config?.audit;
    if (audit && ('exempt' in audit ? audit.exempt.length > 0 : typeof audit.snapshot === 'function')) return;
    throw new Error(`admin route ${methods.join(',')} ${route.url} changes data: it must declare config.audit (what it changes) or config.audit.exempt (why it changes nothing an operator manages)`);
  });

  scope.addHook('preHandler', async (req: FastifyRequest) => {
    const spec = req.routeOptions.config?.audit;
    if (!spec || 'exempt' in spec || !MUTATING.has(req.method) || !req.admin || !req.ctx) return;
    const actor = req.admin;
    const reason = reasonOf(req);
    if (spec.reasonRequired === true && reason === null) throw missingReason(spec);
    const write = req.ctx.write;
    req.ctx.write = <T>(op: WriteOp<T>, options?: WriteOptions): Promise<T> => write(async (tx) => {
      const knownId = spec.objectId(req);
      const before = knownId === undefined ? null : await spec.snapshot(tx, knownId, req);
      if (typeof spec.reasonRequired === 'function' && reason === null && spec.reasonRequired(req, before)) throw missingReason(spec);
      const result = await op(tx);
      const objectId = knownId ?? spec.objectId(req, result);
      if (objectId === undefined) throw new Error(`audit: ${spec.action} gave no object id`);
      const after = await spec.snapshot(tx, objectId, req);
      const userAgent = req.headers['user-agent'];
      await insertAuditEntry(tx, {
        actor,
        action: spec.action,
        objectType: spec.objectType,
        objectId,
        before,
        after,
        reason,
        ip: req.ip,
        userAgent: typeof userAgent === 'string' ? userAgent.slice(0, MAX_USER_AGENT_LENGTH) : null,
        correlationId: req.id,
      }, req.ctx.clock.nowMs());
      return result;
    }, options);
  });
}


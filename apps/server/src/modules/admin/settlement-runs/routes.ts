import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Tx } from '../../../store/index.js';
import { ListQueryBase, listOf, ref, stringEnum } from '../../../http/common.js';
import { notFound } from '../../../errors.js';
import { paginate } from '../../../http/pagination.js';
import { AdminMutationHeaders, requiredReason } from '../split-rules/schemas.js';
import type { AuditSpec } from '../shared/audit.js';
import { Settlement } from '../../settlements/schemas.js';
import { SETTLEMENT_STATUSES } from '../../../domain/states.js';
import { createRun, getRun, JOB_RUN, listRuns, toRun, toSettlement, type SettlementRow } from '../../settlements/service.js';
import { enqueue } from '../../../jobs/queue.js';
import type { Store } from '../../../store/index.js';

const tags = ['Admin'];
const security = [{ adminSession: [] }];

export const SettlementRunRequest = Type.Object(
  {
    date: Type.Optional(Type.String({ format: 'date', description: 'Settle what is available on or before this date (default: today in São Paulo).' })),
    reason: requiredReason,
  },
  { $id: 'SettlementRunRequest', additionalProperties: false, examples: [{ reason: 'Daily run missed after the outage of 2026-11-20' }] },
);
type SettlementRunRequest = Static<typeof SettlementRunRequest>;

// A settlement with the merchant account it belongs to: a run spans every account.
export const AdminSettlement = Type.Object(
  { ...Settlement.properties, accountId: Type.String({ description: 'The merchant account (`acct_`).' }) },
  { $id: 'AdminSettlement', additionalProperties: false, description: 'A settlement of a run, with its merchant account.' },
);
export type AdminSettlement = Static<typeof AdminSettlement>;
export const AdminSettlementList = listOf('AdminSettlement', 'AdminSettlementList');

export const ListRunSettlementsQuery = Type.Object(
  {
    limit: ListQueryBase.limit,
    startingAfter: ListQueryBase.startingAfter,
    endingBefore: ListQueryBase.endingBefore,
    status: Type.Optional(stringEnum(SETTLEMENT_STATUSES, { description: '`failed`: the payouts the bank refused (their receivables went back to pending); `held`: merchant settlements waiting for the account\'s payout bank account.' })),
  },
  { additionalProperties: false },
);
type ListRunSettlementsQuery = Static<typeof ListRunSettlementsQuery>;

export const settlementRunSchemas = [SettlementRunRequest, AdminSettlement, AdminSettlementList];

const toAdminSettlement = (row: SettlementRow): AdminSettlement => ({ ...toSettlement(row), accountId: row.account_id });

async function runSnapshot(tx: Tx, id: string) {
  const row = await tx.selectFrom('settlement_runs').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toRun(row) : null;
}

const runAudit = {
  action: 'settlement_run.create', objectType: 'settlement_run', snapshot: runSnapshot,
  objectId: (_req, result) => (result as { id?: string } | undefined)?.id,
  reasonRequired: true, reasonHint: 'a settlement run pays money out',
} satisfies AuditSpec;

// Registered inside the admin scope, behind its session and CSRF guard.
export function settlementRunRoutes(app: FastifyInstance, deps: { store: Store; kickWorker: () => void }): void {
  app.post<{ Body: SettlementRunRequest }>('/admin/settlement-runs', {
    config: { permission: 'settlement_runs:create', audit: runAudit },
    schema: {
      operationId: 'adminRunSettlement', tags, security, summary: 'Run settlement now',
      description: 'Starts a run and answers with it, `pending`: a worker carries it out in the background (poll `GET /admin/settlement-runs/{id}` until `completed`). It settles every pending receivable available on or before `date` (default: today in São Paulo): one settlement per payee. Needs a `reason` (VALIDATION_ERROR without one), kept in the audit log with the run. With an `Idempotency-Key`, a retry answers the same run and starts nothing; without one, a second run finds nothing left to settle twice.',
      headers: AdminMutationHeaders,
      body: ref('SettlementRunRequest'),
      response: { 200: ref('SettlementRun') },
    },
  }, async (req) => {
    // The run, the job that carries it out and the audit entry commit with the Idempotency-Key
    // (the run itself can take minutes and many transactions: it is background work, as a row).
    const run = await req.ctx.write(async (tx) => {
      const created = await createRun(tx, { date: req.body.date, trigger: 'admin' });
      await enqueue(tx, JOB_RUN, { runId: created.id });
      return toRun(created);
    });
    deps.kickWorker();
    return run;
  });

  app.get<{ Querystring: { limit?: number; startingAfter?: string; endingBefore?: string } }>('/admin/settlement-runs', {
    config: { permission: 'settlement_runs:view' },
    schema: {
      operationId: 'adminListSettlementRuns', tags, security, summary: 'List settlement runs', description: 'Every run, scheduled or triggered, newest first, with what it settled.',
      querystring: Type.Object({ limit: ListQueryBase.limit, startingAfter: ListQueryBase.startingAfter, endingBefore: ListQueryBase.endingBefore }, { additionalProperties: false }),
      response: { 200: ref('SettlementRunList') },
    },
  }, (req) => listRuns(deps.store, req.query));

  app.get<{ Params: { id: string } }>('/admin/settlement-runs/:id', {
    config: { permission: 'settlement_runs:view' },
    schema: {
      operationId: 'adminGetSettlementRun', tags, security, summary: 'Fetch a settlement run', description: 'One run: its date, trigger and totals.',
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
      response: { 200: ref('SettlementRun') },
    },
  }, (req) => getRun(deps.store, req.params.id));

  app.get<{ Params: { id: string }; Querystring: ListRunSettlementsQuery }>('/admin/settlement-runs/:id/settlements', {
    config: { permission: 'settlement_runs:view' },
    schema: {
      operationId: 'adminListSettlementRunSettlements', tags, security, summary: 'List the settlements of a run',
      description: 'The settlements a run made, one per payee, across every account, newest first: amount, receivable count, status, the bank account snapshot and, for a failed payout, why. `status=failed` lists the failed payouts.',
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
      querystring: ListRunSettlementsQuery,
      response: { 200: ref('AdminSettlementList') },
    },
  }, async (req) => {
    const run = await deps.store.db.selectFrom('settlement_runs').select('id').where('id', '=', req.params.id).executeTakeFirst();
    if (!run) throw notFound('settlement run', 'id');
    const scope = deps.store.db.selectFrom('settlements').selectAll().where('run_id', '=', req.params.id);
    let qb = scope;
    if (req.query.status) qb = qb.where('status', '=', req.query.status);
    return paginate(qb, req.query, toAdminSettlement, scope);
  });
}

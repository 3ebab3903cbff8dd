import type { Selectable } from 'kysely';
import type { Store } from '../../../store/index.js';
import type { AdminAuditLogTable } from '../../../store/schema.js';
import { paginate, type Page } from '../../../http/pagination.js';
import type { AuditEntry, ListAuditLogQuery } from './schemas.js';

function parseSnapshot(json: string | null): Record<string, unknown> | null {
  return json === null ? null : (JSON.parse(json) as Record<string, unknown>);
}

export function toAuditEntry(row: Selectable<AdminAuditLogTable>): AuditEntry {
  const before = parseSnapshot(row.before);
  const after = parseSnapshot(row.after);
  const mode = (after ?? before)?.livemode;
  return {
    id: row.id,
    object: 'audit_entry',
    livemode: mode === true,
    actor: { email: row.actor_email, role: row.actor_role },
    action: row.action,
    objectType: row.object_type,
    objectId: row.object_id,
    before,
    after,
    reason: row.reason,
    ip: row.ip,
    userAgent: row.user_agent,
    correlationId: row.correlation_id,
    createdAt: row.created_at,
  };
}

export async function listAuditLog(store: Store, query: ListAuditLogQuery): Promise<Page<AuditEntry>> {
  const scope = store.db.selectFrom('admin_audit_log').selectAll();
  let qb = scope;
  if (query.action !== undefined) qb = qb.where('action', '=', query.action);
  if (query.objectType !== undefined) qb = qb.where('object_type', '=', query.objectType);
  if (query.objectId !== undefined) qb = qb.where('object_id', '=', query.objectId);
  if (query.actorEmail !== undefined) qb = qb.where('actor_email', '=', query.actorEmail.trim().toLowerCase());
  return paginate(qb, query, toAuditEntry, scope);
}


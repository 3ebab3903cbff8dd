import type { Selectable } from 'kysely';
import type { Store } from '../../../store/index.js';
import type { AdminAuditLogTable } from '../../../store/schema.js';
import { paginate, type Page } from '../../../http/pagination.js';
import type { AuditEntry, ListAuditLogQuery } from './schemas.js';
import { accountNames } from '../shared/names.js';

function parseSnapshot(json: string | null): Record<string, unknown> | null {
  return json === null ? null : (JSON.parse(json) as Record<string, unknown>);
}

export function toAuditEntry(row: Selectable<AdminAuditLogTable>): Omit<AuditEntry, 'accountName'> {
  const before = parseSnapshot(row.before);
  const after = parseSnapshot(row.after);
  const mode = (after ?? before)?.livemode;
  // Whose object: the account itself, or the account its snapshot names (a rule, a recipient...).
  const owner = (after ?? before)?.accountId;
  const accountId = row.object_type === 'account' ? row.object_id : typeof owner === 'string' ? owner : null;
  return {
    id: row.id,
    object: 'audit_entry',
    livemode: mode === true,
    actor: { email: row.actor_email, role: row.actor_role },
    action: row.action,
    objectType: row.object_type,
    objectId: row.object_id,
    accountId,
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
  const page = await paginate(qb, query, toAuditEntry, scope);
  const names = await accountNames(store.db, page.data.flatMap((e) => (e.accountId ? [e.accountId] : [])));
  return { ...page, data: page.data.map((e) => ({ ...e, accountName: e.accountId ? (names.get(e.accountId) ?? null) : null })) };
}


import type { Store, Tx } from '../../../store/index.js';
import { notFound } from '../../../errors.js';
import { paginate, type Page } from '../../../http/pagination.js';
import { toRun, toSettlement, type SettlementRow } from '../../settlements/service.js';
import type { AuditSpec } from '../shared/audit.js';
import type { AdminSettlement, ListRunSettlementsQuery } from './schemas.js';

const toAdminSettlement = (row: SettlementRow): AdminSettlement => ({ ...toSettlement(row), accountId: row.account_id });

async function runSnapshot(tx: Tx, id: string) {
  const row = await tx.selectFrom('settlement_runs').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toRun(row) : null;
}

export const runAudit = {
  action: 'settlement_run.create', objectType: 'settlement_run', snapshot: runSnapshot,
  objectId: (_req, result) => (result as { id?: string } | undefined)?.id,
  reasonRequired: true, reasonHint: 'a settlement run pays money out',
} satisfies AuditSpec;


// The settlements a run made, across every account; 404 for an unknown run.
export async function listRunSettlements(store: Store, runId: string, query: ListRunSettlementsQuery): Promise<Page<AdminSettlement>> {
  const run = await store.db.selectFrom('settlement_runs').select('id').where('id', '=', runId).executeTakeFirst();
  if (!run) throw notFound('settlement run', 'id');
  const scope = store.db.selectFrom('settlements').selectAll().where('run_id', '=', runId);
  let qb = scope;
  if (query.status) qb = qb.where('status', '=', query.status);
  return paginate(qb, query, toAdminSettlement, scope);
}

import type { Store, Tx } from '../../../store/index.js';
import type { RequestContext } from '../../../plugins/idempotency.js';
import { enqueue } from '../../../jobs/queue.js';
import { ApiError, notFound } from '../../../errors.js';
import { localDate } from '../../accounts/settings.js';
import { paginate, type Page } from '../../../http/pagination.js';
import { createRun, JOB_RUN, toRun, toSettlement, type SettlementRow } from '../../settlements/service.js';
import type { AuditSpec } from '../shared/audit.js';
import { namedPage } from '../shared/names.js';
import type { AdminSettlement, ListRunSettlementsQuery, SettlementRunRequest } from './schemas.js';
import type { SettlementRun } from '../../settlements/schemas.js';

const toAdminSettlement = (row: SettlementRow) => ({ ...toSettlement(row), accountId: row.account_id });

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
  return namedPage(store.db, await paginate(qb, query, toAdminSettlement, scope));
}

// POST /admin/settlement-runs: the run, the job that carries it out and the audit entry commit
// with the Idempotency-Key (the run itself can take minutes and many transactions: it is
// background work, as a row).
export async function startRun(ctx: RequestContext, body: SettlementRunRequest, kickWorker: () => void): Promise<SettlementRun> {
  // A run settles what is available on or before its date: a date after today would pay out
  // receivables before their money is available (a card sale's D+30). Refused outright; there
  // is no early payout (docs/split-and-settlement.md).
  const nowMs = ctx.clock.nowMs();
  const today = localDate(nowMs);
  if (body.date !== undefined && body.date > today) {
    throw new ApiError('VALIDATION_ERROR', `date must be today (${today} in São Paulo) or earlier: a run settles only receivables already available, and nothing is paid early.`, { param: 'date' });
  }
  const run = await ctx.write(async (tx) => {
    const created = await createRun(tx, { nowMs, date: body.date, trigger: 'admin' });
    await enqueue(tx, nowMs, JOB_RUN, { runId: created.id });
    return toRun(created);
  });
  kickWorker();
  return run;
}

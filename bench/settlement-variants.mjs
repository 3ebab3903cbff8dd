// Candidate changes to runSettlement/settlePayee (apps/server/src/modules/settlements/service.ts)
// and to the receivables_due index, measured by bench/settlement-run.mjs with
// BENCH_SETTLEMENT_VARIANT=<name> (BENCH_SCENARIOS=settlement node bench/settlement.mjs).
// These are COPIES for measurement; the server's code is not changed by them.
//
//   original     the server's own runSettlement (imported, not copied)
//   copy         a verbatim copy of it (checks that the copy measures the same)
//   returning    the UPDATE takes the receivables with RETURNING amount: the follow-up
//                SELECT sum/count by settlement_id and the re-read of the settlement row go
//                (same transaction, same guarded UPDATE, same result)
//   lanes        `returning`, and payees settle in 8 lanes (each awaiting its own write)
//                instead of windows of 64 enqueued at once: on PostgreSQL the window's 64
//                writes otherwise land in ONE group-commit batch, i.e. one connection, serially,
//                while the store has 8 writer connections
//   partial      `returning` + receivables_due replaced by a partial index on the pending
//                receivables only: (account_id, livemode, payee_type, payee_id, available_on)
//                WHERE status = 'pending' (status compared to a literal, so SQLite can use it)
//   partial-lanes  both
//
// Each variant may have a `setup(store)` (schema change), run before the timed call.
//
// Note for `partial` on SQLite: the partial index is only chosen when the query says
// status = 'pending' as a LITERAL; with a bound parameter (Kysely's default) SQLite cannot prove
// the index predicate and falls back to receivables_list (account_id, livemode): a scan of the
// account's every receivable per payee. Hence sql.lit('pending') below.
//
// Measured on the 2-core dev machine, 1,000,000 receivables / 1,000 payees, alternating runs at a
// load average of ~1.5-3 (seconds of the one runSettlement call):
//   SQLite      original 20.02 / 20.06 / 19.93      partial 17.81 / 18.31 / 16.74   (-12 %)
//   PostgreSQL  original 44.98 / 44.99 / 43.66      partial 41.81 / 44.18 / 40.13   (-6 %)
//   PostgreSQL  lanes 40.36 / 42.43 vs original 61.37 / 43.90 (noisy); SQLite lanes is slower
//   (127 commits instead of 18: COMMIT time 3 s -> 10-12 s).
// UPDATE receivables is 85-92 % of the run on both engines (1,000 statements, 1,000 rows each,
// every row a non-HOT update on PostgreSQL: status and settlement_id are both indexed).
import { sql } from 'kysely';
import { newId } from '../apps/server/src/domain/ids.ts';
import { localDate } from '../apps/server/src/modules/accounts/settings.ts';
import { recordEvent } from '../apps/server/src/modules/events/service.ts';
import { enqueue } from '../apps/server/src/jobs/queue.ts';
import { toRun, toSettlement, runSettlement, JOB_PAYOUT } from '../apps/server/src/modules/settlements/service.ts';

class NothingToSettle extends Error {}

function makeRun({ returning, lanes, literalStatus }) {
  const pendingWhere = (qb) => (literalStatus ? qb.where('status', '=', sql.lit('pending')) : qb.where('status', '=', 'pending'));

  async function settlePayee(store, runId, runDate, g) {
    return store.write(async (tx) => {
      const nowMs = Date.now();
      const nowIso = new Date(nowMs).toISOString();
      const id = newId('settlement', nowMs);
      let bankAccount = null;
      if (g.payee_type === 'recipient') {
        const r = await tx.selectFrom('recipients').select(['bank_code', 'agency', 'account', 'account_type']).where('id', '=', g.payee_id).executeTakeFirst();
        if (r) bankAccount = JSON.stringify({ bankCode: r.bank_code, agency: r.agency, account: r.account, accountType: r.account_type });
      }
      const row = {
        id, account_id: g.account_id, livemode: g.livemode, run_id: runId, payee_type: g.payee_type, payee_id: g.payee_id,
        amount: 0, receivable_count: 0, status: 'pending', bank_account: bankAccount, settlement_date: runDate, paid_at: null,
        failure_reason: null, created_at: nowIso, updated_at: nowIso,
      };
      await tx.insertInto('settlements').values(row).execute();
      const update = pendingWhere(tx.updateTable('receivables').set({ status: 'settled', settlement_id: id, updated_at: nowIso }))
        .where('available_on', '<=', runDate)
        .where('account_id', '=', g.account_id).where('livemode', '=', g.livemode)
        .where('payee_type', '=', g.payee_type).where('payee_id', '=', g.payee_id);
      let amount;
      let count;
      if (returning) {
        const taken = await update.returning('amount').execute();
        amount = taken.reduce((s, r) => s + Number(r.amount), 0);
        count = taken.length;
      } else {
        await update.execute();
        const taken = await tx.selectFrom('receivables').select([(eb) => eb.fn.sum('amount').as('amount'), (eb) => eb.fn.countAll().as('n')])
          .where('settlement_id', '=', id).executeTakeFirstOrThrow();
        amount = Number(taken.amount ?? 0);
        count = Number(taken.n);
      }
      if (count === 0 || amount <= 0) throw new NothingToSettle();
      await tx.updateTable('settlements').set({ amount, receivable_count: count }).where('id', '=', id).execute();
      const settled = returning ? { ...row, amount, receivable_count: count } : await tx.selectFrom('settlements').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      await recordEvent(tx, { accountId: g.account_id, livemode: g.livemode === 1 }, 'settlement.created', toSettlement(settled), nowMs);
      await enqueue(tx, JOB_PAYOUT, { settlementId: id }, nowMs);
      return { amount, receivableCount: count };
    });
  }

  return async function run(deps, options) {
    const { store } = deps;
    const runDate = options.date ?? localDate();
    const runId = newId('settlementRun');
    const startedAt = new Date().toISOString();
    await store.write((tx) => tx.insertInto('settlement_runs').values({
      id: runId, run_date: runDate, status: 'running', trigger: options.trigger, settlement_count: 0, receivable_count: 0, total_amount: 0, started_at: startedAt, finished_at: null,
    }).execute());
    const groups = await pendingWhere(store.db.selectFrom('receivables')
      .select(['account_id', 'livemode', 'payee_type', 'payee_id', (eb) => eb.fn.sum('amount').as('total')]))
      .where('available_on', '<=', runDate)
      .groupBy(['account_id', 'livemode', 'payee_type', 'payee_id'])
      .execute();
    let settlementCount = 0;
    let receivableCount = 0;
    let totalAmount = 0;
    const take = (r) => {
      if (r.status === 'fulfilled') {
        settlementCount++;
        receivableCount += r.value.receivableCount;
        totalAmount += r.value.amount;
      } else if (!(r.reason instanceof NothingToSettle)) {
        throw r.reason;
      }
    };
    const due = groups.filter((g) => Number(g.total) > 0);
    if (lanes) {
      let next = 0;
      const lane = async () => {
        while (next < due.length) {
          const g = due[next++];
          take(await settlePayee(store, runId, runDate, g).then((value) => ({ status: 'fulfilled', value }), (reason) => ({ status: 'rejected', reason })));
        }
      };
      await Promise.all(Array.from({ length: lanes }, lane));
    } else {
      const windowSize = 64;
      for (let i = 0; i < due.length; i += windowSize) {
        const results = await Promise.allSettled(due.slice(i, i + windowSize).map((g) => settlePayee(store, runId, runDate, g)));
        results.forEach(take);
      }
    }
    const finished = await store.write(async (tx) => {
      await tx.updateTable('settlement_runs').set({
        status: 'completed', settlement_count: settlementCount, receivable_count: receivableCount, total_amount: totalAmount, finished_at: new Date().toISOString(),
      }).where('id', '=', runId).execute();
      return tx.selectFrom('settlement_runs').selectAll().where('id', '=', runId).executeTakeFirstOrThrow();
    });
    return toRun(finished);
  };
}

// receivables_due -> partial index over the pending receivables only (what a new migration would do).
async function partialIndex(store) {
  await store.write(async (tx) => {
    await sql`drop index receivables_due`.execute(tx);
    await sql`create index receivables_due on receivables (account_id, livemode, payee_type, payee_id, available_on) where status = 'pending'`.execute(tx);
  });
  if (store.engine === 'postgres') await sql`analyze receivables`.execute(store.db);
}

export const variants = {
  original: runSettlement,
  copy: makeRun({}),
  returning: makeRun({ returning: true }),
  lanes: makeRun({ returning: true, lanes: 8 }),
  partial: Object.assign(makeRun({ returning: true, literalStatus: true }), { setup: partialIndex }),
  'partial-lanes': Object.assign(makeRun({ returning: true, literalStatus: true, lanes: 8 }), { setup: partialIndex }),
};

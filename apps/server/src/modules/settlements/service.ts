import { createHash } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import type { Store, Tx } from '../../store/index.js';
import type { SettlementRunsTable, SettlementsTable } from '../../store/schema.js';
import { newId } from '../../domain/ids.js';
import { notFound } from '../../errors.js';
import { paginate } from '../../http/pagination.js';
import { localDate } from '../accounts/settings.js';
import { recordEvent, type Owner } from '../events/service.js';
import { enqueue, complete, reschedule, type JobRow } from '../../jobs/queue.js';
import { readPayload, type JobType } from '../../jobs/payloads.js';
import { ProviderRejected, ProviderUnavailable, type PaymentProvider } from '../../providers/port.js';
import { HOLD_NO_PAYOUT_BANK_ACCOUNT, type ListSettlementsQuery, type Settlement, type SettlementRun } from './schemas.js';
import { settlementMove, settlementRunMove } from '../../domain/states.js';
import type { BankAccount } from '../../domain/bank-account.js';
import { nowIso } from '../../clock.js';
import type { ConnectorRegistry } from '../../providers/registry.js';
import { maskPixKey, type PixKey } from '../../domain/pix-key.js';
import { pixPayoutJob, type PixPayoutDeps } from './pix-payouts.js';

export const JOB_PAYOUT = 'settlement.payout' satisfies JobType;
export const JOB_DAILY_RUN = 'settlement.daily' satisfies JobType;
export const JOB_RUN = 'settlement.run' satisfies JobType;

export type SettlementRow = Selectable<SettlementsTable>;

export function toSettlement(row: SettlementRow): Settlement {
  return {
    id: row.id,
    object: 'settlement',
    payee: { type: row.payee_type, id: row.payee_id },
    amount: row.amount,
    receivableCount: row.receivable_count,
    status: row.status,
    holdReason: row.hold_reason === HOLD_NO_PAYOUT_BANK_ACCOUNT ? HOLD_NO_PAYOUT_BANK_ACCOUNT : null,
    bankAccount: row.bank_account ? JSON.parse(row.bank_account) : null,
    pixKey: row.pix_key ? maskedKey(row.pix_key) : null,
    settlementDate: row.settlement_date,
    paidAt: row.paid_at,
    failureReason: row.failure_reason,
    failureCode: row.failure_code,
    payout: row.payout_id ? {
      method: 'pix' as const,
      reference: row.payout_id,
      destination: row.payout_destination ?? '',
      endToEndId: row.payout_e2eid,
      sentAt: row.payout_sent_at,
    } : null,
    createdAt: row.created_at,
    livemode: row.livemode === 1,
  };
}

function maskedKey(json: string): { type: PixKey['type']; key: string } {
  const k = JSON.parse(json) as PixKey;
  return { type: k.type, key: maskPixKey(k) };
}

export function toRun(row: Selectable<SettlementRunsTable>): SettlementRun {
  return {
    id: row.id,
    object: 'settlement_run',
    runDate: row.run_date,
    status: row.status,
    trigger: row.trigger,
    settlementCount: row.settlement_count,
    receivableCount: row.receivable_count,
    totalAmount: row.total_amount,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    livemode: false,
  };
}

export interface SettlementDeps {
  store: Store;
  provider: PaymentProvider;
  // Payouts by Pix at a PSP (issue 26); without them every payout goes through `provider`.
  connectors?: ConnectorRegistry;
  config?: PixPayoutDeps['config'];
}

class NothingToSettle extends Error {}

type RunRow = Selectable<SettlementRunsTable>;

// A run as a row: `pending` until a worker starts it. Written by POST /admin/settlement-runs in
// its idempotent write, with the job that carries it out (settlementRunJob).
// `nowMs` from the caller's Clock; the run's date is São Paulo's today then, unless given.
export async function createRun(tx: Tx, options: { nowMs: number; date?: string; trigger: 'schedule' | 'admin'; status?: 'pending' | 'running' }): Promise<RunRow> {
  const row: RunRow = {
    id: newId('settlementRun', options.nowMs), run_date: options.date ?? localDate(options.nowMs), status: options.status ?? 'pending', trigger: options.trigger,
    settlement_count: 0, receivable_count: 0, total_amount: 0, started_at: new Date(options.nowMs).toISOString(), finished_at: null,
  };
  await tx.insertInto('settlement_runs').values(row).execute();
  return row;
}

// Creates a run and carries it out here and now (the daily schedule, the bench, tests).
export async function runSettlement(deps: SettlementDeps, options: { date?: string; trigger: 'schedule' | 'admin' }): Promise<SettlementRun> {
  const run = await deps.store.write((tx) => createRun(tx, { ...options, nowMs: deps.store.clock.nowMs(), status: 'running' }));
  return executeRun(deps, run);
}

// The worker's side of POST /admin/settlement-runs. Safe to run again after a crash or a lost
// lease: what was settled stays settled, the rest is taken now, and the totals are counted from
// the run's settlements, not from this attempt.
export async function settlementRunJob(deps: SettlementDeps, job: JobRow, workerId: string): Promise<void> {
  const { runId } = readPayload(job, JOB_RUN);
  const run = await deps.store.db.selectFrom('settlement_runs').selectAll().where('id', '=', runId).executeTakeFirst();
  if (!run || run.status === 'completed') {
    await deps.store.write((tx) => complete(tx, job, workerId));
    return;
  }
  const startedAt = nowIso(deps.store.clock);
  // A run already `running` is one a lost lease left half done: it carries on from there.
  const start = settlementRunMove('pending', 'running');
  await deps.store.write((tx) => tx.updateTable('settlement_runs').set({ status: start.to, started_at: startedAt }).where('id', '=', runId).where('status', '=', start.from).execute());
  await executeRun(deps, run, (tx) => complete(tx, job, workerId));
}

// Settles everything due on the run's date: one settlement per payee, each written in its own
// (group-committed) transaction with its receivables, its event and its payout job. A
// receivable joins a settlement through a guarded UPDATE (status = 'pending'), and the table's
// check ties `settled` to exactly one settlement_id: a second run, or a second worker at the
// same time, finds nothing left to take. `finish` joins the run's last transaction.
async function executeRun(deps: SettlementDeps, run: RunRow, finish?: (tx: Tx) => Promise<unknown>): Promise<SettlementRun> {
  const { store } = deps;
  const { id: runId, run_date: runDate } = run;

  // `status = 'pending'` as a literal: SQLite only uses the partial index receivables_due when
  // the query repeats its condition verbatim (a bound parameter does not match it).
  const groups = await store.db.selectFrom('receivables')
    .select(['account_id', 'livemode', 'payee_type', 'payee_id', (eb) => eb.fn.sum<number>('amount').as('total')])
    .where('status', '=', sql.lit('pending')).where('available_on', '<=', runDate)
    .groupBy(['account_id', 'livemode', 'payee_type', 'payee_id'])
    .execute();

  // Bounded fan-out: the writes are group-committed, so a window of payees shares commits
  // without queueing every payee's work at once.
  const windowSize = 64;
  for (let i = 0; i < groups.length; i += windowSize) {
    const window = groups.slice(i, i + windowSize).filter((g) => Number(g.total) > 0);
    const results = await Promise.allSettled(window.map((g) => settlePayee(store, runId, runDate, g)));
    for (const r of results) {
      if (r.status === 'rejected' && !(r.reason instanceof NothingToSettle)) throw r.reason;
    }
  }

  const finished = await store.write(async (tx) => {
    // Counted from the run's settlements: right however many attempts it took.
    const totals = await tx.selectFrom('settlements')
      .select([(eb) => eb.fn.countAll<number>().as('settlements'), (eb) => eb.fn.sum<number>('receivable_count').as('receivables'), (eb) => eb.fn.sum<number>('amount').as('amount')])
      .where('run_id', '=', runId).executeTakeFirstOrThrow();
    // Guarded: a second worker on the same run (a lost lease) finds it completed and leaves it.
    const end = settlementRunMove('running', 'completed');
    await tx.updateTable('settlement_runs').set({
      status: end.to, settlement_count: Number(totals.settlements), receivable_count: Number(totals.receivables ?? 0), total_amount: Number(totals.amount ?? 0), finished_at: nowIso(store.clock),
    }).where('id', '=', runId).where('status', '=', end.from).execute();
    if (finish) await finish(tx);
    return tx.selectFrom('settlement_runs').selectAll().where('id', '=', runId).executeTakeFirstOrThrow();
  });
  return toRun(finished);
}

async function settlePayee(
  store: Store,
  runId: string,
  runDate: string,
  g: { account_id: string; livemode: number; payee_type: 'merchant' | 'recipient'; payee_id: string },
): Promise<{ amount: number; receivableCount: number }> {
  return store.write(async (tx) => {
    const nowMs = store.clock.nowMs();
    const nowIso = new Date(nowMs).toISOString();
    const id = newId('settlement', nowMs);
    // Where it will be paid, as it is now: the recipient's bank account, or the merchant
    // account's payout bank account. A merchant without one has its settlement held until an
    // admin sets it (releaseHeldSettlements).
    let bankAccount: string | null = null;
    // And the payee's Pix key, preferred by payouts by Pix (issue 26).
    let pixKey: string | null = null;
    if (g.payee_type === 'recipient') {
      const r = await tx.selectFrom('recipients').select(['bank_code', 'agency', 'account', 'account_type', 'pix_key_type', 'pix_key']).where('id', '=', g.payee_id).executeTakeFirst();
      if (r) bankAccount = JSON.stringify({ bankCode: r.bank_code, agency: r.agency, account: r.account, accountType: r.account_type });
      if (r?.pix_key && r.pix_key_type) pixKey = JSON.stringify({ type: r.pix_key_type, key: r.pix_key });
    } else {
      const a = await tx.selectFrom('accounts').select(['payout_bank_account', 'payout_pix_key']).where('id', '=', g.account_id).executeTakeFirst();
      bankAccount = a?.payout_bank_account ?? null;
      pixKey = a?.payout_pix_key ?? null;
    }
    const held = g.payee_type === 'merchant' && bankAccount === null;
    const status = held ? 'held' as const : 'pending' as const;
    const holdReason = held ? HOLD_NO_PAYOUT_BANK_ACCOUNT : null;
    await tx.insertInto('settlements').values({
      id, account_id: g.account_id, livemode: g.livemode, run_id: runId, payee_type: g.payee_type, payee_id: g.payee_id,
      amount: 0, receivable_count: 0, status, bank_account: bankAccount, pix_key: pixKey, hold_reason: holdReason, settlement_date: runDate, paid_at: null,
      failure_reason: null, created_at: nowIso, updated_at: nowIso,
    }).execute();
    // PostgreSQL: the payee's due receivables are locked in id order before the UPDATE takes
    // them, the order a refund locks a sale's receivables in (modules/refunds/service.ts), so a
    // refund and a run, or two runs, wait on each other at most one way round, never in a cycle.
    // A receivable another transaction moved meanwhile no longer matches and is left out.
    if (store.engine === 'postgres') {
      await tx.selectFrom('receivables').select('id')
        .where('status', '=', sql.lit('pending')).where('available_on', '<=', runDate)
        .where('account_id', '=', g.account_id).where('livemode', '=', g.livemode)
        .where('payee_type', '=', g.payee_type).where('payee_id', '=', g.payee_id)
        .orderBy('id').forUpdate().execute();
    }
    // Summed from what this UPDATE actually took (RETURNING), not from the earlier read: a
    // concurrent run may have taken some of them first.
    const taken = await tx.updateTable('receivables').set({ status: 'settled', settlement_id: id, updated_at: nowIso })
      .where('status', '=', sql.lit('pending')).where('available_on', '<=', runDate)
      .where('account_id', '=', g.account_id).where('livemode', '=', g.livemode)
      .where('payee_type', '=', g.payee_type).where('payee_id', '=', g.payee_id)
      .returning('amount')
      .execute();
    const amount = taken.reduce((sum, r) => sum + Number(r.amount), 0);
    const count = taken.length;
    // Nothing, or refunds outweighing sales: leave it all pending for a later run (rolls back).
    if (count === 0 || amount <= 0) throw new NothingToSettle();
    await tx.updateTable('settlements').set({ amount, receivable_count: count }).where('id', '=', id).execute();
    const row: SettlementRow = {
      id, account_id: g.account_id, livemode: g.livemode, run_id: runId, payee_type: g.payee_type, payee_id: g.payee_id,
      amount, receivable_count: count, status, bank_account: bankAccount, pix_key: pixKey, hold_reason: holdReason, settlement_date: runDate, paid_at: null,
      failure_reason: null, failure_code: null, payout_connector_account_id: null, payout_id: null, payout_destination: null, payout_e2eid: null,
      payout_sent_at: null, payout_slot_ms: null, created_at: nowIso, updated_at: nowIso,
    };
    await recordEvent(tx, { accountId: g.account_id, livemode: g.livemode === 1 }, 'settlement.created', toSettlement(row), nowMs);
    if (!held) await enqueue(tx, nowMs, JOB_PAYOUT, { settlementId: id });
    return { amount, receivableCount: count };
  });
}

// The merchant account got its payout bank account: each of its held settlements (both modes)
// takes a snapshot of it and goes to payout, in the transaction that set it (its event and its
// payout job with it). Returns how many were released.
export async function releaseHeldSettlements(tx: Tx, accountId: string, bankAccount: BankAccount, nowMs: number, pixKey: string | null = null): Promise<number> {
  const move = settlementMove('held', 'pending');
  // The literal repeats the partial index settlements_held's condition (SQLite uses it only then).
  const held = await tx.selectFrom('settlements').selectAll()
    .where('account_id', '=', accountId).where('payee_type', '=', 'merchant').where('status', '=', sql.lit(move.from))
    .orderBy('id').execute();
  const nowIso = new Date(nowMs).toISOString();
  const snapshot = JSON.stringify({ bankCode: bankAccount.bankCode, agency: bankAccount.agency, account: bankAccount.account, accountType: bankAccount.accountType });
  let released = 0;
  for (const s of held) {
    const changes = { status: move.to, bank_account: snapshot, pix_key: pixKey, hold_reason: null, updated_at: nowIso };
    const r = await tx.updateTable('settlements').set(changes).where('id', '=', s.id).where('status', '=', move.from).executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) continue;
    released++;
    await recordEvent(tx, { accountId, livemode: s.livemode === 1 }, 'settlement.updated', toSettlement({ ...s, ...changes }), nowMs);
    await enqueue(tx, nowMs, JOB_PAYOUT, { settlementId: s.id });
  }
  return released;
}

function payoutKey(settlementId: string): string {
  return createHash('sha256').update(`${settlementId}:payout`).digest('hex').slice(0, 40);
}

// Worker: pay a settlement out. Paid: done. Refused by the bank: the settlement fails and its
// receivables go back to pending for the next run. Provider down: retried with backoff.
export async function payoutJob(deps: SettlementDeps & { retryBaseMs: number }, job: JobRow, workerId: string): Promise<void> {
  const { store, provider } = deps;
  const { settlementId } = readPayload(job, JOB_PAYOUT);
  const s = await store.db.selectFrom('settlements').selectAll().where('id', '=', settlementId).executeTakeFirst();
  // Paid by Pix at a PSP when its mode has a payout connector account (pix-payouts.ts); a payout
  // already processing there is only ever finished by the PSP's answer, never by the sandbox.
  if (s && (s.status === 'pending' || s.status === 'processing') && deps.connectors && deps.config) {
    const resolved = s.payout_connector_account_id
      ? await deps.connectors.payoutForAccount(store.db, s.payout_connector_account_id)
      : await deps.connectors.resolvePayout(store.db, s.livemode === 1);
    if (resolved) {
      await pixPayoutJob({ store, connectors: deps.connectors, config: deps.config }, resolved, job, workerId, s);
      return;
    }
  }
  if (!s || s.status !== 'pending') {
    await store.write((tx) => complete(tx, job, workerId));
    return;
  }
  const owner = { accountId: s.account_id, livemode: s.livemode === 1 };
  try {
    await provider.payout({ idempotencyKey: payoutKey(s.id), amountCents: s.amount, bankAccount: s.bank_account ? (JSON.parse(s.bank_account) as BankAccount) : null, livemode: owner.livemode });
  } catch (error) {
    if (error instanceof ProviderUnavailable) {
      await store.write((tx) => reschedule(tx, job, workerId, store.clock.nowMs() + Math.min(deps.retryBaseMs * 2 ** job.attempts, 3_600_000), error.message));
      return;
    }
    if (!(error instanceof ProviderRejected)) throw error;
    await store.write(async (tx) => {
      const nowMs = store.clock.nowMs();
      const nowIso = new Date(nowMs).toISOString();
      const move = settlementMove('pending', 'failed');
      const r = await tx.updateTable('settlements').set({ status: move.to, failure_reason: error.message, updated_at: nowIso })
        .where('id', '=', s.id).where('status', '=', move.from).executeTakeFirst();
      if (Number(r.numUpdatedRows) === 1) {
        // In id order first, as every writer of receivables locks them (see settlePayee).
        if (store.engine === 'postgres') await tx.selectFrom('receivables').select('id').where('settlement_id', '=', s.id).orderBy('id').forUpdate().execute();
        await tx.updateTable('receivables').set({ status: 'pending', settlement_id: null, updated_at: nowIso }).where('settlement_id', '=', s.id).execute();
        await recordEvent(tx, owner, 'settlement.failed', toSettlement({ ...s, status: 'failed', failure_reason: error.message, updated_at: nowIso }), nowMs);
      }
      await complete(tx, job, workerId);
    });
    return;
  }
  await store.write(async (tx) => {
    const nowMs = store.clock.nowMs();
    const nowIso = new Date(nowMs).toISOString();
    const move = settlementMove('pending', 'paid');
    const r = await tx.updateTable('settlements').set({ status: move.to, paid_at: nowIso, updated_at: nowIso })
      .where('id', '=', s.id).where('status', '=', move.from).executeTakeFirst();
    if (Number(r.numUpdatedRows) === 1) await recordEvent(tx, owner, 'settlement.paid', toSettlement({ ...s, status: 'paid', paid_at: nowIso, updated_at: nowIso }), nowMs);
    await complete(tx, job, workerId);
  });
}

// The daily run: once per São Paulo date, whichever worker gets to it first (the run row is
// written before anything settles, so a second worker sees it and skips).
export async function dailyRunJob(deps: SettlementDeps): Promise<void> {
  const today = localDate(deps.store.clock.nowMs());
  const done = await deps.store.db.selectFrom('settlement_runs').select('id').where('run_date', '=', today).where('trigger', '=', 'schedule').executeTakeFirst();
  if (done) return;
  await runSettlement(deps, { date: today, trigger: 'schedule' });
}

export async function getSettlement(store: Store, owner: Owner, id: string): Promise<Settlement> {
  const row = await store.db.selectFrom('settlements').selectAll()
    .where('id', '=', id).where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0).executeTakeFirst();
  if (!row) throw notFound('settlement', 'id');
  return toSettlement(row);
}

export async function listSettlements(store: Store, owner: Owner, q: ListSettlementsQuery) {
  const scope = store.db.selectFrom('settlements').selectAll()
    .where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0);
  let qb = scope;
  if (q.recipientId) qb = qb.where('payee_type', '=', 'recipient').where('payee_id', '=', q.recipientId);
  if (q.payeeType) qb = qb.where('payee_type', '=', q.payeeType);
  if (q.status) qb = qb.where('status', '=', q.status);
  if (q.settlementDateGte) qb = qb.where('settlement_date', '>=', q.settlementDateGte);
  if (q.settlementDateLte) qb = qb.where('settlement_date', '<=', q.settlementDateLte);
  return paginate(qb, q, toSettlement, scope);
}

export async function listRuns(store: Store, q: { limit?: number; startingAfter?: string; endingBefore?: string }) {
  const all = store.db.selectFrom('settlement_runs').selectAll();
  return paginate(all, q, toRun, all, { id: 'id', created: 'started_at' });
}

export async function getRun(store: Store, id: string): Promise<SettlementRun> {
  const row = await store.db.selectFrom('settlement_runs').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('settlement run', 'id');
  return toRun(row);
}

export type { Tx };

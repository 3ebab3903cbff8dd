import { createHash } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import type { Store, Tx } from '../../store/index.js';
import type { SettlementRunsTable, SettlementsTable } from '../../store/schema.js';
import { newId } from '../../domain/ids.js';
import { invalidState, notFound, validation } from '../../errors.js';
import { paginate } from '../../http/pagination.js';
import { localDate } from '../accounts/settings.js';
import { recordEvent, type Owner } from '../events/service.js';
import { enqueue, complete, reschedule, type JobRow } from '../../jobs/queue.js';
import { readPayload, type JobType } from '../../jobs/payloads.js';
import { ProviderRejected, ProviderUnavailable, type PaymentProvider } from '../../providers/port.js';
import { BALANCE_HOLDS, HOLD_INSUFFICIENT_PSP_BALANCE, HOLD_NO_PAYOUT_BANK_ACCOUNT, HOLD_PSP_BALANCE_UNAVAILABLE, HOLD_REASONS, type HoldReason, type DailyStatement, type ListSettlementsQuery, type Settlement, type SettlementRun } from './schemas.js';
import { settlementMove, settlementRunMove } from '../../domain/states.js';
import type { BankAccount } from '../../domain/bank-account.js';
import { nowIso } from '../../clock.js';
import type { ConnectorRegistry, ResolvedPayout } from '../../providers/registry.js';
import { maskPixKey, type PixKey } from '../../domain/pix-key.js';
import { pixPayoutJob, type PixPayoutDeps } from './pix-payouts.js';
import { allocateBalance } from '../../domain/payout-balance.js';

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
    holdReason: row.status === 'held' && (HOLD_REASONS as readonly string[]).includes(row.hold_reason ?? '') ? row.hold_reason as HoldReason : null,
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

  // A mode whose payouts go by Pix through a PSP (issue 26): its settlements wait for the
  // balance check below before any payout job is queued.
  const byPsp = new Map<number, ResolvedPayout>();
  if (deps.connectors) {
    for (const livemode of [0, 1]) {
      const resolved = await deps.connectors.resolvePayout(store.db, livemode === 1);
      if (resolved) byPsp.set(livemode, resolved);
    }
  }

  // Bounded fan-out: a window of payees is written at once (on SQLite, group-committed)
  // without queueing every payee's work at once.
  const windowSize = 64;
  for (let i = 0; i < groups.length; i += windowSize) {
    const window = groups.slice(i, i + windowSize).filter((g) => Number(g.total) > 0);
    // Each payee in a transaction of its own: it locks the payee's receivables in id order (WriteOptions).
    const results = await Promise.allSettled(window.map((g) => store.write((tx) => settlePayee(tx, store, runId, runDate, g, { queuePayout: !byPsp.has(g.livemode) }), { ownTransaction: true })));
    for (const r of results) {
      if (r.status === 'rejected' && !(r.reason instanceof NothingToSettle)) throw r.reason;
    }
  }

  // The platform's balance at each PSP, read before any of the run's payouts is queued (null:
  // it could not be read, and the run's payouts by Pix wait for the next run).
  const balances = new Map<number, number | null>();
  for (const [livemode, resolved] of byPsp) {
    try {
      balances.set(livemode, await resolved.connector.balance(resolved.account));
    } catch (error) {
      if (!(error instanceof ProviderUnavailable) && !(error instanceof ProviderRejected)) throw error;
      balances.set(livemode, null);
    }
  }

  const finished = await store.write(async (tx) => {
    for (const [livemode, balance] of balances) await allocatePayouts(tx, store, runId, livemode, balance);
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

// One payee's settlement of a run, in the caller's transaction. `queuePayout`: false when the
// payout waits for the run's balance check (allocatePayouts); `retryOf`: an operator's retry of
// that failed settlement (retrySettlement).
async function settlePayee(
  tx: Tx,
  store: Store,
  runId: string,
  runDate: string,
  g: { account_id: string; livemode: number; payee_type: 'merchant' | 'recipient'; payee_id: string },
  options: { queuePayout: boolean; retryOf?: string },
): Promise<{ id: string; amount: number; receivableCount: number }> {
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
    failure_reason: null, retry_of: options.retryOf ?? null, created_at: nowIso, updated_at: nowIso,
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
    payout_sent_at: null, payout_slot_ms: null, retry_of: options.retryOf ?? null, created_at: nowIso, updated_at: nowIso,
  };
  await recordEvent(tx, { accountId: g.account_id, livemode: g.livemode === 1 }, 'settlement.created', toSettlement(row), nowMs);
  if (!held && options.queuePayout) await enqueue(tx, nowMs, JOB_PAYOUT, { settlementId: id });
  return { id, amount, receivableCount: count };
}

// The balance check of a run's payouts by Pix in one mode (issue 26), in the run's last
// transaction: the run's new settlements (pending, no payout job yet) and those earlier runs
// held for the balance share what the PSP holds, less what is already promised (payouts queued
// but not sent: pending with a job). Oldest first (created_at, then id), and never a younger one
// before an older one (domain/payout-balance.ts): those that fit go to payout (a held one is
// released, held -> pending), the rest are held with the reason (pending -> held). A balance
// that could not be read (null) holds them all. Payouts already at the PSP (processing) are
// out of its balance already.
async function allocatePayouts(tx: Tx, store: Store, runId: string, livemode: number, balance: number | null): Promise<void> {
  const nowMs = store.clock.nowMs();
  const nowIso = new Date(nowMs).toISOString();
  const candidates = await tx.selectFrom('settlements').selectAll().where('livemode', '=', livemode)
    .where((eb) => eb.or([
      eb.and([eb('status', '=', 'pending'), eb('run_id', '=', runId)]),
      eb.and([eb('status', '=', 'held'), eb('hold_reason', 'in', [...BALANCE_HOLDS])]),
    ]))
    .orderBy('created_at').orderBy('id').execute();
  if (candidates.length === 0) return;
  const promised = await tx.selectFrom('settlements').select((eb) => eb.fn.sum<number>('amount').as('total'))
    .where('livemode', '=', livemode).where('status', '=', 'pending').where('run_id', '!=', runId).executeTakeFirst();
  const available = balance === null ? 0 : balance - Number(promised?.total ?? 0);
  const { pay } = allocateBalance(available, candidates.map((c) => ({ id: c.id, amount: Number(c.amount) })));
  const paying = new Set(pay);
  const reason = balance === null ? HOLD_PSP_BALANCE_UNAVAILABLE : HOLD_INSUFFICIENT_PSP_BALANCE;
  for (const s of candidates) {
    const owner = { accountId: s.account_id, livemode: s.livemode === 1 };
    if (paying.has(s.id)) {
      if (s.status === 'held') {
        const move = settlementMove('held', 'pending');
        const changes = { status: move.to, hold_reason: null, updated_at: nowIso };
        const r = await tx.updateTable('settlements').set(changes).where('id', '=', s.id).where('status', '=', move.from).executeTakeFirst();
        if (Number(r.numUpdatedRows) !== 1) continue;
        await recordEvent(tx, owner, 'settlement.updated', toSettlement({ ...s, ...changes }), nowMs);
      }
      await enqueue(tx, nowMs, JOB_PAYOUT, { settlementId: s.id });
    } else if (s.status === 'pending') {
      const move = settlementMove('pending', 'held');
      const changes = { status: move.to, hold_reason: reason, updated_at: nowIso };
      const r = await tx.updateTable('settlements').set(changes).where('id', '=', s.id).where('status', '=', move.from).executeTakeFirst();
      if (Number(r.numUpdatedRows) === 1) await recordEvent(tx, owner, 'settlement.updated', toSettlement({ ...s, ...changes }), nowMs);
    } else if (s.hold_reason !== reason) {
      // Still held: only why changes (the balance was read this time, or could not be).
      await tx.updateTable('settlements').set({ hold_reason: reason, updated_at: nowIso }).where('id', '=', s.id).where('status', '=', 'held').execute();
    }
  }
}

// The merchant account got its payout bank account: each of its held settlements (both modes)
// takes a snapshot of it and goes to payout, in the transaction that set it (its event and its
// payout job with it). Returns how many were released.
export async function releaseHeldSettlements(tx: Tx, accountId: string, bankAccount: BankAccount, nowMs: number, pixKey: string | null = null): Promise<number> {
  const move = settlementMove('held', 'pending');
  // The literal repeats the partial index settlements_held's condition (SQLite uses it only then).
  const held = await tx.selectFrom('settlements').selectAll()
    .where('account_id', '=', accountId).where('payee_type', '=', 'merchant').where('status', '=', sql.lit(move.from))
    .where('hold_reason', '=', HOLD_NO_PAYOUT_BANK_ACCOUNT)
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
    }, { ownTransaction: true });
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

// An operator's retry of a settlement's payout (POST /admin/settlements/{id}/retry, audited in
// the same transaction). Held for the PSP balance: released to payout now (held -> pending, its
// payout job queued): the operator answers for the balance, and a PSP that refuses it for lack of
// funds fails it with its reason. Failed: a failed settlement is final and its receivables went
// back to pending, so the retry settles the payee's due receivables now in a new settlement
// (`retry_of` names the failed one; once per failed settlement) through a one-payee run, its
// payout queued at once. Anything else is INVALID_STATE. Returns the settlement that will pay.
export async function retrySettlement(tx: Tx, store: Store, id: string): Promise<SettlementRow> {
  const s = await tx.selectFrom('settlements').selectAll().where('id', '=', id).executeTakeFirst();
  if (!s) throw notFound('settlement', 'id');
  const nowMs = store.clock.nowMs();
  const nowIso = new Date(nowMs).toISOString();
  const owner = { accountId: s.account_id, livemode: s.livemode === 1 };
  if (s.status === 'held') {
    if (!BALANCE_HOLDS.includes(s.hold_reason as HoldReason)) {
      throw invalidState('This settlement waits for the merchant account\'s payout bank account: set it (PATCH /admin/accounts/{id}/payout-bank-account) and it is paid out at once.');
    }
    const move = settlementMove('held', 'pending');
    const changes = { status: move.to, hold_reason: null, updated_at: nowIso };
    const r = await tx.updateTable('settlements').set(changes).where('id', '=', id).where('status', '=', move.from).executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) throw invalidState('The settlement moved meanwhile; fetch it again.');
    const row = { ...s, ...changes };
    await recordEvent(tx, owner, 'settlement.updated', toSettlement(row), nowMs);
    await enqueue(tx, nowMs, JOB_PAYOUT, { settlementId: id });
    return row;
  }
  if (s.status !== 'failed') throw invalidState(`A ${s.status} settlement has no payout to retry: only a failed one, or one held for the PSP balance.`);
  const earlier = await tx.selectFrom('settlements').select('id').where('retry_of', '=', id).executeTakeFirst();
  if (earlier) throw invalidState(`This failed settlement was retried already, by ${earlier.id}.`);
  const run = await createRun(tx, { nowMs, trigger: 'admin', status: 'running' });
  let made: { id: string; amount: number; receivableCount: number };
  try {
    made = await settlePayee(tx, store, run.id, run.run_date, { account_id: s.account_id, livemode: s.livemode, payee_type: s.payee_type, payee_id: s.payee_id }, { queuePayout: true, retryOf: id });
  } catch (error) {
    if (!(error instanceof NothingToSettle)) throw error;
    throw invalidState('Nothing is due to this payee any more: its receivables were settled again (by a later run) or refunded.');
  }
  const end = settlementRunMove('running', 'completed');
  await tx.updateTable('settlement_runs').set({ status: end.to, settlement_count: 1, receivable_count: made.receivableCount, total_amount: made.amount, finished_at: nowIso })
    .where('id', '=', run.id).where('status', '=', end.from).execute();
  return tx.selectFrom('settlements').selectAll().where('id', '=', made.id).executeTakeFirstOrThrow();
}

// The daily statement of one payee (issue 26): the settlements paid on one São Paulo calendar
// date (by `paidAt`, the PSP's settlement time), oldest first, with their end-to-end ids and the
// total. `date` defaults to today in São Paulo, from the Clock.
const DAY_MS = 86_400_000;
const MAX_STATEMENT_ITEMS = 10_000;

// The payee is the owner's merchant itself, or `recipientId`, a recipient of the owner's account
// and mode (VALIDATION_ERROR naming it otherwise: another account's recipient, the other mode's
// and a made-up id all get the same answer). The merchant API passes the API key's owner; the
// admin API one built from `accountId` and `livemode`.
export async function dailyStatement(store: Store, owner: Owner, recipientId: string | undefined, date: string | undefined): Promise<DailyStatement> {
  if (recipientId !== undefined) {
    const known = await store.db.selectFrom('recipients').select('id').where('id', '=', recipientId)
      .where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0).executeTakeFirst();
    if (!known) throw validation('recipientId names no recipient of this account and mode.', 'recipientId');
  }
  const payee = recipientId !== undefined ? { type: 'recipient' as const, id: recipientId } : { type: 'merchant' as const, id: owner.accountId };
  const day = date ?? localDate(store.clock.nowMs());
  const startMs = Date.parse(`${day}T00:00:00.000-03:00`);
  const from = new Date(startMs).toISOString();
  const to = new Date(startMs + DAY_MS).toISOString();
  const rows = await store.db.selectFrom('settlements')
    .select(['id', 'amount', 'payout_e2eid', 'payout_id', 'paid_at', 'settlement_date'])
    .where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0)
    .where('payee_type', '=', payee.type).where('payee_id', '=', payee.id)
    .where('paid_at', '>=', from).where('paid_at', '<', to).where('status', '=', 'paid')
    .orderBy('paid_at').orderBy('id').limit(MAX_STATEMENT_ITEMS).execute();
  const items = rows.map((r) => ({
    settlementId: r.id, amount: Number(r.amount), endToEndId: r.payout_e2eid, reference: r.payout_id, paidAt: r.paid_at ?? from, settlementDate: r.settlement_date,
  }));
  return {
    object: 'daily_statement', date: day, timeZone: 'America/Sao_Paulo', from, to,
    payee, count: items.length, total: items.reduce((sum, i) => sum + i.amount, 0), data: items, livemode: owner.livemode,
  };
}

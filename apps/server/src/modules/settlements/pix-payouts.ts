import { sql } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { Store, Tx } from '../../store/index.js';
import type { ConnectorRegistry, ResolvedPayout } from '../../providers/registry.js';
import type { PayoutDestination, PayoutHints, PayoutState } from '../../providers/connector.js';
import { ProviderRejected, ProviderUnavailable } from '../../providers/port.js';
import { payoutIdOf } from '../../providers/efi-payout/connector.js';
import { participantByCode } from '../../domain/banks.js';
import { maskPixKey, type PixKey } from '../../domain/pix-key.js';
import type { BankAccount } from '../../domain/bank-account.js';
import { settlementMove } from '../../domain/states.js';
import { assertPayoutAmount } from '../../domain/payout-balance.js';
import { recordEvent } from '../events/service.js';
import { complete, enqueue, reschedule, type JobRow } from '../../jobs/queue.js';
import { readPayload, type JobType } from '../../jobs/payloads.js';
// service.ts imports this module too: only functions cross, at call time.
import { JOB_PAYOUT, toSettlement, type SettlementRow } from './service.js';

// Payouts by Pix at a PSP (issue 26). A settlement whose mode has a payout connector account (the
// platform's Pix connector account of a PSP with a payout connector: registry.resolvePayout) is
// paid by Pix instead of by the sandbox:
//
//   pending --(its send slot comes; sent)--> processing --(read back: REALIZADO)--> paid
//                                                       --(read back: NAO_REALIZADO)--> failed
//   pending --(refused at once, or nowhere to send)--> failed
//
// - The payout id at the PSP (Efí's idEnvio) is derived from the settlement id, and the settlement
//   is `processing` (with it) before the request leaves: a crash or a lost answer after that is
//   the same payout when sent again, and a 409 is resolved by reading it.
// - Sends are spaced per source account (payout_sources: the next free slot): each payout job
//   reserves a slot once and waits for it as a rescheduled job, so thousands of settlements wait
//   in the jobs table, not in the worker, and its other jobs run meanwhile.
// - Final states only from a read of the PSP: its webhook enqueues a read (a hint), and the
//   reconciliation job reads what is still processing after PAYOUT_RECONCILE_AFTER_MINUTES.
// - A failed payout puts its receivables back to pending for the next run, as before.

export const JOB_PAYOUT_SYNC = 'settlement.payout_sync' satisfies JobType;
export const JOB_PAYOUT_RECONCILE = 'settlement.payout_reconcile' satisfies JobType;

export interface PixPayoutDeps {
  store: Store;
  connectors: ConnectorRegistry;
  config: { payoutIntervalMs: number; payoutReconcileAfterMs: number; providerRetryBaseMs: number };
}

// Reason codes of our own (the PSP's are passed through as it gives them).
export const NO_PAYOUT_DESTINATION = 'no_payout_destination';
export const HOLDER_DOCUMENT_MISMATCH = 'holder_document_mismatch';

type Destination = { destination: PayoutDestination; masked: string } | { code: string; problem: string };

// Where a settlement's payout goes: its Pix key snapshot when there is one, else its bank
// account (by the bank's ISPB), with the holder's document: the recipient's CNPJ, or the
// document set with the merchant's payout account. Our own holder check (issue 26), at send as
// at registration: a CPF or CNPJ Pix key is the holder's document itself, so it must be the
// payee's; an e-mail, phone or random key is checked by the PSP, which gets the document
// (`favorecido.cpf`/`cnpj`) and refuses a key that belongs to someone else.
export async function destinationOf(store: Store, s: SettlementRow): Promise<Destination> {
  let holder: { name: string; document: string } | null = null;
  if (s.payee_type === 'recipient') {
    const r = await store.db.selectFrom('recipients').select(['name', 'document']).where('id', '=', s.payee_id).executeTakeFirst();
    if (r) holder = { name: r.name, document: r.document };
  } else {
    const a = await store.db.selectFrom('accounts').select(['name', 'payout_holder_document']).where('id', '=', s.account_id).executeTakeFirst();
    if (a?.payout_holder_document) holder = { name: a.name, document: a.payout_holder_document };
  }
  if (s.pix_key) {
    const pixKey = JSON.parse(s.pix_key) as PixKey;
    if ((pixKey.type === 'cpf' || pixKey.type === 'cnpj') && holder && pixKey.key !== holder.document) {
      return { code: HOLDER_DOCUMENT_MISMATCH, problem: `The payee's ${pixKey.type.toUpperCase()} Pix key is not the holder's document (${s.payee_type === 'recipient' ? 'the recipient\'s CNPJ' : 'the payout account\'s holder document'}): nothing was sent. Set a Pix key of the payee's own.` };
    }
    return { destination: { kind: 'pix_key', pixKey, holderDocument: holder?.document ?? null }, masked: `Pix ${pixKey.type} ${maskPixKey(pixKey)}` };
  }
  if (!s.bank_account) return { code: NO_PAYOUT_DESTINATION, problem: 'The settlement has neither a Pix key nor a bank account to be paid to.' };
  if (!holder) return { code: NO_PAYOUT_DESTINATION, problem: 'A payout by Pix to a bank account needs the holder\'s document: set the holder document (or a Pix key) on the merchant\'s payout account.' };
  const b = JSON.parse(s.bank_account) as BankAccount;
  const bank = participantByCode(b.bankCode);
  if (!bank) return { code: NO_PAYOUT_DESTINATION, problem: `Bank ${b.bankCode} is not in the Banco Central's list of participants.` };
  return {
    destination: { kind: 'bank_account', ispb: bank.ispb, agency: b.agency, account: b.account, accountType: b.accountType, holderName: holder.name, holderDocument: holder.document },
    masked: `${b.bankCode} ag. ${b.agency} c/c ***${b.account.slice(-4)}`,
  };
}

// Reserves the next send slot at a source account: the later of now and its next free slot; the
// one after is that + the interval. One UPDATE, so two workers never get the same slot.
export async function reserveSlot(tx: Tx, connectorAccountId: string, nowMs: number, intervalMs: number): Promise<number> {
  await tx.insertInto('payout_sources').values({ connector_account_id: connectorAccountId, next_slot_ms: nowMs })
    .onConflict((oc) => oc.column('connector_account_id').doNothing()).execute();
  const row = await tx.updateTable('payout_sources')
    .set({ next_slot_ms: sql<number>`(case when next_slot_ms > ${nowMs} then next_slot_ms else ${nowMs} end) + ${intervalMs}` })
    .where('connector_account_id', '=', connectorAccountId)
    .returning('next_slot_ms').executeTakeFirstOrThrow();
  return Number(row.next_slot_ms) - intervalMs;
}

async function loadSettlement(db: Store['db'] | Tx, id: string): Promise<SettlementRow | undefined> {
  return db.selectFrom('settlements').selectAll().where('id', '=', id).executeTakeFirst();
}

function backoff(deps: PixPayoutDeps, job: JobRow): number {
  return deps.store.clock.nowMs() + Math.min(deps.config.providerRetryBaseMs * 2 ** job.attempts, 3_600_000);
}

// The payout job's side for a settlement paid by Pix. `s` is pending or processing.
export async function pixPayoutJob(deps: PixPayoutDeps, resolved: ResolvedPayout, job: JobRow, workerId: string, s: SettlementRow): Promise<void> {
  const { store } = deps;
  const owner = { accountId: s.account_id, livemode: s.livemode === 1 };
  if (s.status === 'pending') {
    const where = await destinationOf(store, s);
    if ('problem' in where) {
      await failSettlement(store, s.id, 'pending', where.code, where.problem, (tx) => complete(tx, job, workerId));
      return;
    }
    // Its slot: reserved once (kept on the settlement), then waited for as a rescheduled job.
    let slotMs = s.payout_slot_ms === null ? null : Number(s.payout_slot_ms);
    if (slotMs === null) {
      slotMs = await store.write(async (tx) => {
        const slot = await reserveSlot(tx, resolved.row.id, store.clock.nowMs(), deps.config.payoutIntervalMs);
        await tx.updateTable('settlements').set({ payout_slot_ms: slot }).where('id', '=', s.id).where('status', '=', 'pending').execute();
        return slot;
      });
    }
    if (slotMs > store.clock.nowMs()) {
      await store.write((tx) => reschedule(tx, job, workerId, slotMs, null));
      return;
    }
    // Processing before the request leaves, with the payout id: whatever happens next, the
    // same payout is what a retry or the reconciliation finds.
    const moved = await store.write(async (tx) => {
      const nowMs = store.clock.nowMs();
      const nowIso = new Date(nowMs).toISOString();
      const move = settlementMove('pending', 'processing');
      const changes = { status: move.to, payout_connector_account_id: resolved.row.id, payout_id: payoutIdOf(s.id), payout_destination: where.masked, payout_sent_at: nowIso, updated_at: nowIso };
      const r = await tx.updateTable('settlements').set(changes).where('id', '=', s.id).where('status', '=', move.from).executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) return null;
      const row = { ...s, ...changes };
      await recordEvent(tx, owner, 'settlement.processing', toResource(row), nowMs);
      return row;
    });
    if (!moved) {
      await store.write((tx) => complete(tx, job, workerId));
      return;
    }
    s = moved;
  }
  await sendAndApply(deps, resolved, s, job, workerId);
}

function toResource(row: SettlementRow) {
  return toSettlement(row);
}

// Sends (or, for a retry, finds) the payout and applies what the PSP says.
async function sendAndApply(deps: PixPayoutDeps, resolved: ResolvedPayout, s: SettlementRow, job: JobRow, workerId: string): Promise<void> {
  const { store } = deps;
  const where = await destinationOf(store, s);
  if ('problem' in where) {
    await failSettlement(store, s.id, 'processing', where.code, where.problem, (tx) => complete(tx, job, workerId));
    return;
  }
  // Never more than the settlement holds: its amount, which is the sum of its receivables (a
  // mismatch is a bug: nothing is sent, and the job fails loudly).
  const held = await store.db.selectFrom('receivables').select((eb) => eb.fn.sum<number>('amount').as('total')).where('settlement_id', '=', s.id).executeTakeFirst();
  const amountCents = assertPayoutAmount(s.id, Number(s.amount), Number(s.amount), Number(held?.total ?? 0));
  let state: PayoutState;
  try {
    state = await resolved.connector.send(resolved.account, {
      payoutId: s.payout_id ?? payoutIdOf(s.id), amountCents, destination: where.destination, description: `Repasse ${s.settlement_date}`,
    });
  } catch (error) {
    if (error instanceof ProviderUnavailable) {
      // Still processing: the next attempt sends the same payout id (a 409 is read back).
      await store.write((tx) => reschedule(tx, job, workerId, backoff(deps, job), error.message));
      return;
    }
    if (!(error instanceof ProviderRejected)) throw error;
    await failSettlement(store, s.id, 'processing', error.code, error.message, (tx) => complete(tx, job, workerId));
    return;
  }
  await applyPayout(store, s.id, state, (tx) => complete(tx, job, workerId));
}

// What the PSP says about a payout, applied: paid or failed from processing; nothing else moves.
// An amount that is not the settlement's is never believed.
export async function applyPayout(store: Store, settlementId: string, state: PayoutState, finish?: (tx: Tx) => Promise<unknown>): Promise<void> {
  const s = await loadSettlement(store.db, settlementId);
  if (!s || state.amountCents !== Number(s.amount)) {
    if (finish) await store.write(finish);
    if (s) throw new Error(`payout ${state.payoutId}: the PSP shows ${state.amountCents} centavos, the settlement holds ${s.amount}`);
    return;
  }
  if (state.status === 'failed') {
    await failSettlement(store, s.id, 'processing', state.failureCode ?? 'nao_realizado', state.failureReason ?? 'NAO_REALIZADO', finish, state.e2eid);
    return;
  }
  await store.write(async (tx) => {
    const nowMs = store.clock.nowMs();
    const nowIso = new Date(nowMs).toISOString();
    if (state.status === 'paid') {
      const move = settlementMove('processing', 'paid');
      // Stored as our ISO form (the daily statement compares them as strings).
      const psp = state.paidAtIso === null ? NaN : Date.parse(state.paidAtIso);
      const changes = { status: move.to, paid_at: Number.isNaN(psp) ? nowIso : new Date(psp).toISOString(), payout_e2eid: state.e2eid, updated_at: nowIso };
      const r = await tx.updateTable('settlements').set(changes).where('id', '=', s.id).where('status', '=', move.from).executeTakeFirst();
      if (Number(r.numUpdatedRows) === 1) await recordEvent(tx, { accountId: s.account_id, livemode: s.livemode === 1 }, 'settlement.paid', toResource({ ...s, ...changes }), nowMs);
    } else if (state.e2eid && s.payout_e2eid !== state.e2eid) {
      await tx.updateTable('settlements').set({ payout_e2eid: state.e2eid }).where('id', '=', s.id).where('status', '=', 'processing').execute();
    }
    if (finish) await finish(tx);
  });
}

// Failed: its receivables back to pending for the next run, its event; guarded on `from`.
async function failSettlement(store: Store, id: string, from: 'pending' | 'processing', code: string, reason: string, finish?: (tx: Tx) => Promise<unknown>, e2eid: string | null = null): Promise<void> {
  await store.write(async (tx) => {
    const nowMs = store.clock.nowMs();
    const nowIso = new Date(nowMs).toISOString();
    const s = await loadSettlement(tx, id);
    const move = settlementMove(from, 'failed');
    const changes = { status: move.to, failure_code: code.slice(0, 60), failure_reason: reason.slice(0, 300), updated_at: nowIso, ...(e2eid ? { payout_e2eid: e2eid } : {}) };
    const r = await tx.updateTable('settlements').set(changes).where('id', '=', id).where('status', '=', move.from).executeTakeFirst();
    if (s && Number(r.numUpdatedRows) === 1) {
      // In id order first, as every writer of receivables locks them (service.ts, settlePayee).
      if (store.engine === 'postgres') await tx.selectFrom('receivables').select('id').where('settlement_id', '=', id).orderBy('id').forUpdate().execute();
      await tx.updateTable('receivables').set({ status: 'pending', settlement_id: null, updated_at: nowIso }).where('settlement_id', '=', id).execute();
      await recordEvent(tx, { accountId: s.account_id, livemode: s.livemode === 1 }, 'settlement.failed', toResource({ ...s, ...changes }), nowMs);
    }
    if (finish) await finish(tx);
  }, { ownTransaction: true });
}

// Reads one payout back and applies it. Not at the PSP at all (the send never arrived): the
// payout job is queued again, which sends the same payout id.
export async function syncPayout(deps: PixPayoutDeps, settlementId: string): Promise<void> {
  const s = await loadSettlement(deps.store.db, settlementId);
  if (!s || s.status !== 'processing' || !s.payout_connector_account_id || !s.payout_id) return;
  const resolved = await deps.connectors.payoutForAccount(deps.store.db, s.payout_connector_account_id);
  const state = await resolved.connector.read(resolved.account, s.payout_id);
  if (!state) {
    await deps.store.write(async (tx) => {
      const nowMs = deps.store.clock.nowMs();
      const queued = await tx.selectFrom('jobs').select('id').where('type', '=', JOB_PAYOUT).where('payload', '=', JSON.stringify({ settlementId })).executeTakeFirst();
      if (!queued) await enqueue(tx, nowMs, JOB_PAYOUT, { settlementId }, nowMs);
    });
    return;
  }
  await applyPayout(deps.store, s.id, state);
}

export async function payoutSyncJob(deps: PixPayoutDeps, job: JobRow, workerId: string): Promise<void> {
  const { settlementId } = readPayload(job, JOB_PAYOUT_SYNC);
  try {
    await syncPayout(deps, settlementId);
  } catch (error) {
    if (!(error instanceof ProviderUnavailable)) throw error;
    await deps.store.write((tx) => reschedule(tx, job, workerId, backoff(deps, job), error.message));
    return;
  }
  await deps.store.write((tx) => complete(tx, job, workerId));
}

// Reconciliation: payouts still processing PAYOUT_RECONCILE_AFTER_MINUTES after they were sent
// are read back (a webhook that never came), oldest first, a bounded number per round.
export async function payoutReconcileJob(deps: PixPayoutDeps, log: FastifyBaseLogger): Promise<number> {
  const cutoff = new Date(deps.store.clock.nowMs() - deps.config.payoutReconcileAfterMs).toISOString();
  // The literal repeats the partial index settlements_processing's condition.
  const stale = await deps.store.db.selectFrom('settlements').select('id')
    .where('status', '=', sql.lit('processing')).where('payout_sent_at', '<=', cutoff)
    .orderBy('payout_sent_at').limit(500).execute();
  let read = 0;
  for (const { id } of stale) {
    try {
      await syncPayout(deps, id);
      read++;
    } catch (error) {
      if (!(error instanceof ProviderUnavailable)) throw error;
      log.warn({ settlementId: id, err: error.message }, 'payout reconciliation: PSP unavailable; next round');
      break;
    }
  }
  return read;
}

// A PSP notification's payout hints become read-back jobs, in the write that stores it.
export async function enqueuePayoutSyncs(tx: Tx, connectorAccountId: string, hints: PayoutHints, nowMs: number): Promise<number> {
  const ids = new Set<string>();
  if (hints.payoutIds.length > 0) {
    for (const s of await tx.selectFrom('settlements').select('id').where('payout_connector_account_id', '=', connectorAccountId).where('payout_id', 'in', hints.payoutIds.slice(0, 100)).execute()) ids.add(s.id);
  }
  for (const id of ids) await enqueue(tx, nowMs, JOB_PAYOUT_SYNC, { settlementId: id }, nowMs);
  return ids.size;
}

import type { FastifyBaseLogger } from 'fastify';
import { ApiError } from '../../errors.js';
import { complete, enqueue, reschedule, type JobRow } from '../../jobs/queue.js';
import { readPayload, type JobType } from '../../jobs/payloads.js';
import type { Tx } from '../../store/index.js';
import type { PixChargeState, ReceivedPix } from '../../providers/connector.js';
import { ProviderRejected, ProviderUnavailable } from '../../providers/port.js';
import type { ResolvedPix } from '../../providers/registry.js';
import { returnIdOf, txidOf } from '../../providers/pix-api/money.js';
import { buildDynamicPixBrCode } from '../../domain/pix.js';
import { recordEvent, type Owner } from '../events/service.js';
import { createRefund, toRefund } from '../refunds/service.js';
import { approve } from './approve.js';
import { moveWithEvent, type PaymentDeps } from './common.js';
import { readPayment, toPayment, type PaymentRow } from './repository.js';
import type { PreparedPayment } from './create.js';
import { cardAtProvider } from './live-card.js';

// Live Pix at a PSP, through the connector seam (issue 25), in the operations' usual steps. A
// notification is only a hint: every outcome (approved, expired, refunded, returned) is decided
// on what we read back from the PSP (GET /cob/{txid}), as Kill Bill's janitor re-asks the
// provider about anything unknown.

export const JOB_PIX_SYNC = 'payment.sync' satisfies JobType;
export const JOB_PIX_RECONCILE = 'pix.reconcile' satisfies JobType;

const RETRY_AFTER_S = 5;
// A refund in processing at the PSP is read again after this long (and on its callback).
const REFUND_POLL_MS = 30_000;
// Reconciliation reads pending payments expiring within this long (or already past).
const NEAR_EXPIRY_MS = 10 * 60_000;
const RECONCILE_MAX_PENDING = 200;
const CERTIFICATE_WARNING_MS = 30 * 86_400_000;

function unavailable(message: string): ApiError {
  return new ApiError('PROVIDER_UNAVAILABLE', message, { headers: { 'retry-after': String(RETRY_AFTER_S) } });
}

// Create, in the request (the payer needs the code at once): the charge at the PSP before
// anything is stored. Live mode without a production connector for the method refuses, and
// nothing is written; a PSP that is down or slow gives 503 with Retry-After (not stored: the
// Idempotency-Key is free for the retry). Test mode uses a homologation connector account when
// one is configured, else the in-house sandbox (the row as prepared).
export async function chargeAtProvider(deps: PaymentDeps, owner: Owner, prepared: PreparedPayment): Promise<void> {
  const { row } = prepared;
  if (row.method !== 'pix') return cardAtProvider(deps, owner, prepared);
  const resolved = await deps.connectors.resolvePix(deps.store.db, owner);
  if (!resolved) {
    if (owner.livemode) throw new ApiError('UNPROCESSABLE', 'Live Pix payments need a production Pix connector account, and none serves this account: nothing was created. An operator sets one up in the back office (docs/providers.md).', { param: 'method' });
    return;
  }
  const txid = txidOf(row.id);
  const expiresInSeconds = Math.max(1, Math.round((prepared.jobAtMs - Date.parse(row.created_at)) / 1000));
  let charge: PixChargeState;
  try {
    charge = await resolved.connector.createCharge(resolved.account, { txid, amountCents: row.amount, expiresInSeconds, description: row.description });
  } catch (error) {
    if (error instanceof ProviderUnavailable) throw unavailable('The Pix provider is not answering; nothing was created. Retry later with the same Idempotency-Key.');
    if (error instanceof ProviderRejected) throw unavailable(`The Pix provider refused the charge (${error.code}); nothing was created. Operators: check the connector account.`);
    throw error;
  }
  // Trusted only as far as it is the charge we asked for. The payer's code is the PSP's own
  // pixCopiaECola; a PSP that answers only the charge's location (pixCopiaECola is optional in the
  // standard) gets a dynamic BR Code pointing at it, never a code for a key of ours.
  const copyPaste = charge.copyPaste ?? (charge.location ? dynamicCode(deps, charge.location) : null);
  if (charge.txid !== txid || charge.amountCents !== row.amount || charge.status !== 'active' || !copyPaste) {
    throw unavailable('The Pix provider answered a charge that is not the one asked for (or with neither its copia e cola nor its location); nothing was created.');
  }
  row.pix_copy_paste = copyPaste;
  row.connector_account_id = resolved.row.id;
  row.provider_txid = txid;
}

// A dynamic BR Code from the charge's location; null (the charge refused) when it is no usable URL.
function dynamicCode(deps: PaymentDeps, location: string): string | null {
  try {
    return buildDynamicPixBrCode({ location, merchantName: deps.config.pixMerchantName, merchantCity: deps.config.pixMerchantCity });
  } catch {
    return null;
  }
}

function ownerOf(row: PaymentRow): Owner {
  return { accountId: row.account_id, livemode: row.livemode === 1 };
}

const lateReturnId = (e2eid: string) => 'lt' + e2eid.slice(0, 32);

// Applies what the PSP says about one charge. Each received Pix: the one that pays a pending
// payment approves it (its amount must be the payment's); one we cannot honour (the payment
// expired or was canceled, or a second Pix) is returned to the payer; one with another amount
// is recorded for operators. Then returns the payer's bank made (MED) are recorded as refunds,
// and our refunds in processing are read.
export async function applyCharge(deps: PaymentDeps, paymentId: string, resolved: ResolvedPix, charge: PixChargeState): Promise<void> {
  const { store, clock } = deps;
  for (const pix of charge.payments) {
    const nowIso = new Date(clock.nowMs()).toISOString();
    const late = await store.write(async (tx) => {
      const row = await readPayment(tx, paymentId, { lockOn: store.engine });
      if (!row || row.provider_txid !== charge.txid) return null;
      const known = await tx.selectFrom('pix_received').selectAll().where('e2eid', '=', pix.e2eid).executeTakeFirst();
      if (known && known.status !== 'unmatched') return known.status === 'late_returned' ? null : null;
      let status: 'matched' | 'amount_mismatch' | 'late_returned';
      if (row.provider_e2eid === pix.e2eid) status = 'matched';
      else if (row.status === 'pending' && pix.amountCents === row.amount) {
        await approve(tx, row, { provider_e2eid: pix.e2eid }, clock.nowMs());
        status = 'matched';
      } else if (row.status === 'pending') status = 'amount_mismatch';
      else status = 'late_returned';
      await upsertReceived(tx, resolved.row.id, pix, row.id, status, nowIso);
      return status === 'late_returned' ? row : null;
    });
    if (late) await returnLateMoney(deps, resolved, late, pix);
  }
  await recordReturns(deps, paymentId, charge.payments);
  await readPendingRefunds(deps, paymentId, resolved);
}

async function upsertReceived(tx: Tx, connectorAccountId: string, pix: ReceivedPix, paymentId: string | null, status: 'matched' | 'unmatched' | 'amount_mismatch' | 'late_returned', nowIso: string): Promise<void> {
  const updated = await tx.updateTable('pix_received').set({ status, payment_id: paymentId, updated_at: nowIso }).where('e2eid', '=', pix.e2eid).executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0) return;
  await tx.insertInto('pix_received').values({ e2eid: pix.e2eid, connector_account_id: connectorAccountId, txid: pix.txid, amount: pix.amountCents, paid_at: pix.paidAtIso, payment_id: paymentId, status, created_at: nowIso, updated_at: nowIso }).execute();
}

// Money for a payment that can no longer take it goes back to the payer (devolução of the whole
// Pix, its id derived from the e2eid so a retry is the same one), announced in an event.
async function returnLateMoney(deps: PaymentDeps, resolved: ResolvedPix, row: PaymentRow, pix: ReceivedPix): Promise<void> {
  const already = pix.returns.reduce((sum, r) => sum + (r.status === 'not_done' ? 0 : r.amountCents), 0);
  if (already < pix.amountCents) {
    await resolved.connector.refund(resolved.account, { e2eid: pix.e2eid, returnId: lateReturnId(pix.e2eid), amountCents: pix.amountCents - already });
  }
  await deps.store.write((tx) => recordEvent(tx, ownerOf(row), 'payment.late_pix_returned', { ...toPayment(row), lateEndToEndId: pix.e2eid, lateAmount: pix.amountCents }, deps.clock.nowMs()));
}

// Returns started by the payer's bank (MED) on the Pix that paid: recorded once each (by its
// id at the PSP) as a refund of that kind, which reduces the receivables as any refund does.
async function recordReturns(deps: PaymentDeps, paymentId: string, payments: ReceivedPix[]): Promise<void> {
  const row = await readPayment(deps.store.db, paymentId);
  if (!row?.provider_e2eid) return;
  const pix = payments.find((p) => p.e2eid === row.provider_e2eid);
  for (const ret of pix?.returns ?? []) {
    if (ret.nature !== 'MED_FRAUDE' && ret.nature !== 'MED_OPERACIONAL') continue;
    if (ret.status === 'not_done') continue;
    const seen = await deps.store.db.selectFrom('refunds').select('id').where('payment_id', '=', paymentId).where('provider_refund_id', '=', ret.id).executeTakeFirst();
    if (seen) continue;
    const current = await readPayment(deps.store.db, paymentId);
    if (!current) return;
    const amount = Math.min(ret.amountCents, current.amount - current.amount_refunded);
    if (amount <= 0) continue;
    const owner = ownerOf(current);
    await createRefund(
      { ...owner, correlationId: `med:${ret.id}`, clock: deps.clock, write: (op, options) => deps.store.write(op, options) },
      { paymentId, amount, reason: ret.nature === 'MED_FRAUDE' ? 'fraudulent' : 'requested_by_customer', metadata: { pixReturn: ret.id, nature: ret.nature } },
      { engine: deps.store.engine, kickWorker: deps.kickWorker, kind: ret.nature === 'MED_FRAUDE' ? 'med_fraud' : 'med_operational', providerRefundId: ret.id, providerRtrId: ret.rtrId, nowMs: deps.clock.nowMs() },
    );
  }
}

// Our refunds of a live Pix that are still processing: the PSP's devolução decides.
async function readPendingRefunds(deps: PaymentDeps, paymentId: string, resolved: ResolvedPix): Promise<void> {
  const row = await readPayment(deps.store.db, paymentId);
  if (!row?.provider_e2eid) return;
  const pending = await deps.store.db.selectFrom('refunds').selectAll().where('payment_id', '=', paymentId).where('status', '=', 'pending').where('provider_refund_id', 'is not', null).execute();
  for (const refund of pending) {
    if (refund.kind && refund.kind !== 'requested') continue;
    const ret = await resolved.connector.readRefund(resolved.account, row.provider_e2eid, refund.provider_refund_id!);
    if (ret.rtrId && ret.rtrId !== refund.provider_rtr_id) await deps.store.write((tx) => tx.updateTable('refunds').set({ provider_rtr_id: ret.rtrId }).where('id', '=', refund.id).execute());
    if (ret.status === 'processing') continue;
    await finishRefund(deps, refund.id, ret.status === 'returned' ? 'succeeded' : 'failed');
  }
}

export async function finishRefund(deps: PaymentDeps, refundId: string, to: 'succeeded' | 'failed'): Promise<void> {
  await deps.store.write(async (tx) => {
    const refund = await tx.selectFrom('refunds').selectAll().where('id', '=', refundId).executeTakeFirst();
    if (!refund || refund.status !== 'pending') return;
    const nowIso = new Date(deps.clock.nowMs()).toISOString();
    const r = await tx.updateTable('refunds').set({ status: to, updated_at: nowIso }).where('id', '=', refundId).where('status', '=', 'pending').executeTakeFirst();
    if (Number(r.numUpdatedRows) === 1) await recordEvent(tx, { accountId: refund.account_id, livemode: refund.livemode === 1 }, `refund.${to}`, toRefund({ ...refund, status: to, updated_at: nowIso }), deps.clock.nowMs());
  });
}

// The refund job's step for a live Pix: PUT /pix/{e2eid}/devolucao/{id} (id from the refund id;
// a repeat is read, never a second devolução). 'processing' leaves the refund pending: it is
// read again later (and on the PSP's callback).
export async function refundAtProvider(deps: PaymentDeps, refundId: string, payment: PaymentRow, amountCents: number, kind: string | undefined): Promise<'succeeded' | 'failed' | 'processing'> {
  if (kind && kind !== 'requested') return 'succeeded'; // a MED return: already done at the PSP
  if (!payment.connector_account_id || !payment.provider_e2eid) throw new Error(`payment ${payment.id} has no Pix at a PSP to refund`);
  const resolved = await deps.connectors.forAccount(deps.store.db, payment.connector_account_id);
  const returnId = returnIdOf(refundId);
  const ret = await resolved.connector.refund(resolved.account, { e2eid: payment.provider_e2eid, returnId, amountCents });
  await deps.store.write(async (tx) => {
    await tx.updateTable('refunds').set({ provider_refund_id: returnId }).where('id', '=', refundId).where('provider_refund_id', 'is', null).execute();
    if (ret.rtrId) await tx.updateTable('refunds').set({ provider_rtr_id: ret.rtrId }).where('id', '=', refundId).execute();
  });
  return ret.status === 'returned' ? 'succeeded' : ret.status === 'not_done' ? 'failed' : 'processing';
}

export const REFUND_POLL_INTERVAL_MS = REFUND_POLL_MS;

// Read one live payment's charge and apply it.
export async function syncPixPayment(deps: PaymentDeps, paymentId: string): Promise<void> {
  const row = await readPayment(deps.store.db, paymentId);
  if (!row?.connector_account_id || !row.provider_txid) return;
  const resolved = await deps.connectors.forAccount(deps.store.db, row.connector_account_id);
  const charge = await resolved.connector.readCharge(resolved.account, row.provider_txid);
  await applyCharge(deps, paymentId, resolved, charge);
}

export async function pixSyncJob(deps: PaymentDeps, job: JobRow, workerId: string): Promise<void> {
  const { paymentId } = readPayload(job, JOB_PIX_SYNC);
  try {
    await syncPixPayment(deps, paymentId);
  } catch (error) {
    if (!(error instanceof ProviderUnavailable)) throw error;
    await deps.store.write((tx) => reschedule(tx, job, workerId, deps.clock.nowMs() + Math.min(deps.config.providerRetryBaseMs * 2 ** job.attempts, 3_600_000), error.message));
    return;
  }
  await deps.store.write((tx) => complete(tx, job, workerId));
}

// Our expiry of a live Pix: the charge is removed at the PSP and read once more (a payment made
// meanwhile approves instead). Returns false when the PSP could not be reached (retry later).
export async function expireAtProvider(deps: PaymentDeps, row: PaymentRow): Promise<boolean> {
  if (!row.connector_account_id || !row.provider_txid) return true;
  const resolved = await deps.connectors.forAccount(deps.store.db, row.connector_account_id);
  try {
    await resolved.connector.removeCharge(resolved.account, row.provider_txid);
    const charge = await resolved.connector.readCharge(resolved.account, row.provider_txid);
    await applyCharge(deps, row.id, resolved, charge);
  } catch (error) {
    if (error instanceof ProviderUnavailable) return false;
    throw error;
  }
  return true;
}

// Reconciliation: for every active Pix connector account, the Pix received in a recent window
// (GET /pix) and the pending payments near their expiry (GET /cob/{txid}). A received Pix whose
// txid is a payment of ours syncs that payment (from its charge); one that matches no payment
// is recorded for operators. A lost callback never leaves a paid payment pending.
export async function pixReconcileJob(deps: PaymentDeps, log: FastifyBaseLogger): Promise<void> {
  const { store, clock } = deps;
  const nowMs = clock.nowMs();
  const accounts = await store.db.selectFrom('connector_accounts').selectAll().where('method', '=', 'pix').where('status', '=', 'active').execute();
  for (const row of accounts) {
    if (row.certificate_expires_at && Date.parse(row.certificate_expires_at) - nowMs < CERTIFICATE_WARNING_MS) {
      log.warn({ connectorAccountId: row.id, certificateExpiresAt: row.certificate_expires_at }, 'connector certificate expires within 30 days: rotate it (back office, or POST /admin/connector-accounts/{id}/rotate)');
    }
    let resolved: ResolvedPix;
    try {
      resolved = deps.connectors.opened(row);
    } catch (error) {
      log.error({ connectorAccountId: row.id, err: (error as Error).message }, 'pix reconciliation: connector account cannot be opened');
      continue;
    }
    try {
      const received = await resolved.connector.listReceived(resolved.account, { fromIso: new Date(nowMs - deps.config.pixReconcileWindowMs).toISOString(), toIso: new Date(nowMs).toISOString() });
      for (const pix of received) {
        const payment = pix.txid ? await store.db.selectFrom('payments').select('id').where('provider_txid', '=', pix.txid).where('connector_account_id', '=', row.id).executeTakeFirst() : undefined;
        if (payment) {
          await syncPixPayment(deps, payment.id);
          continue;
        }
        const nowIso = new Date(clock.nowMs()).toISOString();
        await store.write(async (tx) => {
          const known = await tx.selectFrom('pix_received').select('e2eid').where('e2eid', '=', pix.e2eid).executeTakeFirst();
          if (!known) await upsertReceived(tx, row.id, pix, null, 'unmatched', nowIso);
        });
        log.warn({ connectorAccountId: row.id, e2eid: pix.e2eid }, 'pix reconciliation: a received Pix matches no payment');
      }
      const near = await store.db.selectFrom('payments').select('id').where('connector_account_id', '=', row.id).where('status', '=', 'pending')
        .where('expires_at', '<=', new Date(nowMs + NEAR_EXPIRY_MS).toISOString()).orderBy('expires_at').limit(RECONCILE_MAX_PENDING).execute();
      for (const p of near) await syncPixPayment(deps, p.id);
    } catch (error) {
      if (!(error instanceof ProviderUnavailable)) throw error;
      log.warn({ connectorAccountId: row.id, err: error.message }, 'pix reconciliation: PSP unavailable; next round');
    }
  }
}

// A notification's hints become sync jobs, in the write that stores it. (`is not null`: the txid
// index holds only payments with one, migration 0021, and an IN list alone does not tell SQLite so.)
export async function enqueueSyncs(tx: Tx, connectorAccountId: string, hints: { txids: string[]; e2eids: string[] }, nowMs: number): Promise<number> {
  const ids = new Set<string>();
  if (hints.txids.length > 0) {
    for (const p of await tx.selectFrom('payments').select('id').where('connector_account_id', '=', connectorAccountId).where('provider_txid', 'in', hints.txids.slice(0, 100)).where('provider_txid', 'is not', null).execute()) ids.add(p.id);
  }
  if (hints.e2eids.length > 0) {
    for (const p of await tx.selectFrom('payments').select('id').where('connector_account_id', '=', connectorAccountId).where('provider_e2eid', 'in', hints.e2eids.slice(0, 100)).execute()) ids.add(p.id);
  }
  for (const id of ids) await enqueue(tx, nowMs, JOB_PIX_SYNC, { paymentId: id }, nowMs);
  return ids.size;
}

export { moveWithEvent };

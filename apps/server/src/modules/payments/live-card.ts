import type { FastifyBaseLogger } from 'fastify';
import { ApiError, invalidState, validation } from '../../errors.js';
import type { RequestContext } from '../../plugins/idempotency.js';
import { aPayment, type PaymentStatus } from '../../domain/states.js';
import { READY_TOKENS } from '../../domain/card.js';
import { complete, enqueue, reschedule, type JobRow } from '../../jobs/queue.js';
import { readPayload, type JobType } from '../../jobs/payloads.js';
import type { Tx } from '../../store/index.js';
import type { CardAuthorization, CardDisputeStage, CardNotification } from '../../providers/connector.js';
import type { Selectable } from 'kysely';
import type { CardNotificationsTable } from '../../store/schema.js';
import { applyDisputeStage } from '../disputes/service.js';
import { ProviderRejected, ProviderUnavailable, type AuthorizeResult } from '../../providers/port.js';
import type { ResolvedCard } from '../../providers/registry.js';
import type { Owner } from '../events/service.js';
import { approve } from './approve.js';
import { moveWithEvent, providerKey, type PaymentDeps } from './common.js';
import { loadPayment, readPayment, toPayment, type PaymentRow } from './repository.js';
import type { Payment } from './schemas.js';
import type { PreparedPayment } from './create.js';
import { finishRefund } from './live-pix.js';
import { newId } from '../../domain/ids.js';

// Live card payments at an acquirer, through the card port (issue 27; Adyen first). The
// authorization is made by the confirmation job (confirm.ts) under a key derived from the
// payment id; its answer may be final (approved, declined, failed, canceled), wait for the
// acquirer's notification (pending), or need the buyer (requires_action: 3-D Secure).
//
// Notifications. Adyen's Checkout API has no read of a payment: what it says afterwards it says
// by notification, each item signed with the connector account's HMAC key. So a notification is
// checked (HMAC), stored once per item (pspReference, event, success), and only queues a sync of
// its payment; the sync applies every verified item stored for the payment, in a fixed order
// (authorisation first, then modifications), through the guarded transitions. An item that
// arrives twice, or late, or before another, moves nothing backwards.

export const JOB_CARD_SYNC = 'card.sync' satisfies JobType;
export const JOB_CARD_CAPTURE = 'card.capture' satisfies JobType;

type CardNotificationRow = Selectable<CardNotificationsTable>;

// A payment still waiting for the acquirer after this long is settled by reconciliation: a
// cancel by reference at the acquirer (whatever it decided), then failed here.
export const CARD_PENDING_MAX_MS = 30 * 60_000;
// A 3-D Secure action the buyer has this long to complete.
export const ACTION_TTL_MS = 15 * 60_000;

// Create, in the request: which acquirer serves the payment (live: a production card connector
// account, or a refusal with nothing written; test: a homologation one, else the sandbox).
export async function cardAtProvider(deps: PaymentDeps, owner: Owner, prepared: PreparedPayment): Promise<void> {
  const { row } = prepared;
  if (owner.livemode && row.card_token !== null && READY_TOKENS[row.card_token]) throw validation('Test tokens only work with sandbox keys.', 'cardToken');
  const resolved = await deps.connectors.resolveCard(deps.store.db, owner);
  if (!resolved) {
    if (owner.livemode) throw new ApiError('UNPROCESSABLE', 'Live card payments need a production card connector account (Adyen), and none serves this account: nothing was created. An operator sets one up (docs/providers.md, "Cards on Adyen").', { param: 'method' });
    return;
  }
  if (!deps.config.publicUrl) throw new ApiError('UNPROCESSABLE', 'PUBLIC_URL is not set on this instance: a card acquirer needs it to send the buyer back after 3-D Secure. Nothing was created.', { param: 'method' });
  if (row.card_token !== null && READY_TOKENS[row.card_token]) throw validation('Test tokens are for the in-house sandbox; an acquirer\'s test environment takes a token made with encryptedCard.', 'cardToken');
  row.connector_account_id = resolved.row.id;
  // The account's capture setting, kept with the payment (a later change of the account does
  // not change how an authorization already asked is captured).
  row.capture_method = resolved.account.settings.captureMode === 'manual' ? 'manual' : 'automatic';
}

export function returnUrlOf(publicUrl: string, paymentId: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/v1/payments/${paymentId}/card-return`;
}

function toAuthorizeResult(auth: CardAuthorization): AuthorizeResult {
  switch (auth.status) {
    case 'approved': return { status: 'approved', chargeId: auth.pspReference };
    case 'declined': return { status: 'declined', code: auth.code, message: auth.message, chargeId: auth.pspReference };
    case 'failed': return { status: 'failed', code: auth.code, message: auth.message, chargeId: auth.pspReference };
    case 'canceled': return { status: 'canceled', chargeId: auth.pspReference };
    case 'pending': return { status: 'pending', chargeId: auth.pspReference };
    case 'requires_action': return { status: 'requires_action', chargeId: auth.pspReference, action: auth.action };
  }
}

// The confirmation job's call for a live card payment: POST /payments with the card token's
// acquirer data and the key derived from the payment id (a repeat after a lost answer is the
// same authorization, answered as the first time). A refusal of the request itself (4xx) is a
// failed payment, never retried.
export async function authorizeAtAcquirer(deps: PaymentDeps, row: PaymentRow): Promise<AuthorizeResult> {
  const resolved = await deps.connectors.forCardAccount(deps.store.db, row.connector_account_id!);
  const token = row.card_token ? await deps.store.db.selectFrom('card_tokens').select('acquirer_data').where('id', '=', row.card_token).executeTakeFirst() : undefined;
  if (!token?.acquirer_data) return { status: 'failed', code: 'invalid_card_token', message: 'The card token carries no card for the acquirer (make it with encryptedCard).', chargeId: null };
  try {
    const auth = await resolved.connector.authorize(resolved.account, {
      reference: row.id,
      idempotencyKey: providerKey(row.id, 'authorize'),
      amountCents: row.amount,
      installments: row.installments ?? 1,
      paymentMethod: JSON.parse(token.acquirer_data) as Record<string, unknown>,
      returnUrl: returnUrlOf(deps.config.publicUrl ?? 'https://invalid.example', row.id),
      manualCapture: row.capture_method === 'manual',
    });
    return toAuthorizeResult(auth);
  } catch (error) {
    if (error instanceof ProviderRejected) return { status: 'failed', code: 'acquirer_refused_request', message: error.message.slice(0, 300), chargeId: null };
    throw error;
  }
}

// Gives back an authorization the payment could not take (canceled meanwhile).
export async function voidAtAcquirer(deps: PaymentDeps, paymentId: string, pspReference: string): Promise<void> {
  const row = await readPayment(deps.store.db, paymentId);
  if (!row?.connector_account_id) return;
  const resolved = await deps.connectors.forCardAccount(deps.store.db, row.connector_account_id);
  await resolved.connector.cancel(resolved.account, { paymentPspReference: pspReference, reference: paymentId, idempotencyKey: providerKey(paymentId, 'void') });
}

// requires_action: the action, and until when it may be completed.
export async function requireAction(tx: Tx, row: PaymentRow, result: Extract<AuthorizeResult, { status: 'requires_action' }>, nowMs: number, changes: Partial<PaymentRow>): Promise<void> {
  await moveWithEvent(tx, row, 'requires_action', nowMs, {
    ...changes,
    provider_charge_id: result.chargeId,
    next_action: JSON.stringify({ type: result.action.type, url: result.action.url, method: result.action.method }),
    action_expires_at: new Date(nowMs + ACTION_TTL_MS).toISOString(),
  });
}

// The refund job's step for a live card payment: POST /payments/{pspReference}/refunds with the
// refund's key. Adyen only receives it: the refund stays pending until its REFUND (or
// REFUND_FAILED) notification.
export async function refundAtAcquirer(deps: PaymentDeps, refundId: string, payment: PaymentRow, amountCents: number): Promise<'processing' | 'failed'> {
  if (!payment.connector_account_id || !payment.provider_charge_id) throw new Error(`payment ${payment.id} has no authorization at an acquirer to refund`);
  const resolved = await deps.connectors.forCardAccount(deps.store.db, payment.connector_account_id);
  try {
    const mod = await resolved.connector.refund(resolved.account, { paymentPspReference: payment.provider_charge_id, reference: refundId, idempotencyKey: providerKey(refundId, 'refund'), amountCents });
    await deps.store.write((tx) => tx.updateTable('refunds').set({ provider_refund_id: mod.pspReference }).where('id', '=', refundId).where('provider_refund_id', 'is', null).execute());
    return 'processing';
  } catch (error) {
    if (error instanceof ProviderRejected) return 'failed';
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Notifications.

// Which payment an item is about: an AUTHORISATION's merchantReference is our payment id; a
// modification's originalReference is the payment's pspReference.
async function paymentOf(tx: Tx, connectorAccountId: string, item: CardNotification): Promise<string | null> {
  if (item.eventCode === 'AUTHORISATION') {
    const p = await tx.selectFrom('payments').select('id').where('id', '=', item.merchantReference).where('connector_account_id', '=', connectorAccountId).executeTakeFirst();
    return p?.id ?? null;
  }
  if (!item.originalReference) return null;
  const p = await tx.selectFrom('payments').select('id').where('connector_account_id', '=', connectorAccountId).where('provider_charge_id', '=', item.originalReference).executeTakeFirst();
  return p?.id ?? null;
}

// Stores each verified item once (the unique pspReference, event, success) and queues its
// payment's sync, in the caller's write. Returns how many items were new.
export async function storeCardNotifications(tx: Tx, connectorAccountId: string, items: CardNotification[], nowMs: number): Promise<number> {
  let fresh = 0;
  const nowIso = new Date(nowMs).toISOString();
  const payments = new Set<string>();
  for (const item of items) {
    const paymentId = await paymentOf(tx, connectorAccountId, item);
    const inserted = await tx.insertInto('card_notifications').values({
      id: newId('notification', nowMs), connector_account_id: connectorAccountId, psp_reference: item.pspReference, original_reference: item.originalReference,
      merchant_reference: item.merchantReference, event_code: item.eventCode, success: item.success ? 1 : 0, amount: item.amountCents, reason: item.reason?.slice(0, 300) ?? null,
      event_date: item.eventDate, payment_id: paymentId, received_at: nowIso, dispute_data: item.dispute ? JSON.stringify(item.dispute) : null,
    }).onConflict((oc) => oc.columns(['connector_account_id', 'psp_reference', 'event_code', 'success']).doNothing()).executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) continue;
    fresh++;
    if (paymentId) payments.add(paymentId);
  }
  for (const id of payments) await enqueue(tx, nowMs, JOB_CARD_SYNC, { paymentId: id }, nowMs);
  return fresh;
}

// The order items are applied in: the authorisation first, whatever order they came in.
const ORDER = ['AUTHORISATION', 'CANCELLATION', 'TECHNICAL_CANCEL', 'CANCEL_OR_REFUND', 'CAPTURE', 'CAPTURE_FAILED', 'REFUND', 'REFUND_FAILED'];
const rank = (code: string) => (ORDER.includes(code) ? ORDER.indexOf(code) : ORDER.length);

// Applies every verified item stored for one payment. Idempotent: each step is a guarded move
// that a second run finds done.
export async function syncCardPayment(deps: PaymentDeps, paymentId: string): Promise<void> {
  const { store, clock } = deps;
  const items = (await store.db.selectFrom('card_notifications').selectAll().where('payment_id', '=', paymentId).execute())
    .sort((a, b) => rank(a.event_code) - rank(b.event_code) || a.received_at.localeCompare(b.received_at));
  for (const item of items) {
    if (item.event_code === 'AUTHORISATION') {
      const unwanted = await store.write(async (tx) => {
        const row = await readPayment(tx, paymentId, { lockOn: store.engine });
        if (!row) return null;
        const open = row.status === 'pending' || row.status === 'requires_action';
        if (item.success === 1) {
          if (open) {
            if (Number(item.amount) !== row.amount) {
              // Not the amount asked for: not honoured (and given back below).
              await moveWithEvent(tx, row, 'failed', clock.nowMs(), { provider_charge_id: item.psp_reference, failure_code: 'acquirer_amount_mismatch', failure_message: 'The acquirer authorised another amount; it was canceled.' });
              return item.psp_reference;
            }
            await approve(tx, row, { provider_charge_id: item.psp_reference, next_action: null }, clock.nowMs());
            return null;
          }
          // Authorised for a payment that can no longer take it (canceled, expired, failed by
          // reconciliation): given back, unless it is the authorization we hold.
          return row.provider_charge_id === item.psp_reference && (row.status === 'requires_capture' || row.status === 'approved' || row.status === 'partially_refunded' || row.status === 'refunded') ? null : item.psp_reference;
        }
        if (open) await moveWithEvent(tx, row, 'declined', clock.nowMs(), { provider_charge_id: item.psp_reference, failure_code: 'card_declined', failure_message: item.reason ? `The card was declined (${item.reason.slice(0, 80)}).` : 'The card was declined.' });
        return null;
      });
      if (unwanted) await voidAtAcquirer(deps, paymentId, unwanted);
      continue;
    }
    if (item.event_code === 'REFUND' || item.event_code === 'REFUND_FAILED' || item.event_code === 'CANCEL_OR_REFUND') {
      // Our refund is the item's merchantReference (the reference we sent: the refund id).
      const refund = await store.db.selectFrom('refunds').select(['id', 'status']).where('id', '=', item.merchant_reference).where('payment_id', '=', paymentId).executeTakeFirst();
      if (!refund || refund.status !== 'pending') continue;
      await finishRefund(deps, refund.id, item.event_code === 'REFUND_FAILED' || item.success !== 1 ? 'failed' : 'succeeded');
    }
    if ((item.event_code === 'CAPTURE' || item.event_code === 'CAPTURE_FAILED') && item.merchant_reference === paymentId) {
      // The capture we asked (manual capture: its reference is our payment id). Automatic
      // captures were never asked by us: the payment is approved already and nothing moves.
      const failed = item.event_code === 'CAPTURE_FAILED' || item.success !== 1;
      const giveBack = await store.write(async (tx) => {
        const row = await readPayment(tx, paymentId, { lockOn: store.engine });
        if (!row || row.status !== 'requires_capture' || row.capture_status !== 'processing') return null;
        if (!failed) {
          await approve(tx, row, { capture_status: 'succeeded' }, clock.nowMs());
          return null;
        }
        await moveWithEvent(tx, row, 'failed', clock.nowMs(), { capture_status: 'failed', failure_code: 'capture_failed', failure_message: item.reason ? `The acquirer could not capture the payment (${item.reason.slice(0, 80)}); the authorization was given back.` : 'The acquirer could not capture the payment; the authorization was given back.' });
        return row.provider_charge_id;
      });
      if (giveBack) await voidAtAcquirer(deps, paymentId, giveBack);
    }
    // CANCELLATION, TECHNICAL_CANCEL: stored for operators; our side already moved (a cancel is ours).
  }
  await applyDisputes(deps, paymentId, items);
}

// Dispute notifications (chargebacks and their stages), after everything else: each dispute
// (Adyen's dispute pspReference) takes its stages in the order a dispute goes through them
// (the connector's rank), whatever order they came in; a stage at or before the one applied
// changes nothing (modules/disputes/service.ts), so a duplicate or a late one never moves a
// dispute backwards nor debits twice.
async function applyDisputes(deps: PaymentDeps, paymentId: string, items: CardNotificationRow[]): Promise<void> {
  const stages = items.flatMap((item) => {
    if (!item.dispute_data || item.success !== 1) return [];
    const d = JSON.parse(item.dispute_data) as CardDisputeStage;
    return [{ item, d }];
  }).sort((a, b) => a.d.rank - b.d.rank || a.item.received_at.localeCompare(b.item.received_at));
  for (const { item, d } of stages) {
    await deps.store.write((tx) => applyDisputeStage(tx, deps.store.engine, paymentId, {
      sourceRef: item.psp_reference, connectorAccountId: item.connector_account_id, rank: d.rank, status: d.status,
      amountCents: item.amount === null ? null : Number(item.amount), reason: item.reason, reasonCode: d.reasonCode, respondBy: d.respondBy,
    }, deps.clock.nowMs()));
  }
}

// Manual capture: the capture job calls POST /payments/{pspReference}/captures with the key
// derived from the payment id (a repeat is the same capture). Adyen only receives it: the
// payment stays requires_capture, its capture `processing`, until the CAPTURE (approved) or
// CAPTURE_FAILED (failed, authorization given back) notification. A refusal of the request
// itself fails the capture the same way.
export async function cardCaptureJob(deps: PaymentDeps, job: JobRow, workerId: string): Promise<void> {
  const { paymentId } = readPayload(job, JOB_CARD_CAPTURE);
  const { store, clock } = deps;
  const row = await readPayment(store.db, paymentId);
  if (!row || row.status !== 'requires_capture' || row.capture_status !== 'processing' || !row.connector_account_id || !row.provider_charge_id) {
    await store.write((tx) => complete(tx, job, workerId));
    return;
  }
  const resolved = await deps.connectors.forCardAccount(store.db, row.connector_account_id);
  try {
    const mod = await resolved.connector.capture(resolved.account, { paymentPspReference: row.provider_charge_id, reference: row.id, idempotencyKey: providerKey(row.id, 'capture'), amountCents: row.amount });
    await store.write(async (tx) => {
      await tx.updateTable('payments').set({ capture_reference: mod.pspReference }).where('id', '=', row.id).where('capture_reference', 'is', null).execute();
      await complete(tx, job, workerId);
    });
  } catch (error) {
    if (error instanceof ProviderUnavailable) {
      await store.write((tx) => reschedule(tx, job, workerId, clock.nowMs() + Math.min(deps.config.providerRetryBaseMs * 2 ** job.attempts, 3_600_000), error.message));
      return;
    }
    if (!(error instanceof ProviderRejected)) throw error;
    const giveBack = await store.write(async (tx) => {
      await complete(tx, job, workerId);
      const current = await readPayment(tx, row.id, { lockOn: store.engine });
      if (!current || current.status !== 'requires_capture' || current.capture_status !== 'processing') return null;
      await moveWithEvent(tx, current, 'failed', clock.nowMs(), { capture_status: 'failed', failure_code: 'capture_failed', failure_message: `The acquirer refused the capture: ${error.message.slice(0, 200)}` });
      return current.provider_charge_id;
    });
    if (giveBack) await voidAtAcquirer(deps, row.id, giveBack);
  }
}

// POST /v1/payments/{id}/capture: a requires_capture payment's capture is asked (once: a repeat
// answers the payment as it is), in one write with its job.
export async function capturePayment(deps: PaymentDeps, ctx: RequestContext, id: string): Promise<Payment> {
  const payment = await ctx.write(async (tx) => {
    const row = await loadPayment(tx, ctx, id);
    if (row.status !== 'requires_capture') throw invalidState(`${aPayment(row.status as PaymentStatus)} cannot be captured: only a requires_capture payment (an acquirer account with manual capture) is.`);
    if (row.capture_status === 'processing') return toPayment(row);
    const nowMs = ctx.clock.nowMs();
    const nowIso = new Date(nowMs).toISOString();
    const moved = await tx.updateTable('payments').set({ capture_status: 'processing', updated_at: nowIso }).where('id', '=', row.id).where('status', '=', 'requires_capture').where('capture_status', 'is', null).executeTakeFirst();
    if (Number(moved.numUpdatedRows) !== 1) throw invalidState('The payment changed while this request ran; fetch it and try again.');
    await enqueue(tx, nowMs, JOB_CARD_CAPTURE, { paymentId: row.id }, nowMs);
    return toPayment({ ...row, capture_status: 'processing', updated_at: nowIso });
  });
  deps.kickWorker();
  return payment;
}

export async function cardSyncJob(deps: PaymentDeps, job: JobRow, workerId: string): Promise<void> {
  const { paymentId } = readPayload(job, JOB_CARD_SYNC);
  try {
    await syncCardPayment(deps, paymentId);
  } catch (error) {
    if (!(error instanceof ProviderUnavailable)) throw error;
    await deps.store.write((tx) => reschedule(tx, job, workerId, deps.clock.nowMs() + Math.min(deps.config.providerRetryBaseMs * 2 ** job.attempts, 3_600_000), error.message));
    return;
  }
  await deps.store.write((tx) => complete(tx, job, workerId));
}

// Reconciliation (with the Pix one, same schedule): a live card payment still waiting for the
// acquirer after CARD_PENDING_MAX_MS is settled. Its stored notifications are applied first; if
// it is still undecided, it is canceled at the acquirer by our reference (whatever the acquirer
// decided meanwhile, nothing stays charged) and failed here. A requires_action payment whose
// action expired is canceled the same way and expires.
export async function cardReconcileJob(deps: PaymentDeps, log: FastifyBaseLogger): Promise<void> {
  const { store, clock } = deps;
  const nowMs = clock.nowMs();
  const stale = await store.db.selectFrom('payments').select(['id', 'status', 'created_at', 'action_expires_at', 'connector_account_id'])
    .where('method', '=', 'credit_card').where('connector_account_id', 'is not', null).where('status', 'in', ['pending', 'requires_action'])
    .orderBy('created_at').limit(200).execute();
  for (const p of stale) {
    const due = p.status === 'requires_action' ? p.action_expires_at !== null && Date.parse(p.action_expires_at) <= nowMs : Date.parse(p.created_at) + CARD_PENDING_MAX_MS <= nowMs;
    if (!due) continue;
    await syncCardPayment(deps, p.id);
    const row = await readPayment(store.db, p.id);
    if (!row || (row.status !== 'pending' && row.status !== 'requires_action')) continue;
    // A payment whose confirmation job still runs (the acquirer was down) is left to it.
    const job = await store.db.selectFrom('jobs').select('id').where('type', '=', 'payment.confirm').where('payload', 'like', `%${row.id}%`).executeTakeFirst();
    if (job) continue;
    let resolved: ResolvedCard;
    try {
      resolved = await deps.connectors.forCardAccount(store.db, row.connector_account_id!);
      await resolved.connector.cancelByReference(resolved.account, { paymentReference: row.id, reference: row.id, idempotencyKey: providerKey(row.id, 'reconcile-cancel') });
    } catch (error) {
      log.warn({ paymentId: row.id, err: (error as Error).message }, 'card reconciliation: the acquirer did not take the cancel; next round');
      continue;
    }
    await store.write(async (tx) => {
      const current = await readPayment(tx, row.id, { lockOn: store.engine });
      if (!current || (current.status !== 'pending' && current.status !== 'requires_action')) return;
      if (current.status === 'requires_action') await moveWithEvent(tx, current, 'expired', clock.nowMs(), { failure_code: 'action_expired', failure_message: 'The buyer did not complete 3-D Secure in time.' });
      else await moveWithEvent(tx, current, 'failed', clock.nowMs(), { failure_code: 'acquirer_no_answer', failure_message: 'The acquirer never said how the authorization ended; it was canceled there, and nothing is charged.' });
    });
  }
}

// The buyer back from 3-D Secure (our returnUrl): the acquirer decides with what the redirect
// brought (/payments/details). Only a requires_action payment is completed; any other answers
// what it is. The AUTHORISATION notification that follows finds the payment already moved.
export async function completeCardAction(deps: PaymentDeps, paymentId: string, redirectResult: string): Promise<PaymentRow> {
  const { store, clock } = deps;
  const row = await readPayment(store.db, paymentId);
  if (!row || !row.connector_account_id || row.method !== 'credit_card') throw new ApiError('NOT_FOUND', 'No such payment.');
  if (row.status !== 'requires_action') return row;
  const resolved = await deps.connectors.forCardAccount(store.db, row.connector_account_id);
  let auth: CardAuthorization;
  try {
    auth = await resolved.connector.completeAction(resolved.account, { details: { redirectResult } });
  } catch (error) {
    if (error instanceof ProviderUnavailable) throw new ApiError('PROVIDER_UNAVAILABLE', 'The card acquirer is not answering; reload this page in a moment.', { headers: { 'retry-after': '5' } });
    if (error instanceof ProviderRejected) throw new ApiError('INVALID_STATE', 'The acquirer did not accept this 3-D Secure result.');
    throw error;
  }
  const unwanted = await store.write(async (tx) => {
    const current = await readPayment(tx, paymentId, { lockOn: store.engine });
    if (!current || current.status !== 'requires_action') return current?.status === 'requires_action' || auth.status !== 'approved' ? null : auth.pspReference;
    const nowMs = clock.nowMs();
    switch (auth.status) {
      case 'approved': await approve(tx, current, { provider_charge_id: auth.pspReference, next_action: null }, nowMs); break;
      case 'declined': await moveWithEvent(tx, current, 'declined', nowMs, { failure_code: auth.code, failure_message: auth.message, next_action: null }); break;
      case 'failed': await moveWithEvent(tx, current, 'failed', nowMs, { failure_code: auth.code, failure_message: auth.message, next_action: null }); break;
      case 'canceled': await moveWithEvent(tx, current, 'canceled', nowMs, { next_action: null }); break;
      // pending or another action: the notification (or reconciliation) decides.
      default: break;
    }
    return null;
  });
  // Approved while the payment moved on (canceled, expired): given back.
  if (unwanted && (await readPayment(store.db, paymentId))?.provider_charge_id !== unwanted) await voidAtAcquirer(deps, paymentId, unwanted);
  return (await readPayment(store.db, paymentId))!;
}

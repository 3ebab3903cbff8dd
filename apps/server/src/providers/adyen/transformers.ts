import type { CardAuthorization, CardDisputeStage, CardNextAction, CardNotification, CardNotificationBatch } from '../connector.js';
import { ProviderUnavailable } from '../port.js';
import { verifyHmac } from './hmac.js';

// Request/response transformers between Adyen's Checkout API v71 and the card port, as
// hyperswitch's Adyen connector maps them (get_adyen_payment_status; its webhook statuses). An
// answer without the contract's shape is no answer (ProviderUnavailable): the same call is
// repeated under the same Idempotency-Key, never moved on garbage.

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

// Every resultCode of PaymentResponse (CheckoutService-v71.json), and what it means for us.
export const RESULT_CODES = {
  Authorised: 'approved',
  // Some methods answer Success for a completed payment (not cards, but it is in the enum).
  Success: 'approved',
  Refused: 'declined',
  Error: 'failed',
  Cancelled: 'canceled',
  // Adyen decides later: the AUTHORISATION notification says how it ended.
  Received: 'pending',
  Pending: 'pending',
  // Authentication-only flows, which we never ask for: the authorization is still to come.
  AuthenticationFinished: 'pending',
  AuthenticationNotRequired: 'pending',
  // We never ask for partial authorisations: one is not honoured (failed, and voided).
  PartiallyAuthorised: 'failed',
  // The buyer must act (3-D Secure): requires_action with the action.
  RedirectShopper: 'requires_action',
  IdentifyShopper: 'requires_action',
  ChallengeShopper: 'requires_action',
  PresentToShopper: 'requires_action',
} as const satisfies Record<string, CardAuthorization['status']>;
export type ResultCode = keyof typeof RESULT_CODES;

// Adyen's refusal reasons (docs.adyen.com "Refusal reasons") that mean "no funds".
const INSUFFICIENT_FUNDS = new Set(['Not enough balance', 'Withdrawal amount exceeded', 'Withdrawal count exceeded']);

function nextAction(action: Json | null): CardNextAction {
  if (!action) throw new ProviderUnavailable('Adyen asked for a buyer action without its `action`');
  const type = str(action.type);
  if (type === 'redirect') {
    const url = str(action.url);
    if (!url) throw new ProviderUnavailable('Adyen answered a redirect action without its url');
    const method = action.method === 'POST' ? 'POST' : 'GET';
    return { type: 'redirect', url, method, data: action };
  }
  if (type === 'threeDS2') {
    const sub = action.subtype === 'fingerprint' ? 'three_ds_fingerprint' : 'three_ds_challenge';
    return { type: sub, url: str(action.url), method: null, data: action };
  }
  throw new ProviderUnavailable(`Adyen asked for a buyer action of a type we do not perform (${String(type).slice(0, 30)})`);
}

// A PaymentResponse (or PaymentDetailsResponse) as the port's authorization.
export function toAuthorization(v: unknown): CardAuthorization {
  const r = obj(v);
  const code = str(r?.resultCode);
  if (!r || !code || !(code in RESULT_CODES)) throw new ProviderUnavailable('Adyen answered a payment without a known resultCode');
  const pspReference = str(r.pspReference);
  const reason = str(r.refusalReason);
  switch (RESULT_CODES[code as ResultCode]) {
    case 'approved':
      if (!pspReference) throw new ProviderUnavailable('Adyen authorised a payment without its pspReference');
      return { status: 'approved', pspReference };
    case 'declined':
      return reason && INSUFFICIENT_FUNDS.has(reason)
        ? { status: 'declined', pspReference, code: 'insufficient_funds', message: 'The card has insufficient funds.' }
        : { status: 'declined', pspReference, code: 'card_declined', message: reason ? `The card was declined (${reason.slice(0, 80)}).` : 'The card was declined.' };
    case 'failed':
      return { status: 'failed', pspReference, code: 'acquirer_error', message: code === 'PartiallyAuthorised' ? 'The acquirer authorised only part of the amount; nothing was kept.' : `The acquirer could not process the payment${reason ? ` (${reason.slice(0, 80)})` : ''}.` };
    case 'canceled':
      return { status: 'canceled', pspReference };
    case 'pending':
      return { status: 'pending', pspReference };
    case 'requires_action':
      return { status: 'requires_action', pspReference, action: nextAction(obj(r.action)) };
  }
}

// A modification's answer (PaymentCaptureResponse, PaymentRefundResponse,
// PaymentCancelResponse, StandalonePaymentCancelResponse): always `received`.
export function toModification(v: unknown): { pspReference: string; status: 'received' } {
  const r = obj(v);
  const pspReference = str(r?.pspReference);
  if (!r || !pspReference || r.status !== 'received') throw new ProviderUnavailable('Adyen answered a modification without its pspReference and status received');
  return { pspReference, status: 'received' };
}

// A batch `{live, notificationItems: [{NotificationRequestItem: {...}}]}`: each item's HMAC is
// checked with the connector account's key; only those that verify are hints.
export function verifyBatch(hexKey: string, merchantAccount: string, body: unknown): CardNotificationBatch {
  const items = obj(body)?.notificationItems;
  const out: CardNotificationBatch = { accepted: [], rejected: 0 };
  if (!Array.isArray(items)) return out;
  for (const wrapper of items.slice(0, 100)) {
    const item = obj(obj(wrapper)?.NotificationRequestItem);
    if (!item) {
      out.rejected++;
      continue;
    }
    const amount = obj(item.amount);
    const signature = obj(item.additionalData)?.hmacSignature;
    if (!verifyHmac(hexKey, { ...item, amount: amount ?? undefined }, signature) || item.merchantAccountCode !== merchantAccount) {
      out.rejected++;
      continue;
    }
    const pspReference = str(item.pspReference);
    const eventCode = str(item.eventCode);
    if (!pspReference || !eventCode) {
      out.rejected++;
      continue;
    }
    out.accepted.push({
      eventCode,
      success: item.success === 'true' || item.success === true,
      pspReference,
      originalReference: str(item.originalReference),
      merchantReference: str(item.merchantReference) ?? '',
      amountCents: typeof amount?.value === 'number' ? amount.value : null,
      currency: str(amount?.currency),
      reason: str(item.reason),
      eventDate: str(item.eventDate),
      dispute: disputeStage(eventCode, obj(item.additionalData)),
    } satisfies CardNotification);
  }
  return out;
}

// Dispute notifications (Webhooks-v1 "Dispute" webhooks), mapped as hyperswitch's Adyen connector
// maps them (its dispute stage and status from eventCode and additionalData.disputeStatus), in
// the order a dispute goes through them. REQUEST_FOR_INFORMATION (which hyperswitch leaves out)
// comes first: the issuer asks before it charges back.
//   REQUEST_FOR_INFORMATION     needs_response (pre-dispute; no money moves)
//   NOTIFICATION_OF_CHARGEBACK  needs_response (the chargeback is announced; no money yet)
//   CHARGEBACK                  lost (the funds were deducted): needs_response when disputeStatus
//                               is Undefended or Unresponded, under_review when Pending or
//                               Responded, won when Won. Adyen sends no disputeStatus for
//                               payments processed in Brazil: lost.
//   CHARGEBACK_REVERSED         won (the funds come back); under_review when disputeStatus is
//                               Pending (the issuer may still answer)
//   SECOND_CHARGEBACK           lost (pre-arbitration lost)
export const DISPUTE_EVENT_CODES = ['REQUEST_FOR_INFORMATION', 'NOTIFICATION_OF_CHARGEBACK', 'CHARGEBACK', 'CHARGEBACK_REVERSED', 'SECOND_CHARGEBACK'] as const;

function isoOrNull(v: unknown): string | null {
  const s = str(v);
  if (!s || s.length > 40) return null;
  const ms = Date.parse(s);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

export function disputeStage(eventCode: string, additionalData: Json | null): CardDisputeStage | null {
  const rank = (DISPUTE_EVENT_CODES as readonly string[]).indexOf(eventCode);
  if (rank < 0) return null;
  const disputeStatus = str(additionalData?.disputeStatus);
  let status: CardDisputeStage['status'];
  switch (eventCode) {
    case 'CHARGEBACK':
      status = disputeStatus === 'Won' ? 'won'
        : disputeStatus === 'Undefended' || disputeStatus === 'Unresponded' ? 'needs_response'
          : disputeStatus === 'Pending' || disputeStatus === 'Responded' ? 'under_review'
            : 'lost';
      break;
    case 'CHARGEBACK_REVERSED':
      status = disputeStatus === 'Pending' ? 'under_review' : 'won';
      break;
    case 'SECOND_CHARGEBACK':
      status = 'lost';
      break;
    default:
      status = 'needs_response';
  }
  const code = str(additionalData?.chargebackReasonCode) ?? str(additionalData?.rfiReasonCode);
  return { rank, status, respondBy: isoOrNull(additionalData?.defensePeriodEndsAt), reasonCode: code ? code.slice(0, 40) : null };
}

// Payment state machine as a table: the only moves the service can make. Anything else is an
// INVALID_STATE error, and every illegal move has a test.
export const PAYMENT_STATUSES = [
  'pending',
  'requires_action',
  'requires_capture',
  'approved',
  'declined',
  'failed',
  'canceled',
  'expired',
  'partially_refunded',
  'refunded',
] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const PAYMENT_TRANSITIONS: Readonly<Record<PaymentStatus, readonly PaymentStatus[]>> = {
  // A card payment whose acquirer asks the buyer to act (3-D Secure) waits in requires_action;
  // completing the action decides it, and one never completed expires.
  pending: ['requires_action', 'requires_capture', 'approved', 'declined', 'failed', 'canceled', 'expired'],
  requires_action: ['requires_capture', 'approved', 'declined', 'failed', 'canceled', 'expired'],
  // Manual capture (the acquirer account's setting): authorized, not yet captured. A capture the
  // acquirer confirms approves it (fees, receivables); one that fails fails it (the authorization
  // is given back). Nothing is owed to the merchant before the capture succeeds.
  requires_capture: ['approved', 'failed', 'canceled'],
  approved: ['partially_refunded', 'refunded'],
  partially_refunded: ['partially_refunded', 'refunded'],
  declined: [],
  failed: [],
  canceled: [],
  expired: [],
  refunded: [],
};

export function canTransition(from: PaymentStatus, to: PaymentStatus): boolean {
  return PAYMENT_TRANSITIONS[from].includes(to);
}

// "An approved payment", "A partially refunded payment": a status as words in a sentence.
export function aPayment(status: PaymentStatus): string {
  const words = status.replace(/_/g, ' ');
  return `${/^[aeiou]/.test(words) ? 'An' : 'A'} ${words} payment`;
}

export class IllegalTransition extends Error {
  constructor(readonly from: PaymentStatus, readonly to: PaymentStatus) {
    super(`${aPayment(from)} cannot become ${to.replace(/_/g, ' ')}.`);
    this.name = 'IllegalTransition';
  }
}

export function assertTransition(from: PaymentStatus, to: PaymentStatus): void {
  if (!canTransition(from, to)) throw new IllegalTransition(from, to);
}

export const TERMINAL_STATUSES: readonly PaymentStatus[] = PAYMENT_STATUSES.filter((s) => PAYMENT_TRANSITIONS[s].length === 0);

// Settlement state machine. A merchant settlement is `held` when the merchant account has no
// payout bank account yet; setting one releases it (`pending`, with the account's snapshot)
// and the payout follows. A settlement paid by Pix at a PSP is also `held` (pending -> held)
// when the platform's balance there, read before the run's payouts are sent, does not cover it;
// the next run (or an operator's retry) releases it (held -> pending), oldest first. A payout by Pix at a PSP (issue 26) is `processing` from the moment it
// is sent until the PSP says REALIZADO (`paid`, with its end-to-end id) or NAO_REALIZADO
// (`failed`, with its reason); the sandbox pays or refuses at once (pending -> paid | failed). A
// failed payout's receivables go back to pending for the next run (a new settlement), so
// `failed` is final for this one.
export const SETTLEMENT_STATUSES = ['held', 'pending', 'processing', 'paid', 'failed'] as const;
export type SettlementStatus = (typeof SETTLEMENT_STATUSES)[number];

export const SETTLEMENT_TRANSITIONS: Readonly<Record<SettlementStatus, readonly SettlementStatus[]>> = {
  held: ['pending'],
  pending: ['held', 'processing', 'paid', 'failed'],
  processing: ['paid', 'failed'],
  paid: [],
  failed: [],
};

// The other tables below are used the same way: a guarded move is the status a row must have
// and the one it takes, checked against its table before any SQL runs. Use both in the
// UPDATE's WHERE (from) and SET (to), so a row that moved meanwhile is left alone.
export class IllegalMove extends Error {
  constructor(readonly what: string, readonly from: string, readonly to: string) {
    const words = from.replace(/_/g, ' ');
    super(`${/^[aeiou]/.test(words) ? 'An' : 'A'} ${words} ${what} cannot become ${to.replace(/_/g, ' ')}.`);
    this.name = 'IllegalMove';
  }
}

function guardedMove<S extends string, F extends S, T extends S>(table: Readonly<Record<S, readonly S[]>>, what: string, from: F, to: T): { from: F; to: T } {
  if (!table[from].includes(to)) throw new IllegalMove(what, from, to);
  return { from, to };
}

export function settlementMove<F extends SettlementStatus, T extends SettlementStatus>(from: F, to: T): { from: F; to: T } {
  return guardedMove(SETTLEMENT_TRANSITIONS, 'settlement', from, to);
}

// Settlement runs: `pending` (asked for through the admin API, waiting for a worker) ->
// `running` -> `completed`. The daily schedule and the bench write a run as `running` directly.
// A worker that finds its run already `running` (a lost lease) carries on; `completed` is final.
export const SETTLEMENT_RUN_STATUSES = ['pending', 'running', 'completed'] as const;
export type SettlementRunStatus = (typeof SETTLEMENT_RUN_STATUSES)[number];

export const SETTLEMENT_RUN_TRANSITIONS: Readonly<Record<SettlementRunStatus, readonly SettlementRunStatus[]>> = {
  pending: ['running'],
  running: ['completed'],
  completed: [],
};

export function settlementRunMove<F extends SettlementRunStatus, T extends SettlementRunStatus>(from: F, to: T): { from: F; to: T } {
  return guardedMove(SETTLEMENT_RUN_TRANSITIONS, 'settlement run', from, to);
}

// Refunds: `pending` until the provider answers; `succeeded` (the money went back) or `failed`
// (the provider refused it), both final. A provider that is down leaves it pending (retried).
export const REFUND_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

export const REFUND_TRANSITIONS: Readonly<Record<RefundStatus, readonly RefundStatus[]>> = {
  pending: ['succeeded', 'failed'],
  succeeded: [],
  failed: [],
};

export function refundMove<F extends RefundStatus, T extends RefundStatus>(from: F, to: T): { from: F; to: T } {
  return guardedMove(REFUND_TRANSITIONS, 'refund', from, to);
}

// Webhook deliveries: `pending` while attempts remain (a failed attempt reschedules it, pending
// again), then `succeeded` (a 2xx) or `failed` (out of attempts, 410 Gone, endpoint disabled or
// deleted, event purged). Both are final: sending an event again makes a new delivery.
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

export const WEBHOOK_DELIVERY_TRANSITIONS: Readonly<Record<WebhookDeliveryStatus, readonly WebhookDeliveryStatus[]>> = {
  pending: ['pending', 'succeeded', 'failed'],
  succeeded: [],
  failed: [],
};

export function deliveryMove<F extends WebhookDeliveryStatus, T extends WebhookDeliveryStatus>(from: F, to: T): { from: F; to: T } {
  return guardedMove(WEBHOOK_DELIVERY_TRANSITIONS, 'webhook delivery', from, to);
}

// Disputes (issue 27): a card chargeback or a Pix MED return. `needs_response` while the
// merchant may still answer the issuer (a request for information, a notification of
// chargeback); `under_review` while the defence is with the issuer; `lost` (the payees are
// debited) or `won`. Neither is final at the card schemes: a chargeback reversed makes a lost
// dispute won (the debit given back), and a second chargeback (pre-arbitration) makes a won one
// lost again. Moves happen only forward along the source's stages (modules/disputes/service.ts):
// a notification of an earlier stage arriving late moves nothing.
export const DISPUTE_STATUSES = ['needs_response', 'under_review', 'won', 'lost'] as const;
export type DisputeStatus = (typeof DISPUTE_STATUSES)[number];

export const DISPUTE_TRANSITIONS: Readonly<Record<DisputeStatus, readonly DisputeStatus[]>> = {
  needs_response: ['under_review', 'won', 'lost'],
  under_review: ['won', 'lost'],
  // A reversal the issuer is still reviewing (CHARGEBACK_REVERSED, disputeStatus Pending), or done.
  lost: ['under_review', 'won'],
  // A second chargeback (pre-arbitration lost).
  won: ['lost'],
};

export function disputeMove<F extends DisputeStatus, T extends DisputeStatus>(from: F, to: T): { from: F; to: T } {
  return guardedMove(DISPUTE_TRANSITIONS, 'dispute', from, to);
}

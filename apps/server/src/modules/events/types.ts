// Every event type the service emits, in one list: emitting code can only name these (the type
// of emitEvents/recordEvent), and webhook endpoints can only subscribe to these (or "*"). A new
// event is added here first.
export const EVENT_TYPES = [
  'payment.created',
  'payment.approved',
  'payment.declined',
  'payment.failed',
  'payment.canceled',
  'payment.expired',
  'payment.partially_refunded',
  'payment.refunded',
  // Live Pix (issue 25): money that arrived for a payment that could no longer take it, returned
  // to the payer (a devolução); the object is the payment.
  'payment.late_pix_returned',
  // Cards (issue 27): the acquirer asks the buyer to act (3-D Secure); `nextAction` says how.
  'payment.requires_action',
  'payment.requires_capture',
  'refund.created',
  'refund.succeeded',
  'refund.failed',
  'recipient.created',
  'recipient.updated',
  'receivable.created',
  'receivable.updated',
  'settlement.created',
  'settlement.updated',
  'settlement.processing',
  'settlement.paid',
  'settlement.failed',
  'webhook_endpoint.disabled',
  // Disputes (issue 27): a chargeback or Pix MED return made, moved (a stage, a deadline), and
  // decided (won or lost; sent again if a reversal or a second chargeback decides it again).
  'dispute.created',
  'dispute.updated',
  'dispute.closed',
  // Checkout sessions (issue 15): subscribable ahead of them, as the SDK already offers them.
  'checkout_session.completed',
  'checkout_session.expired',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

// Sent by POST /v1/webhook-endpoints/{id}/test to that one endpoint whatever its filter; not
// something to subscribe to.
export const TEST_EVENT_TYPE = 'webhook.test';

// What an endpoint's `events` filter may list.
export const SUBSCRIBABLE_EVENT_TYPES = ['*', ...EVENT_TYPES] as const;

import type { CardNextAction } from './connector.js';

// The payment provider port. The service talks to acquirers only through this interface; the
// sandbox implements it in-house, a real acquirer adapter implements it over HTTP.
export interface AuthorizeInput {
  // Derived from our own ids: retrying the same call can never charge twice.
  idempotencyKey: string;
  amountCents: number;
  currency: 'BRL';
  cardToken: string;
  installments: number;
  livemode: boolean;
}

// The sandbox answers approved or declined at once; a real acquirer (providers/adyen/) may also
// fail, cancel, decide later (pending: its notification says how it ended) or ask the buyer to
// act (3-D Secure).
export type AuthorizeResult =
  | { status: 'approved'; chargeId: string }
  | { status: 'declined'; code: 'card_declined' | 'insufficient_funds'; message: string; chargeId?: string | null }
  | { status: 'failed'; code: string; message: string; chargeId: string | null }
  | { status: 'canceled'; chargeId: string | null }
  | { status: 'pending'; chargeId: string | null }
  | { status: 'requires_action'; chargeId: string | null; action: CardNextAction };

// A transient failure: the outcome is unknown, so the call must be retried with the same key.
export class ProviderUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderUnavailable';
  }
}

// A definitive refusal (e.g. a closed bank account): retrying will not help.
export class ProviderRejected extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
    this.name = 'ProviderRejected';
  }
}

export interface PayoutInput {
  idempotencyKey: string;
  amountCents: number;
  bankAccount: { bankCode: string; agency: string; account: string; accountType: string } | null;
  livemode: boolean;
}

export interface RefundInput {
  idempotencyKey: string;
  chargeId: string | null; // null for Pix: the refund goes back to the payer's key
  amountCents: number;
  livemode: boolean;
}

export interface PaymentProvider {
  readonly name: string;
  authorize(input: AuthorizeInput): Promise<AuthorizeResult>;
  // Gives back an approval that our side could not honour (e.g. canceled meanwhile).
  void(input: { idempotencyKey: string; chargeId: string }): Promise<void>;
  refund(input: RefundInput): Promise<{ refundId: string }>;
  payout(input: PayoutInput): Promise<{ payoutId: string }>;
}

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

export type AuthorizeResult =
  | { status: 'approved'; chargeId: string }
  | { status: 'declined'; code: 'card_declined' | 'insufficient_funds'; message: string };

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

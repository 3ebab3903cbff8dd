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

export interface PaymentProvider {
  readonly name: string;
  authorize(input: AuthorizeInput): Promise<AuthorizeResult>;
  // Gives back an approval that our side could not honour (e.g. canceled meanwhile).
  void(input: { idempotencyKey: string; chargeId: string }): Promise<void>;
}

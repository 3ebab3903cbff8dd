import { createHash } from 'node:crypto';
import type { Store } from '../store/index.js';
import type { TestOutcome } from '../domain/card.js';
import { defer, selectWhere } from '../store/index.js';
import { ProviderRejected, ProviderUnavailable, type AuthorizeInput, type AuthorizeResult, type PaymentProvider, type PayoutInput, type RefundInput } from './port.js';
import { nowIso } from '../clock.js';

export const SANDBOX_FAILING_ACCOUNT = '0000000-0';

// Deterministic sandbox acquirer. A charge is named by its idempotency key (its id is derived
// from the key, as refunds and payouts below are), so the same call twice is the same charge,
// as at a real acquirer. Only the "answer lost" token needs a memory, because its second call
// must answer differently from its first: those charges are kept in the store.
export class SandboxProvider implements PaymentProvider {
  readonly name = 'sandbox';
  constructor(private readonly store: Store, private readonly outcomeOf: (cardToken: string) => Promise<TestOutcome>) {}

  async authorize(input: AuthorizeInput): Promise<AuthorizeResult> {
    const outcome = await this.outcomeOf(input.cardToken);
    if (outcome === 'provider_error') throw new ProviderUnavailable('sandbox acquirer unavailable (tok_provider_error)');
    const chargeId = 'ch_' + createHash('sha256').update(input.idempotencyKey).digest('hex').slice(0, 24);
    if (outcome !== 'provider_timeout') return toResult(outcome, chargeId);

    const [existing] = await selectWhere(this.store.db, 'sandbox_provider_charges', ['charge_id', 'outcome'], { idempotency_key: input.idempotencyKey });
    if (existing) return toResult('approve', existing.charge_id);
    // A concurrent second call with the same key loses on the primary key and is retried by
    // its job, which then finds this charge.
    await this.store.write((tx) => defer(tx, 'sandbox_provider_charges', [{
      idempotency_key: input.idempotencyKey,
      charge_id: chargeId,
      outcome,
      amount: input.amountCents,
      created_at: nowIso(this.store.clock),
    }]));
    // The charge is made, but the answer is "lost" on the way back: the caller must retry and
    // get this same charge, not a new one.
    throw new ProviderUnavailable('sandbox acquirer timed out (tok_provider_timeout)');
  }

  async void(): Promise<void> {
    // Nothing to give back in the sandbox.
  }

  // Deterministic ids from the idempotency key: the same call twice is the same refund/payout.
  async refund(input: RefundInput): Promise<{ refundId: string }> {
    return { refundId: 're_' + createHash('sha256').update(input.idempotencyKey).digest('hex').slice(0, 24) };
  }

  // Sandbox payouts succeed, except to the account number 0000000-0 (a "closed account"), which
  // lets merchants and our tests see a failed settlement.
  async payout(input: PayoutInput): Promise<{ payoutId: string }> {
    if (input.bankAccount?.account === SANDBOX_FAILING_ACCOUNT) throw new ProviderRejected('account_closed', 'The destination bank account is closed.');
    return { payoutId: 'po_' + createHash('sha256').update(input.idempotencyKey).digest('hex').slice(0, 24) };
  }
}

function toResult(outcome: TestOutcome, chargeId: string): AuthorizeResult {
  switch (outcome) {
    case 'decline': return { status: 'declined', code: 'card_declined', message: 'The card was declined.' };
    case 'insufficient_funds': return { status: 'declined', code: 'insufficient_funds', message: 'The card has insufficient funds.' };
    default: return { status: 'approved', chargeId };
  }
}

// Payment state machine as a table: the only moves the service can make. Anything else is an
// INVALID_STATE error, and every illegal move has a test.
export const PAYMENT_STATUSES = [
  'pending',
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
  pending: ['approved', 'declined', 'failed', 'canceled', 'expired'],
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
// and the payout follows. A payout the bank refuses is `failed`, and its receivables go back
// to pending for the next run (a new settlement), so `failed` is final for this one.
export const SETTLEMENT_STATUSES = ['held', 'pending', 'paid', 'failed'] as const;
export type SettlementStatus = (typeof SETTLEMENT_STATUSES)[number];

export const SETTLEMENT_TRANSITIONS: Readonly<Record<SettlementStatus, readonly SettlementStatus[]>> = {
  held: ['pending'],
  pending: ['paid', 'failed'],
  paid: [],
  failed: [],
};

// A guarded move of a settlement: the status it must have and the one it takes, checked against
// the table (use both in the UPDATE's WHERE and SET).
export function settlementMove<F extends SettlementStatus, T extends SettlementStatus>(from: F, to: T): { from: F; to: T } {
  if (!SETTLEMENT_TRANSITIONS[from].includes(to)) throw new Error(`A ${from} settlement cannot become ${to}.`);
  return { from, to };
}

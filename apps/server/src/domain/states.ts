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

export class IllegalTransition extends Error {
  constructor(readonly from: PaymentStatus, readonly to: PaymentStatus) {
    super(`A ${from} payment cannot become ${to}.`);
    this.name = 'IllegalTransition';
  }
}

export function assertTransition(from: PaymentStatus, to: PaymentStatus): void {
  if (!canTransition(from, to)) throw new IllegalTransition(from, to);
}

export const TERMINAL_STATUSES: readonly PaymentStatus[] = PAYMENT_STATUSES.filter((s) => PAYMENT_TRANSITIONS[s].length === 0);

// Acquirer/platform fee computation. Money is integer centavos; percentages
// are integer basis points (199 = 1.99%). Only BigInt math touches products so
// no float rounding can leak into a fee.

export type PaymentMethod = 'pix' | 'credit_card';

export const PAYMENT_METHODS: readonly PaymentMethod[] = ['pix', 'credit_card'];

export interface MethodFee {
  /** Integer basis points, 0..10000. */
  percentBps: number;
  /** Integer centavos, >= 0. */
  fixedCents: number;
}

export type FeeSchedule = Record<PaymentMethod, MethodFee>;

export const DEFAULT_FEE_SCHEDULE: Readonly<FeeSchedule> = Object.freeze({
  pix: Object.freeze({ percentBps: 99, fixedCents: 0 }),
  credit_card: Object.freeze({ percentBps: 399, fixedCents: 39 }),
});

export interface FeeResult {
  feeCents: number;
  netCents: number;
}

function assert(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(`assertion failed: ${message}`);
}

function isNonNegativeSafeInteger(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

/** Throws if a schedule entry is not integer bps in 0..10000 and integer cents >= 0. */
export function assertFeeSchedule(schedule: FeeSchedule): void {
  for (const method of PAYMENT_METHODS) {
    const entry = schedule[method];
    assert(entry !== undefined, `fee schedule has ${method}`);
    assert(
      isNonNegativeSafeInteger(entry.percentBps) && entry.percentBps <= 10_000,
      `${method}.percentBps is an integer in 0..10000`,
    );
    assert(isNonNegativeSafeInteger(entry.fixedCents), `${method}.fixedCents is a non-negative integer`);
  }
}

/**
 * fee = ceil(amount * bps / 10000) + fixed, capped at the amount so the net is
 * never negative. Rounding up favours the platform by at most one centavo and
 * keeps the fee monotone in the amount.
 */
export function computeFee(
  amountCents: number,
  method: PaymentMethod,
  schedule: FeeSchedule = DEFAULT_FEE_SCHEDULE,
): FeeResult {
  assert(isNonNegativeSafeInteger(amountCents), 'amountCents is a non-negative safe integer');
  assert((PAYMENT_METHODS as readonly string[]).includes(method), 'method is a known payment method');
  assertFeeSchedule(schedule);
  const { percentBps, fixedCents } = schedule[method];

  const amount = BigInt(amountCents);
  const percentPart = (amount * BigInt(percentBps) + 9_999n) / 10_000n;
  const uncapped = percentPart + BigInt(fixedCents);
  const fee = uncapped < amount ? uncapped : amount;

  const feeCents = Number(fee);
  const netCents = amountCents - feeCents;
  assert(Number.isSafeInteger(feeCents) && feeCents >= 0, 'fee is a non-negative integer');
  assert(Number.isSafeInteger(netCents) && netCents >= 0, 'net is a non-negative integer');
  assert(feeCents + netCents === amountCents, 'fee + net === amount');
  return { feeCents, netCents };
}

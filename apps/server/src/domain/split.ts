// Split of a sale's net value between the merchant and recipients.
//
// Money is integer centavos and percentages are integer basis points
// (10000 = 100%); every product goes through BigInt so no float ever rounds
// money. Percentage shares are floored and the merchant always receives the
// remainder, so rounding dust goes to the merchant and the lines always sum
// to the net exactly.
//
// Decisions:
// - The merchant line is always first (index 0) and always present, even
//   when it is 0. Recipient lines follow in the rule's share order.
// - The same recipientId may appear more than once in a rule; each share
//   becomes its own line (not merged) so every line maps 1:1 to a share of
//   the rule, which keeps auditing and refund proration trivial. Consumers
//   that want per-recipient totals aggregate themselves.
// - A percentage share that floors to 0 still yields a 0 line (same reason).
// - conditions.minAmount/maxAmount are inclusive bounds in centavos on the
//   GROSS sale amount; the fit check uses the NET amount.

import { PAYMENT_METHODS, type PaymentMethod } from './fees.js';

export type SplitShare =
  | { recipientId: string; percentage: number }
  | { recipientId: string; amountCents: number };

export interface SplitRuleConditions {
  method?: PaymentMethod;
  /** Inclusive lower bound on the gross sale amount, centavos. */
  minAmount?: number;
  /** Inclusive upper bound on the gross sale amount, centavos. */
  maxAmount?: number;
}

export interface SplitRule {
  id: string;
  priority: number;
  createdAt: string;
  active: boolean;
  conditions?: SplitRuleConditions;
  splits: SplitShare[];
}

export interface SaleForSplit {
  amountCents: number;
  method: PaymentMethod;
  netCents: number;
}

export type SplitPayee = { type: 'merchant' } | { type: 'recipient'; id: string };

export interface SplitLine {
  payee: SplitPayee;
  amountCents: number;
}

export interface ValidationError {
  param: string;
  message: string;
}

export const MAX_SPLITS_PER_RULE = 20;
export const MAX_PRIORITY = 1_000_000;
const FULL_BPS = 10_000;

function assert(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(`assertion failed: ${message}`);
}

function isNonNegativeSafeInteger(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Converts a percentage (0 < p <= 100, at most two decimals) to integer basis
 * points, or null if it is out of range or has more precision. The 1e-9
 * tolerance absorbs binary float noise (33.33 * 100 = 3332.9999999999995)
 * while still rejecting a genuine third decimal (0.001 * 100 = 0.1).
 */
export function percentageToBps(percentage: number): number | null {
  if (typeof percentage !== 'number' || !Number.isFinite(percentage)) return null;
  if (!(percentage > 0 && percentage <= 100)) return null;
  const scaled = percentage * 100;
  const bps = Math.round(scaled);
  if (Math.abs(scaled - bps) > 1e-9) return null;
  if (bps < 1 || bps > FULL_BPS) return null;
  return bps;
}

function isPercentageShare(share: SplitShare): share is { recipientId: string; percentage: number } {
  return 'percentage' in share && share.percentage !== undefined;
}

// Rules reaching the money math must already have passed validateSplitRuleShape;
// a malformed one here is a programming/storage bug, so it throws.
function shareAmountCents(netCents: bigint, share: SplitShare): bigint {
  if (isPercentageShare(share)) {
    assert(!('amountCents' in share && (share as { amountCents?: unknown }).amountCents !== undefined),
      'share has exactly one of percentage/amountCents');
    const bps = percentageToBps(share.percentage);
    assert(bps !== null, 'share percentage is valid');
    return (netCents * BigInt(bps)) / BigInt(FULL_BPS);
  }
  assert(
    typeof share.amountCents === 'number' && Number.isSafeInteger(share.amountCents) && share.amountCents > 0,
    'share amountCents is a positive safe integer',
  );
  return BigInt(share.amountCents);
}

function shareAmounts(netCents: number, rule: SplitRule): bigint[] {
  assert(isNonNegativeSafeInteger(netCents), 'netCents is a non-negative safe integer');
  assert(Array.isArray(rule.splits), 'rule.splits is an array');
  const net = BigInt(netCents);
  return rule.splits.map((share) => shareAmountCents(net, share));
}

function sum(values: bigint[]): bigint {
  return values.reduce((acc, v) => acc + v, 0n);
}

/** True when the recipient shares of `rule` fit in `netCents`. */
export function ruleFits(netCents: number, rule: SplitRule): boolean {
  return sum(shareAmounts(netCents, rule)) <= BigInt(netCents);
}

/**
 * Order used for rule selection: priority asc, then createdAt asc, then id asc.
 * createdAt is compared as an instant first (tolerates mixed ISO offsets) and
 * falls back to string order for equal/unparseable instants, which keeps
 * sub-millisecond ordering for same-format timestamps. id makes it total.
 */
export function compareRules(a: SplitRule, b: SplitRule): number {
  if (a.priority !== b.priority) return a.priority - b.priority;
  const ta = Date.parse(a.createdAt);
  const tb = Date.parse(b.createdAt);
  if (Number.isFinite(ta) && Number.isFinite(tb) && ta !== tb) return ta - tb;
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  return 0;
}

function conditionsMatch(rule: SplitRule, sale: SaleForSplit): boolean {
  const c = rule.conditions;
  if (c === undefined) return true;
  if (c.method !== undefined && c.method !== sale.method) return false;
  if (c.minAmount !== undefined && sale.amountCents < c.minAmount) return false;
  if (c.maxAmount !== undefined && sale.amountCents > c.maxAmount) return false;
  return true;
}

/**
 * First active rule (in compareRules order) whose conditions match the sale
 * and whose shares fit in the net value; null means the merchant takes all.
 * A rule that does not fit is skipped rather than failing the sale.
 */
export function selectRule(rules: readonly SplitRule[], sale: SaleForSplit): SplitRule | null {
  assert(isNonNegativeSafeInteger(sale.amountCents), 'sale.amountCents is a non-negative safe integer');
  assert(isNonNegativeSafeInteger(sale.netCents), 'sale.netCents is a non-negative safe integer');
  assert(sale.netCents <= sale.amountCents, 'sale.netCents <= sale.amountCents');
  assert((PAYMENT_METHODS as readonly string[]).includes(sale.method), 'sale.method is known');
  const ordered = [...rules].sort(compareRules);
  for (const rule of ordered) {
    if (!rule.active) continue;
    if (!conditionsMatch(rule, sale)) continue;
    if (!ruleFits(sale.netCents, rule)) continue;
    return rule;
  }
  return null;
}

/**
 * Splits `netCents`: merchant line first (remainder, possibly 0), then one
 * line per share in rule order. Throws if the shares do not fit.
 */
export function computeSplit(netCents: number, rule: SplitRule | null): SplitLine[] {
  assert(isNonNegativeSafeInteger(netCents), 'netCents is a non-negative safe integer');
  if (rule === null) return [{ payee: { type: 'merchant' }, amountCents: netCents }];

  const amounts = shareAmounts(netCents, rule);
  const recipientsTotal = sum(amounts);
  if (recipientsTotal > BigInt(netCents)) {
    throw new Error(`split rule ${rule.id} does not fit in net value`);
  }
  const merchant = BigInt(netCents) - recipientsTotal;

  const lines: SplitLine[] = [{ payee: { type: 'merchant' }, amountCents: Number(merchant) }];
  rule.splits.forEach((share, i) => {
    lines.push({ payee: { type: 'recipient', id: share.recipientId }, amountCents: Number(amounts[i]) });
  });

  let total = 0;
  for (const line of lines) {
    assert(Number.isSafeInteger(line.amountCents) && line.amountCents >= 0, 'split line is a non-negative integer');
    total += line.amountCents;
  }
  assert(total === netCents, 'split lines sum exactly to netCents');
  return lines;
}

/**
 * Shape validation for a rule coming from the API. Server-assigned fields
 * (id, createdAt) are not checked. Returns [] when valid. Messages never
 * echo input values.
 */
export function validateSplitRuleShape(rule: unknown): ValidationError[] {
  const errors: ValidationError[] = [];
  if (!isPlainObject(rule)) return [{ param: 'rule', message: 'must be an object' }];

  const priority = rule.priority;
  if (priority === undefined) {
    errors.push({ param: 'priority', message: 'is required' });
  } else if (!isNonNegativeSafeInteger(priority) || priority > MAX_PRIORITY) {
    errors.push({ param: 'priority', message: `must be an integer between 0 and ${MAX_PRIORITY}` });
  }

  if (rule.active !== undefined && typeof rule.active !== 'boolean') {
    errors.push({ param: 'active', message: 'must be a boolean' });
  }

  if (rule.conditions !== undefined) {
    const c = rule.conditions;
    if (!isPlainObject(c)) {
      errors.push({ param: 'conditions', message: 'must be an object' });
    } else {
      if (c.method !== undefined && !(PAYMENT_METHODS as readonly unknown[]).includes(c.method)) {
        errors.push({ param: 'conditions.method', message: 'must be one of pix, credit_card' });
      }
      const minOk = c.minAmount === undefined || isNonNegativeSafeInteger(c.minAmount);
      const maxOk = c.maxAmount === undefined || isNonNegativeSafeInteger(c.maxAmount);
      if (!minOk) errors.push({ param: 'conditions.minAmount', message: 'must be a non-negative integer (centavos)' });
      if (!maxOk) errors.push({ param: 'conditions.maxAmount', message: 'must be a non-negative integer (centavos)' });
      if (
        minOk && maxOk && typeof c.minAmount === 'number' && typeof c.maxAmount === 'number' &&
        c.minAmount > c.maxAmount
      ) {
        errors.push({ param: 'conditions.minAmount', message: 'must be less than or equal to conditions.maxAmount' });
      }
    }
  }

  const splits = rule.splits;
  if (!Array.isArray(splits)) {
    errors.push({ param: 'splits', message: 'must be an array' });
    return errors;
  }
  if (splits.length < 1 || splits.length > MAX_SPLITS_PER_RULE) {
    errors.push({ param: 'splits', message: `must have between 1 and ${MAX_SPLITS_PER_RULE} items` });
  }

  let totalBps = 0;
  splits.forEach((share: unknown, i: number) => {
    const p = `splits[${i}]`;
    if (!isPlainObject(share)) {
      errors.push({ param: p, message: 'must be an object' });
      return;
    }
    if (typeof share.recipientId !== 'string' || share.recipientId.length === 0) {
      errors.push({ param: `${p}.recipientId`, message: 'must be a non-empty string' });
    }
    const hasPercentage = share.percentage !== undefined;
    const hasAmount = share.amountCents !== undefined;
    if (hasPercentage === hasAmount) {
      errors.push({ param: p, message: 'must have exactly one of percentage or amountCents' });
      return;
    }
    if (hasPercentage) {
      const bps = typeof share.percentage === 'number' ? percentageToBps(share.percentage) : null;
      if (bps === null) {
        errors.push({
          param: `${p}.percentage`,
          message: 'must be a number greater than 0 and at most 100 with at most two decimal places',
        });
      } else {
        totalBps += bps;
      }
    } else if (
      !(typeof share.amountCents === 'number' && Number.isSafeInteger(share.amountCents) && share.amountCents > 0)
    ) {
      errors.push({ param: `${p}.amountCents`, message: 'must be a positive integer (centavos)' });
    }
  });
  if (totalBps > FULL_BPS) {
    errors.push({ param: 'splits', message: 'must have percentages that sum to at most 100' });
  }
  return errors;
}

/**
 * Distributes a refund/chargeback reduction over the receivables of a sale in
 * proportion to their amounts. Index 0 is the merchant: every other entry is
 * floored and the merchant absorbs the remainder, mirroring computeSplit.
 * When the merchant's own receivable is too small to absorb that remainder
 * (e.g. merchant line 0), the excess goes one centavo at a time to the other
 * entries with the largest fractional remainders (ties: lower index). That
 * excess is always smaller than the number of entries with a non-zero
 * fraction, each of which has at least one centavo of headroom, so no entry
 * is ever reduced below zero. Returns per-entry reductions summing exactly to
 * reductionCents.
 */
export function prorateReduction(receivableAmounts: number[], totalCents: number, reductionCents: number): number[] {
  assert(receivableAmounts.length >= 1, 'at least the merchant receivable');
  assert(isNonNegativeSafeInteger(totalCents), 'totalCents is a non-negative safe integer');
  assert(isNonNegativeSafeInteger(reductionCents), 'reductionCents is a non-negative safe integer');
  assert(reductionCents <= totalCents, 'reductionCents <= totalCents');
  let check = 0n;
  for (const a of receivableAmounts) {
    assert(isNonNegativeSafeInteger(a), 'receivable amount is a non-negative safe integer');
    check += BigInt(a);
  }
  assert(check === BigInt(totalCents), 'receivables sum to totalCents');

  if (totalCents === 0) return receivableAmounts.map(() => 0);

  const total = BigInt(totalCents);
  const reduction = BigInt(reductionCents);
  const amounts = receivableAmounts.map((a) => BigInt(a));
  const result: bigint[] = amounts.map(() => 0n);
  const remainders: bigint[] = amounts.map(() => 0n);

  let assigned = 0n;
  for (let i = 1; i < amounts.length; i++) {
    const scaled = amounts[i] * reduction;
    result[i] = scaled / total;
    remainders[i] = scaled % total;
    assigned += result[i];
  }
  let merchant = reduction - assigned;
  assert(merchant >= 0n, 'floored shares do not exceed the reduction');
  if (merchant > amounts[0]) {
    let excess = merchant - amounts[0];
    merchant = amounts[0];
    const candidates: number[] = [];
    for (let i = 1; i < amounts.length; i++) if (remainders[i] > 0n) candidates.push(i);
    candidates.sort((x, y) => (remainders[x] === remainders[y] ? x - y : remainders[x] > remainders[y] ? -1 : 1));
    assert(BigInt(candidates.length) > excess, 'enough entries with headroom to absorb the excess');
    for (let k = 0; excess > 0n; k++, excess--) result[candidates[k]] += 1n;
  }
  result[0] = merchant;

  let totalReduction = 0n;
  for (let i = 0; i < result.length; i++) {
    assert(result[i] >= 0n && result[i] <= amounts[i], 'reduction within [0, receivable]');
    totalReduction += result[i];
  }
  assert(totalReduction === reduction, 'reductions sum exactly to reductionCents');
  return result.map((r) => Number(r));
}

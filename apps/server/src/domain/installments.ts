// Installments that add up to the sale, to the centavo. R$ 159,90 in 4 is not "4x de R$ 39,98"
// (that bills R$ 159,92): it is 2 × R$ 39,98 + 2 × R$ 39,97. Each installment is the amount
// divided by their number, rounded down, and the centavos left over (fewer than the number of
// installments) are carried by the first ones, one centavo each: the parts sum exactly to the
// amount, never differ by more than one centavo, and the first is never the smaller. Pure;
// property-tested in test/installments.test.ts.
export const MAX_INSTALLMENTS = 12;

export interface InstallmentGroup {
  // `times` installments of `amount` centavos each.
  times: number;
  amount: number;
}

export interface InstallmentPlan {
  count: number;
  // Every installment's amount in billing order (amounts[0] is the first).
  amounts: number[];
  // The same, grouped: at most two groups, the larger amount first.
  groups: InstallmentGroup[];
  // What the buyer is charged in all: always the sale's amount.
  total: number;
}

export function splitInstallments(amountCents: number, count: number): number[] {
  if (!Number.isSafeInteger(amountCents) || amountCents < 1) throw new RangeError(`amount must be a positive integer of centavos, got ${amountCents}`);
  if (!Number.isInteger(count) || count < 1 || count > MAX_INSTALLMENTS) throw new RangeError(`installments must be 1-${MAX_INSTALLMENTS}, got ${count}`);
  const base = Math.floor(amountCents / count);
  const rest = amountCents - base * count;
  return Array.from({ length: count }, (_, i) => base + (i < rest ? 1 : 0));
}

export function installmentPlan(amountCents: number, count: number): InstallmentPlan {
  const amounts = splitInstallments(amountCents, count);
  const groups: InstallmentGroup[] = [];
  for (const amount of amounts) {
    const last = groups[groups.length - 1];
    if (last && last.amount === amount) last.times++;
    else groups.push({ times: 1, amount });
  }
  return { count, amounts, groups, total: amountCents };
}

// Every plan a buyer may choose from, 1 to `maxCount` installments.
export function installmentPlans(amountCents: number, maxCount: number): InstallmentPlan[] {
  return Array.from({ length: maxCount }, (_, i) => installmentPlan(amountCents, i + 1));
}

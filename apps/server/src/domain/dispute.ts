// What a lost dispute takes from each payee of the sale. Pure integer arithmetic (BigInt for
// every product), no I/O.
//
// The rule is the split's and the refunds' (domain/split.ts, domain/refund.ts): each recipient
// gives up floor(share × disputed / net) — its share of the sale's net value, applied to the
// disputed amount, floored to the centavo — and the merchant gives up the remainder, so the parts
// add up to the disputed amount exactly. Unlike a refund, no part of the processing fee comes
// back: the acquirer takes the whole disputed amount, and the payees bear it in proportion to
// what the sale gave them. A disputed amount above the net value (a full chargeback of a sale
// with a fee) takes more than a payee's share; the excess is a negative receivable that its next
// settlements deduct. When the dispute is won, each payee gets back exactly what it gave up (the
// same parts, negated).

export interface DisputeProrationInput {
  // Merchant first (index 0), then each recipient: what the sale gave each (its receivables'
  // original amounts), summing to the sale's net value.
  shareCents: number[];
  disputedCents: number;
}

function assert(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(`invariant broken: ${message}`);
}

const isCents = (n: number) => Number.isSafeInteger(n) && n >= 0;

export function prorateDispute(input: DisputeProrationInput): number[] {
  const { shareCents, disputedCents } = input;
  assert(shareCents.length >= 1, 'at least the merchant');
  assert(Number.isSafeInteger(disputedCents) && disputedCents > 0, 'the disputed amount is a positive integer');
  for (const s of shareCents) assert(isCents(s), 'shares are non-negative integers');
  const net = shareCents.reduce((sum, s) => sum + BigInt(s), 0n);
  const disputed = BigInt(disputedCents);
  const parts = shareCents.map(() => 0n);
  // A sale whose fee took everything (net 0): the merchant answers for it.
  if (net > 0n) {
    for (let i = 1; i < shareCents.length; i++) parts[i] = (BigInt(shareCents[i]) * disputed) / net;
  }
  parts[0] = disputed - parts.slice(1).reduce((sum, p) => sum + p, 0n);
  assert(parts[0] >= 0n, "the merchant's part is the non-negative remainder");
  assert(parts.reduce((sum, p) => sum + p, 0n) === disputed, 'the parts add up to the disputed amount');
  return parts.map(Number);
}

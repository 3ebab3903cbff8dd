// How a refund splits into the fee given back and the net taken from the payees, and how that
// net is taken from each payee. Pure integer arithmetic (BigInt for every product), no I/O.
//
// The rule is cumulative (issue 23). Prorating each refund on its own (floor(fee × refund /
// amount)) gives back a little less fee, so takes a little more net, every time: after enough
// small refunds the payees had given up more than the sale's net value. Instead:
//
// - Fee. After a refund, the fee returned so far is floor(fee × refunded_so_far / amount); this
//   refund's fee part is that figure minus what earlier refunds returned.
// - Net. This refund's net part is the rest of it. Cumulatively, the payees have given up
//   refunded_so_far - fee_returned_so_far.
// - Payees. After the refund, each recipient has given up floor(share × net_taken_so_far / net)
//   in all (its share of the sale's net value, the same floor as the sale's split) and the
//   merchant the remainder; this refund takes from each payee the difference from before.
//
// The parts telescope: when the refunds complete the sale, the fee returned is exactly the fee,
// the net taken exactly the net value, and each payee has given up exactly its share. Since
// every cumulative figure is a floor of a non-decreasing quantity, no refund's fee part is
// negative. A payee's part can only come out negative, or above what it still holds, when the
// floors of several recipients step up together within one small refund (the merchant's
// remainder would then go below what it gave before); the parts are then clamped to
// [0, what the payee still holds] and the difference moved to the payees with room, merchant
// first, so a recipient lags by a centavo and catches up on a later refund. Every part stays
// within [0, held], and they always add up to the refund's net part.

export interface RefundPayee {
  // The payee's share of the sale's net value (its sale receivables as the sale made them).
  shareCents: number;
  // What earlier refunds of the sale took from it.
  takenBeforeCents: number;
}

export interface RefundProrationInput {
  saleAmountCents: number;
  saleFeeCents: number;
  // Earlier refunds of the sale: the amounts refunded and the fee they returned, summed.
  refundedBeforeCents: number;
  feeReturnedBeforeCents: number;
  refundCents: number;
  // Merchant first (index 0), then each recipient; shares sum to the sale's net value.
  payees: RefundPayee[];
}

export interface RefundProration {
  feeCents: number; // fee given back by this refund
  netCents: number; // refundCents - feeCents, taken from the payees
  payeeCents: number[]; // what this refund takes from each payee, same order as the input
}

function assert(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(`invariant broken: ${message}`);
}

const isCents = (n: number) => Number.isSafeInteger(n) && n >= 0;

const clamp = (x: bigint, lo: bigint, hi: bigint) => (x < lo ? lo : x > hi ? hi : x);

// The fee returned once `refundedCents` of the sale have been refunded, in all.
export function feeReturnedAfter(saleAmountCents: number, saleFeeCents: number, refundedCents: number): number {
  return Number((BigInt(saleFeeCents) * BigInt(refundedCents)) / BigInt(saleAmountCents));
}

export function prorateRefund(input: RefundProrationInput): RefundProration {
  const { saleAmountCents, saleFeeCents, refundedBeforeCents, feeReturnedBeforeCents, refundCents, payees } = input;
  assert(Number.isSafeInteger(saleAmountCents) && saleAmountCents > 0, 'sale amount is a positive integer');
  assert(isCents(saleFeeCents) && saleFeeCents <= saleAmountCents, 'fee within [0, amount]');
  assert(isCents(refundedBeforeCents) && isCents(refundCents) && refundCents > 0, 'refund amounts are integers, this one positive');
  assert(refundedBeforeCents + refundCents <= saleAmountCents, 'refunds never exceed the sale');
  assert(isCents(feeReturnedBeforeCents) && feeReturnedBeforeCents <= saleFeeCents && feeReturnedBeforeCents <= refundedBeforeCents, 'fee returned within [0, fee] and within what was refunded');
  assert(payees.length >= 1, 'at least the merchant');
  const netSale = BigInt(saleAmountCents - saleFeeCents);
  let shares = 0n;
  let takenBefore = 0n;
  for (const p of payees) {
    assert(isCents(p.shareCents) && isCents(p.takenBeforeCents) && p.takenBeforeCents <= p.shareCents, "a payee's earlier refunds are within its share");
    shares += BigInt(p.shareCents);
    takenBefore += BigInt(p.takenBeforeCents);
  }
  assert(shares === netSale, "the payees' shares sum to the sale's net value");
  assert(takenBefore === BigInt(refundedBeforeCents - feeReturnedBeforeCents), 'what earlier refunds took from the payees is what they refunded minus the fee they returned');

  const refund = BigInt(refundCents);
  const feeBefore = BigInt(feeReturnedBeforeCents);
  const leftToTake = netSale - takenBefore;
  // The cumulative fee; then the clamps that keep any input (a sale whose earlier refunds were
  // split by another rule) within bounds. On a history made by this rule they change nothing.
  const target = BigInt(feeReturnedAfter(saleAmountCents, saleFeeCents, refundedBeforeCents + refundCents)) - feeBefore;
  const lo = refund - leftToTake > 0n ? refund - leftToTake : 0n;
  const hi = refund < BigInt(saleFeeCents) - feeBefore ? refund : BigInt(saleFeeCents) - feeBefore;
  assert(lo <= hi, 'a fee part exists that leaves the payees no more than they hold');
  const fee = clamp(target, lo, hi);
  const net = refund - fee;

  const takenAfter = takenBefore + net;
  const cumulative: bigint[] = payees.map(() => 0n);
  if (netSale > 0n) {
    let recipients = 0n;
    for (let i = 1; i < payees.length; i++) {
      cumulative[i] = (BigInt(payees[i].shareCents) * takenAfter) / netSale;
      recipients += cumulative[i];
    }
    cumulative[0] = takenAfter - recipients;
  }
  // Within [what it gave before, its share]: never a negative part, never more than it holds.
  const next = cumulative.map((c, i) => clamp(c, BigInt(payees[i].takenBeforeCents), BigInt(payees[i].shareCents)));
  let diff = takenAfter - next.reduce((s, c) => s + c, 0n);
  // Give the difference to (or take it from) the payees with room: merchant first, as the
  // merchant takes the split's remainder; then recipients, last first when taking back.
  const order = diff > 0n ? payees.map((_p, i) => i) : [0, ...payees.map((_p, i) => i).slice(1).reverse()];
  for (const i of order) {
    if (diff === 0n) break;
    if (diff > 0n) {
      const room = BigInt(payees[i].shareCents) - next[i];
      const give = room < diff ? room : diff;
      next[i] += give;
      diff -= give;
    } else {
      const room = next[i] - BigInt(payees[i].takenBeforeCents);
      const back = room < -diff ? room : -diff;
      next[i] -= back;
      diff += back;
    }
  }
  assert(diff === 0n, "the payees' parts add up to the refund's net part");

  const payeeCents = next.map((c, i) => Number(c - BigInt(payees[i].takenBeforeCents)));
  for (let i = 0; i < payeeCents.length; i++) {
    assert(payeeCents[i] >= 0 && payeeCents[i] <= payees[i].shareCents - payees[i].takenBeforeCents, "a payee's part is within [0, what it still holds]");
  }
  return { feeCents: Number(fee), netCents: Number(net), payeeCents };
}

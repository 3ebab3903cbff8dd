// Partial refunds prorate cumulatively (issue 23, domain/refund.ts): any sequence of partial
// refunds of a sale split by any rule of percentages and fixed amounts keeps every part within
// bounds after each refund, and the refunds that complete the sale return exactly its fee and
// each payee's share.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { feeReturnedAfter, prorateRefund, type RefundPayee } from '../src/domain/refund.js';
import { computeFee } from '../src/domain/fees.js';
import { computeSplit, ruleFits, type SplitRule, type SplitShare } from '../src/domain/split.js';

const RUNS = { numRuns: 3000 };

interface Sale {
  amount: number;
  fee: number;
  shares: number[]; // merchant first
}

// Runs `refunds` against a sale, checking every invariant after each; returns the final state.
function refundAll(sale: Sale, refunds: number[]) {
  const payees: RefundPayee[] = sale.shares.map((s) => ({ shareCents: s, takenBeforeCents: 0 }));
  let refunded = 0;
  let feeReturned = 0;
  const parts: Array<{ fee: number; net: number }> = [];
  for (const refund of refunds) {
    const r = prorateRefund({ saleAmountCents: sale.amount, saleFeeCents: sale.fee, refundedBeforeCents: refunded, feeReturnedBeforeCents: feeReturned, refundCents: refund, payees });
    assert.equal(r.feeCents + r.netCents, refund, 'fee part + net part = the refund');
    assert.ok(r.feeCents >= 0 && r.netCents >= 0, 'no negative part');
    assert.equal(r.payeeCents.reduce((a, b) => a + b, 0), r.netCents, "the payees' parts add up to the net part");
    r.payeeCents.forEach((c, i) => {
      assert.ok(Number.isSafeInteger(c) && c >= 0, 'a payee part is a non-negative integer');
      assert.ok(payees[i].takenBeforeCents + c <= payees[i].shareCents, 'no payee gives more than it holds');
      payees[i].takenBeforeCents += c;
    });
    refunded += refund;
    feeReturned += r.feeCents;
    // The cumulative rule itself: the fee returned so far is the floor of the fee's share.
    assert.equal(feeReturned, feeReturnedAfter(sale.amount, sale.fee, refunded), 'fee returned so far = floor(fee × refunded / amount)');
    const taken = payees.reduce((s, p) => s + p.takenBeforeCents, 0);
    assert.equal(taken, refunded - feeReturned, 'the payees gave up what was refunded minus the fee returned');
    assert.ok(taken <= sale.amount - sale.fee, 'never more than the sale net value');
    parts.push({ fee: r.feeCents, net: r.netCents });
  }
  return { payees, refunded, feeReturned, parts };
}

// Splits `amount` into `n` positive parts (the refunds), at random.
const refundsOf = (amount: number) =>
  fc.array(fc.integer({ min: 1, max: 1_000_000 }), { minLength: 1, maxLength: 40 }).map((weights) => {
    const parts: number[] = [];
    let left = amount;
    const total = weights.reduce((a, b) => a + b, 0);
    for (let i = 0; i < weights.length && left > 0; i++) {
      const p = i === weights.length - 1 ? left : Math.max(1, Math.min(left, Math.floor((amount * weights[i]) / total)));
      parts.push(p);
      left -= p;
    }
    if (left > 0) parts.push(left);
    return parts;
  });

const share: fc.Arbitrary<SplitShare> = fc.oneof(
  fc.record({ recipientId: fc.constantFrom('rcp_a', 'rcp_b', 'rcp_c', 'rcp_d'), percentage: fc.integer({ min: 1, max: 10_000 }).map((bps) => bps / 100) }),
  fc.record({ recipientId: fc.constantFrom('rcp_a', 'rcp_b', 'rcp_c', 'rcp_d'), amountCents: fc.oneof(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 100_000 })) }),
);

// A sale with a fee and a split rule (percentages and fixed amounts) that fits its net value,
// as the approval makes it (domain/split.ts): merchant first, one share per payee.
const sale: fc.Arbitrary<Sale> = fc
  .record({
    amount: fc.oneof(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1, max: 20_000 }), fc.integer({ min: 1, max: 2_000_000_000 })),
    feeBps: fc.integer({ min: 0, max: 10_000 }),
    splits: fc.array(share, { maxLength: 6 }),
  })
  .map(({ amount, feeBps, splits }) => {
    const fee = Math.floor((amount * feeBps) / 10_000);
    const net = amount - fee;
    let rule: SplitRule | null = { id: 'spr_x', priority: 1, createdAt: '2026-11-28T00:00:00.000Z', active: true, splits };
    const totalBps = splits.reduce((s, x) => s + ('percentage' in x ? Math.round(x.percentage * 100) : 0), 0);
    if (splits.length === 0 || totalBps > 10_000 || !ruleFits(net, rule)) rule = null;
    // Per payee, as the store holds them (one recipient may have several lines).
    const byPayee = new Map<string, number>([['merchant', 0]]);
    for (const line of computeSplit(net, rule)) {
      const k = line.payee.type === 'merchant' ? 'merchant' : line.payee.id;
      byPayee.set(k, (byPayee.get(k) ?? 0) + line.amountCents);
    }
    return { amount, fee, shares: [...byPayee.values()] };
  });

describe('refunds prorate cumulatively (domain/refund.ts)', () => {
  it('property: any partial refunds keep every part in bounds; the refunds that complete a sale return exactly its fee and every share', () => {
    fc.assert(
      fc.property(sale.chain((s) => fc.tuple(fc.constant(s), refundsOf(s.amount))), ([s, refunds]) => {
        const end = refundAll(s, refunds);
        assert.equal(end.refunded, s.amount);
        assert.equal(end.feeReturned, s.fee, 'the whole fee comes back');
        end.payees.forEach((p, i) => assert.equal(p.takenBeforeCents, p.shareCents, `payee ${i} gave back exactly its share`));
      }),
      RUNS,
    );
  });

  it('property: a refund sequence that stops short never takes more than the net value, and each recipient stays within a few centavos (one per payee) of its exact proportion', () => {
    fc.assert(
      fc.property(sale.chain((s) => fc.tuple(fc.constant(s), refundsOf(s.amount), fc.nat())), ([s, refunds, cut]) => {
        const partial = refunds.slice(0, Math.max(1, cut % refunds.length));
        const end = refundAll(s, partial);
        const net = s.amount - s.fee;
        const taken = end.refunded - end.feeReturned;
        if (net === 0) return;
        // Recipients: floor(share × taken / net), give or take the centavos a clamp moved (at
        // most one per payee: the parts that could not go to the merchant).
        const n = end.payees.length;
        end.payees.slice(1).forEach((p) => {
          const exact = Number((BigInt(p.shareCents) * BigInt(taken)) / BigInt(net));
          assert.ok(p.takenBeforeCents <= exact + n && p.takenBeforeCents >= exact - n, 'a recipient gives up its proportion, within rounding');
        });
      }),
      RUNS,
    );
  });

  it('the issue\'s sales: 9,999 (fee 438) refunded 30 × 333; 10,000 refunded 30 × 333; 1,999 refunded 150 × 13, then the rest', () => {
    // Card fee of the default schedule: 3.99% (rounded up) + R$ 0,39 (fees.ts).
    assert.equal(computeFee(9999, 'credit_card').feeCents, 438);
    assert.equal(computeFee(10000, 'credit_card').feeCents, 438);
    const a = refundAll({ amount: 9999, fee: 438, shares: [9561] }, Array(30).fill(333));
    assert.equal(a.refunded - a.feeReturned, 9990 - 437, 'net taken: 9,553, not the 9,570 of the per-refund floor');
    assert.ok(a.refunded - a.feeReturned <= 9561);
    const rest = prorateRefund({ saleAmountCents: 9999, saleFeeCents: 438, refundedBeforeCents: 9990, feeReturnedBeforeCents: a.feeReturned, refundCents: 9, payees: a.payees });
    assert.deepEqual([rest.feeCents, rest.netCents], [1, 8], 'the last 9 centavos: 1 of fee, 8 of net, exactly what is left');

    const b = refundAll({ amount: 10000, fee: 438, shares: [9562] }, [...Array(30).fill(333), 10]);
    assert.equal(b.feeReturned, 438);
    assert.equal(b.payees[0].takenBeforeCents, 9562);

    const fee1999 = computeFee(1999, 'credit_card').feeCents;
    assert.equal(fee1999, 119);
    const c = refundAll({ amount: 1999, fee: 119, shares: [1880] }, [...Array(150).fill(13), 49]);
    assert.equal(c.feeReturned, 119);
    assert.equal(c.payees[0].takenBeforeCents, 1880, 'every refund answered, and the last one returns the last centavos');
  });

  it('a split of percentages and a fixed amount: each payee gives back exactly its share over many small refunds', () => {
    // R$ 100,00 by Pix (fee 99): platform 10% = 990, courier R$ 5,00, seller 50% = 4,950, merchant 3,461.
    const s = { amount: 10000, fee: 99, shares: [3461, 990, 500, 4950] };
    const end = refundAll(s, [...Array(99).fill(101), 1]);
    assert.deepEqual(end.payees.map((p) => p.takenBeforeCents), [3461, 990, 500, 4950]);
    assert.equal(end.feeReturned, 99);
    // Half-way, every recipient has given back its proportion, floored.
    const half = refundAll(s, Array(50).fill(100));
    const taken = 5000 - feeReturnedAfter(10000, 99, 5000);
    assert.deepEqual(half.payees.slice(1).map((p) => p.takenBeforeCents), [990, 500, 4950].map((x) => Math.floor((x * taken) / 9901)));
  });

  it('refuses inputs that break the books rather than compounding them', () => {
    const base = { saleAmountCents: 1000, saleFeeCents: 100, refundedBeforeCents: 0, feeReturnedBeforeCents: 0, refundCents: 10, payees: [{ shareCents: 900, takenBeforeCents: 0 }] };
    assert.throws(() => prorateRefund({ ...base, payees: [{ shareCents: 899, takenBeforeCents: 0 }] }), /shares sum/);
    assert.throws(() => prorateRefund({ ...base, refundCents: 1001 }), /never exceed/);
    assert.throws(() => prorateRefund({ ...base, refundCents: 0 }), /positive/);
    assert.throws(() => prorateRefund({ ...base, refundedBeforeCents: 10, feeReturnedBeforeCents: 1 }), /took from the payees/);
    assert.throws(() => prorateRefund({ ...base, refundCents: 1.5 }));
  });

  it('a history written by the old per-refund rule (and repaired by migration 0009) is carried on within bounds to the end', () => {
    // 9,999 refunded 30 × 333 by the old rule: 14 of fee each (420), 9,570 of net recorded but
    // the payees only held 9,561; 0009 moved the 9 over-recorded centavos to the fee returned.
    const payees = [{ shareCents: 9561, takenBeforeCents: 9561 }];
    const r = prorateRefund({ saleAmountCents: 9999, saleFeeCents: 438, refundedBeforeCents: 9990, feeReturnedBeforeCents: 429, refundCents: 9, payees });
    assert.deepEqual([r.feeCents, r.netCents, ...r.payeeCents], [9, 0, 0]);
    // Old-rule history that did not break: the fee catches up with the cumulative figure.
    const old = prorateRefund({ saleAmountCents: 9999, saleFeeCents: 438, refundedBeforeCents: 3330, feeReturnedBeforeCents: 140, refundCents: 333, payees: [{ shareCents: 9561, takenBeforeCents: 3190 }] });
    assert.equal(140 + old.feeCents, feeReturnedAfter(9999, 438, 3663));
  });
});

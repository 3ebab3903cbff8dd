import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { prorateDispute } from '../src/domain/dispute.js';
import { prorateRefund } from '../src/domain/refund.js';

// domain/dispute.ts: a lost dispute's amount, divided among the sale's payees by the split's
// rule (recipients floored, the merchant the remainder), with no centavo lost or made.

// Shares of a sale: merchant first, then 0-5 recipients; their sum is the net value.
const sale = fc.array(fc.integer({ min: 0, max: 5_000_000 }), { minLength: 1, maxLength: 6 })
  .filter((shares) => shares.reduce((a, b) => a + b, 0) > 0);

describe('dispute proration', () => {
  it('the parts add up to the disputed amount exactly, each non-negative, recipients floored', () => {
    fc.assert(fc.property(sale, fc.integer({ min: 1, max: 20_000_000 }), (shares, disputed) => {
      const parts = prorateDispute({ shareCents: shares, disputedCents: disputed });
      assert.equal(parts.length, shares.length);
      assert.equal(parts.reduce((a, b) => a + b, 0), disputed);
      const net = BigInt(shares.reduce((a, b) => a + b, 0));
      for (let i = 1; i < shares.length; i++) {
        assert.equal(BigInt(parts[i]), (BigInt(shares[i]) * BigInt(disputed)) / net, `recipient ${i} gives up floor(share × disputed / net)`);
        assert.ok(parts[i] >= 0);
      }
      assert.ok(parts[0] >= 0, 'the merchant takes the non-negative remainder');
      // The merchant's rounding remainder is less than one centavo per recipient.
      const exact = (Number(shares[0]) * disputed) / Number(net);
      assert.ok(parts[0] >= Math.floor(exact) && parts[0] < exact + shares.length);
    }), { numRuns: 2000 });
  });

  it('a dispute of the whole net value takes exactly each payee\'s share', () => {
    fc.assert(fc.property(sale, (shares) => {
      const net = shares.reduce((a, b) => a + b, 0);
      assert.deepEqual(prorateDispute({ shareCents: shares, disputedCents: net }), shares);
    }));
  });

  it('takes from each payee what a refund of the same net amount would (the same rounding rule)', () => {
    // A refund's net part is prorated by floor(share × taken / net); with nothing refunded
    // before, a dispute whose amount is that net part takes the same parts, wherever the
    // merchant's remainder fits in its share (else the refund, which can take no more than a
    // payee holds, moves the excess to the recipients; a dispute debits beyond the share).
    fc.assert(fc.property(sale, fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 1, max: 1_000_000 }), (shares, fee, refund) => {
      const net = shares.reduce((a, b) => a + b, 0);
      const amount = net + fee;
      fc.pre(refund <= amount);
      const r = prorateRefund({ saleAmountCents: amount, saleFeeCents: fee, refundedBeforeCents: 0, feeReturnedBeforeCents: 0, refundCents: refund, payees: shares.map((s) => ({ shareCents: s, takenBeforeCents: 0 })) });
      fc.pre(r.netCents > 0);
      const parts = prorateDispute({ shareCents: shares, disputedCents: r.netCents });
      fc.pre(parts[0] <= shares[0]);
      assert.deepEqual(parts, r.payeeCents);
    }));
  });

  it('a sale whose fee took everything: the merchant answers for all of it', () => {
    assert.deepEqual(prorateDispute({ shareCents: [0, 0], disputedCents: 500 }), [500, 0]);
  });

  it('refuses what cannot be a dispute', () => {
    assert.throws(() => prorateDispute({ shareCents: [100], disputedCents: 0 }), /invariant/);
    assert.throws(() => prorateDispute({ shareCents: [], disputedCents: 10 }), /invariant/);
    assert.throws(() => prorateDispute({ shareCents: [100, -1], disputedCents: 10 }), /invariant/);
    assert.throws(() => prorateDispute({ shareCents: [100], disputedCents: 1.5 }), /invariant/);
  });

  it('the worked example of docs/split-and-settlement.md: R$ 100,00 by card, 30% to a recipient', () => {
    // Fee 3.99% + R$ 0,39 = 438, net 9562: the recipient's 30% floor(9562 × 0.30) = 2868, the
    // merchant 6694. A chargeback of the R$ 100,00: recipient floor(2868 × 10000 / 9562) = 2999.
    assert.deepEqual(prorateDispute({ shareCents: [6694, 2868], disputedCents: 10000 }), [7001, 2999]);
  });
});

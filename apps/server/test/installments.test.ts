import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { installmentPlan, installmentPlans, MAX_INSTALLMENTS, splitInstallments } from '../src/domain/installments.js';

const RUNS = { numRuns: 5000 };
const amount = fc.oneof(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1, max: 100_000_000_00 }));
const count = fc.integer({ min: 1, max: MAX_INSTALLMENTS });

describe('installments', () => {
  it('R$ 159,90 in 4 is 2 × R$ 39,98 + 2 × R$ 39,97, not 4 × R$ 39,98 (R$ 159,92)', () => {
    assert.deepEqual(splitInstallments(15990, 4), [3998, 3998, 3997, 3997]);
    assert.deepEqual(installmentPlan(15990, 4).groups, [{ times: 2, amount: 3998 }, { times: 2, amount: 3997 }]);
    assert.deepEqual(installmentPlan(15990, 3), { count: 3, amounts: [5330, 5330, 5330], groups: [{ times: 3, amount: 5330 }], total: 15990 });
    assert.deepEqual(splitInstallments(1000, 3), [334, 333, 333], 'the first carries the centavo left over');
    assert.deepEqual(splitInstallments(5, 12), [1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]);
    assert.equal(installmentPlans(1050, 3).length, 3);
  });

  it('refuses what is not a plan', () => {
    for (const [a, n] of [[0, 1], [-1, 1], [1.5, 1], [100, 0], [100, 13], [100, 2.5], [Number.MAX_SAFE_INTEGER + 1, 1]]) {
      assert.throws(() => splitInstallments(a, n), RangeError, `${a} in ${n}`);
    }
  });

  it('the parts sum exactly to the total, differ by at most one centavo, and the first carries the rest', () => {
    fc.assert(fc.property(amount, count, (a, n) => {
      const parts = splitInstallments(a, n);
      assert.equal(parts.length, n);
      assert.equal(parts.reduce((s, p) => s + p, 0), a, 'sum');
      assert.ok(Math.max(...parts) - Math.min(...parts) <= 1, 'at most one centavo apart');
      assert.ok(parts.every((p) => Number.isInteger(p) && p >= 0), 'whole centavos');
      // Not increasing: the first is the largest, the leftover centavos come first.
      for (let i = 1; i < n; i++) assert.ok(parts[i] <= parts[i - 1], 'non-increasing');
      assert.equal(parts[0], Math.ceil(a / n), 'the first carries the rest');
      assert.equal(parts[n - 1], Math.floor(a / n));
    }), RUNS);
  });

  it('the groups say the same as the amounts, and the plan total is the amount', () => {
    fc.assert(fc.property(amount, count, (a, n) => {
      const plan = installmentPlan(a, n);
      assert.equal(plan.total, a);
      assert.ok(plan.groups.length >= 1 && plan.groups.length <= 2);
      assert.deepEqual(plan.groups.flatMap((g) => Array.from({ length: g.times }, () => g.amount)), plan.amounts);
      assert.equal(plan.groups.reduce((s, g) => s + g.times * g.amount, 0), a);
    }), RUNS);
  });
});

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PAYMENT_STATUSES, PAYMENT_TRANSITIONS, canTransition, assertTransition, IllegalTransition, TERMINAL_STATUSES, aPayment } from '../src/domain/states.js';
import { SETTLEMENT_STATUSES, SETTLEMENT_TRANSITIONS, settlementMove } from '../src/domain/states.js';

// The table is the contract: these are the moves product-decisions.md allows, written out again
// by hand so that a change to the table has to change this test too.
const LEGAL: Array<[string, string]> = [
  ['pending', 'approved'], ['pending', 'declined'], ['pending', 'failed'], ['pending', 'canceled'], ['pending', 'expired'],
  ['approved', 'partially_refunded'], ['approved', 'refunded'],
  ['partially_refunded', 'partially_refunded'], ['partially_refunded', 'refunded'],
];

describe('payment state table', () => {
  for (const from of PAYMENT_STATUSES) {
    for (const to of PAYMENT_STATUSES) {
      const legal = LEGAL.some(([f, t]) => f === from && t === to);
      test(`${from} -> ${to} is ${legal ? 'legal' : 'illegal'}`, () => {
        assert.equal(canTransition(from, to), legal);
        if (legal) assert.doesNotThrow(() => assertTransition(from, to));
        else assert.throws(() => assertTransition(from, to), (e: unknown) => e instanceof IllegalTransition && e.message === `${aPayment(from)} cannot become ${to.replace(/_/g, ' ')}.`);
      });
    }
  }

  test('terminal states are exactly those with no way out', () => {
    assert.deepEqual([...TERMINAL_STATUSES].sort(), ['canceled', 'declined', 'expired', 'failed', 'refunded']);
    assert.equal(Object.keys(PAYMENT_TRANSITIONS).length, PAYMENT_STATUSES.length);
  });
});

// Settlements: held (merchant without a payout bank account) -> pending -> paid | failed.
const SETTLEMENT_LEGAL: Array<[string, string]> = [['held', 'pending'], ['pending', 'paid'], ['pending', 'failed']];

describe('settlement state table', () => {
  for (const from of SETTLEMENT_STATUSES) {
    for (const to of SETTLEMENT_STATUSES) {
      const legal = SETTLEMENT_LEGAL.some(([f, t]) => f === from && t === to);
      test(`settlement ${from} -> ${to} is ${legal ? 'legal' : 'illegal'}`, () => {
        if (legal) assert.deepEqual(settlementMove(from, to), { from, to });
        else assert.throws(() => settlementMove(from, to), { message: `A ${from} settlement cannot become ${to}.` });
      });
    }
  }
  test('every status has a row', () => assert.deepEqual(Object.keys(SETTLEMENT_TRANSITIONS).sort(), [...SETTLEMENT_STATUSES].sort()));
});

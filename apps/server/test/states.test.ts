import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PAYMENT_STATUSES, PAYMENT_TRANSITIONS, canTransition, assertTransition, IllegalTransition, TERMINAL_STATUSES, aPayment } from '../src/domain/states.js';
import { SETTLEMENT_STATUSES, SETTLEMENT_TRANSITIONS, settlementMove, IllegalMove } from '../src/domain/states.js';
import { SETTLEMENT_RUN_STATUSES, SETTLEMENT_RUN_TRANSITIONS, settlementRunMove } from '../src/domain/states.js';
import { REFUND_STATUSES, REFUND_TRANSITIONS, refundMove } from '../src/domain/states.js';
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_DELIVERY_TRANSITIONS, deliveryMove } from '../src/domain/states.js';
import { DISPUTE_STATUSES, DISPUTE_TRANSITIONS, disputeMove } from '../src/domain/states.js';

// The table is the contract: these are the moves product-decisions.md allows, written out again
// by hand so that a change to the table has to change this test too.
const LEGAL: Array<[string, string]> = [
  ['pending', 'approved'], ['pending', 'declined'], ['pending', 'failed'], ['pending', 'canceled'], ['pending', 'expired'],
  // 3-D Secure (issue 27): the acquirer asks the buyer to act; the action decides, or it expires.
  ['pending', 'requires_action'], ['pending', 'requires_capture'],
  ['requires_action', 'requires_capture'],
  ['requires_capture', 'approved'], ['requires_capture', 'failed'], ['requires_capture', 'canceled'],
  ['requires_action', 'approved'], ['requires_action', 'declined'], ['requires_action', 'failed'], ['requires_action', 'canceled'], ['requires_action', 'expired'],
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

// Settlements: held (merchant without a payout bank account) -> pending -> paid | failed (the
// sandbox), or pending -> processing (sent by Pix at a PSP) -> paid | failed (issue 26).
const SETTLEMENT_LEGAL: Array<[string, string]> = [
  ['held', 'pending'],
  // Issue 26: a payout the PSP balance does not cover waits, held, for the next run.
  ['pending', 'held'],
  ['pending', 'processing'], ['pending', 'paid'], ['pending', 'failed'], ['processing', 'paid'], ['processing', 'failed'],
];

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

// The other tables, each written out again by hand: every pair of statuses is tried, the legal
// ones give the guarded move, every other one is refused with the message that names it.
function exhaustive<S extends string>(
  what: string,
  statuses: readonly S[],
  table: Readonly<Record<S, readonly S[]>>,
  move: (from: S, to: S) => { from: S; to: S },
  legalMoves: Array<[S, S]>,
  article: (from: S) => string = () => 'A',
): void {
  describe(`${what} state table`, () => {
    for (const from of statuses) {
      for (const to of statuses) {
        const legal = legalMoves.some(([f, t]) => f === from && t === to);
        test(`${what} ${from} -> ${to} is ${legal ? 'legal' : 'illegal'}`, () => {
          if (legal) assert.deepEqual(move(from, to), { from, to });
          else assert.throws(() => move(from, to), (e: unknown) => e instanceof IllegalMove && e.message === `${article(from)} ${from} ${what} cannot become ${to}.`);
        });
      }
    }
    test(`every ${what} status has a row, and only those`, () => assert.deepEqual(Object.keys(table).sort(), [...statuses].sort()));
    test(`the ${what} table allows exactly the listed moves`, () => {
      const fromTable = Object.entries(table).flatMap(([f, tos]) => (tos as S[]).map((t) => `${f}->${t}`)).sort();
      assert.deepEqual(fromTable, legalMoves.map(([f, t]) => `${f}->${t}`).sort());
    });
  });
}

// Settlement runs: pending (admin API, waiting for a worker) -> running -> completed.
exhaustive('settlement run', SETTLEMENT_RUN_STATUSES, SETTLEMENT_RUN_TRANSITIONS, settlementRunMove, [['pending', 'running'], ['running', 'completed']]);

// Refunds: pending until the provider answers, then succeeded or failed, both final.
exhaustive('refund', REFUND_STATUSES, REFUND_TRANSITIONS, refundMove, [['pending', 'succeeded'], ['pending', 'failed']]);

// Webhook deliveries: pending (again after each failed attempt), then succeeded or failed.
exhaustive('webhook delivery', WEBHOOK_DELIVERY_STATUSES, WEBHOOK_DELIVERY_TRANSITIONS, deliveryMove,
  [['pending', 'pending'], ['pending', 'succeeded'], ['pending', 'failed']]);

// The settlement table again through the same walk (held -> pending is the release).
exhaustive('settlement', SETTLEMENT_STATUSES, SETTLEMENT_TRANSITIONS, settlementMove,
  SETTLEMENT_LEGAL as Array<[(typeof SETTLEMENT_STATUSES)[number], (typeof SETTLEMENT_STATUSES)[number]]>);

// Disputes (issue 27): needs_response -> under_review -> won | lost; a reversal makes a lost one
// won (or under review again), a second chargeback a won one lost. Statuses with underscores read
// as words in the message.
const DISPUTE_LEGAL: Array<[(typeof DISPUTE_STATUSES)[number], (typeof DISPUTE_STATUSES)[number]]> = [
  ['needs_response', 'under_review'], ['needs_response', 'won'], ['needs_response', 'lost'],
  ['under_review', 'won'], ['under_review', 'lost'],
  ['lost', 'under_review'], ['lost', 'won'],
  ['won', 'lost'],
];

describe('dispute state table', () => {
  const words = (s: string) => s.replace(/_/g, ' ');
  for (const from of DISPUTE_STATUSES) {
    for (const to of DISPUTE_STATUSES) {
      const legal = DISPUTE_LEGAL.some(([f, t]) => f === from && t === to);
      test(`dispute ${from} -> ${to} is ${legal ? 'legal' : 'illegal'}`, () => {
        if (legal) assert.deepEqual(disputeMove(from, to), { from, to });
        else assert.throws(() => disputeMove(from, to), (e: unknown) => e instanceof IllegalMove && e.message === `${/^[aeiou]/.test(words(from)) ? 'An' : 'A'} ${words(from)} dispute cannot become ${words(to)}.`);
      });
    }
  }
  test('every dispute status has a row, and only those', () => assert.deepEqual(Object.keys(DISPUTE_TRANSITIONS).sort(), [...DISPUTE_STATUSES].sort()));
  test('the dispute table allows exactly the listed moves', () => {
    const fromTable = Object.entries(DISPUTE_TRANSITIONS).flatMap(([f, tos]) => tos.map((t) => `${f}->${t}`)).sort();
    assert.deepEqual(fromTable, DISPUTE_LEGAL.map(([f, t]) => `${f}->${t}`).sort());
  });
});

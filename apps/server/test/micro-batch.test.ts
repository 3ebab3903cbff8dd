import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MicroBatch, type Settled } from '../src/store/index.js';

// MicroBatch on its own (store/micro-batch.ts), through add() and drain(): what the group commit,
// the idempotency key lookups and the webhook success recording all rely on. No clock: runs are
// held open with gates the test opens, and "one turn of the event loop" is synchronous adds.

interface Gate { promise: Promise<void>; open(): void }
function gate(): Gate {
  let open = () => {};
  const promise = new Promise<void>((resolve) => { open = resolve; });
  return { promise, open };
}

// Each item answered with itself doubled, or its failure when it is negative; every run recorded.
function doubling(options: { maxItemsPerRun?: number; maxConcurrentRuns?: number; maxPending?: number; onFull?: () => Error; hold?: Gate; alone?: (item: number) => boolean } = {}) {
  const runs: number[][] = [];
  const batch = new MicroBatch<number, number>({
    maxItemsPerRun: options.maxItemsPerRun ?? 100,
    maxConcurrentRuns: options.maxConcurrentRuns ?? 1,
    maxPending: options.maxPending ?? Infinity,
    onFull: options.onFull,
    alone: options.alone,
    async run(items) {
      runs.push(items);
      if (options.hold) await options.hold.promise;
      return items.map((i): Settled<number> => (i < 0 ? { ok: false, error: new Error(`item ${i} failed`) } : { ok: true, value: i * 2 }));
    },
  });
  return { batch, runs };
}

test('items added in one turn share one run, cut at maxItemsPerRun; each caller gets its own answer', async () => {
  const { batch, runs } = doubling({ maxItemsPerRun: 3 });
  const answers = await Promise.all([1, 2, 3, 4, 5].map((i) => batch.add(i)));
  assert.deepEqual(answers, [2, 4, 6, 8, 10]);
  assert.deepEqual(runs, [[1, 2, 3], [4, 5]], 'in the order added, at most 3 per run');
  // A later turn is a run of its own.
  assert.equal(await batch.add(6), 12);
  assert.deepEqual(runs.at(-1), [6]);
});

test('an item that must run alone gets a run of its own, and the order added is kept around it', async () => {
  // Multiples of 10 alone (the store's writes that lock rows in an order of their own).
  const { batch, runs } = doubling({ maxItemsPerRun: 3, alone: (i) => i % 10 === 0 });
  const answers = await Promise.all([1, 10, 2, 3, 4, 5, 20, 30, 6].map((i) => batch.add(i)));
  assert.deepEqual(answers, [2, 20, 4, 6, 8, 10, 40, 60, 12]);
  assert.deepEqual(runs, [[1], [10], [2, 3, 4], [5], [20], [30], [6]]);
  assert.equal(batch.pendingItems, 0);
});

test('a failed item fails only its own caller; the others of its run get their answers', async () => {
  const { batch, runs } = doubling();
  const results = await Promise.allSettled([batch.add(1), batch.add(-7), batch.add(3)]);
  assert.equal(runs.length, 1, 'one run');
  assert.deepEqual(results[0], { status: 'fulfilled', value: 2 });
  const failed = results[1];
  assert.ok(failed.status === 'rejected');
  assert.match(String(failed.reason), /item -7 failed/);
  assert.deepEqual(results[2], { status: 'fulfilled', value: 6 });
});

test('a run that throws fails every item of that run with its error, and no other run', async () => {
  const boom = new Error('the commit failed');
  const runs: number[][] = [];
  const batch = new MicroBatch<number, number>({
    maxItemsPerRun: 2,
    maxConcurrentRuns: 1,
    maxPending: Infinity,
    async run(items) {
      runs.push(items);
      if (items.includes(1)) throw boom;
      return items.map((i) => ({ ok: true, value: i }));
    },
  });
  const results = await Promise.allSettled([batch.add(1), batch.add(2), batch.add(3)]);
  assert.deepEqual(runs, [[1, 2], [3]]);
  assert.deepEqual(results.slice(0, 2).map((r) => r.status === 'rejected' && r.reason === boom), [true, true], 'both items of the failed run get its error');
  assert.deepEqual(results[2], { status: 'fulfilled', value: 3 });
  // And the batch goes on working.
  assert.equal(await batch.add(4), 4);
});

test('past maxPending, add refuses at once with onFull\'s error; answered items free their places', async () => {
  const hold = gate();
  const full = new Error('queue full');
  let fullCalls = 0;
  const { batch, runs } = doubling({ maxPending: 2, hold, onFull: () => { fullCalls++; return full; } });
  const first = batch.add(1);
  const second = batch.add(2);
  // Refused before anything ran: the queue holds 2, accepted and not yet answered.
  await assert.rejects(batch.add(3), (e) => e === full);
  assert.equal(fullCalls, 1);
  // Still refused while the run holding both is in progress (in a run counts as pending).
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(runs, [[1, 2]]);
  await assert.rejects(batch.add(4), (e) => e === full);
  hold.open();
  assert.deepEqual(await Promise.all([first, second]), [2, 4]);
  // Both answered: room again. The refused items never reached a run.
  assert.equal(await batch.add(5), 10);
  assert.deepEqual(runs, [[1, 2], [5]]);
});

test('without onFull the refusal is a plain error', async () => {
  const hold = gate();
  const { batch } = doubling({ maxPending: 1, hold });
  const first = batch.add(1);
  await assert.rejects(batch.add(2), /micro-batch queue is full/);
  hold.open();
  assert.equal(await first, 2);
});

test('maxConcurrentRuns bounds the runs in progress; items that wait are cut into the next run; drain waits for all', async () => {
  const hold = gate();
  const { batch, runs } = doubling({ maxConcurrentRuns: 1, hold });
  const a = batch.add(1);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(runs, [[1]], 'the first run is in progress');
  const later = [batch.add(2), batch.add(3)];
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(runs, [[1]], 'no second run while the first is in progress');
  let drained = false;
  const draining = batch.drain().then(() => { drained = true; });
  await new Promise((r) => setImmediate(r));
  assert.equal(drained, false, 'drain waits for the answers');
  hold.open();
  assert.deepEqual(await Promise.all([a, ...later]), [2, 4, 6]);
  await draining;
  assert.deepEqual(runs, [[1], [2, 3]], 'what waited went in one run');
  // Two at once when allowed: both runs start before either is answered.
  const hold2 = gate();
  const two = doubling({ maxItemsPerRun: 1, maxConcurrentRuns: 2, hold: hold2 });
  const both = [two.batch.add(1), two.batch.add(2), two.batch.add(3)];
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(two.runs, [[1], [2]]);
  hold2.open();
  assert.deepEqual(await Promise.all(both), [2, 4, 6]);
  assert.deepEqual(two.runs, [[1], [2], [3]]);
});

test('drain with nothing added resolves; limits below 1 are refused at construction', async () => {
  await doubling().batch.drain();
  for (const limits of [{ maxItemsPerRun: 0, maxConcurrentRuns: 1, maxPending: 1 }, { maxItemsPerRun: 1, maxConcurrentRuns: 0, maxPending: 1 }, { maxItemsPerRun: 1, maxConcurrentRuns: 1, maxPending: 0 }]) {
    assert.throws(() => new MicroBatch<number, number>({ ...limits, run: async () => [] }), /micro-batch limits must be at least 1/);
  }
});

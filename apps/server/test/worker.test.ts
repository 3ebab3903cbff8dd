import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { ENGINES, eventually, signup, startApp, startManualApp, type ManualApp, type TestApp } from './helpers.js';
import { Worker } from '../src/jobs/worker.js';
import { complete, enqueue } from '../src/jobs/queue.js';
import { Type } from 'typebox';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Resolves when `check` holds, re-checked each time the code under test calls notify(): an
// event-driven wait for the jobs' own store writes, not a poll on the wall clock.
function progress() {
  const waiters: Array<{ check: () => boolean; resolve: () => void }> = [];
  return {
    notify() {
      for (const w of [...waiters]) {
        if (!w.check()) continue;
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    },
    until(check: () => boolean): Promise<void> {
      return check() ? Promise.resolve() : new Promise((resolve) => waiters.push({ check, resolve }));
    },
  };
}
// One turn of the event loop: the worker's loop, woken, goes back to waiting on the clock.
const turn = () => new Promise((r) => setImmediate(r));

for (const engine of ENGINES) {
  describe(`job worker under load (${engine})`, () => {
    let t: ManualApp;
    before(async () => {
      // A ManualClock: the busy round and the poll are the clock's, moved by the test.
      t = await startManualApp(engine);
    });
    after(() => t.teardown());

    // The in-process worker's promise: while requests saturate the event loop, one round of jobs
    // per busyRoundMs; once they stop, every job at full speed.
    test('yields to saturating requests, one round per busyRoundMs, and drains when they stop', async () => {
      const ran: string[] = [];
      let done = 0;
      const jobs = progress();
      let busy = true;
      const worker = new Worker(t.store, {
        'test.count': async (job, workerId) => {
          ran.push(job.id);
          await t.store.write((tx) => complete(tx, job, workerId));
          done++;
          jobs.notify();
        },
      }, { pollMs: 20, leaseMs: 30_000, concurrency: 4, batchSize: 4, yieldTo: { busy: () => busy, requestsInFlight: 1 }, busyRoundMs: 60_000, payloads: { 'test.count': Type.Object({ i: Type.Integer() }) } }, t.app.log);
      await t.store.write(async (tx) => {
        for (let i = 0; i < 20; i++) await enqueue(tx, t.clock.nowMs(), 'test.count', { i }, t.clock.nowMs() - 1000);
      });
      const firstRoundMs = t.clock.nowMs();
      await worker.start();
      try {
        await jobs.until(() => done === 4);
        await turn();
        // Kicks (as every card payment create sends) do not cut the busy round short.
        for (let i = 0; i < 10; i++) {
          worker.kick();
          await turn();
        }
        assert.equal(ran.length, 4, 'one round (4 jobs) while busy, not the whole backlog');
        // Up to the last millisecond of the busy round, nothing more runs.
        t.clock.advance(59_990);
        await turn();
        t.clock.advance(9);
        await turn();
        assert.equal(ran.length, 4, 'still one round 59.999 s later');
        assert.ok(worker.busyWaitCount >= 2);
        // busyRoundMs after the first round: the second round.
        t.clock.advance(1);
        await jobs.until(() => done === 8);
        await turn();
        assert.equal(ran.length, 8, 'a second round once busyRoundMs had passed');
        // Not busy: the next round no longer waits out busyRoundMs (60 s): one 10 ms yield step
        // later the rest follow, at full speed, with the clock standing still.
        busy = false;
        t.clock.advance(10);
        await jobs.until(() => done === 20);
        assert.equal(new Set(ran).size, 20);
        assert.ok(t.clock.nowMs() - firstRoundMs < 2 * 60_000, 'drained without waiting out another busy round');
      } finally {
        await worker.stop();
      }
    });

    // Below saturation too, requests come first: while any is in flight, smaller rounds, so a
    // batch of confirmations never holds the event loop for long; with none, full rounds again.
    test('while requests are in flight at most concurrencyWithRequests jobs run at once; with none, concurrency', async () => {
      let running = 0;
      let most = 0;
      let done = 0;
      const jobs = progress();
      // Jobs wait at a gate until the test opens it; once `released`, they no longer wait (so
      // nothing the worker claims late can keep stop() waiting).
      let released = false;
      const gates: Array<() => void> = [];
      const openAll = () => { for (const open of gates.splice(0)) open(); };
      const gauge = { busy: () => false, requestsInFlight: 3 };
      const worker = new Worker(t.store, {
        'test.hold': async (job, workerId) => {
          running++;
          most = Math.max(most, running);
          if (!released) await new Promise<void>((open) => { gates.push(open); jobs.notify(); });
          running--;
          await t.store.write((tx) => complete(tx, job, workerId));
          done++;
          jobs.notify();
        },
      }, { pollMs: 20, leaseMs: 30_000, concurrency: 6, batchSize: 6, yieldTo: gauge, concurrencyWithRequests: 2, payloads: { 'test.hold': Type.Object({ i: Type.Integer() }) } }, t.app.log);
      await t.store.write(async (tx) => {
        for (let i = 0; i < 12; i++) await enqueue(tx, t.clock.nowMs(), 'test.hold', { i }, t.clock.nowMs() - 1000);
      });
      await worker.start();
      try {
        await jobs.until(() => gates.length === 2);
        // Kicks and polls (the clock moving past pollMs) claim no third job.
        for (let i = 0; i < 5; i++) {
          worker.kick();
          t.clock.advance(20);
          await turn();
        }
        assert.equal(most, 2, 'requests in flight: two at once');
        openAll();
        await jobs.until(() => gates.length === 2 && done === 2);
        assert.equal(most, 2);
        gauge.requestsInFlight = 0;
        openAll();
        await jobs.until(() => gates.length === 6);
        assert.equal(most, 6);
        released = true;
        openAll();
        await jobs.until(() => done === 12);
      } finally {
        released = true;
        openAll();
        await worker.stop();
      }
    });
  });
}

describe('load gauge (the API process)', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await startApp(ENGINES[0], {}, { worker: false });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => t.teardown());

  // The gauge measures the real event loop's utilization (jobs/load.ts), which no test clock can
  // move: these sleeps and spins are the load it measures, and its verdicts are not timed asserts.
  const spin = (ms: number) => {
    const end = performance.now() + ms;
    while (performance.now() < end) { /* the event loop fully busy */ }
  };

  test('busy only with requests in flight and the event loop saturated; a request the client abandons leaves', async () => {
    await sleep(60);
    t.load.busy(); // a fresh window
    spin(200);
    assert.equal(t.load.requestsInFlight, 0);
    assert.equal(t.load.busy(), false, 'a loop busy with background work alone is not saturated by requests');

    // A request whose body never finishes arriving: in flight from its headers on.
    const { secretKey } = await signup(t);
    const { port } = new URL(base);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write(`POST /v1/payments HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${secretKey}\r\nidempotency-key: k1\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"amount"`);
    try {
      // Waits for I/O: the request's headers to cross the socket.
      await eventually(async () => t.load.requestsInFlight === 1, 'the request to be in flight');
      await sleep(60);
      t.load.busy(); // a fresh window
      await sleep(60);
      assert.equal(t.load.busy(), false, 'an idle loop is not saturated');
      t.load.busy();
      spin(200);
      assert.equal(t.load.busy(), true);
    } finally {
      socket.destroy();
    }
    // Waits for I/O: the socket's close to reach the server.
    await eventually(async () => t.load.requestsInFlight === 0, 'the abandoned request to leave');
    assert.equal(t.load.busy(), false);

    const res = await fetch(`${base}/healthz`);
    assert.equal(res.status, 200);
    // Waits for I/O: the answered connection's close event.
    await eventually(async () => t.load.requestsInFlight === 0, 'an answered request to leave');
  });
});

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { ENGINES, eventually, signup, startApp, type TestApp } from './helpers.js';
import { Worker } from '../src/jobs/worker.js';
import { complete, enqueue } from '../src/jobs/queue.js';
import { Type } from 'typebox';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const engine of ENGINES) {
  describe(`job worker under load (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(engine, {}, { worker: false });
    });
    after(() => t.teardown());

    // The in-process worker's promise: while requests saturate the event loop, one round of jobs
    // per busyRoundMs; once they stop, every job at full speed.
    test('yields to saturating requests, one round per busyRoundMs, and drains when they stop', async () => {
      const ran: string[] = [];
      let busy = true;
      const worker = new Worker(t.store, {
        'test.count': async (job, workerId) => {
          ran.push(job.id);
          await t.store.write((tx) => complete(tx, job, workerId));
        },
      }, { pollMs: 20, leaseMs: 30_000, concurrency: 4, batchSize: 4, yieldTo: { busy: () => busy, requestsInFlight: 1 }, busyRoundMs: 60_000, payloads: { 'test.count': Type.Object({ i: Type.Integer() }) } }, t.app.log);
      await t.store.write(async (tx) => {
        for (let i = 0; i < 20; i++) await enqueue(tx, Date.now(), 'test.count', { i }, Date.now() - 1000);
      });
      await worker.start();
      try {
        await eventually(async () => ran.length >= 4, 'the first round');
        // Kicks (as every card payment create sends) do not cut the busy round short.
        for (let i = 0; i < 10; i++) {
          worker.kick();
          await sleep(20);
        }
        assert.equal(ran.length, 4, 'one round (4 jobs) while busy, not the whole backlog');
        assert.ok(worker.busyWaitCount >= 1);
        busy = false;
        worker.kick();
        // Not busy: the next round no longer waits out busyRoundMs (60 s), and the rest follow.
        await eventually(async () => ran.length === 20, 'the backlog to drain', 10_000);
        assert.equal(new Set(ran).size, 20);
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
          if (!released) await new Promise<void>((open) => gates.push(open));
          running--;
          await t.store.write((tx) => complete(tx, job, workerId));
          done++;
        },
      }, { pollMs: 20, leaseMs: 30_000, concurrency: 6, batchSize: 6, yieldTo: gauge, concurrencyWithRequests: 2, payloads: { 'test.hold': Type.Object({ i: Type.Integer() }) } }, t.app.log);
      await t.store.write(async (tx) => {
        for (let i = 0; i < 12; i++) await enqueue(tx, Date.now(), 'test.hold', { i }, Date.now() - 1000);
      });
      await worker.start();
      try {
        await eventually(async () => gates.length === 2, 'two jobs running');
        for (let i = 0; i < 5; i++) {
          worker.kick();
          await sleep(20);
        }
        assert.equal(most, 2, 'requests in flight: two at once');
        openAll();
        await eventually(async () => gates.length === 2 && done === 2, 'the next two');
        assert.equal(most, 2);
        gauge.requestsInFlight = 0;
        openAll();
        await eventually(async () => gates.length === 6, 'six at once without requests');
        assert.equal(most, 6);
        released = true;
        openAll();
        await eventually(async () => done === 12, 'every job done');
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
    await eventually(async () => t.load.requestsInFlight === 0, 'the abandoned request to leave');
    assert.equal(t.load.busy(), false);

    const res = await fetch(`${base}/healthz`);
    assert.equal(res.status, 200);
    await eventually(async () => t.load.requestsInFlight === 0, 'an answered request to leave');
  });
});

// Writes that lock receivables in id order (a refund, a payee's settlement) each run in a
// transaction of their own on PostgreSQL (WriteOptions.ownTransaction, store/types.ts).
//
// CI's Node 24 PostgreSQL run once answered a settlement run with 40P01 (deadlock detected) in
// refund-settlement-race. Each writer locks in id order, but the group commit put several
// refunds in one transaction, which then took one sale's receivables and then another's: no
// order at all across the batch. A run locking the merchant's receivables in id order could
// hold the second sale's while waiting on the first's, which the batch held while waiting on the
// second's. The store retries a deadlock, so that one only cost a second (PostgreSQL's
// deadlock_timeout) and a retry; enough of them in a row reach the caller.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { ENGINES, startApp, signup, auth, eventually, waitersOn, type TestApp, type Keys } from './helpers.js';
import { audit } from '../src/modules/audit.js';
import { runSettlement } from '../src/modules/settlements/service.js';
import { createRefund } from '../src/modules/refunds/service.js';
import { SandboxProvider } from '../src/providers/sandbox.js';
import type { RequestContext } from '../src/plugins/idempotency.js';

// A counter or gauge of /metrics' text.
function counter(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\d+(?:\\.\\d+)?)$`, 'm').exec(text);
  assert.ok(m, `${name} is not in /metrics`);
  return Number(m[1]);
}

for (const engine of ENGINES) {
  describe(`writes that lock receivables in order (${engine})`, { skip: engine !== 'postgres' && 'row locks are PostgreSQL\'s: SQLite has one writer' }, () => {
    let t: TestApp;
    let k: Keys;
    const api = async (method: 'GET' | 'POST', url: string, payload?: object) => {
      const res = await t.app.inject({ method, url, headers: auth(k.secretKey), ...(payload ? { payload } : {}) });
      return { status: res.statusCode, body: res.json() };
    };
    const paidPix = async (amount: number): Promise<string> => {
      const p = await api('POST', '/v1/payments', { amount, method: 'pix' });
      assert.equal(p.status, 200, JSON.stringify(p.body));
      assert.equal((await api('POST', `/v1/sandbox/payments/${p.body.id}/pay`)).status, 200);
      return p.body.id as string;
    };

    before(async () => {
      t = await startApp(engine);
      k = await signup(t);
    });
    after(() => t.teardown());

    // Made, not hoped for: a connection of the test's own holds the newer sale's receivable, so
    // the two refunds (older sale's last) and the run queue up in the order that closes a cycle
    // if the two refunds share a transaction.
    test('two refunds started together and a settlement run: no deadlock, no retry', async () => {
      const provider = new SandboxProvider(t.store, async () => 'approve');
      // Sales of other tests settled first: the run then has only these two to lock.
      await runSettlement({ store: t.store, provider }, { trigger: 'admin' });
      const older = await paidPix(30_000);
      const newer = await paidPix(40_000);
      const holder = new pg.Client({ connectionString: t.db.url });
      await holder.connect();
      try {
        const before = { ...t.store.stats };
        await holder.query('begin');
        const locked = await holder.query('select id from receivables where payment_id = $1 for update', [newer]);
        assert.equal(locked.rowCount, 1);
        // Both in one turn of the event loop: group-committed, they would share one transaction
        // that locks the newer sale's receivable, then the older's.
        const ctx: RequestContext = { accountId: k.accountId, livemode: false, correlationId: 'ordered-locks', clock: t.store.clock, write: (op, options) => t.store.write(op, options) };
        const deps = { engine: t.store.engine, kickWorker: () => {} };
        const refunds = Promise.all([createRefund(ctx, { paymentId: newer, amount: 1_000 }, deps), createRefund(ctx, { paymentId: older, amount: 1_000 }, deps)]);
        // Waits for I/O: another PostgreSQL connection queueing behind the held lock.
        await eventually(async () => (await waitersOn(holder)) >= 1, 'the refund of the newer sale waiting on its receivable');
        // The run locks the merchant's receivables in id order: the older sale's, then it waits
        // for the newer's, behind the refund.
        const run = runSettlement({ store: t.store, provider }, { trigger: 'admin' });
        // Waits for I/O: another PostgreSQL connection queueing behind the held lock.
        await eventually(async () => (await waitersOn(holder)) >= 2, 'the run waiting too');
        await holder.query('commit');
        const [made, settled] = await Promise.all([refunds, run]);
        assert.deepEqual(made.map((r) => r.status), ['pending', 'pending']);
        assert.ok(settled.settlementCount >= 1, JSON.stringify(settled));
        assert.equal(t.store.stats.conflictRetries - before.conflictRetries, 0, 'a write was run again after a deadlock or a serialization failure');
        assert.equal(t.store.stats.replays - before.replays, 0, 'a batch was run again (a statement failed in it)');
        const report = await audit(t.store);
        assert.ok(report.ok, JSON.stringify(report.checks.filter((c) => c.violations > 0)));
      } finally {
        await holder.end();
      }
    });

    // Through the API, where the write goes through the idempotency plugin: the option reaches
    // the store. One committing connection, held up by a refund waiting on a lock of the test's
    // own, so the next refunds queue together, as under load; group-committed, the queue would
    // go in one transaction (one commit on /metrics; no worker runs, so nothing else commits).
    test('refunds queued together through the API commit one by one', async () => {
      const one = await startApp(engine, { pgWriters: 1 }, { worker: false });
      const holder = new pg.Client({ connectionString: one.db.url });
      try {
        const own = await signup(one);
        const call = async (method: 'GET' | 'POST', url: string, payload?: object, key?: string) => {
          const res = await one.app.inject({ method, url, headers: auth(own.secretKey, key ? { 'idempotency-key': key } : {}), ...(payload ? { payload } : {}) });
          return { status: res.statusCode, body: res.json() };
        };
        const metrics = async () => (await one.app.inject({ method: 'GET', url: '/metrics' })).body;
        const sales: string[] = [];
        for (let i = 0; i < 9; i++) {
          const p = await call('POST', '/v1/payments', { amount: 10_000 + i, method: 'pix' });
          assert.equal((await call('POST', `/v1/sandbox/payments/${p.body.id}/pay`)).status, 200);
          sales.push(p.body.id as string);
        }
        const [first, ...rest] = sales;
        await holder.connect();
        await holder.query('begin');
        await holder.query('select id from payments where id = $1 for update', [first]);
        const blocked = call('POST', '/v1/refunds', { paymentId: first, amount: 100 });
        // Waits for I/O: another PostgreSQL connection queueing behind the held lock.
        await eventually(async () => (await waitersOn(holder)) >= 1, 'the first refund waiting on its payment');
        // Half with an Idempotency-Key: the plugin's two ways to write.
        const queued = rest.map((id, i) => call('POST', '/v1/refunds', { paymentId: id, amount: 100 }, i % 2 === 0 ? `ordered-locks-${id}` : undefined));
        // Waits for I/O: the requests reaching the store's queue, read from /metrics.
        await eventually(async () => counter(await metrics(), 'store_writes_pending') >= sales.length, 'the refunds queued behind it');
        const commitsBefore = counter(await metrics(), 'store_commits_total');
        await holder.query('commit');
        const answers = await Promise.all([blocked, ...queued]);
        for (const a of answers) assert.equal(a.status, 200, JSON.stringify(a.body));
        const after = await metrics();
        assert.equal(counter(after, 'store_commits_total') - commitsBefore, sales.length, 'refunds shared a transaction');
        assert.equal(counter(after, 'store_writes_pending'), 0);
      } finally {
        await holder.end();
        await one.teardown();
      }
    });
  });
}

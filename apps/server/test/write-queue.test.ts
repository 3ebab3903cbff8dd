import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, auth, signup, startApp, type Keys, type TestApp } from './helpers.js';

// The write queue is bounded (WRITE_QUEUE_MAX_PENDING): past it a write is refused at once with
// 503 SERVICE_UNAVAILABLE and Retry-After, nothing of it written, and counted on /metrics.
for (const engine of ENGINES) {
  describe(`bounded write queue (${engine})`, () => {
    let t: TestApp;
    let keys: Keys;
    before(async () => {
      t = await startApp(engine, { writeQueueMaxPending: 1 }, { worker: false });
      keys = await signup(t);
    });
    after(async () => t?.teardown());

    const refusedCount = async () => {
      const res = await t.app.inject({ method: 'GET', url: '/metrics' });
      const line = res.body.split('\n').find((l) => l.startsWith('store_writes_refused_queue_full_total '));
      assert.ok(line, 'the counter is on /metrics');
      return Number(line.split(' ')[1]);
    };
    const create = () => t.app.inject({
      method: 'POST', url: '/v1/payments', headers: auth(keys.secretKey, { 'idempotency-key': 'queue-full-1' }),
      payload: { method: 'pix', amount: 1234 },
    });

    test('a write past the bound answers 503 with Retry-After and writes nothing; the same key succeeds once the queue drains', async () => {
      const before = await refusedCount();
      // One write held open fills a queue of one.
      let release!: () => void;
      const gate = new Promise<void>((r) => { release = r; });
      let started!: () => void;
      const running = new Promise<void>((r) => { started = r; });
      const held = t.store.write(async () => { started(); await gate; });
      await running;

      const refused = await create();
      assert.equal(refused.statusCode, 503, refused.body);
      assert.equal(refused.json().error.code, 'SERVICE_UNAVAILABLE');
      assert.equal(refused.headers['retry-after'], '1');
      assert.equal(await refusedCount(), before + 1);

      release();
      await held;
      const payments = await t.store.db.selectFrom('payments').select('id').where('account_id', '=', keys.accountId).execute();
      assert.equal(payments.length, 0, 'the refused write left nothing');

      const retried = await create();
      assert.equal(retried.statusCode, 200, retried.body);
      assert.equal(retried.headers['idempotent-replayed'], undefined, 'the refusal was not stored for the key');
      assert.equal(retried.json().amount, 1234);
    });
  });
}

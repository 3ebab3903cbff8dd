import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, startApp, signup, auth, type TestApp } from './helpers.js';

const BODY = { amountInCents: 2500, method: 'credit_card', cardToken: 'tok_visa' };

// The routes `npm run bench` measures the stack's ceilings with (BENCH_CEILING=true only).
for (const engine of ENGINES) {
  describe(`bench ceiling routes (${engine})`, () => {
    const apps: TestApp[] = [];
    after(async () => { for (const a of apps) await a.teardown(); });

    test('absent unless BENCH_CEILING is on', async () => {
      const t = await startApp(engine, {}, { worker: false });
      apps.push(t);
      const k = await signup(t);
      for (const url of ['/v1/_bench/noop', '/v1/_bench/durable']) {
        const res = await t.app.inject({ method: 'POST', url, headers: auth(k.secretKey), payload: BODY });
        assert.equal(res.statusCode, 404, url);
      }
    });

    test('the durable ceiling commits one key row per request and never answers a real key', async () => {
      const t = await startApp(engine, { benchCeiling: true }, { worker: false });
      apps.push(t);
      const k = await signup(t);
      const keyRows = async () => (await t.store.db.selectFrom('idempotency_keys').select(['key', 'status_code', 'body']).where('account_id', '=', k.accountId).execute());

      const noop = await t.app.inject({ method: 'POST', url: '/v1/_bench/noop', headers: auth(k.secretKey, { 'idempotency-key': 'same' }), payload: BODY });
      assert.equal(noop.statusCode, 200);
      assert.equal(noop.json().object, 'payment');
      assert.equal((await keyRows()).length, 0, 'the plain ceiling writes nothing');

      // Same key twice: each request writes its own row (the bench sends a fresh key anyway).
      for (let i = 0; i < 2; i++) {
        const res = await t.app.inject({ method: 'POST', url: '/v1/_bench/durable', headers: auth(k.secretKey, { 'idempotency-key': 'same' }), payload: BODY });
        assert.equal(res.statusCode, 200);
        assert.equal(res.json().id, noop.json().id);
      }
      const rows = await keyRows();
      assert.equal(rows.length, 2);
      for (const r of rows) {
        assert.match(r.key, /^_bench_durable:/);
        assert.equal(r.status_code, 200);
        assert.equal(JSON.parse(r.body).object, 'payment');
      }

      // A bad body is refused before any write.
      const bad = await t.app.inject({ method: 'POST', url: '/v1/_bench/durable', headers: auth(k.secretKey), payload: { ...BODY, extra: 1 } });
      assert.equal(bad.statusCode, 400);
      assert.equal((await keyRows()).length, 2);

      // The real route with the key the bench route was sent creates a payment of its own.
      const real = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey, { 'idempotency-key': 'same' }), payload: BODY });
      assert.equal(real.statusCode, 200);
      assert.equal(real.headers['idempotent-replayed'], undefined);
      assert.notEqual(real.json().id, noop.json().id);
    });
  });
}

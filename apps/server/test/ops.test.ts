import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { ENGINES, startApp, signup, auth, testDatabase, TEST_CONFIG, type TestApp, type Keys } from './helpers.js';
import { loadConfig } from '../src/config.js';
import { Store } from '../src/store/index.js';
import { buildApp, LOG_REDACT } from '../src/app.js';

for (const engine of ENGINES) {
  describe(`operations (${engine})`, () => {
    let t: TestApp;
    let k: Keys;
    before(async () => {
      t = await startApp(engine);
      k = await signup(t);
    });
    after(() => t.teardown());

    test('healthz and readyz', async () => {
      const h = await t.app.inject({ method: 'GET', url: '/healthz' });
      assert.equal(h.statusCode, 200);
      assert.deepEqual(h.json(), { status: 'ok' });
      const r = await t.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(r.statusCode, 200);
      assert.equal(r.json().engine, engine);
    });

    test('metrics: request counts and latency by route and status, payments by status', async () => {
      await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amount: 100, method: 'pix' } });
      await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amount: 0, method: 'pix' } });
      const m = await t.app.inject({ method: 'GET', url: '/metrics' });
      assert.equal(m.statusCode, 200);
      assert.match(m.headers['content-type'] as string, /^text\/plain/);
      assert.match(m.body, /http_requests_total\{method="POST",route="\/v1\/payments",status="200"\} \d+/);
      assert.match(m.body, /http_requests_total\{method="POST",route="\/v1\/payments",status="400"\} \d+/);
      assert.match(m.body, /http_request_duration_ms_bucket\{method="POST",route="\/v1\/payments",status="200",le="\+Inf"\} \d+/);
      assert.match(m.body, /payments\{status="pending",livemode="false"\} [1-9]\d*/);
      // Group commit: writes and the commits they shared, and batches that had to run again.
      assert.match(m.body, /^store_writes_total [1-9]\d*$/m);
      assert.match(m.body, /^store_commits_total [1-9]\d*$/m);
      assert.match(m.body, /^store_batch_replays_total \d+$/m);
      assert.match(m.body, /^store_writes_pending \d+$/m);
    });

    test('correlation ids: generated, or taken from the caller when well-formed', async () => {
      const a = await t.app.inject({ method: 'GET', url: '/healthz' });
      assert.match(a.headers['x-correlation-id'] as string, /^req_[0-9a-z]{26}$/);
      const b = await t.app.inject({ method: 'GET', url: '/v1/payments/pay_x', headers: auth(k.secretKey, { 'x-correlation-id': 'my-trace-123' }) });
      assert.equal(b.headers['x-correlation-id'], 'my-trace-123');
      assert.equal(b.json().error.correlationId, 'my-trace-123');
      const c = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-correlation-id': 'bad id with spaces <script>' } });
      assert.match(c.headers['x-correlation-id'] as string, /^req_/);
    });

    test('security headers on API responses', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/v1/payments', headers: auth(k.secretKey) });
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.equal(res.headers['x-frame-options'], 'DENY');
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['referrer-policy'], 'no-referrer');
      assert.match(res.headers['content-security-policy'] as string, /default-src 'none'/);
    });
  });
}

describe('logs', () => {
  test('one JSON line per request with its correlation id; no keys, card numbers or documents', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({ write(chunk, _enc, cb) { for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l)); cb(); } });
    const logger = pino({ level: 'info', redact: { paths: LOG_REDACT, censor: '[redacted]' } }, sink);
    const db = await testDatabase('sqlite');
    const config = loadConfig({}, { ...TEST_CONFIG, databaseUrl: db.url, workerInProcess: false });
    const store = Store.open({ url: db.url });
    await store.migrate();
    const built = await buildApp({ config, store, logger });
    try {
      const s = (await built.app.inject({ method: 'POST', url: '/v1/sandbox/accounts', payload: {} })).json();
      const key = s.keys.secretKey.key;
      const pk = s.keys.publishableKey.key;
      await built.app.inject({ method: 'POST', url: '/v1/tokens', headers: auth(pk), payload: { card: { number: '4242424242424242', expMonth: 1, expYear: 2020, cvc: '123' } } });
      const res = await built.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(key, { 'x-correlation-id': 'trace-abc' }), payload: { amount: 10, method: 'pix', customer: { document: '12345678909' } } });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().customer.document, '*********09');
      await built.app.inject({ method: 'GET', url: '/v1/payments', headers: auth('sk_test_' + 'B'.repeat(32)) });
      const mine = lines.filter((l) => l.correlationId === 'trace-abc');
      assert.equal(mine.length, 1);
      assert.equal(mine[0].msg, 'request completed');
      assert.equal(mine[0].statusCode, 200);
      const all = JSON.stringify(lines);
      assert.ok(!all.includes(key), 'no secret key');
      assert.ok(!all.includes('B'.repeat(32)), 'no presented key either');
      assert.ok(!all.includes('4242424242424242'), 'no card number');
      assert.ok(!all.includes('12345678909'), 'no document');
      assert.ok(lines.every((l) => l.msg !== 'request completed' || typeof l.correlationId === 'string'));
    } finally {
      await built.close();
      await db.drop();
    }
  });
});

describe('graceful shutdown', () => {
  test('requests in flight finish and are durable; then the port is closed', async () => {
    const db = await testDatabase('sqlite');
    const config = loadConfig({}, { ...TEST_CONFIG, databaseUrl: db.url });
    const store = Store.open({ url: db.url });
    await store.migrate();
    const built = await buildApp({ config, store, logger: false });
    await built.startWorker();
    const address = await built.app.listen({ port: 0, host: '127.0.0.1' });
    const s = await (await fetch(`${address}/v1/sandbox/accounts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json() as { keys: { secretKey: { key: string } } };
    const key = s.keys.secretKey.key;
    const send = () => fetch(`${address}/v1/payments`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ amountInCents: 100, method: 'credit_card', cardToken: 'tok_visa' }) });
    const inflight = Array.from({ length: 30 }, send);
    const first = await Promise.race(inflight);
    assert.equal(first.status, 200);
    const closing = built.close();
    const results = await Promise.allSettled(inflight.map(async (p) => { const r = await p; return { status: r.status, body: await r.json() as { id: string } }; }));
    await closing;
    const answered = results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<{ status: number; body: { id: string } }>).value);
    assert.ok(answered.length >= 1);
    for (const a of answered) assert.equal(a.status, 200);
    await assert.rejects(fetch(`${address}/healthz`), 'the port is closed');
    const reopened = Store.open({ url: db.url });
    try {
      for (const a of answered) {
        const row = await reopened.db.selectFrom('payments').select('id').where('id', '=', a.body.id).executeTakeFirst();
        assert.ok(row, `acknowledged payment ${a.body.id} is in the store`);
      }
    } finally {
      await reopened.close();
      await db.drop();
    }
  });
});

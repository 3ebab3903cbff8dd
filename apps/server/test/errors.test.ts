import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ERROR_CODES } from '../src/errors.js';
import { ENGINES, startApp, startManualApp, signup, auth, type TestApp, type Keys } from './helpers.js';
import { rawRequest, type RawResponse } from './raw-http.js';

function assertEnvelope(res: { statusCode: number; headers: Record<string, unknown>; json: () => any }, status: number, code: string) {
  assert.equal(res.statusCode, status);
  const body = res.json();
  assert.deepEqual(Object.keys(body), ['error']);
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(body.error.message.length > 0);
  assert.equal(body.error.correlationId, res.headers['x-correlation-id']);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  return body.error;
}

for (const engine of ENGINES) {
  describe(`error envelope for every code (${engine})`, () => {
    let t: TestApp;
    let k: Keys;
    const seen = new Set<string>();
    before(async () => {
      // Node looks for requests over their time limit every connectionsCheckingInterval (30 s by
      // default): shortened so the 408 below comes quickly.
      t = await startApp(engine, { bodyLimitBytes: 2048 }, { http: { connectionsCheckingInterval: 50 } });
      k = await signup(t);
    });
    after(async () => {
      await t.teardown();
    });

    const check = (res: Parameters<typeof assertEnvelope>[0], status: number, code: string) => {
      seen.add(code);
      return assertEnvelope(res, status, code);
    };

    test('VALIDATION_ERROR, AUTHENTICATION_REQUIRED, INVALID_API_KEY, PERMISSION_DENIED', async () => {
      const v = check(await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amount: -1, method: 'pix' } }), 400, 'VALIDATION_ERROR');
      assert.equal(v.param, 'amount');
      assert.equal(v.message, 'amount must be a positive integer.');
      check(await t.app.inject({ method: 'GET', url: '/v1/payments' }), 401, 'AUTHENTICATION_REQUIRED');
      check(await t.app.inject({ method: 'GET', url: '/v1/payments', headers: { authorization: 'Basic abc' } }), 401, 'AUTHENTICATION_REQUIRED');
      const bogus = 'sk_test_' + 'A'.repeat(32);
      const invalid = check(await t.app.inject({ method: 'GET', url: '/v1/payments', headers: auth(bogus) }), 401, 'INVALID_API_KEY');
      assert.ok(!invalid.message.includes(bogus), 'the key is never echoed');
      check(await t.app.inject({ method: 'GET', url: '/v1/payments', headers: auth('whatever') }), 401, 'INVALID_API_KEY');
      check(await t.app.inject({ method: 'GET', url: '/v1/payments', headers: auth(k.publishableKey) }), 403, 'PERMISSION_DENIED');
    });

    test('revoked keys are INVALID_API_KEY', async () => {
      const { createKey, revokeKey } = await import('../src/modules/accounts/service.js');
      const extra = await createKey(t.store, k.accountId, 'secret', false);
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/payments', headers: auth(extra.key) })).statusCode, 200);
      await revokeKey(t.store, extra.id);
      check(await t.app.inject({ method: 'GET', url: '/v1/payments', headers: auth(extra.key) }), 401, 'INVALID_API_KEY');
    });

    test('NOT_FOUND and METHOD_NOT_ALLOWED', async () => {
      check(await t.app.inject({ method: 'GET', url: '/v2/anything' }), 404, 'NOT_FOUND');
      check(await t.app.inject({ method: 'GET', url: '/v1/payments/pay_doesnotexist', headers: auth(k.secretKey) }), 404, 'NOT_FOUND');
      const res = await t.app.inject({ method: 'PUT', url: '/v1/payments/pay_x' });
      check(res, 405, 'METHOD_NOT_ALLOWED');
      assert.equal(res.headers.allow, 'GET');
    });

    test('malformed JSON, PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE', async () => {
      check(await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey, { 'content-type': 'application/json' }), payload: '{"amount": 1,' }), 400, 'VALIDATION_ERROR');
      check(await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey, { 'content-type': 'application/json' }), payload: '{"__proto__": {"x": 1}}' }), 400, 'VALIDATION_ERROR');
      // An empty body with a JSON content type is no body: refused where a body is required, and
      // told what `{}` is told (the field it lacks)...
      const empty = check(await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey, { 'content-type': 'application/json' }), payload: '' }), 400, 'VALIDATION_ERROR');
      const braces = check(await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: {} }), 400, 'VALIDATION_ERROR');
      assert.deepEqual({ param: empty.param, message: empty.message }, { param: braces.param, message: braces.message });
      assert.match(empty.message, /^\w+ is required/);
      // An update without a body is told to change something, as `{}` is.
      const noUpdate = check(await t.app.inject({ method: 'PATCH', url: '/v1/webhook-endpoints/whe_x', headers: auth(k.secretKey) }), 400, 'VALIDATION_ERROR');
      assert.equal(noUpdate.message, 'Send at least one of url, events, enabled, description.');
      // ...and fine where none is needed.
      const p = (await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amount: 5, method: 'pix' } })).json();
      const cancel = await t.app.inject({ method: 'POST', url: `/v1/payments/${p.id}/cancel`, headers: auth(k.secretKey, { 'content-type': 'application/json' }), payload: '' });
      assert.equal(cancel.statusCode, 200);
      const big = JSON.stringify({ amount: 1, method: 'pix', description: 'x'.repeat(4000) });
      check(await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey, { 'content-type': 'application/json' }), payload: big }), 413, 'PAYLOAD_TOO_LARGE');
      check(await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey, { 'content-type': 'text/plain' }), payload: 'amount=1' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      check(await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey, { 'content-type': 'application/x-www-form-urlencoded' }), payload: 'amount=1' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    test('IDEMPOTENCY_KEY_IN_USE, IDEMPOTENCY_KEY_REUSED, INVALID_STATE, UNPROCESSABLE', async () => {
      const h = auth(k.secretKey, { 'idempotency-key': 'err-1' });
      // With the key cached (as in production), two requests sent together meet the in-flight
      // check in the order they were sent, not in the order their key lookups came back.
      const cached = await startApp(engine, { authCacheTtlMs: 60_000, workerInProcess: false }, { db: t.db });
      let a, b;
      try {
        assert.equal((await cached.app.inject({ method: 'GET', url: '/v1/payments?limit=1', headers: auth(k.secretKey) })).statusCode, 200);
        [a, b] = await Promise.all([
          cached.app.inject({ method: 'POST', url: '/v1/payments', headers: h, payload: { amount: 10, method: 'pix' } }),
          cached.app.inject({ method: 'POST', url: '/v1/payments', headers: h, payload: { amount: 10, method: 'pix' } }),
        ]);
      } finally {
        await cached.teardown();
      }
      assert.equal(a.statusCode, 200);
      check(b, 409, 'IDEMPOTENCY_KEY_IN_USE');
      check(await t.app.inject({ method: 'POST', url: '/v1/payments', headers: h, payload: { amount: 11, method: 'pix' } }), 422, 'IDEMPOTENCY_KEY_REUSED');
      const p = a.json();
      await t.app.inject({ method: 'POST', url: `/v1/payments/${p.id}/cancel`, headers: auth(k.secretKey) });
      check(await t.app.inject({ method: 'POST', url: `/v1/sandbox/payments/${p.id}/pay`, headers: auth(k.secretKey) }), 409, 'INVALID_STATE');
      const token = (await t.app.inject({ method: 'POST', url: '/v1/tokens', headers: auth(k.publishableKey), payload: { card: { number: '4242424242424242', expMonth: 12, expYear: 2099, cvc: '123' } } })).json();
      assert.equal((await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amountInCents: 10, method: 'credit_card', cardToken: token.id } })).statusCode, 200);
      const reused = check(await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amountInCents: 10, method: 'credit_card', cardToken: token.id } }), 422, 'UNPROCESSABLE');
      assert.equal(reused.param, 'cardToken');
    });

    test('RATE_LIMITED with Retry-After and RateLimit headers', async () => {
      const limitedApp = await startApp(engine, { rateLimitPerMinute: 5, workerInProcess: false });
      const other = await signup(limitedApp, 'Rate limited');
      let limited;
      for (let i = 0; i < 10 && !limited; i++) {
        const res = await limitedApp.app.inject({ method: 'GET', url: '/v1/payments', headers: auth(other.secretKey) });
        assert.equal(res.headers['ratelimit-limit'], '5');
        if (res.statusCode === 429) limited = res;
      }
      assert.ok(limited, 'the 6th request within a minute is limited');
      check(limited, 429, 'RATE_LIMITED');
      assert.ok(Number(limited.headers['retry-after']) >= 1);
      assert.equal(limited.headers['ratelimit-remaining'], '0');
      // Refused before doing anything: the bucket is per key, another key still passes.
      const fresh = await signup(limitedApp, 'Not limited');
      assert.equal((await limitedApp.app.inject({ method: 'GET', url: '/v1/payments', headers: auth(fresh.secretKey) })).statusCode, 200);
      await limitedApp.teardown();
    });

    test('INTERNAL_ERROR, SERVICE_UNAVAILABLE: the store goes away', async () => {
      const doomed = await startApp(engine, { workerInProcess: false });
      const keys = await signup(doomed);
      await doomed.store.close();
      const res = await doomed.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(keys.secretKey), payload: { amount: 1, method: 'pix' } });
      const err = check(res, 500, 'INTERNAL_ERROR');
      assert.ok(!/store|sqlite|postgres|stack/i.test(err.message), 'no internals leak');
      check(await doomed.app.inject({ method: 'GET', url: '/readyz' }), 503, 'SERVICE_UNAVAILABLE');
      await doomed.app.close();
      await doomed.db.drop();
    });

    test('PROVIDER_UNAVAILABLE: card payments fail fast while the provider is down', async () => {
      // A ManualClock: each confirmation runs on down.runDue(), and the breaker's time stands still.
      const down = await startManualApp(engine, { providerBreakerFailures: 2, providerMaxAttempts: 1 });
      try {
        const keys = await signup(down);
        const pay = (token: string, key?: string) => down.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(keys.secretKey, key ? { 'idempotency-key': key } : {}), payload: { amountInCents: 100, method: 'credit_card', cardToken: token } });
        for (let i = 0; i < 2; i++) {
          const p = (await pay('tok_provider_error')).json();
          await down.runDue();
          assert.equal((await down.app.inject({ method: 'GET', url: `/v1/payments/${p.id}`, headers: auth(keys.secretKey) })).json().status, 'failed');
        }
        const refused = await pay('tok_visa', 'while-down');
        const err = check(refused, 503, 'PROVIDER_UNAVAILABLE');
        assert.ok(Number(refused.headers['retry-after']) >= 1);
        assert.match(err.message, /nothing was charged/);
        assert.equal(refused.headers['idempotent-replayed'], undefined);
        // Pix does not need the card provider.
        assert.equal((await down.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(keys.secretKey), payload: { amount: 100, method: 'pix' } })).statusCode, 200);
      } finally {
        await down.teardown();
      }
    });

    test('REQUEST_HEADERS_TOO_LARGE and REQUEST_TIMEOUT: the HTTP parser\'s refusals, written on the socket in the envelope', async () => {
      const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
      const port = Number(new URL(address).port);
      const asInjected = (r: RawResponse | null) => {
        assert.ok(r, 'an answer');
        return { statusCode: r.status, headers: r.headers, json: () => JSON.parse(r.body) };
      };
      const big = asInjected(await rawRequest(port, `GET /v1/payments HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(20_000)}\r\n\r\n`));
      assert.match(check(big, 431, 'REQUEST_HEADERS_TOO_LARGE').message, /16 KiB/);
      assert.equal(big.headers.connection, 'close');
      // Headers that never finish: Node's headers timeout.
      t.app.server.headersTimeout = 300;
      t.app.server.requestTimeout = 300;
      try {
        check(asInjected(await rawRequest(port, 'GET /v1/payments HTTP/1.1\r\nHost: x\r\nX-Slow: ')), 408, 'REQUEST_TIMEOUT');
      } finally {
        t.app.server.headersTimeout = 60_000;
        t.app.server.requestTimeout = 0;
      }
    });

    test('every error code is produced over HTTP', () => {
      assert.deepEqual(ERROR_CODES.filter((c) => !seen.has(c)), []);
    });
  });
}

describe('card payments fail cleanly when the provider stays down', () => {
  test('failure is recorded on the payment, never as a charge', async () => {
    const t = await startManualApp('sqlite', { providerMaxAttempts: 2 });
    try {
      const k = await signup(t);
      const p = (await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amountInCents: 10, method: 'credit_card', cardToken: 'tok_provider_error' } })).json();
      const read = async () => (await t.app.inject({ method: 'GET', url: `/v1/payments/${p.id}`, headers: auth(k.secretKey) })).json();
      // The first attempt fails and is retried after the back-off (base ±20%), not before.
      await t.runDue();
      assert.equal((await read()).status, 'pending');
      await t.advance(2 * t.config.providerRetryBaseMs);
      const failed = await read();
      assert.equal(failed.status, 'failed');
      assert.equal(failed.failure.code, 'provider_unavailable');
    } finally {
      await t.teardown();
    }
  });
});

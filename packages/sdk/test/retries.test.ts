// Never twice: retries reuse one Idempotency-Key; what is retried and what is not; timeouts
// and aborts. A proxy between the SDK and a running server cuts, holds or answers requests.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  APIError, ConnectionError, createSandboxAccount, DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_DELAY_MS, DEFAULT_MIN_RETRY_DELAY_MS, DEFAULT_TIMEOUT_MS,
  IdempotencyError, MAX_TIMEOUT_MS, Pagamentos, RateLimitError, RequestAbortedError, TimeoutError, ValidationError,
} from '../src/index.js';
import { backoffMs, retryDelayMs } from '../src/core.js';
import { ENGINES, eventually, holdWrites, merchant, recordingFetch, startProxy, startServer, type Proxy, type Running } from './harness.js';

const envelope = (code: string, message = code) => JSON.stringify({ error: { code, message, correlationId: 'req_from_proxy' } });
const DEFAULT_DELAYS = { minRetryDelayMs: 500, maxRetryDelayMs: 8000 };

test('defaults: 2 retries, a timeout of 80 s, backoff from 0.5 s to 8 s', () => {
  const client = new Pagamentos('sk_test_x');
  assert.deepEqual(
    { timeoutMs: client.timeoutMs, maxRetries: client.maxRetries, minRetryDelayMs: client.minRetryDelayMs, maxRetryDelayMs: client.maxRetryDelayMs },
    { timeoutMs: 80_000, maxRetries: 2, minRetryDelayMs: 500, maxRetryDelayMs: 8000 },
  );
  assert.deepEqual([DEFAULT_TIMEOUT_MS, DEFAULT_MAX_RETRIES, DEFAULT_MIN_RETRY_DELAY_MS, DEFAULT_MAX_RETRY_DELAY_MS], [80_000, 2, 500, 8000]);
  // All of them can be changed.
  const tuned = new Pagamentos('sk_test_x', { timeoutMs: 5000, maxRetries: 0, minRetryDelayMs: 100, maxRetryDelayMs: 100 });
  assert.deepEqual([tuned.timeoutMs, tuned.maxRetries, tuned.minRetryDelayMs, tuned.maxRetryDelayMs], [5000, 0, 100, 100]);
});

test('backoff: every wait random (the first too), doubling within [min, max]: 0.5-1 s, 1-2 s, 2-4 s, then 4-8 s', () => {
  const waits = (retry: number, delays = DEFAULT_DELAYS) => Array.from({ length: 200 }, () => backoffMs(retry, delays));
  for (const [retry, [low, high]] of [[500, 1000], [1000, 2000], [2000, 4000], [4000, 8000], [4000, 8000], [4000, 8000]].entries()) {
    const ms = waits(retry);
    assert.ok(ms.every((w) => w >= low && w <= high), `retry ${retry}: ${Math.min(...ms)}..${Math.max(...ms)} not within ${low}..${high}`);
    // Jittered: 200 draws of a random wait are not one value (a fixed wait would be).
    assert.ok(new Set(ms).size > 100, `retry ${retry} is jittered`);
  }
  // Other bounds: the same shape within them.
  const custom = { minRetryDelayMs: 100, maxRetryDelayMs: 300 };
  assert.ok(waits(0, custom).every((w) => w >= 100 && w <= 200));
  assert.ok(waits(1, custom).every((w) => w >= 150 && w <= 300));
  assert.ok(waits(9, custom).every((w) => w >= 150 && w <= 300));
  assert.deepEqual(new Set(waits(3, { minRetryDelayMs: 250, maxRetryDelayMs: 250 })), new Set([250]));
  assert.deepEqual(new Set(waits(0, { minRetryDelayMs: 0, maxRetryDelayMs: 0 })), new Set([0]));
});

test('timeoutMs, maxRetries and the retry delays are checked on the client and on each call: a TypeError, nothing sent', async () => {
  const bad: Array<[object, RegExp]> = [
    [{ timeoutMs: 0 }, /^timeoutMs must be an integer from 1 to 2147483647, got 0\.$/],
    // One more than setTimeout takes: it would overflow and time every call out at once.
    [{ timeoutMs: 2 ** 31 }, /^timeoutMs must be an integer from 1 to 2147483647, got 2147483648\.$/],
    [{ timeoutMs: 1.5 }, /timeoutMs .* got 1\.5/],
    [{ timeoutMs: Number.NaN }, /timeoutMs .* got NaN/],
    [{ timeoutMs: '1000' }, /timeoutMs .* got string/],
    [{ maxRetries: -1 }, /^maxRetries must be an integer from 0 to 10, got -1\.$/],
    [{ maxRetries: 11 }, /maxRetries .* got 11/],
    [{ maxRetries: Number.POSITIVE_INFINITY }, /maxRetries .* got Infinity/],
  ];
  const recorded = recordingFetch();
  const client = new Pagamentos('sk_test_x', { fetch: recorded.fetch });
  for (const [options, message] of bad) {
    assert.throws(() => new Pagamentos('sk_test_x', options), (e: unknown) => e instanceof TypeError && message.test(e.message), JSON.stringify(options));
    await assert.rejects(client.balance.retrieve(options), (e: unknown) => e instanceof TypeError && message.test(e.message), `per call ${JSON.stringify(options)}`);
    await assert.rejects(client.payments.list({}, options).autoPagingToArray({ limit: 1 }), TypeError);
    assert.throws(() => createSandboxAccount({}, options), TypeError);
  }
  for (const [options, message] of [
    [{ minRetryDelayMs: -1 }, /^minRetryDelayMs must be an integer from 0 to 2147483647, got -1\.$/],
    [{ maxRetryDelayMs: 2 ** 31 }, /^maxRetryDelayMs must be an integer/],
    [{ minRetryDelayMs: 2000, maxRetryDelayMs: 1000 }, /^minRetryDelayMs \(2000\) is over maxRetryDelayMs \(1000\)\.$/],
    // Over the default maximum, without raising it: said, not silently changed.
    [{ minRetryDelayMs: 10_000 }, /^minRetryDelayMs \(10000\) is over maxRetryDelayMs \(8000\)\.$/],
  ] as const) {
    assert.throws(() => new Pagamentos('sk_test_x', options), (e: unknown) => e instanceof TypeError && message.test(e.message), JSON.stringify(options));
  }
  assert.equal(recorded.calls.length, 0, 'nothing was sent');
  // The bounds themselves are fine.
  for (const options of [{ timeoutMs: 1 }, { timeoutMs: MAX_TIMEOUT_MS }, { maxRetries: 0 }, { maxRetries: 10 }, { minRetryDelayMs: 0, maxRetryDelayMs: 0 }, { minRetryDelayMs: 8000 }]) {
    assert.doesNotThrow(() => new Pagamentos('sk_test_x', options), JSON.stringify(options));
  }
});

test('what is retried: 409 IDEMPOTENCY_KEY_IN_USE, 429, 500, 502, 503, 504; Retry-After honoured up to 60 s', () => {
  const none = new Headers();
  const d = DEFAULT_DELAYS;
  for (const status of [429, 500, 502, 503, 504]) assert.ok(retryDelayMs(status, 'X', none, 0, d) !== undefined, String(status));
  assert.ok(retryDelayMs(409, 'IDEMPOTENCY_KEY_IN_USE', none, 0, d) !== undefined);
  for (const [status, code] of [[400, 'VALIDATION_ERROR'], [401, 'INVALID_API_KEY'], [403, 'PERMISSION_DENIED'], [404, 'NOT_FOUND'], [405, 'METHOD_NOT_ALLOWED'], [409, 'INVALID_STATE'], [413, 'PAYLOAD_TOO_LARGE'], [415, 'UNSUPPORTED_MEDIA_TYPE'], [422, 'IDEMPOTENCY_KEY_REUSED'], [422, 'UNPROCESSABLE'], [501, 'X']] as const) {
    assert.equal(retryDelayMs(status, code, none, 0, d), undefined, `${status} ${code}`);
  }
  assert.equal(retryDelayMs(429, 'RATE_LIMITED', new Headers({ 'retry-after': '7' }), 0, d), 7000);
  assert.equal(retryDelayMs(503, 'SERVICE_UNAVAILABLE', new Headers({ 'retry-after': '60' }), 0, d), 60_000);
  assert.equal(retryDelayMs(503, 'SERVICE_UNAVAILABLE', new Headers({ 'retry-after': '61' }), 0, d), undefined);
  const date = retryDelayMs(429, 'RATE_LIMITED', new Headers({ 'retry-after': new Date(Date.now() + 30_000).toUTCString() }), 0, d)!;
  assert.ok(date > 25_000 && date <= 30_000, String(date));
});

for (const engine of ENGINES) {
  describe(`retries (${engine})`, () => {
    let server: Running;
    let proxy: Proxy;
    let client: Pagamentos;
    let secretKey: string;

    before(async () => {
      server = await startServer(engine);
      proxy = await startProxy(server.port);
      ({ client, secretKey } = await merchant(server.baseUrl));
    });
    after(async () => {
      await proxy.close();
      await server.close();
    });

    const viaProxy = (options: ConstructorParameters<typeof Pagamentos>[1] = {}) => {
      const recorded = recordingFetch();
      return { sdk: new Pagamentos(secretKey, { baseUrl: proxy.baseUrl, fetch: recorded.fetch, ...options }), calls: recorded.calls };
    };
    // The proxy's list of requests from now on.
    const mark = () => {
      const from = proxy.seen.length;
      return () => proxy.seen.slice(from);
    };

    test('a create whose connection is cut after the server answered is retried with the same key: one payment, and the SDK returns it', async () => {
      const { sdk } = viaProxy();
      const seen = mark();
      proxy.plan({ kind: 'drop-after-answer' });
      const { data, response } = await sdk.payments.create({ amountInCents: 4321, method: 'credit_card', cardToken: 'tok_visa' }).withResponse();
      const requests = seen();
      assert.equal(requests.length, 2);
      assert.deepEqual(requests.map((r) => r.action), ['drop-after-answer', 'forward']);
      assert.ok(requests[0].headers['idempotency-key']);
      assert.equal(requests[1].headers['idempotency-key'], requests[0].headers['idempotency-key']);
      assert.equal(response.attempts, 2);
      assert.equal(response.idempotentReplayed, true, 'the second attempt got the stored answer of the first');
      assert.equal(response.idempotencyKey, requests[0].headers['idempotency-key']);
      const all = await client.payments.list({ limit: 100 });
      assert.deepEqual(all.data.filter((p) => p.amount === 4321).map((p) => p.id), [data.id], 'exactly one payment was made');
    });

    test('with no retries left the cut connection is a ConnectionError carrying the key to retry with', async () => {
      const { sdk } = viaProxy({ maxRetries: 0 });
      proxy.plan({ kind: 'drop-after-answer' });
      const err = await sdk.payments.create({ amountInCents: 4444, method: 'pix' }).catch((e: unknown) => e);
      assert.ok(err instanceof ConnectionError && !(err instanceof TimeoutError));
      assert.equal(err.code, 'CONNECTION_ERROR');
      assert.equal(err.status, undefined);
      assert.match(err.message, /^No answer from http:\/\/127\.0\.0\.1:\d+: fetch failed/);
      // Retrying by hand with that key returns the payment the first attempt made.
      const again = await client.payments.create({ amountInCents: 4444, method: 'pix' }, { idempotencyKey: err.idempotencyKey }).withResponse();
      assert.equal(again.response.idempotentReplayed, true);
    });

    test('a 400 is not retried', async () => {
      const { sdk, calls } = viaProxy();
      const err = await sdk.payments.create({ amountInCents: 0, method: 'pix' }).catch((e: unknown) => e);
      assert.ok(err instanceof ValidationError);
      assert.equal(err.status, 400);
      assert.equal(calls.length, 1);
      assert.deepEqual(calls.map((c) => c.status), [400]);
    });

    test('a 422 IDEMPOTENCY_KEY_REUSED is an IdempotencyError, not retried', async () => {
      const { sdk, calls } = viaProxy();
      await sdk.payments.create({ amountInCents: 100, method: 'pix' }, { idempotencyKey: 'reused-key' });
      const err = await sdk.payments.create({ amountInCents: 200, method: 'pix' }, { idempotencyKey: 'reused-key' }).catch((e: unknown) => e);
      assert.ok(err instanceof IdempotencyError);
      assert.equal(err.code, 'IDEMPOTENCY_KEY_REUSED');
      assert.equal(err.idempotencyKey, 'reused-key');
      assert.equal(calls.length, 2);
    });

    test('503 with Retry-After, 502 without an envelope, 409 IDEMPOTENCY_KEY_IN_USE: retried with the same key until the answer', async () => {
      const { sdk, calls } = viaProxy();
      const seen = mark();
      proxy.plan(
        { kind: 'answer', status: 503, headers: { 'retry-after': '1' }, body: envelope('SERVICE_UNAVAILABLE') },
        { kind: 'answer', status: 409, headers: { 'retry-after': '1' }, body: envelope('IDEMPOTENCY_KEY_IN_USE') },
      );
      const { data, response } = await sdk.payments.create({ amountInCents: 2222, method: 'pix' }, { maxRetries: 2 }).withResponse();
      assert.equal(data.amount, 2222);
      assert.equal(response.attempts, 3);
      assert.equal(new Set(seen().map((r) => r.headers['idempotency-key'])).size, 1);
      assert.ok(calls[1].startedAtMs - calls[0].startedAtMs >= 1000, 'waited out Retry-After: 1');
      assert.ok(calls[2].startedAtMs - calls[1].startedAtMs >= 1000, 'waited out Retry-After: 1');

      proxy.plan({ kind: 'answer', status: 502, headers: { 'content-type': 'text/html' }, body: '<h1>Bad gateway</h1>' }, { kind: 'answer', status: 500, body: envelope('INTERNAL_ERROR') });
      const retrieved = await sdk.payments.retrieve(data.id).withResponse();
      assert.equal(retrieved.response.attempts, 3);
    });

    test('5xx after the retries: an APIError; Retry-After over 60 s is not waited', async () => {
      const { sdk, calls } = viaProxy({ maxRetries: 1 });
      proxy.plan({ kind: 'answer', status: 504, body: envelope('INTERNAL_ERROR') }, { kind: 'answer', status: 502, headers: { 'content-type': 'text/html' }, body: 'nope' });
      const err = await sdk.balance.retrieve().catch((e: unknown) => e);
      assert.ok(err instanceof APIError);
      assert.equal(err.status, 502);
      assert.equal(err.code, 'HTTP_502');
      assert.equal(calls.length, 2);

      const before = calls.length;
      proxy.plan({ kind: 'answer', status: 503, headers: { 'retry-after': '3600' }, body: envelope('PROVIDER_UNAVAILABLE', 'down') });
      const long = await sdk.payments.create({ amountInCents: 100, method: 'pix' }).catch((e: unknown) => e);
      assert.ok(long instanceof APIError);
      assert.equal(long.code, 'PROVIDER_UNAVAILABLE');
      assert.equal(long.headers!.get('retry-after'), '3600');
      assert.equal(calls.length - before, 1);
    });

    test('by default a call is tried 3 times (2 retries), then fails', async () => {
      const { sdk, calls } = viaProxy();
      // Three failures planned: a fourth attempt would reach the server and succeed.
      proxy.plan(...[1, 2, 3].map(() => ({ kind: 'answer' as const, status: 500, body: envelope('INTERNAL_ERROR') })));
      const err = await sdk.balance.retrieve().catch((e: unknown) => e);
      assert.ok(err instanceof APIError);
      assert.equal(err.code, 'INTERNAL_ERROR');
      assert.deepEqual(calls.map((c) => c.status), [500, 500, 500]);
    });

    test('minRetryDelayMs and maxRetryDelayMs set the wait between retries', async () => {
      // Both 1.5 s: the wait is 1.5 s, where the default one (0.5-1 s) could not be.
      const { sdk, calls } = viaProxy({ minRetryDelayMs: 1500, maxRetryDelayMs: 1500 });
      proxy.plan({ kind: 'answer', status: 500, body: envelope('INTERNAL_ERROR') });
      const { response } = await sdk.balance.retrieve().withResponse();
      assert.equal(response.attempts, 2);
      assert.ok(calls[1].startedAtMs - calls[0].startedAtMs >= 1450, `waited ${calls[1].startedAtMs - calls[0].startedAtMs} ms`);
    });

    test("a call's timeoutMs overrides the client's; the largest one setTimeout takes works", { timeout: 60_000 }, async () => {
      const { sdk } = viaProxy({ timeoutMs: 30_000 });
      proxy.plan({ kind: 'hold' });
      const err = await sdk.balance.retrieve({ timeoutMs: 200, maxRetries: 0 }).catch((e: unknown) => e);
      assert.ok(err instanceof TimeoutError);
      assert.equal(err.message, 'No answer within 200 ms.');
      // 2^31 - 1 ms does not overflow into an immediate timeout: the answer comes.
      const { response } = await sdk.balance.retrieve({ timeoutMs: MAX_TIMEOUT_MS, maxRetries: 0 }).withResponse();
      assert.equal(response.status, 200);
    });

    test('a timeout: TimeoutError without retries, the answer with one', { timeout: 60_000 }, async () => {
      const { sdk } = viaProxy({ timeoutMs: 300 });
      proxy.plan({ kind: 'hold' });
      const err = await sdk.balance.retrieve({ maxRetries: 0 }).catch((e: unknown) => e);
      assert.ok(err instanceof TimeoutError && err instanceof ConnectionError);
      assert.equal(err.code, 'TIMEOUT');

      // The retry must be answered within the call's timeout, by a real server: 300 ms was too
      // little for a create on PostgreSQL with the machine busy (CI-like run, 2026-11-28: the
      // retry timed out too). 5 s for this call; the held first attempt waits all of it.
      const seen = mark();
      proxy.plan({ kind: 'hold' });
      const { data, response } = await sdk.payments.create({ amountInCents: 3131, method: 'pix' }, { maxRetries: 1, timeoutMs: 5_000 }).withResponse();
      assert.equal(response.attempts, 2);
      assert.equal(data.amount, 3131);
      const [held, forwarded] = seen();
      assert.equal(held.headers['idempotency-key'], forwarded.headers['idempotency-key']);
      // The held attempt never reached the server: one payment.
      const all = await client.payments.list({ limit: 100 });
      assert.equal(all.data.filter((p) => p.amount === 3131).length, 1);
    });

    test('an abort: RequestAbortedError at once, never retried; an aborted signal sends nothing', { timeout: 60_000 }, async () => {
      const { sdk, calls } = viaProxy();
      const seen = mark();
      proxy.plan({ kind: 'hold' });
      const controller = new AbortController();
      const pending = sdk.payments.create({ amountInCents: 5151, method: 'pix' }, { signal: controller.signal }).catch((e: unknown) => e);
      // Waits for I/O: the request crossing the proxy to the server under test.
      await eventually(async () => seen().length === 1, 'the proxy holds the request');
      controller.abort(new Error('user left'));
      const err = await pending;
      assert.ok(err instanceof RequestAbortedError);
      assert.equal(err.code, 'ABORTED');
      assert.equal(calls.length, 1);

      const before = calls.length;
      await assert.rejects(sdk.balance.retrieve({ signal: AbortSignal.abort() }), RequestAbortedError);
      assert.equal(calls.length, before);
    });

    test('an abort during the wait between retries stops it', { timeout: 60_000 }, async () => {
      const { sdk, calls } = viaProxy();
      proxy.plan({ kind: 'answer', status: 503, headers: { 'retry-after': '30' }, body: envelope('SERVICE_UNAVAILABLE') });
      const controller = new AbortController();
      const pending = sdk.balance.retrieve({ signal: controller.signal }).catch((e: unknown) => e);
      // Waits for I/O: the request crossing the proxy to the server under test.
      await eventually(async () => calls[0]?.status === 503, 'the first answer');
      controller.abort();
      assert.ok((await pending) instanceof RequestAbortedError);
      assert.equal(calls.length, 1);
    });
  });

  describe(`idempotency key in use (${engine})`, () => {
    let server: Running;
    let client: Pagamentos;
    let secretKey: string;
    before(async () => {
      // No worker: while the test holds the store's writes, the only write waiting is the request's.
      server = await startServer(engine, {}, { worker: false });
      ({ client, secretKey } = await merchant(server.baseUrl));
    });
    after(() => server.close());

    test('a second call with the key of one still running gets 409 IDEMPOTENCY_KEY_IN_USE, retried until the stored answer', { timeout: 120_000 }, async () => {
      const params = { amountInCents: 6060, method: 'pix' } as const;
      const idempotencyKey = `in-use-${engine}`;
      // The first call stays in flight on the server: its write is held.
      const held = holdWrites(server);
      const first = client.payments.create(params, { idempotencyKey }).withResponse();
      try {
        await held.reached;
        // Without retries: the server's 409, typed, with its Retry-After.
        const err = await client.payments.create(params, { idempotencyKey, maxRetries: 0 }).catch((e: unknown) => e);
        assert.ok(err instanceof IdempotencyError, String(err));
        assert.equal(err.status, 409);
        assert.equal(err.code, 'IDEMPOTENCY_KEY_IN_USE');
        assert.equal(err.idempotencyKey, idempotencyKey);
        assert.equal(err.headers!.get('retry-after'), '1');

        // With retries: the 409 is waited out (Retry-After: 1) and retried with the same key
        // until the first call has finished, then the SDK returns its stored answer.
        const recorded = recordingFetch();
        const sdk = new Pagamentos(secretKey, { baseUrl: server.baseUrl, fetch: recorded.fetch, maxRetries: 10 });
        const second = sdk.payments.create(params, { idempotencyKey }).withResponse();
        // Waits for I/O: the request crossing the proxy to the server under test.
        await eventually(async () => recorded.calls[0]?.status === 409, 'the first 409');
        held.release();
        const [a, b] = await Promise.all([first, second]);
        assert.equal(a.response.idempotentReplayed, false);
        assert.equal(b.data.id, a.data.id);
        assert.equal(b.response.idempotentReplayed, true);
        assert.ok(b.response.attempts >= 2);
        assert.deepEqual(recorded.calls.map((c) => c.status), [...Array(b.response.attempts - 1).fill(409), 200]);
        assert.deepEqual([...new Set(recorded.calls.map((c) => c.headers['idempotency-key']))], [idempotencyKey]);
        const all = await client.payments.list({ limit: 100 });
        assert.deepEqual(all.data.filter((p) => p.amount === 6060).map((p) => p.id), [a.data.id], 'one payment');
      } finally {
        held.release();
        await first.catch(() => undefined);
      }
    });
  });

  describe(`rate limit (${engine})`, () => {
    let server: Running;
    before(async () => {
      // 20 requests per minute per key: the 21st in a burst waits ~3 s for a token.
      server = await startServer(engine, { rateLimitPerMinute: 20 });
    });
    after(() => server.close());

    test('a 429 with Retry-After is waited out, then the call succeeds', async () => {
      const { secretKey } = await merchant(server.baseUrl);
      // Waits for I/O: the request crossing the proxy to the server under test.
      const drain = () => eventually(async () => (await fetch(`${server.baseUrl}/v1/balance`, { headers: { authorization: `Bearer ${secretKey}` } })).status === 429, 'the rate limit', 60_000);
      // Spend the bucket with plain calls until the API says 429, then call through the SDK. A
      // token may come back in between (one every 3 s): then spend it again and call again.
      let recorded = recordingFetch();
      for (let round = 0; round < 5 && !recorded.calls.some((c) => c.status === 429); round++) {
        recorded = recordingFetch();
        await drain();
        const sdk = new Pagamentos(secretKey, { baseUrl: server.baseUrl, fetch: recorded.fetch, maxRetries: 3 });
        const { data, response } = await sdk.payments.create({ amountInCents: 1999, method: 'pix' }).withResponse();
        assert.equal(data.amount, 1999);
        assert.equal(response.attempts, recorded.calls.length);
      }
      const calls = recorded.calls;
      const i = calls.findIndex((c) => c.status === 429);
      assert.ok(i >= 0, 'the SDK met a 429');
      assert.equal(calls[calls.length - 1].status, 200);
      const retryAfter = Number(calls[i].responseHeaders!['retry-after']);
      assert.ok(retryAfter >= 1 && retryAfter <= 3, String(retryAfter));
      assert.ok(calls[i + 1].startedAtMs - calls[i].startedAtMs >= retryAfter * 1000, 'the retry waited out Retry-After');
      assert.equal(new Set(calls.map((c) => c.headers['idempotency-key'])).size, 1, 'one key for every attempt');
    });

    test('with no retries the 429 is a RateLimitError with Retry-After', async () => {
      const { secretKey } = await merchant(server.baseUrl);
      const sdk = new Pagamentos(secretKey, { baseUrl: server.baseUrl, maxRetries: 0 });
      // Waits for I/O: the request crossing the proxy to the server under test.
      const err = await eventually(async () => sdk.balance.retrieve().then(() => undefined, (e: unknown) => e), 'a 429', 60_000);
      assert.ok(err instanceof RateLimitError);
      assert.equal(err.status, 429);
      assert.equal(err.code, 'RATE_LIMITED');
      assert.match(err.headers!.get('retry-after')!, /^\d+$/);
    });
  });
}

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { ENGINES, startApp, signup, auth, eventually, adminSession, type TestApp, type Keys } from './helpers.js';
import { parseResponse, rawRequest } from './raw-http.js';

// Issue 13: hostile bytes and ambiguous requests, on both engines.

function refused(res: { statusCode: number; body: string }, param?: string): { code: string; message: string; param?: string } {
  assert.equal(res.statusCode, 400, res.body);
  const error = JSON.parse(res.body).error;
  assert.equal(error.code, 'VALIDATION_ERROR');
  if (param !== undefined) assert.equal(error.param, param, error.message);
  return error;
}

for (const engine of ENGINES) {
  describe(`text the engines cannot store is refused alike (${engine})`, () => {
    let t: TestApp;
    let k: Keys;
    let port: number;
    before(async () => {
      t = await startApp(engine);
      k = await signup(t);
      port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
    });
    after(() => t.teardown());

    test('NUL in path parameters and filters: 400 naming the field, never a 500', async () => {
      for (const url of ['/v1/payments/%00', '/v1/payments/pay_%00', '/v1/recipients/%00', '/v1/refunds/%00', '/v1/webhook-endpoints/%00', '/v1/events/%00']) {
        refused(await t.app.inject({ method: 'GET', url, headers: auth(k.secretKey) }), 'id');
      }
      refused(await t.app.inject({ method: 'GET', url: '/v1/payments?startingAfter=pay_%00', headers: auth(k.secretKey) }), 'startingAfter');
      refused(await t.app.inject({ method: 'GET', url: '/v1/payments?endingBefore=%00', headers: auth(k.secretKey) }), 'endingBefore');
      refused(await t.app.inject({ method: 'GET', url: '/v1/refunds?paymentId=%00', headers: auth(k.secretKey) }), 'paymentId');
      refused(await t.app.inject({ method: 'GET', url: '/v1/events?type=%00', headers: auth(k.secretKey) }), 'type');
      // A lone surrogate, percent-encoded as UTF-8 would (ED A0 80 is not valid UTF-8).
      for (const url of ['/v1/payments/%ED%A0%80', '/v1/payments?startingAfter=%ED%A0%80']) {
        refused(await t.app.inject({ method: 'GET', url, headers: auth(k.secretKey) }));
      }
      // In a query as in a path, an escape that is not UTF-8 (a surrogate, a lone byte, no hex
      // digits) is refused, naming the parameter, rather than kept as literal text.
      for (const [url, param] of [
        ['/v1/recipients?name=%ED%A0%80', 'name'], ['/v1/recipients?name=%FF', 'name'], ['/v1/recipients?limit=1&name=ab%', 'name'],
        ['/v1/recipients?name=caf%C3%A9&limit=%zz', 'limit'], ['/v1/refunds?%FF=1', '%FF'], ['/v1/balance?x%80=1', 'x%80'],
      ]) {
        const error = refused(await t.app.inject({ method: 'GET', url, headers: auth(k.secretKey) }), param);
        assert.match(error.message, /^Query parameter .* is malformed: a "%" must be followed by two hexadecimal digits of valid UTF-8\.$/, url);
      }
      // Valid escapes are still decoded: no recipient is named "café" here, but the filter is fine.
      const ok = await t.app.inject({ method: 'GET', url: '/v1/recipients?name=caf%C3%A9%20%F0%9F%98%80', headers: auth(k.secretKey) });
      assert.equal(ok.statusCode, 200, ok.body);
    });

    test('NUL and lone surrogates in JSON bodies, keys included, need no key to be refused where no key is needed', async () => {
      const post = (url: string, payload: string, headers: Record<string, string> = auth(k.secretKey)) =>
        t.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload });
      refused(await post('/v1/payments', '{"amount":100,"method":"pix","description":"a\\u0000b"}'), 'description');
      refused(await post('/v1/payments', '{"amount":100,"method":"pix","description":"\\ud800"}'), 'description');
      refused(await post('/v1/payments', '{"amount":100,"method":"pix","description":"x\\udc00y"}'), 'description');
      refused(await post('/v1/payments', '{"amount":100,"method":"pix","metadata":{"k\\u0000":"v"}}'));
      refused(await post('/v1/recipients', '{"name":"\\u0000","document":"11144477735"}'), 'name');
      refused(await post('/v1/webhook-endpoints', '{"url":"https://example.com/h","events":["payment.approved"],"description":"\\u0000"}'), 'description');
      refused(await post('/v1/refunds', '{"paymentId":"pay_\\u0000"}'), 'paymentId');
      refused(await post('/v1/sandbox/accounts', '{"name":"Loja\\u0000"}', {}), 'name');
      refused(await post('/admin/session', '{"email":"a\\u0000@example.com","password":"x"}', {}), 'email');
      // A pair is fine: an emoji is stored and read back as sent.
      const ok = await post('/v1/payments', '{"amount":100,"method":"pix","description":"caf\\u00e9 \\ud83d\\ude00"}');
      assert.equal(ok.statusCode, 200, ok.body);
      const read = await t.app.inject({ method: 'GET', url: `/v1/payments/${ok.json().id}`, headers: auth(k.secretKey) });
      assert.equal(read.json().description, 'caf\u00e9 \u{1F600}');
      // Raw bytes that are not UTF-8 (a surrogate encoded as ED A0 80) are refused, not replaced.
      const raw = Buffer.concat([Buffer.from('{"amount":100,"method":"pix","description":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]);
      const res = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: { ...auth(k.secretKey), 'content-type': 'application/json' }, payload: raw });
      assert.match(refused(res).message, /UTF-8/);
    });

    test('over a real socket too: %00, %ED%A0%80 and %FF in a path or a query', async () => {
      for (const path of ['/v1/payments/%00', '/v1/payments/%ED%A0%80', '/v1/payments?limit=1&startingAfter=%00', '/v1/recipients?name=%ED%A0%80', '/v1/recipients?name=%FF']) {
        const res = await rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${k.secretKey}\r\nConnection: close\r\n\r\n`);
        assert.ok(res);
        assert.equal(res.status, 400, res.body);
        assert.equal(JSON.parse(res.body).error.code, 'VALIDATION_ERROR');
      }
    });
  });

  describe(`ambiguous requests are refused (${engine})`, () => {
    let t: TestApp;
    let k: Keys;
    let port: number;
    before(async () => {
      t = await startApp(engine);
      k = await signup(t);
      port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
    });
    after(() => t.teardown());

    test('duplicate JSON keys: VALIDATION_ERROR naming the key, and nothing is created', async () => {
      const post = (payload: string) => t.app.inject({ method: 'POST', url: '/v1/payments', headers: { ...auth(k.secretKey), 'content-type': 'application/json' }, payload });
      refused(await post('{"amount":1,"method":"pix","amount":999}'), 'amount');
      refused(await post('{"amount":1,"method":"pix","\\u0061mount":999}'), 'amount');
      refused(await post('{"amount":1,"method":"pix","metadata":{"a":"1","b":"\\":","a":"2"}}'), 'metadata.a');
      refused(await post('{"amount":1,"method":"pix","metadata":{"x":[{"a":1,"a":2}]}}'), 'metadata.x.0.a');
      const list = await t.app.inject({ method: 'GET', url: '/v1/payments', headers: auth(k.secretKey) });
      assert.deepEqual(list.json().data, []);
      // The same key in two different objects, and `":` inside strings, are not duplicates.
      const ok = await post('{"amount":1,"method":"pix","description":"a\\":b\\" : c","metadata":{"amount":"1","method":"x\\":"}}');
      assert.equal(ok.statusCode, 200, ok.body);
    });

    test('two Idempotency-Key headers: VALIDATION_ERROR, not one joined key', async () => {
      const body = '{"amount":100,"method":"pix"}';
      const send = (keys: string[]) => rawRequest(port, `POST /v1/payments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${k.secretKey}\r\nContent-Type: application/json\r\n${keys.map((key) => `Idempotency-Key: ${key}\r\n`).join('')}Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
      const two = await send(['k1', 'k2']);
      assert.equal(two?.status, 400, two?.body);
      assert.equal(JSON.parse(two.body).error.param, 'Idempotency-Key');
      // One key with a comma in it is one key.
      const one = await send(['k1, k2']);
      assert.equal(one?.status, 200, one?.body);
    });
  });
}

describe('secrets never reach the log', () => {
  test('a key, a webhook secret or a checkout client secret in a URL or a header is redacted from every line', async () => {
    const { createLogger, buildApp } = await import('../src/app.js');
    const { loadConfig } = await import('../src/config.js');
    const { Store } = await import('../src/store/index.js');
    const { testDatabase, TEST_CONFIG } = await import('./helpers.js');
    const db = await testDatabase('sqlite');
    const config = loadConfig({}, { ...TEST_CONFIG, databaseUrl: db.url, logLevel: 'debug' });
    const store = Store.open({ url: db.url });
    await store.migrate();
    const lines: string[] = [];
    const logger = createLogger(config, { write: (line: string) => lines.push(line) });
    const built = await buildApp({ config, store, logger });
    try {
      const k = await signup({ app: built.app } as TestApp);
      const secrets = [k.secretKey, k.publishableKey, 'sk_live_' + 'Z'.repeat(32), 'whsec_' + 'QUJD'.repeat(8), 'cs_01JABCDEF_secret_' + 'x'.repeat(32)];
      // Percent-encoded as a client may send it: its underscores only (either case), or every byte.
      const everyByte = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('');
      const encodings = (secret: string) => [secret.replaceAll('_', '%5F'), secret.replaceAll('_', '%5f'), everyByte(secret)];
      for (const secret of secrets) {
        await built.app.inject({ method: 'GET', url: `/v1/nope/${secret}?q=${secret}` });
        await built.app.inject({ method: 'GET', url: `/${secret}` });
        await built.app.inject({ method: 'GET', url: `/v1/payments/${secret}`, headers: auth(k.secretKey) });
        await built.app.inject({ method: 'POST', url: '/v1/payments', headers: { ...auth(secret), 'x-api-key': secret, 'x-correlation-id': secret }, payload: { amount: 1, method: 'pix' } });
        for (const encoded of encodings(secret)) await built.app.inject({ method: 'GET', url: `/v1/nope/${encoded}?q=${encoded}` });
        // Right after a word character: no word boundary before the prefix.
        await built.app.inject({ method: 'GET', url: `/v1/nope/foo_${secret}?q=1${secret}`, headers: { 'x-note': `a${secret}` } });
      }
      await built.close();
      const log = lines.join('');
      assert.ok(lines.length > 20, `the log was captured (${lines.length} lines)`);
      assert.match(log, /request completed/);
      for (const secret of secrets) {
        // The random part: whatever is around it, it must not be readable.
        const random = secret.slice(secret.lastIndexOf('_') + 1);
        for (const form of [random, everyByte(random)]) {
          assert.ok(!log.includes(form), `${secret.slice(0, 8)}… appears in the log:\n${lines.filter((l) => l.includes(form)).slice(0, 3).join('')}`);
        }
      }
      assert.match(log, /sk_\[redacted\]/);
    } finally {
      await built.close().catch(() => {});
      await db.drop();
    }
  });
});

// A client that sends its request head at once and then its body one byte every `everyMs`,
// until the server closes the connection (or `giveUpMs` passes: then `closedByServer` is false).
function slowClient(port: number, head: string, bodyLength: number, everyMs: number, giveUpMs: number): Promise<{ received: string; closedByServer: boolean; bytesSent: number }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let bytesSent = 0;
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      clearInterval(drip);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ received, closedByServer, bytesSent });
    };
    socket.on('data', (d) => (received += d.toString('latin1')));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.write(head);
    const drip = setInterval(() => {
      if (bytesSent < bodyLength - 1 && socket.writable) {
        socket.write('x');
        bytesSent++;
      }
    }, everyMs);
    const giveUp = setTimeout(() => finish(false), giveUpMs);
  });
}

// The status of every response on a connection, in order (our bodies are JSON, never a status line).
const statusLines = (received: string) => [...received.matchAll(/HTTP\/1\.[01] (\d{3}) /g)].map((m) => m[1]);

describe('slow clients are timed out', () => {
  let t: TestApp;
  let k: Keys;
  let port: number;
  before(async () => {
    // Limits far below the defaults (20 s / 60 s) so the test is quick; the client drips far
    // slower than the limit allows.
    t = await startApp('sqlite', { headersTimeoutMs: 200, requestTimeoutMs: 400, keepAliveTimeoutMs: 300 });
    k = await signup(t);
    port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
  });
  after(() => t.teardown());

  test('a body sent one byte at a time gets 408 REQUEST_TIMEOUT in the envelope, and the socket is closed', async () => {
    const head = `POST /v1/payments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${k.secretKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`;
    const r = await slowClient(port, head, 1000, 50, 20_000);
    assert.ok(r.closedByServer, `the server kept the socket (${r.bytesSent} bytes sent)`);
    const res = parseResponse(r.received);
    assert.ok(res, `an answer: ${JSON.stringify(r.received)}`);
    assert.equal(res.status, 408);
    assert.equal(JSON.parse(res.body).error.code, 'REQUEST_TIMEOUT');
    assert.equal(JSON.parse(res.body).error.correlationId, res.headers['x-correlation-id']);
    // Nothing was created from the partial body.
    const list = await t.app.inject({ method: 'GET', url: '/v1/payments', headers: auth(k.secretKey) });
    assert.deepEqual(list.json().data, []);
  });

  test('an idle kept-alive connection is closed after KEEP_ALIVE_TIMEOUT_MS', async () => {
    const socket = net.connect(port, '127.0.0.1');
    const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
    let received = '';
    socket.on('data', (d) => (received += d.toString('latin1')));
    socket.on('error', () => {});
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    const giveUp = setTimeout(() => socket.destroy(new Error('still open')), 20_000);
    await closed;
    clearTimeout(giveUp);
    assert.equal(parseResponse(received)?.status, 200);
    assert.ok(!socket.errored, 'the server closed it, not our deadline');
  });

  test('without a key: answered 401 at once, then the slow body is cut off instead of holding the socket', async () => {
    const head = 'POST /v1/payments HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n';
    const r = await slowClient(port, head, 1000, 50, 20_000);
    assert.ok(r.closedByServer, `the server kept the socket (${r.bytesSent} bytes sent)`);
    assert.equal(parseResponse(r.received)?.status, 401);
    // One request, one answer: the timeout closes the connection without a second, unrequested 408.
    assert.deepEqual(statusLines(r.received), ['401'], JSON.stringify(r.received));
  });

  test('a kept-alive connection whose first request was answered still gets its 408 for a slow second one', async () => {
    const first = `GET /v1/balance HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${k.secretKey}\r\n\r\n`;
    const second = `POST /v1/payments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${k.secretKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`;
    const r = await slowClient(port, first + second, 1000, 50, 20_000);
    assert.ok(r.closedByServer, `the server kept the socket (${r.bytesSent} bytes sent)`);
    assert.deepEqual(statusLines(r.received), ['200', '408'], JSON.stringify(r.received));
  });
});

for (const engine of ENGINES) {
  describe(`/metrics is for operators (${engine})`, () => {
    test('behind METRICS_TOKEN: 401 without it or with another, 200 with it; the gauge counts pending payments', async () => {
      const t = await startApp(engine, { metricsToken: 'scrape-token-0123456789' });
      try {
        const k = await signup(t);
        await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amount: 100, method: 'pix' } });
        for (const headers of [{}, { authorization: 'Bearer nope' }, { authorization: 'Bearer scrape-token-01234567890' }, auth(k.secretKey)]) {
          const res = await t.app.inject({ method: 'GET', url: '/metrics', headers });
          assert.equal(res.statusCode, 401, JSON.stringify(headers));
          assert.equal(res.json().error.code, 'AUTHENTICATION_REQUIRED');
          assert.doesNotMatch(res.body, /payments\{/);
        }
        const ok = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer scrape-token-0123456789' } });
        assert.equal(ok.statusCode, 200);
        assert.match(ok.body, /^payments\{status="pending",livemode="false"\} 1$/m);
        assert.match(ok.body, /^payments\{status="pending",livemode="true"\} 0$/m);
        if (engine === 'sqlite') {
          const { pendingPaymentsQuery } = await import('../src/plugins/metrics.js');
          const { sql } = await import('kysely');
          const q = pendingPaymentsQuery(t.store.db).compile();
          const plan = await sql.raw(`EXPLAIN QUERY PLAN ${q.sql.replace('?', "'pending'")}`).execute(t.store.db);
          assert.match(JSON.stringify(plan.rows), /payments_pending/, 'the gauge reads the partial index, not the table');
        }
      } finally {
        await t.teardown();
      }
    });

    test('in production without METRICS_TOKEN: not served at all', async () => {
      const t = await startApp(engine, { production: true, metricsToken: null });
      try {
        const res = await t.app.inject({ method: 'GET', url: '/metrics' });
        assert.equal(res.statusCode, 404);
        assert.equal(res.json().error.code, 'NOT_FOUND');
      } finally {
        await t.teardown();
      }
    });
  });
}

const rateLimitHeaders = (res: { headers: Record<string, unknown> }) => ({
  limit: res.headers['ratelimit-limit'], remaining: res.headers['ratelimit-remaining'], reset: res.headers['ratelimit-reset'],
});

describe('requests without a valid key are rate-limited per client address', () => {
  test('no key, a wrong key, a route that takes none: 429 in the envelope with Retry-After once the address is over its limit; a valid key is not affected', async () => {
    const t = await startApp('sqlite', { rateLimitAnonymousPerMinute: 5 });
    try {
      const k = await signup(t); // one anonymous request
      const from = (remoteAddress: string, headers: Record<string, string> = {}, url = '/v1/payments') => t.app.inject({ method: 'GET', url, headers, remoteAddress });
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await from('203.0.113.7')).statusCode);
      statuses.push((await from('203.0.113.7', auth('sk_test_' + 'A'.repeat(32)))).statusCode);
      statuses.push((await from('203.0.113.7', {}, '/v1/openapi.json')).statusCode);
      const limited = await from('203.0.113.7', auth('sk_test_' + 'B'.repeat(32)));
      assert.deepEqual(statuses, [401, 401, 401, 401, 200]);
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.json().error.code, 'RATE_LIMITED');
      assert.match(String(limited.headers['retry-after']), /^[1-9]\d*$/);
      assert.deepEqual(rateLimitHeaders(limited), { limit: '5', remaining: '0', reset: limited.headers['retry-after'] });
      assert.equal((await from('203.0.113.7', {}, '/v1/nowhere')).statusCode, 429);
      // Another address has its own budget; a valid key from the limited address still works.
      assert.equal((await from('203.0.113.8')).statusCode, 401);
      assert.equal((await from('203.0.113.7', auth(k.secretKey))).statusCode, 200);
    } finally {
      await t.teardown();
    }
  });

  test('admin requests without a valid session count too (no cookie, an unknown one, an API key, no route); a signed-in operator from that address is not limited', async () => {
    const t = await startApp('sqlite', { rateLimitAnonymousPerMinute: 4 });
    try {
      const { cookie } = await adminSession(t);
      const from = (headers: Record<string, string>, url = '/admin/accounts') => t.app.inject({ method: 'GET', url, headers, remoteAddress: '203.0.113.9' });
      const statuses: number[] = [];
      statuses.push((await from({})).statusCode);
      statuses.push((await from({ cookie: 'admin_session=' + 'A'.repeat(43) })).statusCode);
      statuses.push((await from(auth('sk_test_' + 'A'.repeat(32)))).statusCode);
      statuses.push((await from({}, '/admin/nowhere')).statusCode);
      assert.deepEqual(statuses, [401, 401, 403, 404]);
      // Operators' own requests were never charged: the address has spent exactly its 4.
      assert.equal((await from({ cookie })).statusCode, 200);
      assert.equal((await from({ cookie }, '/admin/session')).statusCode, 200);
      for (const limited of [await from({}), await from({ cookie: 'admin_session=' + 'B'.repeat(43) }), await from({}, '/admin/nowhere')]) {
        assert.equal(limited.statusCode, 429, limited.body);
        assert.equal(limited.json().error.code, 'RATE_LIMITED');
        assert.equal(limited.json().error.correlationId, limited.headers['x-correlation-id']);
        assert.match(String(limited.headers['retry-after']), /^[1-9]\d*$/);
        assert.deepEqual(rateLimitHeaders(limited), { limit: '4', remaining: '0', reset: limited.headers['retry-after'] });
      }
      // The anonymous budget is one per address, /v1 and /admin alike.
      assert.equal((await from({}, '/v1/payments')).statusCode, 429);
      assert.equal((await from({ cookie })).statusCode, 200);
      assert.equal((await t.app.inject({ method: 'GET', url: '/admin/accounts', remoteAddress: '203.0.113.10' })).statusCode, 401);
    } finally {
      await t.teardown();
    }
  });

  test('X-Forwarded-For is believed only with TRUST_PROXY', async () => {
    for (const trustProxy of [false, true]) {
      const t = await startApp('sqlite', { rateLimitAnonymousPerMinute: 2, trustProxy });
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 4; i++) {
          const res = await t.app.inject({ method: 'GET', url: '/v1/payments', remoteAddress: '10.0.0.1', headers: { 'x-forwarded-for': `198.51.100.${i}` } });
          statuses.push(res.statusCode);
        }
        // Trusted: four clients behind the proxy; not trusted: one address (the proxy's), over its limit.
        assert.deepEqual(statuses, trustProxy ? [401, 401, 401, 401] : [401, 401, 429, 429], `trustProxy=${trustProxy}`);
      } finally {
        await t.teardown();
      }
    }
  });
});

for (const engine of ENGINES) {
  describe(`sandbox webhooks in production get the live address checks (${engine})`, () => {
    test('create and update refuse private urls; a stored one (DNS rebinding) is refused at delivery; errors never name an address', async () => {
      // A local receiver that records anything that reaches it.
      const hits: string[] = [];
      const receiver = http.createServer((req, res) => {
        hits.push(req.url ?? '');
        res.end('ok');
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
      const receiverPort = (receiver.address() as { port: number }).port;
      const t = await startApp(engine, { production: true, webhookAllowPrivateUrls: false, webhookScheduleMs: [0] });
      try {
        const k = await signup(t);
        const api = (method: 'POST' | 'PATCH', url: string, payload: object) => t.app.inject({ method, url, headers: auth(k.secretKey), payload });
        for (const url of [`http://127.0.0.1:${receiverPort}/hook`, 'http://localhost/hook', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/', 'http://10.1.2.3/', 'http://2130706433/']) {
          const res = await api('POST', '/v1/webhook-endpoints', { url, events: ['*'] });
          assert.equal(res.statusCode, 400, url);
          assert.equal(res.json().error.param, 'url', url);
        }
        const ep = (await api('POST', '/v1/webhook-endpoints', { url: 'http://93.184.216.34/hook', events: ['payment.created'] })).json();
        assert.equal(ep.livemode, false);
        const patch = await api('PATCH', `/v1/webhook-endpoints/${ep.id}`, { url: `http://127.0.0.1:${receiverPort}/hook` });
        assert.equal(patch.statusCode, 400);
        assert.equal(patch.json().error.param, 'url');
        // The name resolved to a public address when registered and to loopback now: the
        // dispatcher's lookup refuses it at connection time. (Stored directly: the API refuses it.)
        await t.store.write((tx) => tx.updateTable('webhook_endpoints').set({ url: `http://localhost:${receiverPort}/hook` }).where('id', '=', ep.id).execute());
        await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amount: 100, method: 'pix' } });
        // Waits for I/O: the delivery crossing a loopback socket to the receiver.
        const delivery = await eventually(async () => {
          const list = (await t.app.inject({ method: 'GET', url: `/v1/webhook-endpoints/${ep.id}/deliveries`, headers: auth(k.secretKey) })).json();
          return list.data.find((d: { status: string }) => d.status === 'failed');
        }, 'the failed delivery');
        assert.equal(hits.length, 0, 'nothing reached the loopback receiver');
        assert.equal(delivery.lastResponseCode, null);
        assert.match(delivery.lastError, /private address/);
        assert.doesNotMatch(delivery.lastError, /127\.0\.0\.1|::1|localhost|\d{4,5}/);
      } finally {
        await t.teardown();
        receiver.close();
      }
    });

    test('delivery errors say what failed, not where', async () => {
      // Outside production the sandbox may reach this machine: a closed port is "connection refused", without the port.
      const closed = http.createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const port = (closed.address() as { port: number }).port;
      await new Promise<void>((r) => closed.close(() => r()));
      const t = await startApp(engine, { webhookScheduleMs: [0] });
      try {
        const k = await signup(t);
        const ep = (await t.app.inject({ method: 'POST', url: '/v1/webhook-endpoints', headers: auth(k.secretKey), payload: { url: `http://127.0.0.1:${port}/hook`, events: ['payment.created'] } })).json();
        await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amount: 100, method: 'pix' } });
        // Waits for I/O: the delivery crossing a loopback socket to the receiver.
        const delivery = await eventually(async () => {
          const list = (await t.app.inject({ method: 'GET', url: `/v1/webhook-endpoints/${ep.id}/deliveries`, headers: auth(k.secretKey) })).json();
          return list.data.find((d: { status: string }) => d.status === 'failed');
        }, 'the failed delivery');
        assert.equal(delivery.lastError, 'connection refused');
      } finally {
        await t.teardown();
      }
    });
  });
}

describe('WEBHOOK_ALLOW_PRIVATE_URLS defaults', () => {
  test('on outside production, off in production, and settable', async () => {
    const { loadConfig } = await import('../src/config.js');
    assert.equal(loadConfig({}).webhookAllowPrivateUrls, true);
    assert.equal(loadConfig({ NODE_ENV: 'production' }).webhookAllowPrivateUrls, false);
    assert.equal(loadConfig({ NODE_ENV: 'production', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }).webhookAllowPrivateUrls, true);
    assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE_URLS: 'false' }).webhookAllowPrivateUrls, false);
  });
});

describe('health checks are outside the anonymous limit', () => {
  test('a load balancer polling /healthz and /readyz is never answered 429', async () => {
    const t = await startApp('sqlite', { rateLimitAnonymousPerMinute: 2 });
    try {
      for (let i = 0; i < 5; i++) {
        assert.equal((await t.app.inject({ method: 'GET', url: '/healthz', remoteAddress: '10.0.0.9' })).statusCode, 200);
        assert.equal((await t.app.inject({ method: 'GET', url: '/readyz', remoteAddress: '10.0.0.9' })).statusCode, 200);
      }
    } finally {
      await t.teardown();
    }
  });
});

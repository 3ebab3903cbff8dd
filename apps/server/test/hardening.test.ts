import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, startApp, signup, auth, type TestApp, type Keys } from './helpers.js';
import { rawRequest } from './raw-http.js';

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

    test('over a real socket too: %00 and %ED%A0%80 in a path', async () => {
      for (const path of ['/v1/payments/%00', '/v1/payments/%ED%A0%80', '/v1/payments?limit=1&startingAfter=%00']) {
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
      assert.equal(JSON.parse(two!.body).error.param, 'Idempotency-Key');
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
      for (const secret of secrets) {
        await built.app.inject({ method: 'GET', url: `/v1/nope/${secret}?q=${secret}` });
        await built.app.inject({ method: 'GET', url: `/${secret}` });
        await built.app.inject({ method: 'GET', url: `/v1/payments/${secret}`, headers: auth(k.secretKey) });
        await built.app.inject({ method: 'POST', url: '/v1/payments', headers: { ...auth(secret), 'x-api-key': secret, 'x-correlation-id': secret }, payload: { amount: 1, method: 'pix' } });
      }
      await built.close();
      const log = lines.join('');
      assert.ok(lines.length > 20, `the log was captured (${lines.length} lines)`);
      assert.match(log, /request completed/);
      for (const secret of secrets) assert.ok(!log.includes(secret), `${secret.slice(0, 8)}… appears in the log:\n${lines.filter((l) => l.includes(secret)).slice(0, 3).join('')}`);
      assert.match(log, /sk_\[redacted\]/);
    } finally {
      await built.close().catch(() => {});
      await db.drop();
    }
  });
});

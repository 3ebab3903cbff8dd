import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { Type } from 'typebox';
import { ENGINES, startApp, signup, auth, adminSession, type TestApp, type Keys } from './helpers.js';
import { rawRequest, type RawResponse } from './raw-http.js';
import { registerRouteRules } from '../src/plugins/route-rules.js';
import { EVENT_TYPES } from '../src/modules/events/types.js';

// The contract at its edges: what Fastify and Node's HTTP parser answer on their own, how the
// Authorization scheme is read, bodies that are empty or not objects, query parameters nobody
// declared, cursors from elsewhere, event types that do not exist, and the words of messages.

// Every non-2xx answer is the envelope, with the correlation id of the X-Correlation-Id header.
function envelope(res: RawResponse | { status?: number; statusCode?: number; headers: Record<string, unknown>; body: string }, status: number, code: string) {
  const actual = 'statusCode' in res && res.statusCode !== undefined ? res.statusCode : (res as RawResponse).status;
  assert.equal(actual, status, res.body);
  const body = JSON.parse(res.body);
  assert.deepEqual(Object.keys(body), ['error']);
  assert.equal(body.error.code, code);
  assert.ok(typeof body.error.message === 'string' && body.error.message.length > 0);
  assert.ok(res.headers['x-correlation-id'], 'X-Correlation-Id header');
  assert.equal(body.error.correlationId, res.headers['x-correlation-id']);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  return body.error as { code: string; message: string; param?: string };
}

for (const engine of ENGINES) {
  describe(`contract at the edges (${engine})`, () => {
    let t: TestApp;
    let k: Keys;
    let port: number;
    const http = (lines: string[], body = '') => rawRequest(port, lines.join('\r\n') + '\r\n\r\n' + body);

    before(async () => {
      t = await startApp(engine, { workerInProcess: false });
      k = await signup(t);
      const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
      port = Number(new URL(address).port);
    });
    after(() => t.teardown());

    test('errors Fastify finds while routing come in the envelope: over-long path parameter, bad percent-encoding', async () => {
      const long = await http([`GET /v1/payments/${'a'.repeat(2000)} HTTP/1.1`, 'Host: x', `Authorization: Bearer ${k.secretKey}`, 'Connection: close']);
      assert.ok(long);
      assert.match(envelope(long, 400, 'VALIDATION_ERROR').message, /path parameter is longer than 200 characters/);
      const bad = await http(['GET /v1/payments/%zz HTTP/1.1', 'Host: x', 'Connection: close']);
      assert.ok(bad);
      assert.match(envelope(bad, 400, 'VALIDATION_ERROR').message, /percent|%/);
      const badUtf8 = await http(['GET /v1/payments/%c3%28 HTTP/1.1', 'Host: x', 'Connection: close']);
      assert.ok(badUtf8);
      envelope(badUtf8, 400, 'VALIDATION_ERROR');
      // The caller's correlation id is kept there too.
      const traced = await http(['GET /v1/%zz HTTP/1.1', 'Host: x', 'X-Correlation-Id: trace-bad-url', 'Connection: close']);
      assert.equal(traced?.headers['x-correlation-id'], 'trace-bad-url');
      assert.equal(traced?.headers['x-content-type-options'], 'nosniff');
    });

    // 431 and 408 are in errors.test.ts, with every other code.
    test('errors of the HTTP parser come in the envelope, written on the socket: bad request line, malformed chunked body, CL+TE', async () => {
      const line = await rawRequest(port, 'G@T / HTTP/1.1\r\nHost: x\r\n\r\n');
      assert.ok(line);
      assert.match(envelope(line, 400, 'VALIDATION_ERROR').message, /not valid HTTP\/1\.1/);
      // The body's chunk size is not hex: found while Fastify is already reading the request, so
      // the answer carries that request's correlation id.
      const chunked = await http(['POST /v1/payments HTTP/1.1', 'Host: x', `Authorization: Bearer ${k.secretKey}`, 'Content-Type: application/json', 'Transfer-Encoding: chunked', 'X-Correlation-Id: trace-chunk', 'Connection: close'], 'zz\r\n{}\r\n0\r\n\r\n');
      assert.ok(chunked);
      assert.match(envelope(chunked, 400, 'VALIDATION_ERROR').message, /chunk/);
      assert.equal(chunked.headers['x-correlation-id'], 'trace-chunk');
      const smuggle = await http(['POST /v1/payments HTTP/1.1', 'Host: x', 'Content-Length: 5', 'Transfer-Encoding: chunked', 'Connection: close'], '0\r\n\r\n');
      assert.ok(smuggle);
      envelope(smuggle, 400, 'VALIDATION_ERROR');
    });

    test('what Node would answer by itself comes in the envelope too: CONNECT, an unknown Expect, no Host', async () => {
      const connect = await rawRequest(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
      assert.ok(connect, 'CONNECT gets an answer');
      envelope(connect, 405, 'METHOD_NOT_ALLOWED');
      // RFC 9110 lets a server ignore an expectation it does not know; Node would answer a bare 417.
      const expect = await http(['GET /v1/balance HTTP/1.1', 'Host: x', `Authorization: Bearer ${k.secretKey}`, 'Expect: 200-ok', 'Connection: close']);
      assert.equal(expect?.status, 200, expect?.body);
      const noHost = await http(['GET /v1/balance HTTP/1.1', `Authorization: Bearer ${k.secretKey}`, 'Connection: close']);
      assert.ok(noHost);
      assert.equal(envelope(noHost, 400, 'VALIDATION_ERROR').param, 'Host');
      // HTTP/1.0 has no Host requirement.
      assert.equal((await rawRequest(port, `GET /v1/balance HTTP/1.0\r\nAuthorization: Bearer ${k.secretKey}\r\n\r\n`))?.status, 200);
    });

    test('the Authorization scheme is case-insensitive (RFC 9110)', async () => {
      for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
        const res = await t.app.inject({ method: 'GET', url: '/v1/balance', headers: { authorization: `${scheme} ${k.secretKey}` } });
        assert.equal(res.statusCode, 200, `${scheme}: ${res.body}`);
      }
      envelope(await t.app.inject({ method: 'GET', url: '/v1/balance', headers: { authorization: `Basic ${k.secretKey}` } }), 401, 'AUTHENTICATION_REQUIRED');
      envelope(await t.app.inject({ method: 'GET', url: '/v1/balance', headers: { authorization: `Bearer` } }), 401, 'AUTHENTICATION_REQUIRED');
    });

    test('sandbox sign-up with no body at all, or an empty one whatever its Content-Type', async () => {
      // What the README's one-liner sends: no Content-Type, no Content-Length.
      const bare = await http(['POST /v1/sandbox/accounts HTTP/1.1', 'Host: x', 'Connection: close']);
      assert.equal(bare?.status, 200, bare?.body);
      assert.match(JSON.parse(bare.body).keys.secretKey.key, /^sk_test_/);
      // PHP's curl: an empty POST labelled as a form.
      for (const type of ['application/x-www-form-urlencoded', 'application/json', 'text/plain', 'multipart/form-data; boundary=x']) {
        const res = await t.app.inject({ method: 'POST', url: '/v1/sandbox/accounts', headers: { 'content-type': type }, payload: '' });
        assert.equal(res.statusCode, 200, `${type}: ${res.body}`);
      }
      // A body that is there must still be JSON.
      envelope(await t.app.inject({ method: 'POST', url: '/v1/sandbox/accounts', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'name=x' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    test('a body that is not a JSON object is refused wherever a route takes an object or nothing', async () => {
      const p = (await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amount: 100, method: 'pix' } })).json();
      for (const body of ['[]', '"cancel"', '1', 'null', 'true', '{"reason":"x"}']) {
        const res = await t.app.inject({ method: 'POST', url: `/v1/payments/${p.id}/cancel`, headers: auth(k.secretKey, { 'content-type': 'application/json' }), payload: body });
        envelope(res, 400, 'VALIDATION_ERROR');
      }
      const still = (await t.app.inject({ method: 'GET', url: `/v1/payments/${p.id}`, headers: auth(k.secretKey) })).json();
      assert.equal(still.status, 'pending', 'nothing was canceled');
      for (const body of ['[]', '"x"', '42', 'null']) {
        const err = envelope(await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey, { 'content-type': 'application/json' }), payload: body }), 400, 'VALIDATION_ERROR');
        assert.equal(err.message, 'The body must be a JSON object.');
      }
      // No body, or an empty object, is what "takes nothing" accepts.
      assert.equal((await t.app.inject({ method: 'POST', url: `/v1/payments/${p.id}/cancel`, headers: auth(k.secretKey, { 'content-type': 'text/plain' }), payload: '' })).statusCode, 200);
      const q = (await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amount: 100, method: 'pix' } })).json();
      assert.equal((await t.app.inject({ method: 'POST', url: `/v1/payments/${q.id}/cancel`, headers: auth(k.secretKey), payload: {} })).statusCode, 200);
    });

    test('__proto__ and constructor keys are refused by name, at any depth and however escaped', async () => {
      const cases: Array<[string, string, string]> = [
        ['{"amount":1,"method":"pix","__proto__":{"admin":true}}', '__proto__', '__proto__'],
        ['{"amount":1,"method":"pix","metadata":{"constructor":"x"}}', 'constructor', 'metadata.constructor'],
        ['{"amount":1,"method":"pix","metadata":{"\\u005f_proto__":"x"}}', '__proto__', 'metadata.__proto__'],
        ['{"amount":1,"method":"pix","customer":{"name":"a","x":[{"constructor":{"prototype":{}}}]}}', 'constructor', 'customer.x.0.constructor'],
      ];
      for (const [body, key, param] of cases) {
        const err = envelope(await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey, { 'content-type': 'application/json' }), payload: body }), 400, 'VALIDATION_ERROR');
        assert.equal(err.param, param);
        assert.ok(err.message.includes(`"${key}"`), err.message);
        assert.doesNotMatch(err.message, /not valid JSON/);
      }
      // A body nested far deeper than any schema goes still gets an answer.
      const deep = '{"amount":1,"method":"pix","metadata":' + '['.repeat(40_000) + ']'.repeat(40_000) + '}';
      envelope(await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey, { 'content-type': 'application/json' }), payload: deep }), 400, 'VALIDATION_ERROR');
    });

    test('validation messages read as English', async () => {
      const msg = async (url: string, payload: unknown) => envelope(await t.app.inject({ method: 'POST', url, headers: auth(k.secretKey), payload: payload as object }), 400, 'VALIDATION_ERROR').message;
      assert.equal(await msg('/v1/payments', { amount: 100, method: 'pix', description: 5 }), 'description must be a string.');
      assert.equal(await msg('/v1/payments', { amount: 100, method: 'boleto' }), 'method must be one of: pix, credit_card.');
      assert.equal(await msg('/v1/payments', { amount: 100, method: 'pix', description: 'x'.repeat(2000) }), 'description must be at most 500 characters long.');
      assert.match(await msg('/v1/webhook-endpoints', { url: 'https://example.com/h', events: [] }), /^events must have at least 1 item\.$/);
      const header = envelope(await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey, { 'idempotency-key': '' }), payload: { amount: 1, method: 'pix' } }), 400, 'VALIDATION_ERROR');
      assert.equal(header.param, 'Idempotency-Key');
      assert.equal(header.message, 'Idempotency-Key must not be empty.');
      // A payment state as words, with the right article.
      const p = (await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amount: 100, method: 'pix' } })).json();
      await t.app.inject({ method: 'POST', url: `/v1/sandbox/payments/${p.id}/pay`, headers: auth(k.secretKey) });
      const cancel = envelope(await t.app.inject({ method: 'POST', url: `/v1/payments/${p.id}/cancel`, headers: auth(k.secretKey) }), 409, 'INVALID_STATE');
      assert.equal(cancel.message, 'An approved payment cannot become canceled.');
    });

    test('unknown query parameters are refused, naming them, on every GET route of the route table', async () => {
      const admin = await adminSession(t);
      let checked = 0;
      for (const route of t.routes) {
        // Pages (the docs, the back office) keep their own state in the query string.
        if (route.method !== 'GET' || route.url.startsWith('/v1/docs') || route.url.startsWith('/backoffice') || route.url.startsWith('/checkout/') || route.url === '/v1/checkout.js') continue;
        // The checkout page API: a real session, with its client secret.
        const cs = (route.config as { auth?: string }).auth === 'checkout'
          ? (await t.app.inject({ method: 'POST', url: '/v1/checkout/sessions', headers: auth(k.secretKey), payload: { amount: 100 } })).json()
          : null;
        const url = route.url.replace(/:(\w+)/g, (_m, name: string) => (cs ? cs.id : `x_${name}`));
        const headers: Record<string, string> = cs ? { authorization: `Bearer ${cs.clientSecret}` } : route.url.startsWith('/admin/') ? { cookie: admin.cookie } : route.url.startsWith('/v1/') && route.url !== '/v1/openapi.json' ? auth(k.secretKey) : {};
        const err = envelope(await t.app.inject({ method: 'GET', url: `${url}?sneaky=1`, headers }), 400, 'VALIDATION_ERROR');
        assert.equal(err.param, 'sneaky', route.url);
        assert.equal(err.message, 'Unknown query parameter: sneaky.', route.url);
        checked++;
      }
      assert.ok(checked >= 25, `walked ${checked} GET routes`);
    });

    test('a route cannot be registered with a query schema that lets unknown parameters through', async () => {
      const bare = Fastify();
      registerRouteRules(bare);
      const seen: Array<{ url: string; schema?: { querystring?: unknown } }> = [];
      bare.addHook('onRoute', (route) => void seen.push(route as (typeof seen)[number]));
      assert.throws(() => bare.get('/v1/open', { schema: { querystring: Type.Object({ a: Type.Optional(Type.String()) }) } }, async () => ({})), /additionalProperties: false/);
      bare.get('/v1/closed', { schema: { querystring: Type.Object({ a: Type.Optional(Type.String()) }, { additionalProperties: false }) } }, async () => ({}));
      // A route that declares none gets the closed empty schema.
      bare.get('/v1/none', async () => ({}));
      const none = seen.find((r) => r.url === '/v1/none');
      assert.equal((none?.schema?.querystring as { additionalProperties?: boolean }).additionalProperties, false);
      await bare.close();
    });

    test('a cursor must name an object of that list: not unknown, not another account\'s, not another kind', async () => {
      const other = await signup(t, 'Other merchant');
      const mine = (await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amount: 100, method: 'pix' } })).json();
      const theirs = (await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(other.secretKey), payload: { amount: 100, method: 'pix' } })).json();
      const list = (q: string) => t.app.inject({ method: 'GET', url: `/v1/payments?${q}`, headers: auth(k.secretKey) });
      assert.equal((await list(`startingAfter=${mine.id}`)).statusCode, 200);
      assert.equal((await list(`endingBefore=${mine.id}`)).statusCode, 200);
      for (const [param, value] of [['startingAfter', 'pay_nope'], ['endingBefore', 'zzzz'], ['startingAfter', theirs.id], ['endingBefore', theirs.id]]) {
        const err = envelope(await list(`${param}=${value}`), 400, 'VALIDATION_ERROR');
        assert.equal(err.param, param);
      }
      // An id of another kind (a payment in the events list) names nothing there.
      envelope(await t.app.inject({ method: 'GET', url: `/v1/events?startingAfter=${mine.id}`, headers: auth(k.secretKey) }), 400, 'VALIDATION_ERROR');
      // The same id in test and live: the live list does not know a sandbox object.
      const { createKey, activateLive } = await import('../src/modules/accounts/service.js');
      await activateLive(t.store, k.accountId);
      const live = await createKey(t.store, k.accountId, 'secret', true);
      const liveList = await t.app.inject({ method: 'GET', url: `/v1/payments?startingAfter=${mine.id}`, headers: auth(live.key) });
      assert.equal(envelope(liveList, 400, 'VALIDATION_ERROR').param, 'startingAfter');
      // A filter on what can change does not invalidate a cursor: its object still marks the place.
      assert.equal((await list(`status=canceled&startingAfter=${mine.id}`)).statusCode, 200);
      // Every cursor-paginated list does the same (one function, paginate()).
      for (const url of ['/v1/refunds', '/v1/recipients', '/v1/receivables', '/v1/settlements', '/v1/webhook-endpoints', '/v1/events']) {
        assert.equal(envelope(await t.app.inject({ method: 'GET', url: `${url}?startingAfter=x_nope`, headers: auth(k.secretKey) }), 400, 'VALIDATION_ERROR').param, 'startingAfter', url);
      }
    });

    test('webhook endpoints take only event types the service emits, or "*"', async () => {
      const create = (events: string[]) => t.app.inject({ method: 'POST', url: '/v1/webhook-endpoints', headers: auth(k.secretKey), payload: { url: 'https://example.com/hooks', events } });
      const typo = envelope(await create(['payment.approved', 'payment.aproved']), 400, 'VALIDATION_ERROR');
      assert.equal(typo.param, 'events.1');
      for (const type of EVENT_TYPES) assert.ok(typo.message.includes(type), `the message lists ${type}`);
      const all = await create(['*']);
      assert.equal(all.statusCode, 200, all.body);
      const each = await create([...EVENT_TYPES]);
      assert.equal(each.statusCode, 200, each.body);
      const update = await t.app.inject({ method: 'PATCH', url: `/v1/webhook-endpoints/${all.json().id}`, headers: auth(k.secretKey), payload: { events: ['refund.creatd'] } });
      assert.equal(envelope(update, 400, 'VALIDATION_ERROR').param, 'events.0');
      envelope(await t.app.inject({ method: 'GET', url: '/v1/events?type=payment.aproved', headers: auth(k.secretKey) }), 400, 'VALIDATION_ERROR');
      // The document lists them too, so generated clients get the enum.
      const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
      // (as a pattern, not an enum: `*` makes no identifier in generated code, issue 28).
      const items = doc.components.schemas[String(doc.components.schemas.CreateWebhookEndpointRequest.properties.events.items.$ref).split('/').pop() as string];
      const accepted = new RegExp(items.pattern as string);
      for (const type of ['*', ...EVENT_TYPES]) assert.ok(accepted.test(type) && String(items.description).includes(`\`${type}\``), type);
      for (const type of ['payment.aproved', 'payment', '**', 'payment.approvedx']) assert.ok(!accepted.test(type), type);
    });
  });
}

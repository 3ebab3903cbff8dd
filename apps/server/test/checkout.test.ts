import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { sql } from 'kysely';
import { ENGINES, startApp, startManualApp, signup, auth, eventually, adminSession, testDatabase, webhookReceiver, TEST_CONFIG, type TestApp, type Keys } from './helpers.js';
import { loadConfig } from '../src/config.js';
import { Store } from '../src/store/index.js';
import { buildApp, createLogger } from '../src/app.js';

// Hosted checkout, server side: sessions made with the secret key, the page's own API
// authorized by the session's client secret, at most one approved payment per session whatever
// the requests race, completion and expiry with their events, and the page's serving.

type Json = Record<string, any>;

for (const engine of ENGINES) {
  describe(`checkout sessions (${engine})`, () => {
    let t: TestApp;
    let k: Keys;
    before(async () => {
      t = await startApp(engine);
      k = await signup(t, 'Loja Checkout');
    });
    after(() => t.teardown());

    const call = (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object) =>
      t.app.inject({ method, url, headers, ...(payload !== undefined ? { payload } : {}) });
    const ok = async (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object): Promise<Json> => {
      const res = await call(method, url, headers, payload);
      assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
      return res.json();
    };
    const sk = (keys = k) => auth(keys.secretKey);
    const page = (secret: string, key?: string) => ({ authorization: `Bearer ${secret}`, ...(key ? { 'idempotency-key': key } : {}) });
    const create = (body: object = { amount: 1050 }, keys = k) => ok('POST', '/v1/checkout/sessions', sk(keys), body);
    const view = (s: Json) => ok('GET', `/v1/checkout/sessions/${s.id}/client`, page(s.clientSecret));
    const pay = (s: Json, body: object) => call('POST', `/v1/checkout/sessions/${s.id}/client/pay`, page(s.clientSecret, randomUUID()), body);
    // As the hosted page does: with the session's client secret.
    const cardToken = async (secret: string, number: string) => (await ok('POST', '/v1/tokens', auth(secret), { card: { number, expMonth: 12, expYear: 2099, cvc: '123' } })).id as string;
    // Waits for the in-process worker (its poll and store writes; this suite runs on the system clock: time rules are in time-rules.test.ts).
    const settled = (s: Json) => eventually(async () => {
      const v = await view(s);
      return v.payment && v.payment.status !== 'pending' ? v : null;
    }, 'the payment to be confirmed');

    test('create, fetch and list with the secret key', async () => {
      const s = await create({ amount: 2590, description: 'Pedido 42', metadata: { order: '42' }, installments: 3, methods: ['pix', 'credit_card'], successUrl: 'https://loja.example/ok', customer: { name: 'Ana', document: '123.456.789-09' } });
      assert.match(s.id, /^cs_[0-9a-z]{26}$/);
      assert.equal(s.object, 'checkout_session');
      assert.equal(s.status, 'open');
      assert.deepEqual(s.methods, ['pix', 'credit_card']);
      assert.equal(s.installments, 3);
      assert.equal(s.customer.document, '*********09');
      assert.match(s.clientSecret, new RegExp(`^${s.id}_secret_[0-9A-Za-z]{32,}$`));
      assert.equal(s.url, `http://localhost:80/checkout/${s.id}#${s.clientSecret}`.replace(':80', s.url.includes(':80/') ? ':80' : ''));
      assert.equal(s.paymentId, null);
      assert.ok(Date.parse(s.expiresAt) - Date.parse(s.createdAt) === 3_600_000);
      assert.deepEqual(await ok('GET', `/v1/checkout/sessions/${s.id}`, sk()), s);
      const list = await ok('GET', '/v1/checkout/sessions?limit=100', sk());
      assert.equal(list.object, 'list');
      assert.ok(list.data.some((x: Json) => x.id === s.id));
      const other = await signup(t, 'Outra loja');
      assert.equal((await call('GET', `/v1/checkout/sessions/${s.id}`, sk(other))).statusCode, 404);
      // Defaults: both methods, one installment.
      const d = await create({ amount: 100 });
      assert.deepEqual(d.methods, ['credit_card', 'pix']);
      assert.equal(d.installments, 1);
    });

    test("the session's payment carries the customer's document masked as the session has it", async () => {
      const s = await create({ amount: 1050, methods: ['pix'], customer: { name: 'Ana', document: '123.456.789-09' } });
      const paid = await pay(s, { method: 'pix' });
      assert.equal(paid.statusCode, 200, paid.body);
      const payment = await ok('GET', `/v1/payments/${paid.json().payment.id as string}`, sk());
      assert.equal(payment.customer.document, '*********09');
    });

    test('bad input is refused and names the field', async () => {
      for (const [body, param] of [
        [{ amount: 0 }, 'amount'],
        [{ amount: 100, methods: [] }, 'methods'],
        [{ amount: 100, methods: ['boleto'] }, 'methods.0'],
        [{ amount: 100, expiresInSeconds: 10 }, 'expiresInSeconds'],
        [{ amount: 100, installments: 13 }, 'installments'],
        [{ amount: 100, successUrl: 'javascript:alert(1)' }, 'successUrl'],
        [{ amount: 100, currency: 'USD' }, 'currency'],
      ] as const) {
        const res = await call('POST', '/v1/checkout/sessions', sk(), body);
        assert.equal(res.statusCode, 400, JSON.stringify(body));
        assert.equal(res.json().error.param, param, `${JSON.stringify(body)}: ${res.body}`);
      }
    });

    test('the page API takes only the session\'s own client secret', async () => {
      const s = await create();
      const other = await create();
      const v = await view(s);
      assert.equal(v.id, s.id);
      assert.equal(v.merchantName, 'Loja Checkout');
      assert.equal(v.amount, 1050);
      assert.equal(v.payment, null);
      // No secret, no metadata, and no key of the merchant's: the page tokenizes with its secret.
      assert.equal('clientSecret' in v || 'metadata' in v || 'publishableKey' in v, false);
      assert.match(await cardToken(s.clientSecret, '4242424242424242'), /^tok_/);
      const url = `/v1/checkout/sessions/${s.id}/client`;
      for (const [headers, status, code] of [
        [{}, 401, 'AUTHENTICATION_REQUIRED'],
        [auth(k.secretKey), 403, 'PERMISSION_DENIED'],
        [auth(k.publishableKey), 403, 'PERMISSION_DENIED'],
        [page(other.clientSecret), 401, 'INVALID_API_KEY'],
        [page(`${s.id}_secret_${'x'.repeat(40)}`), 401, 'INVALID_API_KEY'],
        [page('garbage'), 401, 'INVALID_API_KEY'],
      ] as const) {
        const res = await call('GET', url, headers);
        assert.equal(res.statusCode, status, res.body);
        assert.equal(res.json().error.code, code);
        assert.doesNotMatch(res.body, /_secret_/);
        const p = await call('POST', `${url}/pay`, { ...headers, 'idempotency-key': randomUUID() }, { method: 'pix' });
        assert.equal(p.statusCode, status, p.body);
      }
      // The client secret is not an API key elsewhere.
      const res = await call('GET', `/v1/checkout/sessions/${s.id}`, page(s.clientSecret));
      assert.equal(res.statusCode, 401);
      // The pay request needs an Idempotency-Key.
      const noKey = await call('POST', `${url}/pay`, page(s.clientSecret), { method: 'pix' });
      assert.equal(noKey.statusCode, 400);
      assert.equal(noKey.json().error.param, 'Idempotency-Key');
    });

    test('a declined card is replaced by an approved one in the same session: one approved payment', async () => {
      const s = await create({ amount: 3333 });
      const declined = await pay(s, { method: 'credit_card', cardToken: await cardToken(s.clientSecret, '4000000000000002') });
      assert.equal(declined.statusCode, 200, declined.body);
      assert.equal(declined.json().payment.status, 'pending');
      const first = await settled(s);
      assert.equal(first.payment.status, 'declined');
      assert.ok(first.payment.failureMessage);
      assert.equal(first.status, 'open');
      const approved = await pay(s, { method: 'credit_card', cardToken: await cardToken(s.clientSecret, '4242424242424242') });
      assert.equal(approved.statusCode, 200, approved.body);
      const second = await settled(s);
      assert.equal(second.payment.status, 'approved');
      assert.notEqual(second.payment.id, first.payment.id);
      assert.equal(second.status, 'complete');
      const session = await ok('GET', `/v1/checkout/sessions/${s.id}`, sk());
      assert.equal(session.status, 'complete');
      assert.equal(session.paymentId, second.payment.id);
      assert.equal(session.clientSecret, null);
      assert.ok(session.completedAt);
      const payment = await ok('GET', `/v1/payments/${second.payment.id}`, sk());
      assert.equal(payment.status, 'approved');
      assert.equal(payment.amount, 3333);
      // Complete: no more paying.
      const again = await pay(s, { method: 'credit_card', cardToken: 'tok_visa' });
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().error.code, 'INVALID_STATE');
      const rows = await t.store.db.selectFrom('payments').select(['status']).where('checkout_session_id', '=', s.id).execute();
      assert.deepEqual(rows.map((r) => r.status).sort(), ['approved', 'declined']);
      // One completed event, in the store with the change.
      const events = await ok('GET', '/v1/events?type=checkout_session.completed&limit=100', sk());
      assert.equal(events.data.filter((e: Json) => e.data.object.id === s.id).length, 1);
    });

    test('many concurrent pay requests make one approved payment', async () => {
      const s = await create({ amount: 777 });
      const N = 24;
      const answers = await Promise.all(Array.from({ length: N }, (_, i) => pay(s, i % 3 === 0 ? { method: 'pix' } : { method: 'credit_card', cardToken: 'tok_visa' })));
      const okAnswers = answers.filter((r) => r.statusCode === 200);
      for (const r of answers) assert.ok(r.statusCode === 200 || (r.statusCode === 409 && r.json().error.code === 'INVALID_STATE'), `${r.statusCode} ${r.body}`);
      assert.ok(okAnswers.length >= 1);
      // Pix requests may share a pending Pix, and a card may replace a pending Pix (which is then
      // canceled): the last live payment is the session's.
      const latest = (await view(s)).payment;
      if (latest.method === 'pix') await ok('POST', `/v1/sandbox/payments/${latest.id as string}/pay`, sk());
      const done = await settled(s);
      assert.equal(done.payment.status, 'approved');
      const rows = await t.store.db.selectFrom('payments').select(['id', 'status', 'method']).where('checkout_session_id', '=', s.id).execute();
      assert.deepEqual(rows.filter((r) => r.status !== 'canceled').map((r) => r.id), [latest.id], 'one payment besides replaced Pix codes');
      assert.ok(rows.every((r) => r.status !== 'canceled' || r.method === 'pix'), 'only Pix codes are replaced');
      assert.equal((await ok('GET', `/v1/checkout/sessions/${s.id}`, sk())).status, 'complete');
    });

    test('installment plans in the page view bill exactly the amount: R$ 159,90 in 4 is 2 × R$ 39,98 + 2 × R$ 39,97', async () => {
      const s = await create({ amount: 15990, installments: 4 });
      const v = await view(s);
      assert.equal(v.installmentPlans.length, 4);
      assert.deepEqual(v.installmentPlans[3], { count: 4, amounts: [3998, 3998, 3997, 3997], groups: [{ times: 2, amount: 3998 }, { times: 2, amount: 3997 }], total: 15990 });
      assert.deepEqual(v.installmentPlans[0], { count: 1, amounts: [15990], groups: [{ times: 1, amount: 15990 }], total: 15990 });
      for (const plan of v.installmentPlans) assert.equal(plan.amounts.reduce((a: number, b: number) => a + b, 0), 15990);
      assert.deepEqual((await view(await create({ amount: 100 }))).installmentPlans.map((p: Json) => p.count), [1]);
    });

    test('back from a Pix code to the card: the Pix stays valid until a card is paid, which cancels it (one live payment)', async () => {
      const s = await create({ amount: 4200, methods: ['pix', 'credit_card'] });
      const pix = (await pay(s, { method: 'pix' })).json().payment;
      assert.equal(pix.status, 'pending');
      // The buyer looks at the card form and comes back: the same Pix.
      assert.equal((await view(s)).payment.id, pix.id);
      const card = await pay(s, { method: 'credit_card', cardToken: await cardToken(s.clientSecret, '4242424242424242') });
      assert.equal(card.statusCode, 200, card.body);
      assert.equal(card.json().payment.method, 'credit_card');
      assert.equal((await ok('GET', `/v1/payments/${pix.id as string}`, sk())).status, 'canceled');
      // The canceled Pix cannot be paid any more.
      assert.equal((await call('POST', `/v1/sandbox/payments/${pix.id as string}/pay`, sk())).statusCode, 409);
      const done = await settled(s);
      assert.equal(done.payment.status, 'approved');
      assert.equal(done.status, 'complete');
      const events = await ok('GET', '/v1/events?type=payment.canceled&limit=100', sk());
      assert.ok(events.data.some((e: Json) => e.data.object.id === pix.id), 'payment.canceled for the replaced Pix');
    });

    test('the store refuses a second live payment for a session, whatever the code does', async () => {
      const s = await create();
      const first = await pay(s, { method: 'pix' });
      const row = await t.store.db.selectFrom('payments').selectAll().where('id', '=', first.json().payment.id).executeTakeFirstOrThrow();
      await assert.rejects(t.store.write((tx) => tx.insertInto('payments').values({ ...row, id: `${row.id}x` }).execute()));
    });

    test('Pix: the same pending Pix for a second request, paid through the sandbox, completes the session', async () => {
      const s = await create({ amount: 1990, methods: ['pix'], expiresInSeconds: 600 });
      const a = await pay(s, { method: 'pix' });
      assert.equal(a.statusCode, 200, a.body);
      const pix = a.json().payment;
      assert.equal(pix.method, 'pix');
      assert.match(pix.pix.copyPaste, /^000201/);
      assert.match(pix.pix.qrCodeSvg, /^<svg/);
      // Expires with the session, not after it.
      assert.ok(Date.parse(pix.pix.expiresAt) <= Date.parse(s.expiresAt));
      const b = await pay(s, { method: 'pix' });
      assert.equal(b.json().payment.id, pix.id);
      // A card while the Pix is pending: refused (and not offered by this session anyway).
      const card = await pay(s, { method: 'credit_card', cardToken: 'tok_visa' });
      assert.equal(card.statusCode, 400);
      assert.equal(card.json().error.param, 'method');
      await ok('POST', `/v1/sandbox/payments/${pix.id}/pay`, sk());
      const v = await view(s);
      assert.equal(v.status, 'complete');
      assert.equal(v.payment.status, 'approved');
    });

    test('installments over the session\'s are refused (and change nothing); a Pix while a card is being confirmed is refused', async () => {
      const s = await create({ amount: 1500, installments: 2 });
      assert.equal((await pay(s, { method: 'credit_card', cardToken: 'tok_visa', installments: 3 })).json().error.param, 'installments');
      assert.equal((await view(s)).payment, null);
      // A card whose provider does not answer stays pending: a Pix cannot replace it.
      const card = await pay(s, { method: 'credit_card', cardToken: 'tok_provider_timeout', installments: 2 });
      assert.equal(card.statusCode, 200, card.body);
      const pix = await pay(s, { method: 'pix' });
      assert.equal(pix.statusCode, 409);
      assert.equal(pix.json().error.code, 'INVALID_STATE');
    });

    test('expire on demand: the pending Pix expires with the session', async () => {
      const s = await create();
      const pix = (await pay(s, { method: 'pix' })).json().payment;
      const expired = await ok('POST', `/v1/checkout/sessions/${s.id}/expire`, sk());
      assert.equal(expired.status, 'expired');
      assert.ok(expired.expiredAt);
      assert.equal(expired.clientSecret, null);
      assert.equal((await ok('GET', `/v1/payments/${pix.id}`, sk())).status, 'expired');
      // Again: only an open session expires.
      const again = await call('POST', `/v1/checkout/sessions/${s.id}/expire`, sk());
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().error.code, 'INVALID_STATE');
      // Paying an expired session, or its expired Pix: refused.
      assert.equal((await pay(s, { method: 'pix' })).statusCode, 409);
      assert.equal((await call('POST', `/v1/sandbox/payments/${pix.id}/pay`, sk())).statusCode, 409);
      assert.equal((await view(s)).status, 'expired');
      const events = await ok('GET', '/v1/events?type=checkout_session.expired&limit=100', sk());
      assert.equal(events.data.filter((e: Json) => e.data.object.id === s.id).length, 1);
      // A complete session cannot be expired.
      const c = await create();
      await pay(c, { method: 'credit_card', cardToken: 'tok_visa' });
      await settled(c);
      const res = await call('POST', `/v1/checkout/sessions/${c.id}/expire`, sk());
      assert.equal(res.statusCode, 409);
      assert.equal(res.json().error.code, 'INVALID_STATE');
    });

    test('an expiry racing the Pix being paid: one of them wins, whole', async () => {
      const sessions = await Promise.all(Array.from({ length: 8 }, () => create()));
      const pixes = await Promise.all(sessions.map(async (s) => (await pay(s, { method: 'pix' })).json().payment.id as string));
      const answers = await Promise.all(sessions.flatMap((s, i) => [
        call('POST', `/v1/checkout/sessions/${s.id}/expire`, sk()),
        call('POST', `/v1/sandbox/payments/${pixes[i]}/pay`, sk()),
      ]));
      for (const r of answers) assert.ok(r.statusCode === 200 || r.statusCode === 409, `${r.statusCode} ${r.body}`);
      for (const [i, s] of sessions.entries()) {
        const session = await ok('GET', `/v1/checkout/sessions/${s.id}`, sk());
        const payment = await ok('GET', `/v1/payments/${pixes[i]}`, sk());
        // Complete with its payment approved, or expired with its Pix expired: never a mix.
        assert.deepEqual([session.status, payment.status], session.status === 'complete' ? ['complete', 'approved'] : ['expired', 'expired']);
        assert.equal([answers[2 * i], answers[2 * i + 1]].filter((r) => r.statusCode === 200).length, 1);
      }
    });

    test('expiry: the job expires a session on time, with its pending Pix', async () => {
      // On a ManualClock: its time comes by moving the clock, not by editing its rows.
      const m = await startManualApp(engine);
      try {
        const mk = await signup(m);
        const req = (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object) =>
          m.app.inject({ method, url, headers, ...(payload !== undefined ? { payload } : {}) });
        const s = (await req('POST', '/v1/checkout/sessions', auth(mk.secretKey), { amount: 1050, expiresInSeconds: 300 })).json();
        const pix = (await req('POST', `/v1/checkout/sessions/${s.id}/client/pay`, page(s.clientSecret, randomUUID()), { method: 'pix' })).json().payment;
        const listed = async () => (await req('GET', '/v1/checkout/sessions?status=expired&limit=100', auth(mk.secretKey))).json().data.some((x: Json) => x.id === s.id);
        await m.advance(300_000 - 1);
        assert.equal(await listed(), false, 'open until its last millisecond');
        await m.advance(1);
        // Listed (a list never expires anything itself): the job did it.
        assert.equal(await listed(), true, 'the expiry job ran on time');
        assert.equal((await req('GET', `/v1/payments/${pix.id}`, auth(mk.secretKey))).json().status, 'expired');
        const job = await m.store.db.selectFrom('jobs').select('id').where('payload', 'like', `%${s.id}%`).where('type', '=', 'checkout_session.expire').executeTakeFirst();
        assert.equal(job, undefined);
      } finally {
        await m.teardown();
      }
    });

    test('expiry: a session past its time reads expired before its job has run', async () => {
      const s = await create();
      const past = Date.now() - 1000;
      await t.store.write((tx) => tx.updateTable('checkout_sessions').set({ expires_at_ms: past, expires_at: new Date(past).toISOString() }).where('id', '=', s.id).execute());
      assert.equal((await view(s)).status, 'expired');
      assert.equal((await ok('GET', `/v1/checkout/sessions/${s.id}`, sk())).status, 'expired');
      assert.equal((await pay(s, { method: 'pix' })).statusCode, 409);
    });

    test('checkout_session.completed is delivered as a signed webhook', async () => {
      const { url, hits, close } = await webhookReceiver();
      try {
        const keys = await signup(t, 'Webhook checkout');
        const endpoint = await ok('POST', '/v1/webhook-endpoints', sk(keys), { url, events: ['checkout_session.completed'] });
        const s = await create({ amount: 4200 }, keys);
        await pay(s, { method: 'credit_card', cardToken: 'tok_visa' });
        // Waits for I/O: the delivery crossing a loopback socket to the receiver.
        const hit = await eventually(async () => hits[0], 'the webhook');
        const event = new Webhook(endpoint.secret).verify(hit.body, hit.headers as Record<string, string>) as Json;
        assert.equal(event.type, 'checkout_session.completed');
        assert.equal(event.data.object.id, s.id);
        assert.equal(event.data.object.status, 'complete');
        assert.match(event.data.object.paymentId, /^pay_/);
        assert.equal(event.data.object.clientSecret, null);
        assert.doesNotMatch(hit.body, /_secret_/);
      } finally {
        close();
      }
    });

    test('checkout_session.expired is delivered as a signed webhook', async () => {
      const { url, hits, close } = await webhookReceiver();
      try {
        const keys = await signup(t, 'Webhook expiry');
        const endpoint = await ok('POST', '/v1/webhook-endpoints', sk(keys), { url, events: ['checkout_session.expired'] });
        const s = await create({ amount: 4300 }, keys);
        const pix = (await pay(s, { method: 'pix' })).json().payment;
        await ok('POST', `/v1/checkout/sessions/${s.id}/expire`, sk(keys));
        // Waits for I/O: the delivery crossing a loopback socket to the receiver.
        const hit = await eventually(async () => hits[0], 'the webhook');
        const event = new Webhook(endpoint.secret).verify(hit.body, hit.headers as Record<string, string>) as Json;
        assert.equal(event.type, 'checkout_session.expired');
        assert.equal(event.data.object.id, s.id);
        assert.equal(event.data.object.status, 'expired');
        assert.ok(event.data.object.expiredAt);
        assert.equal(event.data.object.paymentId, pix.id);
        assert.equal(event.data.object.clientSecret, null);
        assert.doesNotMatch(hit.body, /_secret_/);
        assert.throws(() => new Webhook(endpoint.secret).verify(hit.body.replace('"expired"', '"complete"'), hit.headers as Record<string, string>), 'a changed body does not verify');
      } finally {
        close();
      }
    });

    // No request can make these transactions fail halfway on its own (every guard is checked
    // before anything is written), so the store is made to refuse the session's event row: a
    // trigger on the events table, for this session only. The change and its event go together
    // or not at all.
    const refuseEvents = async (sessionId: string, type: string) => {
      const name = `refuse_${sessionId}`;
      const when = `new.type = '${type}' and new.data like '%${sessionId}%'`;
      if (engine === 'sqlite') {
        await sql.raw(`create trigger ${name} before insert on events when ${when} begin select raise(abort, 'refused by the test'); end`).execute(t.store.db);
        return () => sql.raw(`drop trigger ${name}`).execute(t.store.db);
      }
      await sql.raw(`create function ${name}() returns trigger language plpgsql as $$ begin if ${when} then raise exception 'refused by the test'; end if; return new; end $$`).execute(t.store.db);
      await sql.raw(`create trigger ${name} before insert on events for each row execute function ${name}()`).execute(t.store.db);
      return async () => {
        await sql.raw(`drop trigger ${name} on events`).execute(t.store.db);
        await sql.raw(`drop function ${name}()`).execute(t.store.db);
      };
    };
    const eventsOf = async (id: string) => (await ok('GET', '/v1/events?limit=100', sk())).data.filter((e: Json) => e.data.object.id === id).map((e: Json) => e.type as string).sort();

    test('a failed expiry leaves neither the session\'s change nor its event (nor its Pix\'s)', async () => {
      const s = await create();
      const pix = (await pay(s, { method: 'pix' })).json().payment;
      const allow = await refuseEvents(s.id, 'checkout_session.expired');
      try {
        const failed = await call('POST', `/v1/checkout/sessions/${s.id}/expire`, sk());
        assert.equal(failed.statusCode, 500, failed.body);
        assert.equal(failed.json().error.code, 'INTERNAL_ERROR');
      } finally {
        await allow();
      }
      assert.equal((await ok('GET', `/v1/checkout/sessions/${s.id}`, sk())).status, 'open');
      assert.equal((await ok('GET', `/v1/payments/${pix.id}`, sk())).status, 'pending', 'the Pix expired with the session, so it did not');
      assert.deepEqual(await eventsOf(s.id), []);
      assert.deepEqual(await eventsOf(pix.id), ['payment.created']);
      // Allowed again: all of it, once.
      assert.equal((await ok('POST', `/v1/checkout/sessions/${s.id}/expire`, sk())).status, 'expired');
      assert.equal((await ok('GET', `/v1/payments/${pix.id}`, sk())).status, 'expired');
      assert.deepEqual(await eventsOf(s.id), ['checkout_session.expired']);
      assert.deepEqual(await eventsOf(pix.id), ['payment.created', 'payment.expired']);
    });

    test('a failed approval leaves neither the session complete nor its event (nor the payment approved)', async () => {
      const s = await create({ amount: 1234, methods: ['pix'] });
      const pix = (await pay(s, { method: 'pix' })).json().payment;
      const allow = await refuseEvents(s.id, 'checkout_session.completed');
      try {
        const failed = await call('POST', `/v1/sandbox/payments/${pix.id}/pay`, sk());
        assert.equal(failed.statusCode, 500, failed.body);
      } finally {
        await allow();
      }
      const session = await ok('GET', `/v1/checkout/sessions/${s.id}`, sk());
      assert.deepEqual([session.status, session.completedAt], ['open', null]);
      assert.equal((await ok('GET', `/v1/payments/${pix.id}`, sk())).status, 'pending');
      assert.deepEqual(await eventsOf(s.id), []);
      assert.deepEqual(await eventsOf(pix.id), ['payment.created']);
      await ok('POST', `/v1/sandbox/payments/${pix.id}/pay`, sk());
      assert.equal((await ok('GET', `/v1/checkout/sessions/${s.id}`, sk())).status, 'complete');
      assert.deepEqual(await eventsOf(s.id), ['checkout_session.completed']);
      assert.deepEqual(await eventsOf(pix.id), ['payment.approved', 'payment.created']);
    });

    test('expiry while a card payment is being confirmed: expire answers 409, the expiry job looks again later, the card\'s answer decides', async () => {
      // The sandbox's lost answer (tok_provider_timeout): its first call charges and times out,
      // and its retry comes an hour later on this instance, so the card payment stays pending
      // (being confirmed) for as long as the test needs, then is approved when its job is run.
      // On a clock the test moves (startManualApp): each job runs when the test runs what is due,
      // so each step is seen as it lands instead of waited for.
      const slow = await startManualApp(engine, { providerRetryBaseMs: 3_600_000 });
      try {
        const keys = await signup(slow, 'Cartao demorado');
        const req = (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object) => slow.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
        const read = async (url: string) => {
          const res = await req('GET', url, sk(keys));
          assert.equal(res.statusCode, 200, res.body);
          return res.json<Json>();
        };
        const s = (await req('POST', '/v1/checkout/sessions', sk(keys), { amount: 2500 })).json<Json>();
        const paid = await req('POST', `/v1/checkout/sessions/${s.id}/client/pay`, page(s.clientSecret, randomUUID()), { method: 'credit_card', cardToken: 'tok_provider_timeout' });
        assert.equal(paid.statusCode, 200, paid.body);
        const paymentId = paid.json().payment.id as string;
        const confirmJob = () => slow.store.db.selectFrom('jobs').selectAll().where('type', '=', 'payment.confirm').where('payload', 'like', `%${paymentId}%`).executeTakeFirst();
        const expiryJob = () => slow.store.db.selectFrom('jobs').selectAll().where('type', '=', 'checkout_session.expire').where('payload', 'like', `%${s.id}%`).executeTakeFirst();
        // The first call is made and its retry put off: the payment is being confirmed.
        await slow.runDue();
        assert.ok((await confirmJob())?.last_error, 'the first provider call failed and its retry waits');
        assert.equal((await read(`/v1/payments/${paymentId}`)).status, 'pending');

        const refused = await req('POST', `/v1/checkout/sessions/${s.id}/expire`, sk(keys));
        assert.equal(refused.statusCode, 409, refused.body);
        assert.equal(refused.json().error.code, 'INVALID_STATE');
        assert.match(refused.json().error.message, /being confirmed/);
        assert.equal((await read(`/v1/checkout/sessions/${s.id}`)).status, 'open');

        // The session's time comes (moved, not waited for): its job finds the card in flight and
        // looks again later instead of expiring the session under it.
        const past = slow.clock.nowMs() - 1000;
        await slow.store.write(async (tx) => {
          await tx.updateTable('checkout_sessions').set({ expires_at_ms: past, expires_at: new Date(past).toISOString() }).where('id', '=', s.id).execute();
          await tx.updateTable('jobs').set({ run_at_ms: past }).where('type', '=', 'checkout_session.expire').where('payload', 'like', `%${s.id}%`).execute();
        });
        await slow.runDue();
        const waiting = await expiryJob();
        assert.ok(waiting?.last_error, 'the expiry job looked');
        assert.equal(waiting.last_error, 'a card payment is being confirmed');
        assert.ok(Number(waiting.run_at_ms) > past, 'rescheduled, not done');
        // Past its time, yet open while its card is being confirmed (a read does not expire it either).
        const meanwhile = await read(`/v1/checkout/sessions/${s.id}`);
        assert.deepEqual([meanwhile.status, meanwhile.expiredAt], ['open', null]);
        assert.equal((await read(`/v1/payments/${paymentId}`)).status, 'pending');

        // The card's answer comes: approved, and the session complete, not expired.
        await slow.store.write((tx) => tx.updateTable('jobs').set({ run_at_ms: slow.clock.nowMs() }).where('type', '=', 'payment.confirm').where('payload', 'like', `%${paymentId}%`).execute());
        await slow.runDue();
        assert.equal((await read(`/v1/payments/${paymentId}`)).status, 'approved', 'the card\'s approval');
        // The expiry job's next look finds it complete and is done.
        await slow.store.write((tx) => tx.updateTable('jobs').set({ run_at_ms: slow.clock.nowMs() }).where('type', '=', 'checkout_session.expire').where('payload', 'like', `%${s.id}%`).execute());
        await slow.runDue();
        assert.equal(await expiryJob(), undefined, 'the expiry job is done');
        const session = await read(`/v1/checkout/sessions/${s.id}`);
        assert.deepEqual([session.status, session.paymentId, session.expiredAt], ['complete', paymentId, null]);
        const events = (await read('/v1/events?limit=100')).data.filter((e: Json) => e.data.object.id === s.id).map((e: Json) => e.type);
        assert.deepEqual(events, ['checkout_session.completed']);
      } finally {
        await slow.teardown();
      }
    });
  });
}

for (const engine of ENGINES) {
  test(`migration 0008: the readable copies of publishable keys that 0006 kept are wiped; the keys still work, by their hash (${engine})`, async () => {
    const db = await testDatabase(engine);
    // An instance on the schema before 0008, whose sign-up kept each pk_ readable beside its hash.
    const store = Store.open({ url: db.url });
    await store.migrate('0007_payments_pending');
    const { hashKey } = await import('../src/modules/accounts/service.js');
    const { newId } = await import('../src/domain/ids.js');
    const id = newId('account', Date.now());
    const now = new Date().toISOString();
    const sk = `sk_test_${'a'.repeat(32)}`;
    const pk = `pk_test_${'b'.repeat(32)}`;
    await store.write(async (tx) => {
      await tx.insertInto('accounts').values({ id, name: 'Antiga', email: null, live_enabled: 0, settings: '{}', created_at: now }).execute();
      await tx.insertInto('api_keys').values({ id: newId('apiKey', Date.now()), account_id: id, livemode: 0, kind: 'secret', key_hash: hashKey(sk), display: 'sk_test_…aaaa', created_at: now, revoked_at: null, publishable_key: null }).execute();
      await tx.insertInto('api_keys').values({ id: newId('apiKey', Date.now()), account_id: id, livemode: 0, kind: 'publishable', key_hash: hashKey(pk), display: 'pk_test_…bbbb', created_at: now, revoked_at: null, publishable_key: pk }).execute();
    });
    assert.deepEqual(await store.migrate('0008_publishable_keys_hashed_only'), ['0008_publishable_keys_hashed_only']);
    const stored = await store.db.selectFrom('api_keys').selectAll().where('account_id', '=', id).execute();
    assert.equal(stored.length, 2);
    assert.ok(!JSON.stringify(stored).includes(pk) && !JSON.stringify(stored).includes(sk), 'only hashes are left');
    await store.close();
    const t = await startApp(engine, {}, { db });
    try {
      const card = { number: '4242424242424242', expMonth: 12, expYear: 2099, cvc: '123' };
      // The merchant's own pages tokenize with the pk_ as before.
      assert.equal((await t.app.inject({ method: 'POST', url: '/v1/tokens', headers: auth(pk), payload: { card } })).statusCode, 200);
      // Its hosted checkout needs no key: the page tokenizes with the session's client secret.
      const s = (await t.app.inject({ method: 'POST', url: '/v1/checkout/sessions', headers: auth(sk), payload: { amount: 100 } })).json();
      const v = (await t.app.inject({ method: 'GET', url: `/v1/checkout/sessions/${s.id}/client`, headers: auth(s.clientSecret) })).json();
      assert.equal('publishableKey' in v, false);
      assert.equal((await t.app.inject({ method: 'POST', url: '/v1/tokens', headers: auth(s.clientSecret), payload: { card } })).statusCode, 200);
      const after = await t.store.db.selectFrom('api_keys').selectAll().where('account_id', '=', id).execute();
      assert.equal(after.length, 2, 'a checkout makes no key');
    } finally {
      await t.teardown();
      await db.drop();
    }
  });
}

describe('checkout: page, assets and script serving; embed origins', () => {
  let t: TestApp;
  let dir: string;
  let admin: { cookie: string; csrf: string };
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'checkout-dist-'));
    mkdirSync(join(dir, 'page', 'assets'), { recursive: true });
    writeFileSync(join(dir, 'page', 'index.html'), '<!doctype html><title>Checkout</title><script type="module" src="/checkout/assets/page-abc.js"></script>');
    writeFileSync(join(dir, 'page', 'assets', 'page-abc.js'), 'console.log("page")');
    writeFileSync(join(dir, 'checkout.global.js'), 'var PagamentosCheckout = {};');
    t = await startApp(ENGINES[0], { checkoutPageDist: join(dir, 'page'), checkoutJsDist: join(dir, 'checkout.global.js') });
    admin = await adminSession(t);
  });
  after(async () => {
    await t.teardown();
    rmSync(dir, { recursive: true, force: true });
  });

  const adminHeaders = () => ({ cookie: admin.cookie, 'x-csrf-token': admin.csrf });
  const frameAncestors = (csp: string) => /frame-ancestors ([^;]+)/.exec(csp)?.[1];

  test('the page shell, with a strict policy framed only by the account\'s embed origins', async () => {
    const k = await signup(t, 'Serving');
    const s = (await t.app.inject({ method: 'POST', url: '/v1/checkout/sessions', headers: auth(k.secretKey), payload: { amount: 100 } })).json();
    const res = await t.app.inject({ method: 'GET', url: `/checkout/${s.id}?embed=1&parentOrigin=http%3A%2F%2Flocalhost%3A5173&locale=en` });
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['content-type'] as string, /^text\/html/);
    assert.match(res.body, /<title>Checkout/);
    const csp = res.headers['content-security-policy'] as string;
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /style-src 'self'(;|$)/);
    assert.match(csp, /connect-src 'self'/);
    assert.match(csp, /img-src 'self' data:/);
    assert.doesNotMatch(csp, /unsafe-inline/);
    assert.equal(frameAncestors(csp), 'http://localhost:* http://127.0.0.1:*');
    assert.equal(res.headers['x-frame-options'], undefined);
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    assert.equal(res.headers['cache-control'], 'no-store');
    // An id that names no session: framed by no one.
    const unknown = await t.app.inject({ method: 'GET', url: '/checkout/cs_00000000000000000000000000' });
    assert.equal(unknown.statusCode, 200);
    assert.equal(frameAncestors(unknown.headers['content-security-policy'] as string), "'none'");

    // The admin sets the account's origins: the policy follows.
    const bad = await t.app.inject({ method: 'PUT', url: `/admin/accounts/${k.accountId}/embed-origins`, headers: adminHeaders(), payload: { origins: ['https://loja.example/path'], reason: 'site' } });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error.param, 'origins.0');
    const noReason = await t.app.inject({ method: 'PUT', url: `/admin/accounts/${k.accountId}/embed-origins`, headers: adminHeaders(), payload: { origins: ['https://loja.example'] } });
    assert.equal(noReason.statusCode, 400);
    const set = await t.app.inject({ method: 'PUT', url: `/admin/accounts/${k.accountId}/embed-origins`, headers: adminHeaders(), payload: { origins: ['https://LOJA.example:443', 'http://localhost:*', 'https://loja.example'], reason: 'merchant site goes live (ticket 12)' } });
    assert.equal(set.statusCode, 200, set.body);
    assert.deepEqual(set.json().embedOrigins, ['https://loja.example', 'http://localhost:*']);
    const account = await t.app.inject({ method: 'GET', url: `/admin/accounts/${k.accountId}`, headers: { cookie: admin.cookie } });
    assert.deepEqual(account.json().embedOrigins, ['https://loja.example', 'http://localhost:*']);
    const audit = await t.store.db.selectFrom('admin_audit_log').selectAll().where('object_id', '=', k.accountId).where('action', '=', 'account.set_embed_origins').execute();
    assert.equal(audit.length, 1);
    assert.equal(audit[0].reason, 'merchant site goes live (ticket 12)');
    const after = await t.app.inject({ method: 'GET', url: `/checkout/${s.id}` });
    assert.equal(frameAncestors(after.headers['content-security-policy'] as string), 'https://loja.example http://localhost:*');
    // An empty list: no one frames it.
    await t.app.inject({ method: 'PUT', url: `/admin/accounts/${k.accountId}/embed-origins`, headers: adminHeaders(), payload: { origins: [], reason: 'redirect mode only' } });
    assert.equal(frameAncestors((await t.app.inject({ method: 'GET', url: `/checkout/${s.id}` })).headers['content-security-policy'] as string), "'none'");
  });

  test('embed origins: what is refused', async () => {
    const k = await signup(t, 'Origins');
    for (const origin of ['http://loja.example', 'https://*.loja.example', 'https://loja.example:*', 'ftp://loja.example', 'https://loja.example/', 'loja.example', 'https://loja.example:70000', 'https://-bad.example']) {
      const res = await t.app.inject({ method: 'PUT', url: `/admin/accounts/${k.accountId}/embed-origins`, headers: adminHeaders(), payload: { origins: [origin], reason: 'test' } });
      assert.equal(res.statusCode, 400, `${origin}: ${res.body}`);
      assert.equal(res.json().error.param, 'origins.0');
    }
    assert.equal((await t.app.inject({ method: 'PUT', url: '/admin/accounts/acct_nope/embed-origins', headers: adminHeaders(), payload: { origins: [], reason: 'x' } })).statusCode, 404);
  });

  test('assets and the script-tag library', async () => {
    const asset = await t.app.inject({ method: 'GET', url: '/checkout/assets/page-abc.js' });
    assert.equal(asset.statusCode, 200);
    assert.match(asset.headers['content-type'] as string, /^text\/javascript/);
    assert.match(asset.headers['cache-control'] as string, /immutable/);
    assert.equal((await t.app.inject({ method: 'GET', url: '/checkout/assets/nope.js' })).statusCode, 404);
    const js = await t.app.inject({ method: 'GET', url: '/v1/checkout.js' });
    assert.equal(js.statusCode, 200);
    assert.equal(js.body, 'var PagamentosCheckout = {};');
    assert.match(js.headers['content-type'] as string, /^text\/javascript/);
    assert.equal(js.headers['cross-origin-resource-policy'], 'cross-origin');
    assert.match(js.headers['cache-control'] as string, /max-age=\d+/);
  });

  test('not built: 503 in the envelope', async () => {
    const other = await startApp(ENGINES[0], { checkoutPageDist: join(dir, 'missing'), checkoutJsDist: join(dir, 'missing.js') });
    try {
      for (const url of ['/checkout/cs_00000000000000000000000000', '/checkout/assets/a.js', '/v1/checkout.js']) {
        const res = await other.app.inject({ method: 'GET', url });
        assert.equal(res.statusCode, 503, url);
        assert.equal(res.json().error.code, 'SERVICE_UNAVAILABLE');
        assert.match(res.json().error.message, /not built/);
      }
    } finally {
      await other.teardown();
    }
  });
});

describe('checkout: no client secret and no card number in the logs', () => {
  test('a whole checkout, logged at debug level', async () => {
    const db = await testDatabase(ENGINES[0]);
    let text = '';
    const config = loadConfig({}, { ...TEST_CONFIG, databaseUrl: db.url, logLevel: 'debug' });
    const store = Store.open({ url: db.url, writeBatchMax: config.writeBatchMax });
    await store.migrate();
    // The product's logger, with its redaction of every line (http/redact.ts).
    const built = await buildApp({ config, store, logger: createLogger(config, { write: (line: string) => { text += line; } }) });
    // No polling worker: the card's job runs below when the test runs what is due (the worker's
    // lines go to the same logger).
    try {
      const signupRes = await built.app.inject({ method: 'POST', url: '/v1/sandbox/accounts', payload: { name: 'Logs' } });
      const keys = signupRes.json().keys;
      const s = (await built.app.inject({ method: 'POST', url: '/v1/checkout/sessions', headers: auth(keys.secretKey.key), payload: { amount: 500 } })).json();
      const secret = s.clientSecret as string;
      await built.app.inject({ method: 'GET', url: `/v1/checkout/sessions/${s.id}/client`, headers: { authorization: `Bearer ${secret}` } });
      const tok = (await built.app.inject({ method: 'POST', url: '/v1/tokens', headers: { authorization: `Bearer ${secret}` }, payload: { card: { number: '4242424242424242', expMonth: 12, expYear: 2099, cvc: '123' } } })).json();
      await built.app.inject({ method: 'POST', url: `/v1/checkout/sessions/${s.id}/client/pay`, headers: { authorization: `Bearer ${secret}`, 'idempotency-key': randomUUID() }, payload: { method: 'credit_card', cardToken: tok.id } });
      // Pasted where it does not belong: a path.
      await built.app.inject({ method: 'GET', url: `/v1/nowhere/${secret}` });
      await built.app.inject({ method: 'GET', url: `/v1/checkout/sessions/${secret}/client`, headers: { authorization: `Bearer ${secret}` } });
      assert.ok((await built.worker.runDue()) >= 1, 'the card payment\'s confirmation ran');
      assert.equal((await built.app.inject({ method: 'GET', url: `/v1/checkout/sessions/${s.id}`, headers: auth(keys.secretKey.key) })).json().status, 'complete');
      // Closed: every request's line has been written.
      await built.close();
      assert.ok(text.includes('request completed'), 'the requests were logged');
      assert.ok(!text.includes(secret.split('_secret_')[1]), 'no client secret in the logs');
      assert.ok(!text.includes('4242424242424242'), 'no card number in the logs');
    } finally {
      await built.close().catch(() => {});
      await db.drop();
    }
  });
});

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ENGINES, startApp, signup, auth, adminSession, eventually, type TestApp, type Keys } from './helpers.js';
import { ADYEN_TEST_CARDS, CHECKOUT_CONTRACT, WEBHOOKS_CONTRACT, fakeEncrypt, startFakeAdyen, type FakeAdyen } from './fakes/fake-adyen.js';
import { createKey } from '../src/modules/accounts/service.js';
import { newMasterKey, parseKeyring } from '../src/providers/secrets/envelope.js';
import { openAccount } from '../src/providers/accounts.js';
import type { CardSecrets, CardSettings } from '../src/providers/connector.js';
import { providerKey } from '../src/modules/payments/common.js';
import { cardReconcileJob } from '../src/modules/payments/live-card.js';
import { RESULT_CODES } from '../src/providers/adyen/transformers.js';

// Live cards on Adyen (issue 27), against the fake Adyen (test/fakes/fake-adyen.ts): every
// request we send is validated against Adyen's own contract (openapi-backend over the vendored
// CheckoutService-v71), every answer and notification the fake makes too; notifications are
// HMAC-signed as Adyen documents. Through our HTTP API on both engines.

const NOTICE = readFileSync(new URL('./fakes/adyen/NOTICE', import.meta.url), 'utf8');
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

test('the vendored contracts are the trimmed files NOTICE names (sha256), under Adyen\'s MIT license', () => {
  assert.match(NOTICE, /MIT License/);
  assert.match(NOTICE, /Copyright \(c\) 2017 Adyen bv/);
  assert.ok(NOTICE.includes(sha256(CHECKOUT_CONTRACT)), 'checkout-v71.trimmed.json is the file NOTICE records');
  assert.ok(NOTICE.includes(sha256(WEBHOOKS_CONTRACT)), 'webhooks-v1.trimmed.json is the file NOTICE records');
});

test('every resultCode of the contract is mapped', () => {
  const doc = JSON.parse(readFileSync(CHECKOUT_CONTRACT, 'utf8'));
  const codes: string[] = doc.components.schemas.PaymentResponse.properties.resultCode.enum;
  assert.deepEqual([...codes].sort(), Object.keys(RESULT_CODES).sort());
});

for (const engine of ENGINES) {
  describe(`live cards on Adyen (${engine})`, () => {
    let adyen: FakeAdyen;
    let t: TestApp;
    let k: Keys;
    let live: string;
    let livePk: string;
    let admin: { cookie: string; csrf: string };
    let connectorId: string;
    let notificationUrl: string;

    const adminCall = (method: 'GET' | 'POST', url: string, body?: object) =>
      t.app.inject({ method, url, headers: { cookie: admin.cookie, ...(method === 'GET' ? {} : { 'x-csrf-token': admin.csrf }) }, ...(body ? { payload: body } : {}) });
    const api = (method: 'GET' | 'POST', url: string, body?: object, headers: Record<string, string> = {}) =>
      t.app.inject({ method, url, headers: auth(live, headers), ...(body ? { payload: body } : {}) });
    const payment = async (id: string) => (await api('GET', `/v1/payments/${id}`)).json();
    const tokenOf = async (number: string) => {
      const res = await t.app.inject({ method: 'POST', url: '/v1/tokens', headers: auth(livePk), payload: { encryptedCard: { encryptedCardNumber: fakeEncrypt(number), encryptedExpiryMonth: fakeEncrypt('03'), encryptedExpiryYear: fakeEncrypt('2030'), encryptedSecurityCode: fakeEncrypt('737'), brand: 'visa', last4: number.slice(-4), expMonth: 3, expYear: 2030 } } });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().id as string;
    };
    const pay = async (number: string, amount = 10_000, installments = 1) => {
      const res = await api('POST', '/v1/payments', { amount, method: 'credit_card', cardToken: await tokenOf(number), installments });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 'pending');
      return res.json<{ id: string }>();
    };
    // Waits for I/O: the worker's calls to the fake Adyen (and its notifications to us).
    const settled = (id: string, what = 'decided') => eventually(async () => { const p = await payment(id); return p.status !== 'pending' && p; }, what);
    const pspOf = async (id: string) => (await t.store.db.selectFrom('payments').select('provider_charge_id').where('id', '=', id).executeTakeFirstOrThrow()).provider_charge_id;
    const count = async (table: 'card_notifications' | 'provider_notifications') => Number((await t.store.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

    before(async () => {
      adyen = await startFakeAdyen();
      t = await startApp(engine, { masterKeys: parseKeyring(newMasterKey('run')) });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      t.config.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      k = await signup(t, 'Loja Cartões');
      await t.store.write((tx) => tx.updateTable('accounts').set({ live_enabled: 1 }).where('id', '=', k.accountId).execute());
      live = (await createKey(t.store, k.accountId, 'secret', true)).key;
      livePk = (await createKey(t.store, k.accountId, 'publishable', true)).key;
      admin = await adminSession(t);
      const created = await adminCall('POST', '/admin/connector-accounts/adyen', {
        name: 'Adyen produção', connector: 'adyen', method: 'card', environment: 'production', baseUrl: adyen.baseUrl,
        merchantAccount: adyen.merchantAccount, clientKey: adyen.clientKey.replace(/^test_/, 'live_'), apiKey: adyen.apiKey, hmacKey: adyen.hmacKey, timeoutMs: 1500, reason: 'going live with cards',
      });
      assert.equal(created.statusCode, 200, created.body);
      const account = created.json();
      connectorId = account.id;
      assert.equal(account.secrets.apiKey, 'set');
      assert.equal(account.secrets.hmacKey, 'set');
      assert.equal(account.merchantAccount, adyen.merchantAccount);
      assert.ok(!created.body.includes(adyen.apiKey) && !created.body.includes(adyen.hmacKey), 'the keys never come back');
      const row = await t.store.db.selectFrom('connector_accounts').selectAll().where('id', '=', connectorId).executeTakeFirstOrThrow();
      assert.ok(!row.secrets.includes(adyen.apiKey) && !row.settings.includes(adyen.apiKey), 'the API key is sealed in the store');
      const opened = openAccount<CardSettings, CardSecrets>(t.config.masterKeys, row);
      notificationUrl = `${t.config.publicUrl}/v1/provider-callbacks/${opened.secrets.webhookToken}/adyen`;
      adyen.setWebhook(notificationUrl);
    });
    after(async () => {
      await adyen.close();
      t.app.server.closeAllConnections();
      await t.teardown();
      assert.deepEqual(adyen.contractViolations, [], 'every request we sent, and every answer and notification of the fake, kept Adyen\'s contract');
    });

    test('operators see the notification URL in the account\'s detail (never in a list, never in the audit log), the HMAC key only as set', async () => {
      const detail = (await adminCall('GET', `/admin/connector-accounts/${connectorId}`)).json();
      assert.equal(detail.notificationUrl, notificationUrl);
      assert.equal(detail.secrets.hmacKey, 'set');
      assert.equal(detail.captureMode, 'automatic');
      const list = (await adminCall('GET', '/admin/connector-accounts')).json();
      const listed = list.data.find((c: { id: string }) => c.id === connectorId);
      assert.equal(listed.notificationUrl, null);
      const audit = await t.store.db.selectFrom('admin_audit_log').selectAll().where('object_id', '=', connectorId).execute();
      assert.ok(audit.length > 0);
      const token = notificationUrl.split('/').at(-2)!;
      assert.ok(!JSON.stringify(audit).includes(token), 'the token is not in the audit log');
    });

    test('a raw card number is refused with a live key; the token wraps the encrypted fields only', async () => {
      const raw = await t.app.inject({ method: 'POST', url: '/v1/tokens', headers: auth(livePk), payload: { card: { number: '4111 1111 1111 1111', expMonth: 3, expYear: 2030, cvc: '737' } } });
      assert.equal(raw.statusCode, 400, raw.body);
      assert.match(raw.json().error.message, /hosted checkout page/);
      const tok = await tokenOf(ADYEN_TEST_CARDS.approved);
      const stored = await t.store.db.selectFrom('card_tokens').selectAll().where('id', '=', tok).executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(stored).includes(`"${ADYEN_TEST_CARDS.approved}"`), 'no clear card number stored');
      assert.equal(stored.last4, '1111');
    });

    test('authorised: /payments with installments and the key derived from the payment id; approved; the AUTHORISATION notification is accepted and changes nothing', async () => {
      const before = await count('card_notifications');
      const p = await pay(ADYEN_TEST_CARDS.approved, 12_000, 3);
      const done = await settled(p.id);
      assert.equal(done.status, 'approved', JSON.stringify(done));
      const call = adyen.requests.find((r) => r.operation === 'post-payments' && (r.body as { reference: string }).reference === p.id)!;
      assert.equal(call.idempotencyKey, providerKey(p.id, 'authorize'));
      assert.deepEqual((call.body as { installments: unknown }).installments, { value: 3 });
      assert.deepEqual((call.body as { amount: unknown }).amount, { currency: 'BRL', value: 12_000 });
      await adyen.idle();
      const sent = adyen.notifications.at(-1)!;
      assert.equal(sent.status, 200);
      assert.equal(sent.answer, '[accepted]');
      assert.equal(await count('card_notifications'), before + 1);
      assert.equal((await payment(p.id)).status, 'approved');
    });

    test('refused, no funds and error map to declined (card_declined, insufficient_funds) and failed', async () => {
      const refused = await settled((await pay(ADYEN_TEST_CARDS.refused)).id);
      assert.equal(refused.status, 'declined');
      assert.equal(refused.failure.code, 'card_declined');
      const poor = await settled((await pay(ADYEN_TEST_CARDS.noFunds)).id);
      assert.equal(poor.status, 'declined');
      assert.equal(poor.failure.code, 'insufficient_funds');
      const error = await settled((await pay(ADYEN_TEST_CARDS.error)).id);
      assert.equal(error.status, 'failed');
      assert.equal(error.failure.code, 'acquirer_error');
    });

    test('Received: pending until the AUTHORISATION notification approves it', async () => {
      const p = await pay(ADYEN_TEST_CARDS.received);
      // Waits for I/O: the worker's calls to the fake Adyen (and its notifications to us).
      const psp = await eventually(() => pspOf(p.id), 'authorization asked');
      assert.equal((await payment(p.id)).status, 'pending');
      await adyen.decide(psp, true);
      assert.equal((await settled(p.id)).status, 'approved');
    });

    test('a lost answer is retried with the same key: one authorization at Adyen', async () => {
      // Held: the AUTHORISATION notification must not decide before the retry does.
      adyen.holdNotifications();
      adyen.inject({ kind: 'drop', operation: 'post-payments' });
      const p = await pay(ADYEN_TEST_CARDS.approved);
      assert.equal((await settled(p.id)).status, 'approved');
      await adyen.releaseNotifications();
      const calls = adyen.requests.filter((r) => r.operation === 'post-payments' && (r.body as { reference: string }).reference === p.id);
      assert.equal(calls.length, 2, 'asked twice');
      assert.equal(new Set(calls.map((c) => c.idempotencyKey)).size, 1, 'under one key');
      assert.equal([...adyen.payments.values()].filter((x) => x.reference === p.id).length, 1, 'one authorization');
    });

    test('a 5xx and an answer slower than our timeout are retried', async () => {
      adyen.inject({ kind: 'unavailable', operation: 'post-payments' });
      const a = await pay(ADYEN_TEST_CARDS.approved);
      assert.equal((await settled(a.id)).status, 'approved');
      adyen.holdNotifications();
      adyen.inject({ kind: 'slow', operation: 'post-payments', delayMs: 5_000 });
      const b = await pay(ADYEN_TEST_CARDS.approved);
      assert.equal((await settled(b.id)).status, 'approved');
      assert.ok(adyen.requests.filter((r) => r.operation === 'post-payments' && (r.body as { reference: string }).reference === b.id).length >= 2, 'timed out, then asked again');
      await adyen.releaseNotifications();
      assert.equal([...adyen.payments.values()].filter((x) => x.reference === b.id).length, 1, 'the slow one was made once');
    });

    test('notifications: a bad HMAC is refused and stores nothing; a duplicate is stored once', async () => {
      const p = await pay(ADYEN_TEST_CARDS.received);
      // Waits for I/O: the worker's calls to the fake Adyen (and its notifications to us).
      const psp = await eventually(() => pspOf(p.id), 'authorization asked');
      adyen.holdNotifications();
      await adyen.decide(psp, true);
      await adyen.releaseNotifications();
      const real = adyen.notifications.at(-1)!;
      const stored = await count('card_notifications');
      const forged = await adyen.sendForged(real);
      assert.equal(forged.status, 403, forged.answer ?? forged.error ?? '');
      const dup = await adyen.resend(real);
      assert.equal(dup.status, 200);
      assert.equal(await count('card_notifications'), stored, 'the duplicate added nothing');
      assert.equal((await settled(p.id)).status, 'approved');
      // A forged "authorised" for a pending payment approves nothing.
      const q = await pay(ADYEN_TEST_CARDS.received);
      // Waits for I/O: the worker's calls to the fake Adyen (and its notifications to us).
      const qPsp = await eventually(() => pspOf(q.id), 'authorization asked');
      const fake = { ...real, body: JSON.parse(JSON.stringify(real.body).replaceAll(psp, qPsp).replaceAll(p.id, q.id)) };
      const refused = await adyen.resend(fake);
      assert.equal(refused.status, 403, 'the signature covers pspReference and merchantReference');
      assert.equal((await payment(q.id)).status, 'pending');
    });

    test('refunds: received at Adyen, pending until REFUND; out of order and duplicated notifications move nothing backwards; a refused refund fails', async () => {
      const p = await pay(ADYEN_TEST_CARDS.approved, 10_000);
      assert.equal((await settled(p.id)).status, 'approved');
      await adyen.idle();
      adyen.holdNotifications();
      const r = await api('POST', '/v1/refunds', { paymentId: p.id, amount: 4_000 });
      assert.equal(r.statusCode, 200, r.body);
      // Waits for I/O: the worker's calls to the fake Adyen (and its notifications to us).
      await eventually(async () => adyen.requests.some((x) => x.operation === 'post-payments-paymentPspReference-refunds' && (x.body as { reference: string }).reference === r.json().id), 'refund asked');
      assert.equal((await api('GET', `/v1/refunds/${r.json().id}`)).json().status, 'pending', 'received only: pending until the notification');
      // The REFUND notification, then the payment's AUTHORISATION again, in reverse, each twice.
      const auth = adyen.notifications.filter((n) => n.eventCode === 'AUTHORISATION' && JSON.stringify(n.body).includes(p.id)).at(-1)!;
      await adyen.releaseNotifications({ order: 'reverse', duplicate: true });
      await adyen.resend(auth);
      // Waits for I/O: the worker's calls to the fake Adyen (and its notifications to us).
      await eventually(async () => (await api('GET', `/v1/refunds/${r.json().id}`)).json().status === 'succeeded', 'refund succeeded');
      const after = await payment(p.id);
      assert.equal(after.status, 'partially_refunded');
      assert.equal(after.amountRefunded, 4_000);

      adyen.refuseRefunds(true);
      const bad = await api('POST', '/v1/refunds', { paymentId: p.id, amount: 1_000 });
      assert.equal(bad.statusCode, 200, bad.body);
      // Waits for I/O: the worker's calls to the fake Adyen (and its notifications to us).
      await eventually(async () => (await api('GET', `/v1/refunds/${bad.json().id}`)).json().status === 'failed', 'refund refused at Adyen: failed');
      adyen.refuseRefunds(false);
    });

    test('a notification that never comes: reconciliation cancels at Adyen and fails the payment', async () => {
      adyen.holdNotifications();
      const p = await pay(ADYEN_TEST_CARDS.received);
      // Waits for I/O: the worker's calls to the fake Adyen (and its notifications to us).
      await eventually(() => pspOf(p.id), 'authorization asked');
      adyen.discardHeldNotifications();
      // Young: left alone.
      await cardReconcileJob(t.paymentDeps, t.app.log);
      assert.equal((await payment(p.id)).status, 'pending');
      await t.store.write((tx) => tx.updateTable('payments').set({ created_at: new Date(t.store.clock.nowMs() - 3_600_000).toISOString() }).where('id', '=', p.id).execute());
      await cardReconcileJob(t.paymentDeps, t.app.log);
      const done = await payment(p.id);
      assert.equal(done.status, 'failed');
      assert.equal(done.failure.code, 'acquirer_no_answer');
      assert.ok(adyen.requests.some((r) => r.operation === 'post-cancels' && (r.body as { paymentReference: string }).paymentReference === p.id), 'canceled at Adyen by our reference');
      await adyen.idle();
    });

    test('3-D Secure: requires_action with a redirect nextAction; a challenge passed approves, one failed declines', async () => {
      const p = await pay(ADYEN_TEST_CARDS.threeDs);
      const waiting = await settled(p.id, 'requires_action');
      assert.equal(waiting.status, 'requires_action');
      assert.equal(waiting.nextAction.type, 'redirect');
      assert.equal(waiting.nextAction.method, 'GET');
      assert.ok(waiting.nextAction.url.startsWith(adyen.baseUrl.replace('/v71', '')), waiting.nextAction.url);
      const psp = await pspOf(p.id);
      const back = await t.app.inject({ method: 'GET', url: `/v1/payments/${p.id}/card-return?redirectResult=${encodeURIComponent(adyen.passChallenge(psp!, true))}` });
      assert.equal(back.statusCode, 200, back.body);
      assert.match(back.body, /Pagamento aprovado/);
      const approved = await payment(p.id);
      assert.equal(approved.status, 'approved');
      assert.equal(approved.nextAction, null);

      const q = await pay(ADYEN_TEST_CARDS.threeDs);
      await settled(q.id, 'requires_action');
      const failed = await t.app.inject({ method: 'GET', url: `/v1/payments/${q.id}/card-return?redirectResult=${encodeURIComponent(adyen.passChallenge((await pspOf(q.id))!, false))}` });
      assert.equal(failed.statusCode, 200, failed.body);
      assert.match(failed.body, /Pagamento recusado/);
      assert.equal((await payment(q.id)).status, 'declined');
      await adyen.idle();
    });

    test('returnUrl: validated on create (nothing written when refused), shown in nextAction; after 3-D Secure the buyer lands on it with the payment id and status', async () => {
      const paymentsNow = async () => Number((await t.store.db.selectFrom('payments').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      const before = await paymentsNow();
      for (const [returnUrl, message] of [
        ['http://localhost:3000/retorno', /https/],
        ['http://loja.example/retorno', /https/],
        ['ftp://loja.example/retorno', /https/],
        ['https://user:pw@loja.example/retorno', /user name or password/],
        ['not a url at all', /returnUrl/],
      ] as const) {
        const res = await api('POST', '/v1/payments', { amount: 1_000, method: 'credit_card', cardToken: await tokenOf(ADYEN_TEST_CARDS.threeDs), returnUrl });
        assert.equal(res.statusCode, 400, `${returnUrl}: ${res.body}`);
        assert.equal(res.json().error.param, 'returnUrl', res.body);
        assert.match(res.json().error.message, message);
      }
      const pix = await api('POST', '/v1/payments', { amount: 1_000, method: 'pix', returnUrl: 'https://loja.example/retorno' });
      assert.equal(pix.statusCode, 400, pix.body);
      assert.equal(pix.json().error.param, 'returnUrl');
      assert.equal(await paymentsNow(), before, 'nothing was created');

      const returnUrl = 'https://loja.example/pedido/123/retorno?origem=app';
      const created = await api('POST', '/v1/payments', { amount: 2_000, method: 'credit_card', cardToken: await tokenOf(ADYEN_TEST_CARDS.threeDs), returnUrl });
      assert.equal(created.statusCode, 200, created.body);
      assert.equal(created.json().returnUrl, returnUrl);
      const p = created.json<{ id: string }>();
      const waiting = await settled(p.id, 'requires_action');
      assert.equal(waiting.status, 'requires_action');
      assert.equal(waiting.nextAction.returnUrl, returnUrl);
      // Adyen sends the buyer to us first: we complete the payment there.
      const call = adyen.requests.find((r) => r.operation === 'post-payments' && (r.body as { reference: string }).reference === p.id)!;
      assert.equal((call.body as { returnUrl: string }).returnUrl, `${t.config.publicUrl}/v1/payments/${p.id}/card-return`);
      const back = await t.app.inject({ method: 'GET', url: `/v1/payments/${p.id}/card-return?redirectResult=${encodeURIComponent(adyen.passChallenge((await pspOf(p.id))!, true))}` });
      assert.equal(back.statusCode, 303, back.body);
      const location = new URL(String(back.headers.location));
      assert.equal(`${location.origin}${location.pathname}`, 'https://loja.example/pedido/123/retorno');
      assert.equal(location.searchParams.get('origem'), 'app');
      assert.equal(location.searchParams.get('paymentId'), p.id);
      assert.equal(location.searchParams.get('status'), 'approved');
      const approved = await payment(p.id);
      assert.equal(approved.status, 'approved');
      assert.equal(approved.returnUrl, returnUrl);
      // A reload of the return URL lands there again, with nothing done twice.
      const again = await t.app.inject({ method: 'GET', url: `/v1/payments/${p.id}/card-return?redirectResult=x` });
      assert.equal(again.statusCode, 303);
      assert.equal(new URL(String(again.headers.location)).searchParams.get('status'), 'approved');

      // Test keys: plain http to this machine is fine (a shop developed locally); elsewhere not.
      const local = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amount: 1_000, method: 'credit_card', cardToken: 'tok_visa', returnUrl: 'http://localhost:3000/retorno' } });
      assert.equal(local.statusCode, 200, local.body);
      assert.equal(local.json().returnUrl, 'http://localhost:3000/retorno');
      const remote = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amount: 1_000, method: 'credit_card', cardToken: 'tok_visa', returnUrl: 'http://loja.example/retorno' } });
      assert.equal(remote.statusCode, 400, remote.body);
      await adyen.idle();
    });

    test('manual capture: authorized payments wait in requires_capture (no fee, no receivable); a capture is processing until CAPTURE approves it, or CAPTURE_FAILED fails it and gives the authorization back', async () => {
      // A merchant with its own Adyen account (its own fake, its own notification URL), set to manual capture.
      const adyen2 = await startFakeAdyen({ merchantAccount: 'LojaCaptura' });
      try {
        const k2 = await signup(t, 'Loja Captura');
        await t.store.write((tx) => tx.updateTable('accounts').set({ live_enabled: 1 }).where('id', '=', k2.accountId).execute());
        const sk2 = (await createKey(t.store, k2.accountId, 'secret', true)).key;
        const pk2 = (await createKey(t.store, k2.accountId, 'publishable', true)).key;
        const created = await adminCall('POST', '/admin/connector-accounts/adyen', {
          name: 'Adyen da Loja Captura', connector: 'adyen', method: 'card', environment: 'production', ownerAccountId: k2.accountId, baseUrl: adyen2.baseUrl,
          merchantAccount: adyen2.merchantAccount, clientKey: adyen2.clientKey.replace(/^test_/, 'live_'), apiKey: adyen2.apiKey, hmacKey: adyen2.hmacKey, captureMode: 'manual', timeoutMs: 1500, reason: 'manual capture',
        });
        assert.equal(created.statusCode, 200, created.body);
        assert.equal(created.json().captureMode, 'manual');
        assert.equal((await adminCall('GET', `/admin/connector-accounts/${connectorId}`)).json().captureMode, 'automatic', 'automatic by default');
        const row = await t.store.db.selectFrom('connector_accounts').selectAll().where('id', '=', created.json().id).executeTakeFirstOrThrow();
        adyen2.setWebhook(`${t.config.publicUrl}/v1/provider-callbacks/${openAccount<CardSettings, CardSecrets>(t.config.masterKeys, row).secrets.webhookToken}/adyen`);
        const call2 = (method: 'GET' | 'POST', url: string, body?: object) => t.app.inject({ method, url, headers: auth(sk2), ...(body ? { payload: body } : {}) });
        const pay2 = async (number: string) => {
          const tok = await t.app.inject({ method: 'POST', url: '/v1/tokens', headers: auth(pk2), payload: { encryptedCard: { encryptedCardNumber: fakeEncrypt(number), encryptedExpiryMonth: fakeEncrypt('03'), encryptedExpiryYear: fakeEncrypt('2030'), encryptedSecurityCode: fakeEncrypt('737'), brand: 'visa', last4: number.slice(-4), expMonth: 3, expYear: 2030 } } });
          assert.equal(tok.statusCode, 200, tok.body);
          const res = await call2('POST', '/v1/payments', { amount: 25_000, method: 'credit_card', cardToken: tok.json().id });
          assert.equal(res.statusCode, 200, res.body);
          return res.json<{ id: string }>().id;
        };
        const get2 = async (id: string) => (await call2('GET', `/v1/payments/${id}`)).json();
        const receivablesOf = async (id: string) => Number((await t.store.db.selectFrom('receivables').select((eb) => eb.fn.countAll().as('n')).where('payment_id', '=', id).executeTakeFirstOrThrow()).n);

        const id = await pay2(ADYEN_TEST_CARDS.approved);
        // Waits for I/O: the worker's calls to the fake Adyen (and its notifications to us).
        const held = await eventually(async () => { const p = await get2(id); return p.status !== 'pending' && p; }, 'authorized');
        assert.equal(held.status, 'requires_capture', JSON.stringify(held));
        assert.deepEqual(held.capture, { method: 'manual', status: 'pending' });
        assert.equal(held.feeAmount, null);
        assert.equal(await receivablesOf(id), 0, 'nothing owed before the capture');
        const authCall = adyen2.requests.find((r) => r.operation === 'post-payments' && (r.body as { reference: string }).reference === id)!;
        assert.deepEqual((authCall.body as { additionalData?: unknown }).additionalData, { manualCapture: 'true' });
        await adyen2.idle();
        assert.equal((await get2(id)).status, 'requires_capture', 'the AUTHORISATION notification keeps the authorization held');

        adyen2.holdNotifications();
        const cap = await call2('POST', `/v1/payments/${id}/capture`);
        assert.equal(cap.statusCode, 200, cap.body);
        assert.equal(cap.json().status, 'requires_capture');
        assert.deepEqual(cap.json().capture, { method: 'manual', status: 'processing' });
        const again = await call2('POST', `/v1/payments/${id}/capture`);
        assert.equal(again.statusCode, 200, again.body);
        // Waits for I/O: the worker's calls to the fake Adyen (and its notifications to us).
        await eventually(async () => adyen2.requests.some((r) => r.operation === 'post-payments-paymentPspReference-captures' && (r.body as { reference: string }).reference === id), 'capture asked');
        const captures = adyen2.requests.filter((r) => r.operation === 'post-payments-paymentPspReference-captures' && (r.body as { reference: string }).reference === id);
        assert.equal(captures.length, 1, 'asked once');
        assert.equal(captures[0].idempotencyKey, providerKey(id, 'capture'));
        assert.deepEqual((captures[0].body as { amount: unknown }).amount, { currency: 'BRL', value: 25_000 });
        assert.equal((await get2(id)).capture.status, 'processing', 'received only: processing until the notification');
        await adyen2.releaseNotifications({ duplicate: true });
        // Waits for I/O: the worker's calls to the fake Adyen (and its notifications to us).
        const captured = await eventually(async () => { const p = await get2(id); return p.status === 'approved' && p; }, 'captured');
        assert.deepEqual(captured.capture, { method: 'manual', status: 'succeeded' });
        assert.ok(captured.feeAmount !== null && captured.netAmount === 25_000 - captured.feeAmount);
        assert.ok(await receivablesOf(id) > 0, 'receivables once captured');
        const twice = await call2('POST', `/v1/payments/${id}/capture`);
        assert.equal(twice.statusCode, 409, twice.body);
        assert.equal(twice.json().error.code, 'INVALID_STATE');

        adyen2.failCaptures(true);
        const bad = await pay2(ADYEN_TEST_CARDS.approved);
        // Waits for I/O: the worker's calls to the fake Adyen (and its notifications to us).
        await eventually(async () => (await get2(bad)).status === 'requires_capture', 'authorized');
        assert.equal((await call2('POST', `/v1/payments/${bad}/capture`)).statusCode, 200);
        const failed = await eventually(async () => { const p = await get2(bad); return p.status === 'failed' && p; }, 'capture failed');
        assert.equal(failed.failure.code, 'capture_failed');
        assert.deepEqual(failed.capture, { method: 'manual', status: 'failed' });
        assert.equal(await receivablesOf(bad), 0);
        const psp = (await t.store.db.selectFrom('payments').select('provider_charge_id').where('id', '=', bad).executeTakeFirstOrThrow()).provider_charge_id;
        // Waits for I/O: the worker's calls to the fake Adyen (and its notifications to us).
        await eventually(async () => adyen2.requests.some((r) => r.operation === 'post-payments-paymentPspReference-cancels' && JSON.stringify(r.body).includes(bad)), 'the authorization given back');
        assert.ok(psp);
        adyen2.failCaptures(false);
        await adyen2.idle();
        // The capture route on a payment of automatic capture (the platform's account): refused.
        const auto = await pay(ADYEN_TEST_CARDS.approved);
        assert.equal((await settled(auto.id)).status, 'approved');
        assert.equal((await payment(auto.id)).capture, null);
        assert.equal((await api('POST', `/v1/payments/${auto.id}/capture`)).statusCode, 409);
        await adyen.idle();
      } finally {
        await adyen2.close();
        assert.deepEqual(adyen2.contractViolations, []);
      }
    });
  });
}

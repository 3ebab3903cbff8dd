// 3-D Secure on the merchant's own pages, through the SDK against a really running server with a
// live Adyen connector account (the fake Adyen on loopback): create with a returnUrl, wait for the
// outcome, handleNextAction sends the buyer to the bank, the buyer comes back to the returnUrl
// and retrieveReturned reads the payment. Manual capture: capture() refused for a payment that
// is not requires_capture.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidStateError, Pagamentos } from '../src/index.js';
import type { PaymentNextAction } from '../src/index.js';
import { ENGINES, liveKey, merchant, startServer, type Running } from './harness.js';
import { adminSession } from '../../../apps/server/test/helpers.js';
import { ADYEN_TEST_CARDS, fakeEncrypt, startFakeAdyen, type FakeAdyen } from '../../../apps/server/test/fakes/fake-adyen.js';
import { newMasterKey, parseKeyring } from '../../../apps/server/src/providers/secrets/envelope.js';
import { openAccount } from '../../../apps/server/src/providers/accounts.js';
import type { CardSecrets, CardSettings } from '../../../apps/server/src/providers/connector.js';

for (const engine of ENGINES) {
  describe(`SDK: nextAction, returnUrl, capture (${engine})`, () => {
    let r: Running;
    let adyen: FakeAdyen;
    let live: Pagamentos;

    before(async () => {
      adyen = await startFakeAdyen();
      r = await startServer(engine, { masterKeys: parseKeyring(newMasterKey('sdk')) });
      r.t.config.publicUrl = r.baseUrl;
      const m = await merchant(r.baseUrl);
      const key = await liveKey(r, m.accountId);
      await key.activate();
      live = new Pagamentos(key.key, { baseUrl: r.baseUrl, maxRetries: 0 });
      const admin = await adminSession(r.t);
      const created = await r.t.app.inject({
        method: 'POST', url: '/admin/connector-accounts/adyen', headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf },
        payload: { name: 'Adyen', connector: 'adyen', method: 'card', environment: 'production', baseUrl: adyen.baseUrl, merchantAccount: adyen.merchantAccount, clientKey: 'live_SDK', apiKey: adyen.apiKey, hmacKey: adyen.hmacKey, reason: 'sdk test' },
      });
      assert.equal(created.statusCode, 200, created.body);
      const row = await r.t.store.db.selectFrom('connector_accounts').selectAll().where('id', '=', created.json().id).executeTakeFirstOrThrow();
      adyen.setWebhook(`${r.baseUrl}/v1/provider-callbacks/${openAccount<CardSettings, CardSecrets>(r.t.config.masterKeys, row).secrets.webhookToken}/adyen`);
    });
    after(async () => {
      await adyen.close();
      r.t.app.server.closeAllConnections();
      await r.close();
      assert.deepEqual(adyen.contractViolations, []);
    });

    const token = async (number: string) => (await live.tokens.create({ encryptedCard: { encryptedCardNumber: fakeEncrypt(number), encryptedExpiryMonth: fakeEncrypt('03'), encryptedExpiryYear: fakeEncrypt('2030'), encryptedSecurityCode: fakeEncrypt('737'), brand: 'visa', last4: number.slice(-4), expMonth: 3, expYear: 2030 } })).id;

    test('create with returnUrl; waitForOutcome gives requires_action; handleNextAction sends the buyer to the bank; back on the returnUrl, retrieveReturned reads it approved', async () => {
      const returnUrl = 'https://loja.example/pedido/42/retorno';
      const created = await live.payments.create({ amountInCents: 4_200, method: 'credit_card', cardToken: await token(ADYEN_TEST_CARDS.threeDs), returnUrl });
      assert.equal(created.returnUrl, returnUrl);
      assert.equal(live.payments.handleNextAction(created, () => assert.fail('nothing to do yet')), null);
      const waiting = await live.payments.waitForOutcome(created.id, { intervalMs: 50 });
      assert.equal(waiting.status, 'requires_action');
      let sentTo = '';
      const action: PaymentNextAction | null = live.payments.handleNextAction(waiting, (url) => { sentTo = url; });
      assert.equal(action?.type, 'redirect');
      assert.equal(action?.returnUrl, returnUrl);
      assert.equal(sentTo, waiting.nextAction?.url);
      assert.throws(() => live.payments.handleNextAction(waiting), TypeError, 'outside a browser it needs navigate');
      // The buyer at the bank: passes the challenge, comes back through the server to the returnUrl.
      const bank = await fetch(`${sentTo}/done?result=Y`, { redirect: 'manual' });
      assert.equal(bank.status, 302);
      const back = await fetch(bank.headers.get('location')!, { redirect: 'manual' });
      assert.equal(back.status, 303);
      const landed = back.headers.get('location')!;
      assert.ok(landed.startsWith(`${returnUrl}?`), landed);
      const returned = await live.payments.retrieveReturned(landed);
      assert.equal(returned.id, created.id);
      assert.equal(returned.status, 'approved');
      assert.equal(returned.nextAction, null);
      assert.throws(() => live.payments.retrieveReturned('https://loja.example/retorno?status=approved'), TypeError);
      await adyen.idle();
    });

    test('capture: a payment that is not requires_capture is refused (409); capture is null with automatic captures', async () => {
      const p = await live.payments.waitForOutcome((await live.payments.create({ amountInCents: 1_000, method: 'credit_card', cardToken: await token(ADYEN_TEST_CARDS.approved) })).id, { intervalMs: 50 });
      assert.equal(p.status, 'approved');
      assert.equal(p.capture, null);
      await assert.rejects(live.payments.capture(p.id), (e: unknown) => e instanceof InvalidStateError && e.status === 409);
      await adyen.idle();
    });
  });
}

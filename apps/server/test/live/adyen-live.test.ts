import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startApp, signup, auth, adminSession, eventually } from '../helpers.js';
import { createKey } from '../../src/modules/accounts/service.js';
import { newId } from '../../src/domain/ids.js';
import { newMasterKey, parseKeyring } from '../../src/providers/secrets/envelope.js';

// The card flow against Adyen's test environment (docs/providers.md, "Tests and the homologation
// run"), when an API credential of a test merchant account is in the environment. Skipped
// otherwise, and never part of `npm test` or CI (this folder is outside test/*.test.ts).
//
// Card data: Adyen's test environment takes the card fields unencrypted behind a `test_` prefix
// (`encryptedCardNumber: "test_4111111111111111"`), which only a browser-side encryption would
// otherwise make; /v1/tokens refuses values that short (they are never Adyen's real
// ciphertext), so the token row is written here as /v1/tokens writes it, and everything else goes
// through our HTTP API and the confirmation job: /payments with our idempotency key, approved;
// a refund received at Adyen; a 3-D Secure card asking for the buyer (requires_action).
const env = process.env;
const ready = Boolean(env.ADYEN_TEST_API_KEY && env.ADYEN_TEST_MERCHANT_ACCOUNT);

test('Adyen test environment: a live card payment authorized, refunded (received), and a 3-D Secure card asking for its buyer', { skip: ready ? false : 'set ADYEN_TEST_API_KEY and ADYEN_TEST_MERCHANT_ACCOUNT to run' }, async () => {
  const t = await startApp('sqlite', { masterKeys: parseKeyring(newMasterKey('adyen-test')), publicUrl: env.ADYEN_TEST_PUBLIC_URL ?? 'https://example.invalid' });
  try {
    const k = await signup(t, 'Homologação cartões');
    await t.store.write((tx) => tx.updateTable('accounts').set({ live_enabled: 1 }).where('id', '=', k.accountId).execute());
    const live = (await createKey(t.store, k.accountId, 'secret', true)).key;
    const s = await adminSession(t);
    const created = await t.app.inject({ method: 'POST', url: '/admin/connector-accounts/adyen', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf }, payload: {
      name: 'Adyen (ambiente de teste)', connector: 'adyen', method: 'card', environment: 'production', ownerAccountId: k.accountId,
      baseUrl: env.ADYEN_TEST_BASE_URL ?? 'https://checkout-test.adyen.com/v71', merchantAccount: env.ADYEN_TEST_MERCHANT_ACCOUNT,
      apiKey: env.ADYEN_TEST_API_KEY, hmacKey: env.ADYEN_TEST_HMAC_KEY ?? randomBytes(32).toString('hex'), timeoutMs: 20_000, reason: 'Adyen test run',
    } });
    assert.equal(created.statusCode, 200, created.body);
    const token = async (number: string) => {
      const nowMs = t.store.clock.nowMs();
      const id = newId('token', nowMs);
      const fields = { type: 'scheme', encryptedCardNumber: `test_${number}`, encryptedExpiryMonth: 'test_03', encryptedExpiryYear: 'test_2030', encryptedSecurityCode: 'test_737', holderName: 'Teste Adyen' };
      await t.store.write((tx) => tx.insertInto('card_tokens').values({
        id, account_id: k.accountId, livemode: 1, brand: 'visa', last4: number.slice(-4), exp_month: 3, exp_year: 2030, test_outcome: 'approve', used_at: null, created_at: new Date(nowMs).toISOString(), acquirer_data: JSON.stringify(fields),
      }).execute());
      return id;
    };
    const pay = async (number: string) => {
      const res = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(live), payload: { amount: 1_000, method: 'credit_card', cardToken: await token(number), returnUrl: 'https://loja.example/retorno' } });
      assert.equal(res.statusCode, 200, res.body);
      // Waits for I/O: the worker's calls to Adyen's test environment over HTTPS.
      return eventually(async () => {
        const p = (await t.app.inject({ method: 'GET', url: `/v1/payments/${res.json().id}`, headers: auth(live) })).json();
        return p.status !== 'pending' && p;
      }, 'Adyen decided', 60_000);
    };

    const approved = await pay('4111111111111111');
    assert.equal(approved.status, 'approved', JSON.stringify(approved));
    const refund = await t.app.inject({ method: 'POST', url: '/v1/refunds', headers: auth(live), payload: { paymentId: approved.id, amount: 400 } });
    assert.equal(refund.statusCode, 200, refund.body);
    // Waits for I/O: the worker's calls to Adyen's test environment over HTTPS.
    await eventually(async () => (await t.store.db.selectFrom('refunds').select('provider_refund_id').where('id', '=', refund.json().id).executeTakeFirstOrThrow()).provider_refund_id, 'refund received at Adyen', 60_000);

    // Adyen's 3-D Secure 2 test card: a challenge, through a redirect to Adyen's test pages.
    const challenged = await pay(env.ADYEN_TEST_3DS_CARD ?? '4917610000000000');
    assert.equal(challenged.status, 'requires_action', JSON.stringify(challenged));
    assert.equal(challenged.nextAction.type, 'redirect');
    assert.match(challenged.nextAction.url, /^https:\/\//);
    assert.equal(challenged.nextAction.returnUrl, 'https://loja.example/retorno');
  } finally {
    await t.teardown();
  }
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startApp, signup, auth, adminSession } from '../helpers.js';
import { createKey } from '../../src/modules/accounts/service.js';
import { newMasterKey, parseKeyring } from '../../src/providers/secrets/envelope.js';

// The homologation smoke run (docs/providers.md): the live Pix create path against Efí's
// homologation environment, when its credentials are in the environment. Skipped otherwise, and
// never part of `npm test` or CI (this folder is outside test/*.test.ts).
const env = process.env;
const ready = Boolean(env.EFI_HOMOLOG_CLIENT_ID && env.EFI_HOMOLOG_CLIENT_SECRET && env.EFI_HOMOLOG_P12 && env.EFI_HOMOLOG_PIX_KEY);

test('Efí homologation: token, a live Pix charge created, read back and removed', { skip: ready ? false : 'set EFI_HOMOLOG_CLIENT_ID, EFI_HOMOLOG_CLIENT_SECRET, EFI_HOMOLOG_P12, EFI_HOMOLOG_PIX_KEY to run' }, async () => {
  const t = await startApp('sqlite', { masterKeys: parseKeyring(newMasterKey('homolog')), publicUrl: 'https://example.invalid' });
  try {
    const k = await signup(t, 'Homologação');
    await t.store.write((tx) => tx.updateTable('accounts').set({ live_enabled: 1 }).where('id', '=', k.accountId).execute());
    const live = (await createKey(t.store, k.accountId, 'secret', true)).key;
    const s = await adminSession(t);
    const headers = { cookie: s.cookie, 'x-csrf-token': s.csrf };
    const created = await t.app.inject({ method: 'POST', url: '/admin/connector-accounts', headers, payload: {
      name: 'Efí homologação', connector: 'pix_api', dialect: 'efi', method: 'pix', environment: 'production', ownerAccountId: k.accountId,
      baseUrl: env.EFI_HOMOLOG_BASE_URL ?? 'https://pix-h.api.efipay.com.br', pixKey: env.EFI_HOMOLOG_PIX_KEY, clientId: env.EFI_HOMOLOG_CLIENT_ID, clientSecret: env.EFI_HOMOLOG_CLIENT_SECRET,
      pkcs12Base64: readFileSync(env.EFI_HOMOLOG_P12!).toString('base64'), pkcs12Password: env.EFI_HOMOLOG_P12_PASSWORD ?? '', timeoutMs: 15_000, reason: 'homologation smoke run',
    } });
    assert.equal(created.statusCode, 200, created.body);
    const tested = (await t.app.inject({ method: 'POST', url: `/admin/connector-accounts/${created.json().id}/test`, headers })).json();
    assert.equal(tested.token, true, tested.error);
    const payment = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(live), payload: { amount: 1, method: 'pix', pixExpiresInSeconds: 120 } });
    assert.equal(payment.statusCode, 200, payment.body);
    assert.match(payment.json().pix.copyPaste, /^000201/);
    const row = await t.store.db.selectFrom('payments').selectAll().where('id', '=', payment.json().id).executeTakeFirstOrThrow();
    const resolved = await t.paymentDeps.connectors.forAccount(t.store.db, row.connector_account_id!);
    const charge = await resolved.connector.readCharge(resolved.account, row.provider_txid!);
    assert.equal(charge.status, 'active');
    assert.equal(charge.amountCents, 1);
    const removed = await resolved.connector.removeCharge(resolved.account, row.provider_txid!);
    assert.equal(removed.status, 'removed_by_receiver');
  } finally {
    await t.teardown();
  }
});

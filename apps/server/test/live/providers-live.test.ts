import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startApp, signup, auth, adminSession } from '../helpers.js';
import { createKey } from '../../src/modules/accounts/service.js';
import { newMasterKey, parseKeyring } from '../../src/providers/secrets/envelope.js';
import { syncPayout } from '../../src/modules/settlements/pix-payouts.js';

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

// Payouts by Pix (issue 26) against Efí's homologation: the platform's Efí account (a connector
// account of no merchant, environment homologation: it serves test mode), its Pix balance read,
// a settlement run that sends R$ 0,01-10,00 (paid in homologation) to a recipient's Pix key,
// then read back until REALIZADO (no webhook reaches a test machine: the reconciliation's read
// finishes it). Needs, besides the variables above, EFI_HOMOLOG_PAYEE_KEY (a Pix key Efí's
// homologation pays to; EFI_HOMOLOG_PAYEE_KEY_TYPE, default `email`) and
// EFI_HOMOLOG_PAYEE_CNPJ (the key holder's CNPJ, sent as favorecido.cnpj and checked by Efí).
const payoutReady = ready && Boolean(env.EFI_HOMOLOG_PAYEE_KEY && env.EFI_HOMOLOG_PAYEE_CNPJ);

test('Efí homologation: balance read, a settlement paid out by Pix (REALIZADO), its end-to-end id on the daily statement', {
  skip: payoutReady ? false : 'set the EFI_HOMOLOG_* variables above and EFI_HOMOLOG_PAYEE_KEY, EFI_HOMOLOG_PAYEE_CNPJ to run',
}, async () => {
  const t = await startApp('sqlite', { masterKeys: parseKeyring(newMasterKey('homolog-payout')), publicUrl: 'https://example.invalid', payoutIntervalMs: 1000 });
  try {
    const k = await signup(t, 'Homologação repasse');
    const s = await adminSession(t);
    const headers = { cookie: s.cookie, 'x-csrf-token': s.csrf };
    const created = await t.app.inject({ method: 'POST', url: '/admin/connector-accounts', headers, payload: {
      name: 'Efí homologação (repasses)', connector: 'pix_api', dialect: 'efi', method: 'pix', environment: 'homologation',
      baseUrl: env.EFI_HOMOLOG_BASE_URL ?? 'https://pix-h.api.efipay.com.br', pixKey: env.EFI_HOMOLOG_PIX_KEY, clientId: env.EFI_HOMOLOG_CLIENT_ID, clientSecret: env.EFI_HOMOLOG_CLIENT_SECRET,
      pkcs12Base64: readFileSync(env.EFI_HOMOLOG_P12!).toString('base64'), pkcs12Password: env.EFI_HOMOLOG_P12_PASSWORD ?? '', timeoutMs: 15_000, reason: 'homologation payout run',
    } });
    assert.equal(created.statusCode, 200, created.body);
    const payout = await t.paymentDeps.connectors.resolvePayout(t.store.db, false);
    assert.ok(payout, 'the platform\'s Efí account pays out test mode');
    const balance = await payout.connector.balance(payout.account);
    assert.ok(Number.isSafeInteger(balance) && balance >= 0, `GET /v2/gn/saldo: ${balance}`);
    assert.ok(balance >= 123, 'the homologation balance covers R$ 1,23');

    // A recipient owed exactly R$ 1,23 of a card sale (sandbox card, available at once).
    const api = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => t.app.inject({ method, url, headers: auth(k.secretKey), ...(payload ? { payload } : {}) });
    const rcp = await api('POST', '/v1/recipients', {
      name: 'Favorecido homologação', document: env.EFI_HOMOLOG_PAYEE_CNPJ, bankAccount: { bankCode: '364', agency: '0001', account: '1-1', accountType: 'payment' },
      pixKey: { type: env.EFI_HOMOLOG_PAYEE_KEY_TYPE ?? 'email', key: env.EFI_HOMOLOG_PAYEE_KEY },
    });
    assert.equal(rcp.statusCode, 200, rcp.body);
    const delays = await t.app.inject({ method: 'PATCH', url: `/admin/accounts/${k.accountId}/settings`, headers, payload: { settlementDelayDays: { credit_card: 0 } } });
    assert.equal(delays.statusCode, 200, delays.body);
    const rule = await t.app.inject({ method: 'POST', url: '/admin/split-rules', headers, payload: { accountId: k.accountId, livemode: false, priority: 1, active: true, splits: [{ recipientId: rcp.json().id, amount: 123 }], reason: 'homologation payout' } });
    assert.equal(rule.statusCode, 200, rule.body);
    const sale = await api('POST', '/v1/payments', { amountInCents: 1000, method: 'credit_card', cardToken: 'tok_visa' });
    assert.equal(sale.statusCode, 200, sale.body);
    const until = async <T>(what: string, check: () => Promise<T | null | undefined | false>, ms = 120_000): Promise<T> => {
      const end = Date.now() + ms;
      for (;;) {
        const v = await check();
        if (v) return v;
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    };
    await until('the sale approved', async () => (await api('GET', `/v1/payments/${sale.json().id}`)).json().status === 'approved');
    const run = await t.app.inject({ method: 'POST', url: '/admin/settlement-runs', headers, payload: { reason: 'homologation payout run' } });
    assert.equal(run.statusCode, 200, run.body);
    const sent = await until('the payout sent', async () => {
      const list = (await api('GET', `/v1/settlements?recipientId=${rcp.json().id}`)).json().data as Array<{ id: string; status: string; failureReason: string | null; payout: { reference: string } | null }>;
      const st = list[0];
      if (st?.status === 'failed') throw new Error(`refused: ${st.failureReason}`);
      return st?.status === 'processing' || st?.status === 'paid' ? st : null;
    });
    const done = await until('REALIZADO, read back', async () => {
      await syncPayout({ store: t.store, connectors: t.paymentDeps.connectors, config: t.config }, sent.id);
      const st = (await api('GET', `/v1/settlements/${sent.id}`)).json();
      if (st.status === 'failed') throw new Error(`NAO_REALIZADO: ${st.failureCode} ${st.failureReason}`);
      return st.status === 'paid' ? st : null;
    }, 300_000);
    assert.match(done.payout.endToEndId, /^E[0-9A-Za-z]{31}$/);
    const statement = (await api('GET', `/v1/settlements/daily-statement?recipientId=${rcp.json().id}&date=${new Date(Date.parse(done.paidAt) - 3 * 3600_000).toISOString().slice(0, 10)}`)).json();
    assert.deepEqual(statement.data.map((i: { endToEndId: string }) => i.endToEndId), [done.payout.endToEndId]);
    assert.equal(statement.total, 123);
  } finally {
    await t.teardown();
  }
});

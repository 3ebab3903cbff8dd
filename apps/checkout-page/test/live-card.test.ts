// The hosted checkout page in live mode, with an Adyen card connector account, in a real headless
// Chromium against the fake Adyen (apps/server/test/fakes/fake-adyen.ts). The account's
// clientOrigin is the fake's loopback origin: the page loads "Adyen Web" from there (the fake
// serves a stand-in with its interface), and the page's CSP allows exactly that origin, in live
// mode only. A card that needs 3-D Secure goes to the issuer's challenge page (the fake's), and
// comes back through our return route: passed, the payment is approved; failed, declined. Every
// request the page makes goes to the instance or the acquirer's origin, and no card number
// reaches the instance.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { adminSession, auth, ENGINES, eventually, signup, startApp, type Keys, type TestApp } from '../../server/test/helpers.js';
import { ADYEN_TEST_CARDS, startFakeAdyen, type FakeAdyen } from '../../server/test/fakes/fake-adyen.js';
import { createKey } from '../../server/src/modules/accounts/service.js';
import { newMasterKey, parseKeyring } from '../../server/src/providers/secrets/envelope.js';
import { openAccount } from '../../server/src/providers/accounts.js';
import type { CardSecrets, CardSettings } from '../../server/src/providers/connector.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const MISSING = existsSync(CHROMIUM) ? null : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
if (MISSING && process.env.CI) throw new Error(`${MISSING}: the live checkout browser test cannot run, and CI must run it`);
const SKIP = MISSING ? `${MISSING}: live checkout browser test skipped` : false;
if (SKIP) console.warn(SKIP);
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const WAIT_MS = 30_000;

for (const engine of ENGINES) {
  describe(`hosted checkout, live card on Adyen, in a real browser (${engine})`, { skip: SKIP }, () => {
    let t: TestApp;
    let adyen: FakeAdyen;
    let api: string; // http://localhost:<p1>, the instance
    let acquirer: string; // http://127.0.0.1:<p2>, the fake Adyen (the account's clientOrigin)
    let keys: Keys;
    let live: string;
    let browser: Browser;
    let context: BrowserContext;
    const outside: string[] = [];
    const toInstance: Array<{ url: string; body: string }> = [];
    const pageErrors: string[] = [];
    const csp: string[] = [];

    const call = async (method: 'GET' | 'POST', path: string, body?: unknown, key = live) => {
      const res = await t.app.inject({ method, url: path, headers: auth(key, method === 'POST' ? { 'idempotency-key': crypto.randomUUID() } : {}), ...(body ? { payload: body } : {}) });
      return { status: res.statusCode, body: res.json(), headers: res.headers };
    };
    const open = async (): Promise<{ page: Page; sessionId: string }> => {
      const s = await call('POST', '/v1/checkout/sessions', { amount: 15_990, description: 'Tênis de corrida', methods: ['credit_card'], installments: 3 });
      assert.equal(s.status, 200, JSON.stringify(s.body));
      const page = await context.newPage();
      page.on('pageerror', (e) => pageErrors.push(e.message));
      page.on('request', (r) => {
        const origin = new URL(r.url()).origin;
        if (origin === api) toInstance.push({ url: r.url(), body: r.postData() ?? '' });
        else if (origin !== acquirer) outside.push(r.url());
      });
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) csp.push(m.text());
      });
      await page.goto(`${api}/checkout/${s.body.id}#${s.body.clientSecret}`);
      return { page, sessionId: s.body.id };
    };
    const fill = async (page: Page, number: string) => {
      await page.getByLabel('Número do cartão').fill(number);
      await page.getByLabel('Data de validade (MM/AA)').fill('03/30');
      await page.getByLabel('Código de segurança').fill('737');
      await page.getByLabel('Nome impresso no cartão').fill('Maria da Silva');
    };
    const paymentOf = async (sessionId: string) => {
      const s = await call('GET', `/v1/checkout/sessions/${sessionId}`);
      assert.equal(s.status, 200, JSON.stringify(s.body));
      const id = s.body.paymentId as string;
      return (await call('GET', `/v1/payments/${id}`)).body as { id: string; status: string; returnUrl: string | null; card: { last4: string } | null };
    };

    before(async () => {
      adyen = await startFakeAdyen();
      acquirer = new URL(adyen.baseUrl).origin;
      t = await startApp(engine, { masterKeys: parseKeyring(newMasterKey('run')) });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      api = `http://localhost:${(t.app.server.address() as AddressInfo).port}`;
      t.config.publicUrl = api;
      keys = await signup(t, 'Loja de Corrida');
      await t.store.write((tx) => tx.updateTable('accounts').set({ live_enabled: 1 }).where('id', '=', keys.accountId).execute());
      live = (await createKey(t.store, keys.accountId, 'secret', true)).key;
      const admin = await adminSession(t);
      const created = await t.app.inject({
        method: 'POST', url: '/admin/connector-accounts/adyen', headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf },
        payload: {
          name: 'Adyen produção', connector: 'adyen', method: 'card', environment: 'production', baseUrl: adyen.baseUrl, merchantAccount: adyen.merchantAccount,
          clientKey: adyen.clientKey.replace(/^test_/, 'live_'), clientOrigin: acquirer, apiKey: adyen.apiKey, hmacKey: adyen.hmacKey, timeoutMs: 3000, reason: 'cards live',
        },
      });
      assert.equal(created.statusCode, 200, created.body);
      assert.equal(created.json().clientOrigin, acquirer);
      const row = await t.store.db.selectFrom('connector_accounts').selectAll().where('id', '=', created.json().id).executeTakeFirstOrThrow();
      adyen.setWebhook(`${api}/v1/provider-callbacks/${openAccount<CardSettings, CardSecrets>(t.config.masterKeys, row).secrets.webhookToken}/adyen`);
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
      context = await browser.newContext({ locale: 'pt-BR' });
      context.setDefaultTimeout(WAIT_MS);
    });

    after(async () => {
      await browser?.close();
      await adyen?.close();
      t?.app.server.closeAllConnections();
      await t?.teardown();
      assert.deepEqual(outside, [], 'no request outside the instance and the acquirer\'s origin');
      assert.deepEqual(pageErrors, [], 'no script error');
      assert.deepEqual(csp, [], 'no CSP violation');
      assert.deepEqual(adyen?.contractViolations ?? [], [], 'every call to the fake kept Adyen\'s contract');
    });

    test('the live page\'s CSP allows exactly the acquirer\'s origin; a test-mode page\'s allows none', async () => {
      const s = await call('POST', '/v1/checkout/sessions', { amount: 1_000, methods: ['credit_card'] });
      const page = await t.app.inject({ method: 'GET', url: `/checkout/${s.body.id}` });
      const policy = String(page.headers['content-security-policy']);
      const directive = (name: string) => policy.split('; ').find((d) => d.startsWith(`${name} `))?.split(' ').slice(1) ?? [];
      assert.deepEqual(directive('script-src'), ["'self'", acquirer]);
      assert.deepEqual(directive('connect-src'), ["'self'", acquirer]);
      assert.deepEqual(directive('frame-src'), [acquirer]);
      assert.deepEqual(directive('form-action'), ["'self'"]);
      const sandbox = await call('POST', '/v1/checkout/sessions', { amount: 1_000, methods: ['credit_card'] }, keys.secretKey);
      const sandboxPolicy = String((await t.app.inject({ method: 'GET', url: `/checkout/${sandbox.body.id}` })).headers['content-security-policy']);
      assert.ok(!sandboxPolicy.includes(acquirer), sandboxPolicy);
      assert.ok(!/frame-src/.test(sandboxPolicy), sandboxPolicy);
      const client = await t.app.inject({ method: 'GET', url: `/v1/checkout/sessions/${sandbox.body.id}/client`, headers: auth(sandbox.body.clientSecret) });
      assert.equal(client.json().cardEncryption, null, 'the sandbox page encrypts nothing and loads nothing from outside');
    });

    test('3-D Secure challenge passed: the bank\'s page, back to the checkout, approved; the card fields were encrypted in the browser and no card number reached the instance', async () => {
      const { page, sessionId } = await open();
      await page.getByLabel('Número do cartão').waitFor();
      assert.ok(adyen.browserRequests.some((p) => /^\/checkoutshopper\/sdk\/[0-9.]+\/adyen\.js$/.test(p)), 'Adyen Web loaded from the acquirer\'s origin');
      await fill(page, ADYEN_TEST_CARDS.threeDs);
      // axe on the live form (pt-BR).
      await page.evaluate(AXE);
      const violations = await page.evaluate(async () => {
        const result = await (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: Array<{ id: string; impact: string }> }> } }).axe.run(document, { resultTypes: ['violations'] });
        return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
      });
      assert.deepEqual(violations, [], 'axe on the live card form');
      await page.getByRole('button', { name: /Pagar/ }).click();
      await page.waitForURL((u) => u.pathname.includes('/threeds2/challenge/'));
      assert.equal(new URL(page.url()).origin, acquirer, 'the issuer\'s page (the fake\'s)');
      await page.getByRole('button', { name: 'Autenticar' }).click();
      await page.waitForURL((u) => u.origin === api && u.pathname === `/checkout/${sessionId}`);
      await page.getByRole('heading', { name: 'Pagamento aprovado' }).waitFor();
      const p = await paymentOf(sessionId);
      assert.equal(p.status, 'approved');
      assert.equal(p.card?.last4, '0006');
      assert.equal(p.returnUrl, `${api}/checkout/${sessionId}`);
      // What the instance received: the token request carries only encrypted fields.
      const tokenCall = toInstance.find((r) => r.url.endsWith('/v1/tokens'));
      assert.ok(tokenCall, 'the page tokenized');
      const sent = JSON.parse(tokenCall.body) as { card?: unknown; encryptedCard?: Record<string, unknown> };
      assert.equal(sent.card, undefined);
      assert.match(String(sent.encryptedCard?.encryptedCardNumber), /^adyenjs_/);
      for (const r of toInstance) {
        assert.ok(!r.body.replace(/[\s.-]/g, '').includes(ADYEN_TEST_CARDS.threeDs), `no card number in ${r.url}`);
        assert.ok(!/"(number|cvc)"/.test(r.body), `no clear card field in ${r.url}`);
      }
      await page.close();
    });

    test('3-D Secure challenge failed: back to the checkout, declined, the form again', async () => {
      const { page, sessionId } = await open();
      await fill(page, ADYEN_TEST_CARDS.threeDs);
      await page.getByRole('button', { name: /Pagar/ }).click();
      await page.waitForURL((u) => u.pathname.includes('/threeds2/challenge/'));
      await page.getByRole('button', { name: 'Recusar' }).click();
      await page.waitForURL((u) => u.origin === api && u.pathname === `/checkout/${sessionId}`);
      await page.getByText('Pagamento recusado. Confira os dados ou tente outro cartão.').first().waitFor();
      assert.equal((await paymentOf(sessionId)).status, 'declined');
      // The buyer may try again on the same page: the secure fields are back.
      await page.getByLabel('Número do cartão').waitFor();
      await page.close();
    });

    test('a card without 3-D Secure is approved on the page itself', async () => {
      const { page, sessionId } = await open();
      await fill(page, ADYEN_TEST_CARDS.approved);
      await page.getByRole('button', { name: /Pagar/ }).click();
      await page.getByRole('heading', { name: 'Pagamento aprovado' }).waitFor();
      // Waits for I/O: the browser, and the worker's calls to the fake Adyen.
      await eventually(async () => (await paymentOf(sessionId)).status === 'approved', 'approved');
      await page.close();
    });
  });
}

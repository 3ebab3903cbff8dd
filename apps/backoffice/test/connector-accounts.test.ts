import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ENGINES, startApp, signup, type TestApp, type Keys } from '../../server/test/helpers.js';
import { toPkcs12 } from '../../server/test/connector-certs.js';
import { startFakePixPsp, type FakePixPsp } from '../../server/test/fakes/fake-pix-psp.js';
import { createAdminUser } from '../../server/src/modules/admin/index.js';
import { newMasterKey, parseKeyring } from '../../server/src/providers/secrets/envelope.js';
import { pixReconcileJob } from '../../server/src/modules/payments/live-pix.js';

// The back office's connector-account screens (issue 25) in a real headless Chromium, against a
// real server and the fake PSP (mutual TLS, the API Pix contract): a merchant's connectors listed
// with the platform's, one created through the form (a .p12 and the PSP's CA uploaded, the
// client secret typed once and never shown again: only the certificate's fingerprint), its
// health (test connection: the missing webhook named, then all good once registered), secrets
// rotated, a Pix that matches no payment shown to operators, disabled with the keyboard and a
// reason; the viewer sees and tests but changes
// nothing; axe-core on every screen; no script error and no CSP violation.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SKIP = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM}: connector-account browser test skipped`;
if (SKIP) console.warn(SKIP);
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PASSWORD = 'a long enough passphrase';

for (const engine of ENGINES) {
  describe(`back office: connector accounts (${engine})`, { skip: SKIP }, () => {
    let t: TestApp;
    let k: Keys;
    let psp: FakePixPsp;
    let origin: string;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let connectorId = '';
    const pageErrors: string[] = [];
    const adminEmail = `ops-cna-${engine}@example.com`;
    const viewerEmail = `viewer-cna-${engine}@example.com`;

    const axe = async (p: Page, screen: string) => {
      await p.evaluate(AXE);
      const violations = await p.evaluate(async () => {
        const result = await (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }> }> } }).axe.run(document, { resultTypes: ['violations'] });
        return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
      });
      assert.deepEqual(violations, [], `axe on ${screen}`);
    };
    const settled = async (p: Page) => {
      await p.locator('h1').first().waitFor();
      await p.waitForFunction(() => !document.querySelector('[role="status"]')?.textContent?.match(/Carregando|Loading/));
    };
    const goto = async (p: Page, path: string) => {
      await p.goto(`${origin}/backoffice${path}`);
      await settled(p);
    };
    const newPage = async (ctx: BrowserContext) => {
      const p = await ctx.newPage();
      p.on('pageerror', (e) => pageErrors.push(e.message));
      await p.addInitScript(() => {
        const w = window as unknown as { __csp: string[] };
        w.__csp = [];
        document.addEventListener('securitypolicyviolation', (e) => w.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
      });
      return p;
    };
    const signIn = async (p: Page, email: string, path: string) => {
      await p.goto(`${origin}/backoffice${path}`);
      await p.getByLabel('E-mail').fill(email);
      await p.getByLabel('Senha').fill(PASSWORD);
      await p.getByLabel('Senha').press('Enter');
      await p.locator('header.top').waitFor();
      await settled(p);
    };
    const focusedId = (p: Page) => p.evaluate(() => document.activeElement?.id ?? null);

    before(async () => {
      psp = await startFakePixPsp();
      t = await startApp(engine, { masterKeys: parseKeyring(newMasterKey('bo')), publicUrl: 'https://pagamentos.example' });
      k = await signup(t, `Loja Conectada ${engine}`);
      await createAdminUser(t.store, adminEmail, PASSWORD);
      await createAdminUser(t.store, viewerEmail, PASSWORD, 'viewer');
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
      context = await browser.newContext({ locale: 'pt-BR', viewport: { width: 1280, height: 900 } });
      context.setDefaultTimeout(30_000);
      page = await newPage(context);
    });
    after(async () => {
      await browser?.close();
      await t?.teardown();
      await psp?.close();
    });

    test('a merchant without connectors: the tab says live Pix is refused; the form refuses empty fields on the field itself', async () => {
      await signIn(page, adminEmail, `/accounts/${k.accountId}/connectors`);
      assert.equal(await page.locator('h1').textContent(), 'Conectores deste lojista');
      await page.getByText('Nenhum conector. Sem um conector de produção, pagamentos Pix live são recusados.').waitFor();
      await axe(page, 'merchant connectors (empty)');
      await page.getByRole('link', { name: 'Novo conector do lojista' }).click();
      await settled(page);
      await page.getByRole('button', { name: 'Criar conector' }).click();
      await page.locator('#connector-name-error', { hasText: 'Campo obrigatório.' }).waitFor();
      assert.equal(await focusedId(page), 'connector-name', 'the focus goes to the first field to fix');
      await axe(page, 'connector form with errors');
    });

    test('create one: a .p12 and the PSP\'s CA uploaded, the secret typed once; the detail shows only the fingerprint', async () => {
      const p12 = toPkcs12({ certificatePem: psp.client.cert, privateKeyPem: psp.client.key }, 'senha-p12');
      await page.getByLabel('Nome').fill('PSP homologado');
      await page.getByLabel('Ambiente').selectOption('production');
      await page.getByLabel('Dialeto da API Pix').selectOption('standard');
      await page.getByLabel('URL base da API Pix').fill(psp.baseUrl);
      await page.getByLabel('URL do token OAuth2 (opcional)').fill(psp.tokenUrl);
      await page.getByLabel('Chave Pix do recebedor').fill(psp.chaves[0]);
      await page.getByLabel('Tempo limite por chamada (ms) (opcional)').fill('3000');
      await page.getByLabel('Client ID').fill(psp.client.clientId);
      await page.getByLabel('Client secret').fill(psp.client.clientSecret);
      await page.getByLabel('Arquivo do certificado (.p12)').setInputFiles({ name: 'producao.p12', mimeType: 'application/x-pkcs12', buffer: Buffer.from(p12, 'base64') });
      await page.getByLabel('Senha do .p12').fill('senha-p12');
      await page.getByLabel('CA do servidor do PSP (PEM) (opcional)').setInputFiles({ name: 'psp-ca.pem', mimeType: 'application/x-pem-file', buffer: Buffer.from(psp.client.ca ?? '') });
      await page.getByLabel('Motivo').fill('entrando em produção (chamado 12)');
      await axe(page, 'connector form filled');
      const answered = page.waitForResponse((r) => r.url().endsWith('/admin/connector-accounts') && r.request().method() === 'POST');
      await page.getByRole('button', { name: 'Criar conector' }).click();
      assert.equal((await answered).status(), 200);
      await page.getByText('Conector criado. Os segredos foram guardados cifrados e não serão exibidos novamente.').waitFor();
      await settled(page);
      assert.equal(await page.locator('h1').textContent(), 'PSP homologado');
      connectorId = (await page.locator('[data-connector]').getAttribute('data-connector')) ?? '';
      assert.match(connectorId, /^cna_/);
      const body = (await page.locator('body').textContent()) ?? '';
      assert.ok(!body.includes(psp.client.clientSecret), 'the client secret is never shown');
      assert.ok(!body.includes('PRIVATE KEY') && !body.includes('BEGIN CERTIFICATE'));
      const row = await t.store.db.selectFrom('connector_accounts').selectAll().where('id', '=', connectorId).executeTakeFirstOrThrow();
      assert.equal(row.owner_account_id, k.accountId, 'made from the merchant\'s tab: the merchant\'s own');
      assert.equal(await page.locator('[data-fingerprint]').textContent(), row.certificate_fingerprint, 'the certificate\'s fingerprint, converted from the .p12 on the server');
      await page.locator('[data-secrets]', { hasText: 'Guardado' }).waitFor();
      await axe(page, 'connector detail');
    });

    test('health: test connection names the missing webhook; registered with a reason, the test says all good', async () => {
      await page.getByRole('button', { name: 'Testar conexão' }).click();
      await page.locator('[data-test-result] [data-ok="false"]').waitFor();
      assert.match((await page.locator('[data-last-error]').textContent()) ?? '', /No webhook is registered/);
      await axe(page, 'connector health with a problem');
      await page.getByRole('button', { name: 'Registrar webhook' }).click();
      await page.getByRole('dialog').waitFor();
      await axe(page, 'register webhook dialog');
      await page.getByRole('dialog').getByLabel('Motivo').fill('receber as notificações do PSP');
      await page.getByRole('dialog').getByRole('button', { name: 'Registrar webhook' }).click();
      await page.getByText('Webhook registrado no PSP.').waitFor();
      assert.ok(psp.webhooks.get(psp.chaves[0])?.webhookUrl.startsWith('https://pagamentos.example/v1/provider-callbacks/'), 'our callback URL at the PSP');
      await page.getByRole('button', { name: 'Testar conexão' }).click();
      await page.locator('[data-test-result] [data-ok="true"]').waitFor();
      assert.equal(await page.locator('[data-last-error]').count(), 0);
    });

    test('the merchant\'s tab lists it as in use; settings edited and secrets rotated, with reasons, keep it working', async () => {
      await goto(page, `/accounts/${k.accountId}/connectors`);
      const row = page.locator(`tr[data-connector-id="${connectorId}"]`);
      await row.locator('[data-in-use]').waitFor();
      assert.match((await row.textContent()) ?? '', /Este lojista/);
      assert.match((await row.textContent()) ?? '', /Produção/);
      await axe(page, 'merchant connectors');
      await row.getByRole('link', { name: 'PSP homologado' }).click();
      await settled(page);
      await page.getByRole('button', { name: 'Editar configurações' }).click();
      await page.getByRole('dialog').waitFor();
      await page.getByRole('dialog').getByLabel('Tempo limite por chamada (ms)').fill('4000');
      await page.getByRole('dialog').getByLabel('Motivo').fill('PSP lento no fim do mês');
      await axe(page, 'edit settings dialog');
      await page.getByRole('dialog').getByRole('button', { name: 'Salvar' }).click();
      await page.getByText('Configurações salvas.').waitFor();
      await page.locator('[data-connector]', { hasText: '4000 ms' }).waitFor();
      await page.getByRole('button', { name: 'Trocar segredos' }).click();
      await page.getByRole('dialog').waitFor();
      await axe(page, 'rotate dialog');
      await page.getByRole('dialog').getByLabel('Client secret (opcional)').fill(psp.client.clientSecret);
      await page.getByRole('dialog').getByLabel('Motivo').fill('rotação anual');
      await page.getByRole('dialog').getByRole('button', { name: 'Trocar segredos' }).click();
      await page.getByText('Segredos trocados.').waitFor();
      await page.getByRole('button', { name: 'Testar conexão' }).click();
      await page.locator('[data-test-result] [data-ok="true"]').waitFor();
      const audit = await t.store.db.selectFrom('admin_audit_log').select(['action', 'reason']).where('object_id', '=', connectorId).orderBy('created_at').execute();
      assert.deepEqual(audit.map((a) => a.action), ['connector_account.create', 'connector_account.register_webhook', 'connector_account.update', 'connector_account.rotate']);
      assert.equal(audit[0].reason, 'entrando em produção (chamado 12)');
    });

    test('a Pix that matches no payment, found by reconciliation, is shown to operators', async () => {
      psp.holdCallbacks(); // its callback would go to https://pagamentos.example: lost, as reconciliation expects
      await psp.receivePix({ valor: '7.77', txid: 'semcobranca00000000000000001' });
      psp.discardHeldCallbacks();
      await pixReconcileJob(t.paymentDeps, t.app.log);
      await goto(page, '/connector-accounts');
      await page.getByRole('link', { name: /^Pix recebidos nos PSPs/ }).click();
      await settled(page);
      const row = page.locator('tr[data-status="unmatched"]', { hasText: 'semcobranca00000000000000001' });
      await row.waitFor();
      assert.match((await row.textContent()) ?? '', /R\$\s7,77/);
      assert.match((await row.textContent()) ?? '', /Sem pagamento/);
      await axe(page, 'pix received');
    });

        test('the viewer sees and tests, and changes nothing: no create link, no actions', async () => {
      const viewerContext = await browser.newContext({ locale: 'pt-BR' });
      try {
        const v = await newPage(viewerContext);
        await signIn(v, viewerEmail, `/accounts/${k.accountId}/connectors`);
        await v.locator(`tr[data-connector-id="${connectorId}"]`).waitFor();
        assert.equal(await v.getByRole('link', { name: 'Novo conector do lojista' }).count(), 0);
        await goto(v, `/connector-accounts/${connectorId}`);
        assert.equal(await v.getByRole('button', { name: 'Desativar' }).count(), 0);
        assert.equal(await v.getByRole('button', { name: 'Trocar segredos' }).count(), 0);
        await v.getByRole('button', { name: 'Testar conexão' }).click();
        await v.locator('[data-test-result] [data-ok="true"]').waitFor();
        await axe(v, 'connector detail (viewer)');
        await goto(v, `/accounts/${k.accountId}/connectors/new`);
        assert.equal(await v.locator('h1').textContent(), 'Página não encontrada.');
      } finally {
        await viewerContext.close();
      }
    });

    test('disable with the keyboard alone, with a reason; it takes no new live payment', async () => {
      await goto(page, `/connector-accounts/${connectorId}`);
      await page.getByRole('button', { name: 'Desativar' }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('dialog').waitFor();
      await axe(page, 'disable dialog');
      assert.equal(await focusedId(page), 'confirm-reason', 'the focus is in the dialog, on the reason');
      await page.keyboard.type('mudando de PSP');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Desativar');
      await page.keyboard.press('Enter');
      await page.getByText('Conector desativado.').waitFor();
      await page.locator('[data-connector] .badge-disabled').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Registrar webhook' }).count(), 0);
      assert.equal((await t.store.db.selectFrom('connector_accounts').select('status').where('id', '=', connectorId).executeTakeFirstOrThrow()).status, 'disabled');
      await axe(page, 'disabled connector');
    });

    test('in English too; no script error, no CSP violation', async () => {
      await goto(page, '/connector-accounts');
      await page.getByRole('button', { name: 'Switch to English' }).click();
      await page.getByRole('heading', { name: 'Payment connectors (PSP)' }).waitFor();
      await page.locator(`tr[data-connector-id="${connectorId}"]`, { hasText: 'Disabled' }).waitFor();
      await axe(page, 'connectors (English)');
      await page.getByRole('button', { name: 'Mudar para português' }).click();
      assert.deepEqual(await page.evaluate(() => (window as unknown as { __csp: string[] }).__csp), []);
      assert.deepEqual(pageErrors, []);
    });

    test('an Adyen card acquirer from its form (pt-BR, keyboard): empty and malformed fields refused on the field; the detail shows the notifications URL and the HMAC key only as "Guardado"', async () => {
      const apiKey = 'AQEyhmfxLI3MaBFLw0m-segredo-de-teste';
      const hmacKey = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
      await goto(page, '/connector-accounts');
      await page.getByRole('link', { name: 'Novo adquirente Adyen (cartões)' }).click();
      await settled(page);
      assert.equal(await page.locator('h1').textContent(), 'Novo adquirente de cartões: Adyen');
      await page.getByRole('button', { name: 'Criar conector Adyen' }).focus();
      await page.keyboard.press('Enter');
      await page.locator('#adyen-name-error', { hasText: 'Campo obrigatório.' }).waitFor();
      assert.equal(await focusedId(page), 'adyen-name', 'the focus goes to the first field to fix');
      await axe(page, 'adyen form with errors');
      // Keyboard only, in focus order.
      await page.keyboard.type('Adyen homologação');
      await page.keyboard.press('Tab');
      assert.equal(await focusedId(page), 'adyen-environment');
      await page.keyboard.press('ArrowDown');
      assert.equal(await page.locator('#adyen-environment').inputValue(), 'homologation');
      await page.keyboard.press('Tab');
      await page.keyboard.type('https://checkout-test.adyen.com/v71');
      await page.keyboard.press('Tab');
      await page.keyboard.type('LojaECOM');
      await page.keyboard.press('Tab');
      await page.keyboard.type('test_CLIENTKEY123');
      await page.keyboard.press('Tab');
      assert.equal(await focusedId(page), 'adyen-clientOrigin');
      await page.keyboard.press('Tab');
      assert.equal(await focusedId(page), 'adyen-captureMode');
      await page.keyboard.press('ArrowDown');
      assert.equal(await page.locator('#adyen-captureMode').inputValue(), 'manual');
      await page.keyboard.press('Tab');
      await page.keyboard.type(apiKey);
      await page.keyboard.press('Tab');
      await page.keyboard.type('nao-e-hex');
      await page.keyboard.press('Tab');
      await page.keyboard.type('cartões em homologação');
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Criar conector Adyen');
      await page.keyboard.press('Enter');
      await page.locator('#adyen-hmacKey-error', { hasText: 'hexadecimal' }).waitFor();
      assert.equal(await focusedId(page), 'adyen-hmacKey');
      await page.keyboard.press('ControlOrMeta+a');
      await page.keyboard.type(hmacKey);
      await axe(page, 'adyen form filled');
      const answered = page.waitForResponse((r) => r.url().endsWith('/admin/connector-accounts/adyen') && r.request().method() === 'POST');
      await page.getByRole('button', { name: 'Criar conector Adyen' }).focus();
      await page.keyboard.press('Enter');
      assert.equal((await answered).status(), 200);
      await page.getByText('Conector criado. Os segredos foram guardados cifrados e não serão exibidos novamente.').waitFor();
      await settled(page);
      assert.equal(await page.locator('h1').textContent(), 'Adyen homologação');
      const adyenId = (await page.locator('[data-connector]').getAttribute('data-connector')) ?? '';
      const url = (await page.locator('[data-notification-url]').textContent()) ?? '';
      assert.match(url, /^https:\/\/pagamentos\.example\/v1\/provider-callbacks\/[A-Za-z0-9_-]+\/adyen$/);
      assert.equal(await page.locator('[data-hmac-key]').textContent(), 'Guardado');
      assert.equal(await page.locator('[data-capture-mode]').getAttribute('data-capture-mode'), 'manual');
      const body = (await page.locator('body').textContent()) ?? '';
      assert.ok(!body.includes(apiKey) && !body.toUpperCase().includes(hmacKey), 'the keys are never shown');
      assert.equal(await page.getByRole('button', { name: 'Testar conexão' }).count(), 0, 'no Pix health check for a card acquirer');
      await axe(page, 'adyen connector detail');
      const row = await t.store.db.selectFrom('connector_accounts').selectAll().where('id', '=', adyenId).executeTakeFirstOrThrow();
      assert.equal(row.connector, 'adyen');
      assert.equal(row.environment, 'homologation');
      assert.ok(!row.secrets.includes(apiKey) && !row.settings.includes(apiKey));
      const audit = await t.store.db.selectFrom('admin_audit_log').select(['action', 'reason']).where('object_id', '=', adyenId).execute();
      assert.deepEqual(audit.map((a) => [a.action, a.reason]), [['connector_account.create', 'cartões em homologação']]);
      // The list marks it in use for cards, beside the Pix connectors.
      await goto(page, '/connector-accounts');
      await page.locator(`tr[data-connector-id="${adyenId}"] [data-in-use]`).waitFor();
      assert.deepEqual(pageErrors, []);
    });
  });
}

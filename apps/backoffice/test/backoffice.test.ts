import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ENGINES, startApp, signup, auth, eventually, type TestApp, type Keys } from '../../server/test/helpers.js';
import { createAdminUser } from '../../server/src/modules/admin/index.js';
import { SANDBOX_FAILING_ACCOUNT } from '../../server/src/providers/sandbox.js';
import { applyDisputeStage } from '../../server/src/modules/disputes/service.js';

// The back office in a real headless Chromium against a real server listening on a free port:
// sign-in (with the keyboard), a split rule with a percentage and a fixed share saved and
// activated, amounts typed in the wrong notation refused, the server's preview against a real
// sale, reordering and activation with the keyboard (each with its reason, the focus kept on the
// button), deactivation, editing conditions and an active rule (with a reason), a settlement run
// with its reason, payments by id, status and date and a declined one's failure, the audit log
// with before/after laid out in a 1280 px window, a 420 px window, the viewer's view and the
// server's 403s, CSRF, session expiry, both languages (kept across a reload), axe-core on every
// screen, the CSP, and screenshots.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SKIP = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH): back office browser test skipped`;
if (SKIP) console.warn(SKIP);

// Screenshots go to docs/images/backoffice when UPDATE_SCREENSHOTS=1 (npm run screenshots), to
// a scratch folder otherwise, so a test run leaves the tree as it was.
const SHOTS = process.env.UPDATE_SCREENSHOTS === '1'
  ? fileURLToPath(new URL('../../../docs/images/backoffice/', import.meta.url))
  : fileURLToPath(new URL('../test-output/screenshots/', import.meta.url));
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PASSWORD = 'a long enough passphrase';
const WAIT_MS = 30_000;

for (const engine of ENGINES) {
  describe(`back office in a real browser (${engine})`, { skip: SKIP }, () => {
    let t: TestApp;
    let k: Keys;
    let origin: string;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let adminEmail: string;
    let viewerEmail: string;
    let seller: string;
    let platform: string;
    let firstRule: string;
    let secondRule: string;
    let failedPayout: { id: string; runId: string } | null = null;
    const foreignRequests: string[] = [];
    const pageErrors: string[] = [];
    const cspViolations: string[] = [];
    const axeScreens: string[] = [];

    const api = async (method: 'GET' | 'POST', url: string, payload?: unknown, key = k.secretKey) => {
      const res = await t.app.inject({ method, url, headers: auth(key), ...(payload === undefined ? {} : { payload: payload as object }) });
      return { status: res.statusCode, body: res.json() };
    };
    const cardSale = async (amountInCents: number) => {
      const p = await api('POST', '/v1/payments', { amountInCents, method: 'credit_card', cardToken: 'tok_visa' });
      assert.equal(p.status, 200, JSON.stringify(p.body));
      // Waits for I/O: the back office in the browser (and the server it calls).
      await eventually(async () => (await api('GET', `/v1/payments/${p.body.id}`)).body.status === 'approved', 'card approval');
      return (await api('GET', `/v1/receivables?paymentId=${p.body.id}&limit=100`)).body.data as Array<{ payee: { type: string; id: string }; amount: number; splitRuleId: string | null }>;
    };
    const asSet = (lines: Array<{ payee: string; amount: number }>) => lines.map((l) => `${l.payee}:${l.amount}`).sort();

    const newPage = async (ctx: BrowserContext): Promise<Page> => {
      const p = await ctx.newPage();
      p.on('pageerror', (e) => pageErrors.push(e.message));
      p.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
      });
      p.on('request', (r) => {
        if (new URL(r.url()).origin !== origin) foreignRequests.push(r.url());
      });
      // Content-Security-Policy violations, as the page sees them.
      await p.addInitScript(() => {
        const w = window as unknown as { __csp: string[] };
        w.__csp = [];
        document.addEventListener('securitypolicyviolation', (e) => w.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
      });
      return p;
    };
    const newContext = async (locale = 'pt-BR') => {
      const ctx = await browser.newContext({ locale, viewport: { width: 1280, height: 860 } });
      ctx.setDefaultTimeout(WAIT_MS);
      return ctx;
    };
    const goto = async (p: Page, path: string) => {
      await p.goto(`${origin}/backoffice${path}`);
      await settled(p);
    };
    // The screen is drawn: its h1 is there and nothing is still loading.
    const settled = async (p: Page) => {
      await p.locator('h1').first().waitFor();
      await p.waitForFunction(() => !document.querySelector('[role="status"]')?.textContent?.match(/Carregando|Loading/));
    };
    const heading = (p: Page) => p.locator('h1').first().textContent();

    // Zero serious or critical axe-core violations on the screen as it is now.
    const axe = async (p: Page, screen: string) => {
      await p.evaluate(AXE);
      const violations = await p.evaluate(async () => {
        const result = await (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }> }> } }).axe.run(document, { resultTypes: ['violations'] });
        return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
      });
      assert.deepEqual(violations, [], `axe on ${screen}`);
      axeScreens.push(screen);
    };
    const shot = async (p: Page, name: string) => {
      mkdirSync(SHOTS, { recursive: true });
      await p.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true });
    };
    const signInWith = async (p: Page, email: string) => {
      await p.getByLabel(/^(E-mail|Email)$/).fill(email);
      await p.getByLabel(/^(Senha|Password)$/).fill(PASSWORD);
      await p.getByRole('button', { name: /^(Entrar|Sign in)$/ }).click();
      await p.locator('header.top').waitFor();
      await settled(p);
    };
    const previewRows = async (p: Page) => p.locator('table.preview tbody tr').evaluateAll((rows) => rows.map((r) => ({ payee: (r as HTMLElement).dataset.payee as string, amount: Number((r as HTMLElement).dataset.amount) })));
    const runPreview = async (p: Page, amount: string, method: 'Cartão de crédito' | 'Pix' = 'Cartão de crédito') => {
      await p.getByLabel('Valor da venda (R$)').fill(amount);
      await p.getByLabel('Meio', { exact: true }).selectOption({ label: method });
      const answered = p.waitForResponse((r) => r.url().endsWith('/admin/split-rules/preview'));
      await p.getByRole('button', { name: 'Simular', exact: true }).click();
      assert.equal((await answered).status(), 200);
      await p.locator('.preview-result').waitFor();
      return { rule: await p.locator('[data-preview-rule]').getAttribute('data-preview-rule'), rows: await previewRows(p) };
    };
    const ruleRow = (p: Page, id: string) => p.locator(`tr[data-rule-id="${id}"]`);
    // What has the keyboard focus: its row's rule (if in the rules table), its text, and its data-move.
    const focused = (p: Page) => p.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      return { rule: el?.closest('tr')?.getAttribute('data-rule-id') ?? null, text: el?.textContent?.trim() ?? null, tag: el?.tagName ?? null, move: el?.getAttribute('data-move') ?? null };
    });
    // The page is no wider than the window (nothing runs off its right edge).
    const pageFitsWindow = (p: Page) => p.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);
    // Each <select> is wide enough for its longest option: the text measured in the select's own
    // font against its width less its padding and the arrow (1.5em).
    const selectRoom = (p: Page, selector: string) => p.locator(selector).evaluateAll((els) => els.map((el) => {
      const select = el as HTMLSelectElement;
      const style = getComputedStyle(select);
      const ctx = document.createElement('canvas').getContext('2d') as CanvasRenderingContext2D;
      ctx.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      const widest = Math.max(...Array.from(select.options, (o) => ctx.measureText(o.text).width));
      const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 1.5 * parseFloat(style.fontSize);
      return { id: select.id, fits: widest <= room, widest: Math.ceil(widest), room: Math.floor(room) };
    }));
    // A São Paulo calendar day, as the payments screen's date fields take it.
    const saoPauloDay = (iso: string, plusDays = 0) => new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo' }).format(new Date(Date.parse(iso) + plusDays * 86_400_000));
    const shownPaymentIds = (p: Page) => p.locator('tbody tr td:first-child').allTextContents();

    before(async () => {
      t = await startApp(engine);
      k = await signup(t, `Loja Exemplo ${engine}`);
      adminEmail = `ops-${engine}@example.com`;
      viewerEmail = `auditor-${engine}@example.com`;
      await createAdminUser(t.store, adminEmail, PASSWORD);
      await createAdminUser(t.store, viewerEmail, PASSWORD, 'viewer');
      const recipient = async (name: string, document: string, account = '12345-6') => {
        const r = await api('POST', '/v1/recipients', { name, document, bankAccount: { bankCode: '341', agency: '1234', account, accountType: 'checking' } });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        return r.body.id as string;
      };
      seller = await recipient('Loja do Zé LTDA', '11.222.333/0001-81');
      platform = await recipient('Plataforma SA', '12.ABC.345/01DE-35', SANDBOX_FAILING_ACCOUNT);
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
      context = await newContext();
      page = await newPage(context);
    });

    after(async () => {
      await browser?.close();
      await t?.teardown();
    });

    test('the page is served with a strict CSP and no inline script', async () => {
      const res = await fetch(`${origin}/backoffice/accounts`);
      assert.equal(res.status, 200);
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      const html = await res.text();
      assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
      assert.doesNotMatch(html, /<style|style="/, 'no inline style');
      assert.equal((await fetch(`${origin}/backoffice/assets/missing.js`)).status, 404);
      // /admin typed in the address bar lands on the back office, not on a JSON 404.
      await page.goto(`${origin}/admin`);
      await page.getByRole('heading', { name: 'Entrar no backoffice' }).waitFor();
      assert.match(new URL(page.url()).pathname, /^\/backoffice\//);
    });

    test('sign in with the keyboard alone; the page asked for is the page shown', async () => {
      await page.goto(`${origin}/backoffice/accounts`);
      await page.getByRole('heading', { name: 'Entrar no backoffice' }).waitFor();
      await axe(page, 'sign-in');
      await shot(page, 'sign-in');
      // The heading has the focus: Tab reaches the email field, then the password, Enter submits.
      await page.keyboard.press('Tab');
      await page.keyboard.type(adminEmail);
      await page.keyboard.press('Tab');
      await page.keyboard.type(PASSWORD);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Contas de lojistas' }).waitFor();
      await settled(page);
      assert.equal(new URL(page.url()).pathname, '/backoffice/accounts');
      // Nothing is kept in the browser's storage: the session is the HttpOnly cookie.
      const stored = await page.evaluate(() => ({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie }));
      assert.deepEqual(stored, { local: 0, session: 0, cookie: '' });
      const cookies = await context.cookies();
      assert.ok(cookies.some((c) => c.name === 'admin_session' && c.httpOnly && c.sameSite === 'Strict'));
    });

    test('merchant accounts: search, detail with key prefixes and fees, live activation with confirmation and reason', async () => {
      await page.getByLabel('Buscar por nome, e-mail ou ID').fill(`Exemplo ${engine}`);
      await page.getByRole('button', { name: 'Buscar' }).click();
      await page.waitForURL(/search=/);
      await settled(page);
      assert.equal(await page.locator('tbody tr').count(), 1);
      await axe(page, 'accounts');
      await shot(page, 'accounts');
      await page.getByRole('link', { name: `Loja Exemplo ${engine}` }).click();
      await page.getByRole('heading', { name: `Loja Exemplo ${engine}` }).waitFor();
      await settled(page);
      const text = await page.locator('main').innerText();
      assert.ok(!text.includes(k.secretKey) && !text.includes(k.publishableKey), 'no key on the page');
      assert.match(text, /sk_test_…/);
      assert.match(text, /3,99\s?%/);
      assert.match(text, /R\$\s0,39/);

      await page.getByRole('button', { name: 'Ativar modo produção' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      await axe(page, 'live activation dialog');
      await dialog.getByRole('button', { name: 'Ativar modo produção' }).click();
      await dialog.getByText('Informe o motivo.').waitFor();
      await dialog.getByLabel('Motivo').fill('KYC aprovado, contrato 2026-118');
      await dialog.getByRole('button', { name: 'Ativar modo produção' }).click();
      await page.getByText('Modo produção ativado.').waitFor();
      await page.getByText('O modo produção está ativo').waitFor();
      await axe(page, 'account detail');
      await shot(page, 'account');
    });

    test('recipients of an account: read-only, documents masked', async () => {
      await page.getByRole('link', { name: 'Recebedores' }).click();
      await page.getByRole('heading', { name: 'Recebedores' }).waitFor();
      await settled(page);
      const text = await page.locator('main').innerText();
      assert.match(text, /11\.\*\*\*\.\*\*\*\/\*\*\*\*-81/);
      assert.ok(!text.includes('11222333000181') && !text.includes('12ABC34501DE35'), 'no full document');
      assert.equal(await page.locator('main button').count(), 0, 'nothing to edit');
      await axe(page, 'recipients');
      await shot(page, 'recipients');
    });

    test('create a split rule with a percentage and a fixed share: save and activate, with a reason', async () => {
      await page.getByRole('link', { name: 'Regras de divisão' }).click();
      await page.getByRole('heading', { name: 'Regras de divisão' }).waitFor();
      await settled(page);
      await page.getByRole('link', { name: 'Nova regra' }).click();
      await page.getByRole('heading', { name: 'Nova regra de divisão' }).waitFor();
      await settled(page);
      await page.getByLabel('Descrição').fill('Marketplace: vendedor e plataforma');
      await page.getByLabel('Recebedor').first().selectOption(seller);
      // An empty percentage is a missing value, said so on its field; nothing opens or is sent.
      await page.getByRole('button', { name: 'Salvar e ativar' }).click();
      await page.locator('fieldset.share').first().getByText('Informe o percentual.').waitFor();
      assert.equal(await page.getByRole('dialog').count(), 0);
      await page.getByLabel('Percentual (%)').fill('12,5');
      await page.getByRole('button', { name: 'Adicionar parte' }).click();
      const second = page.locator('fieldset.share').nth(1);
      await second.getByLabel('Recebedor').selectOption(platform);
      await second.getByLabel('Tipo').selectOption('amount');
      // "2.50" in Portuguese is not R$ 250,00: it is refused on its field as ambiguous.
      await second.getByLabel('Valor (R$)').fill('2.50');
      await page.getByRole('button', { name: 'Salvar e ativar' }).click();
      await second.getByText(/^Valor ambíguo: em português a vírgula separa os centavos/).waitFor();
      assert.equal(await second.getByLabel('Valor (R$)').getAttribute('aria-invalid'), 'true');
      assert.equal(await page.getByRole('dialog').count(), 0);
      await second.getByLabel('Valor (R$)').fill('2,50');
      // Every dropdown shows its options whole ("Percentual do líquido", a recipient's name and id).
      const rooms = await selectRoom(page, '.rule-form select');
      assert.ok(rooms.length >= 5 && rooms.every((r) => r.fits), JSON.stringify(rooms));
      await axe(page, 'split rule form');
      await shot(page, 'split-rule-form');
      await page.getByRole('button', { name: 'Salvar e ativar' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Motivo').fill('Contrato de marketplace assinado');
      await dialog.getByRole('button', { name: 'Salvar e ativar' }).click();
      await page.getByRole('heading', { name: 'Regras de divisão' }).waitFor();
      await settled(page);
      const rules = (await t.app.inject({ method: 'GET', url: `/admin/split-rules?accountId=${k.accountId}`, headers: { cookie: (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ') } })).json().data;
      assert.equal(rules.length, 1);
      firstRule = rules[0].id;
      assert.deepEqual(rules[0].splits, [{ type: 'percentage', recipientId: seller, percentage: 12.5 }, { type: 'amount', recipientId: platform, amount: 250 }]);
      assert.equal(rules[0].active, true);
      assert.equal(await ruleRow(page, firstRule).locator('.badge').textContent(), 'Ativa');
    });

    test('the preview\'s receivables equal those of a real sale made afterwards through the API', async () => {
      // "123.45" is refused, not previewed as R$ 12.345,00.
      await page.getByLabel('Valor da venda (R$)').fill('123.45');
      await page.getByRole('button', { name: 'Simular', exact: true }).click();
      await page.locator('#preview-amount-error', { hasText: /^Valor ambíguo/ }).waitFor();
      assert.equal(await page.locator('.preview-result').count(), 0);
      const preview = await runPreview(page, '123,45');
      assert.equal(await page.locator('#preview-amount-error').count(), 0);
      assert.equal(preview.rule, firstRule);
      assert.equal(preview.rows.length, 3);
      assert.equal(preview.rows[0].payee, `merchant:${k.accountId}`);
      await axe(page, 'split rules with preview');
      await shot(page, 'split-rules-preview');
      const sale = await cardSale(12_345);
      assert.deepEqual(asSet(sale.map((r) => ({ payee: `${r.payee.type}:${r.payee.id}`, amount: r.amount }))), asSet(preview.rows));
      assert.ok(sale.every((r) => r.splitRuleId === firstRule));
    });

    test('a second rule saved without activating, activated with a reason; reordering makes it apply', async () => {
      await page.getByRole('link', { name: 'Nova regra' }).click();
      await page.getByRole('heading', { name: 'Nova regra de divisão' }).waitFor();
      await settled(page);
      await page.getByLabel('Descrição').fill('Só a plataforma');
      await page.getByLabel('Recebedor').first().selectOption(platform);
      await page.getByLabel('Tipo').selectOption('amount');
      await page.getByLabel('Valor (R$)').fill('1,00');
      await page.getByRole('button', { name: 'Salvar', exact: true }).click();
      await page.getByRole('heading', { name: 'Regras de divisão' }).waitFor();
      await settled(page);
      const rows = page.locator('table.rules tbody tr');
      assert.equal(await rows.count(), 2);
      secondRule = (await rows.nth(1).getAttribute('data-rule-id')) as string;
      assert.equal(await ruleRow(page, secondRule).locator('.badge').textContent(), 'Inativa');

      // Activate it with the keyboard: Enter on its button, the reason typed in the dialog (which
      // has the focus), Tab to the confirm button, Enter. The focus comes back to the same button,
      // which now deactivates.
      await ruleRow(page, secondRule).getByRole('button', { name: 'Ativar' }).focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      await page.keyboard.type('Regra de reserva aprovada');
      assert.equal(await dialog.getByLabel('Motivo').inputValue(), 'Regra de reserva aprovada');
      await axe(page, 'activate dialog');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      assert.equal((await focused(page)).text, 'Ativar');
      await page.keyboard.press('Enter');
      await ruleRow(page, secondRule).locator('.badge', { hasText: /^Ativa$/ }).waitFor();
      // The dialog gives the focus back as it closes, before it leaves the page. (Left to its
      // unmount, the focus came back a moment later: on Chromium 156.0.8078.108 five runs of five
      // read <body> right after the Escape below, and once the next key went to the old button.)
      assert.deepEqual(await focused(page), { rule: secondRule, text: 'Desativar', tag: 'BUTTON', move: null });
      assert.equal((await runPreview(page, '123,45')).rule, firstRule, 'the first rule still applies');

      // Escape closes a dialog and gives the focus back to the button that opened it.
      await ruleRow(page, secondRule).getByRole('button', { name: 'Desativar' }).focus();
      await page.keyboard.press('Enter');
      await dialog.waitFor();
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      assert.deepEqual(await focused(page), { rule: secondRule, text: 'Desativar', tag: 'BUTTON', move: null });

      // Move the second rule up with the keyboard: Enter on its button, a reason (the order
      // decides who gets paid), confirm. Its row moves above the other, and the focus stays on
      // its same button. As a browser without Element.moveBefore (Firefox, Safari): Preact then
      // moves the row with insertBefore, which drops the focus of what it moves (Chromium's
      // moveBefore keeps it), and the app must put the focus back itself.
      await page.evaluate(() => {
        const proto = Element.prototype as unknown as { moveBefore?: unknown };
        (window as unknown as { __moveBefore?: unknown }).__moveBefore = proto.moveBefore;
        delete proto.moveBefore;
      });
      await page.getByRole('button', { name: 'Subir a regra 2' }).focus();
      await page.keyboard.press('Enter');
      await dialog.getByRole('heading', { name: 'Mudar a ordem: regra 2 para a posição 1' }).waitFor();
      await axe(page, 'reorder dialog');
      await page.keyboard.type('Campanha de reserva primeiro');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.waitForFunction((id) => document.querySelector('table.rules tbody tr')?.getAttribute('data-rule-id') === id, secondRule);
      await page.waitForFunction((id) => document.activeElement?.closest('tr')?.getAttribute('data-rule-id') === id, secondRule);
      assert.deepEqual(await focused(page), { rule: secondRule, text: 'Subir', tag: 'BUTTON', move: 'up' });
      await page.evaluate(() => {
        (Element.prototype as unknown as { moveBefore?: unknown }).moveBefore = (window as unknown as { __moveBefore?: unknown }).__moveBefore;
      });
      const preview = await runPreview(page, '123,45');
      assert.equal(preview.rule, secondRule, 'after reordering, the other rule applies');
      const sale = await cardSale(12_345);
      assert.ok(sale.every((r) => r.splitRuleId === secondRule));
      assert.deepEqual(asSet(sale.map((r) => ({ payee: `${r.payee.type}:${r.payee.id}`, amount: r.amount }))), asSet(preview.rows));
    });

    test('deactivate a rule: the other applies again', async () => {
      await ruleRow(page, secondRule).getByRole('button', { name: 'Desativar' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Motivo (opcional)').fill('Fim da campanha');
      await dialog.getByRole('button', { name: 'Desativar' }).click();
      await ruleRow(page, secondRule).locator('.badge', { hasText: /^Inativa$/ }).waitFor();
      assert.equal((await runPreview(page, '123,45')).rule, firstRule);
      await shot(page, 'split-rules');
    });

    test('edit a rule\'s conditions (method, minimum, maximum); an active rule\'s change asks for a reason', async () => {
      const adminRules = async () => (await t.app.inject({ method: 'GET', url: `/admin/split-rules?accountId=${k.accountId}`, headers: { cookie: (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ') } })).json().data as Array<{ id: string; conditions: object; splits: object[] }>;
      // The inactive rule: plain Save, no reason.
      await ruleRow(page, secondRule).getByRole('link', { name: 'Editar' }).click();
      await page.getByRole('heading', { name: 'Editar regra de divisão' }).waitFor();
      await settled(page);
      assert.equal(await page.getByRole('button', { name: 'Salvar e ativar' }).count(), 1);
      await page.getByLabel('Meio de pagamento').selectOption('pix');
      await page.getByLabel('Valor mínimo (R$)').fill('10.50');
      await page.getByLabel('Valor máximo (R$)').fill('1.000,00');
      await page.getByRole('button', { name: 'Salvar', exact: true }).click();
      await page.locator('#minAmount-error', { hasText: /^Valor ambíguo/ }).waitFor();
      assert.equal(await page.locator('#minAmount').getAttribute('aria-invalid'), 'true');
      await page.getByLabel('Valor mínimo (R$)').fill('10,00');
      await axe(page, 'split rule edit form');
      await page.getByRole('button', { name: 'Salvar', exact: true }).click();
      await page.getByRole('heading', { name: 'Regras de divisão' }).waitFor();
      await settled(page);
      assert.deepEqual((await adminRules()).find((r) => r.id === secondRule)?.conditions, { method: 'pix', minAmount: 1000, maxAmount: 100_000 });
      assert.match(await ruleRow(page, secondRule).locator('td').nth(3).innerText(), /^meio Pix, a partir de R\$\s10,00, até R\$\s1\.000,00$/);

      // The active rule: its Save says it needs a reason, and asks for one before anything is sent.
      await ruleRow(page, firstRule).getByRole('link', { name: 'Editar' }).click();
      await page.getByRole('heading', { name: 'Editar regra de divisão' }).waitFor();
      await settled(page);
      assert.equal(await page.getByRole('button', { name: 'Salvar e ativar' }).count(), 0);
      const second = page.locator('fieldset.share').nth(1);
      assert.equal(await second.getByLabel('Valor (R$)').inputValue(), '2,50');
      await second.getByLabel('Valor (R$)').fill('3,00');
      await page.getByRole('button', { name: 'Salvar (ativa: requer motivo)' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByRole('heading', { name: 'Salvar a regra ativa' }).waitFor();
      await dialog.getByRole('button', { name: 'Salvar', exact: true }).click();
      await dialog.getByText('Informe o motivo.').waitFor();
      assert.deepEqual((await adminRules()).find((r) => r.id === firstRule)?.splits, [{ type: 'percentage', recipientId: seller, percentage: 12.5 }, { type: 'amount', recipientId: platform, amount: 250 }], 'nothing saved yet');
      await dialog.getByLabel('Motivo').fill('Taxa da plataforma reajustada');
      await axe(page, 'active rule save dialog');
      await shot(page, 'split-rule-edit-active');
      await dialog.getByRole('button', { name: 'Salvar', exact: true }).click();
      await page.getByRole('heading', { name: 'Regras de divisão' }).waitFor();
      await settled(page);
      assert.deepEqual((await adminRules()).find((r) => r.id === firstRule)?.splits, [{ type: 'percentage', recipientId: seller, percentage: 12.5 }, { type: 'amount', recipientId: platform, amount: 300 }]);
    });

    test('at 420 px the rules table scrolls inside its box; the page does not run off the window', async () => {
      const narrow = await browser.newContext({ locale: 'pt-BR', viewport: { width: 420, height: 860 } });
      narrow.setDefaultTimeout(WAIT_MS);
      await narrow.addCookies(await context.cookies());
      const n = await newPage(narrow);
      await n.goto(`${origin}/backoffice/accounts/${k.accountId}/split-rules`);
      await n.getByRole('heading', { name: 'Regras de divisão' }).waitFor();
      await settled(n);
      await ruleRow(n, firstRule).waitFor();
      assert.equal(await pageFitsWindow(n), true, 'no page-wide horizontal scroll');
      const box = await n.locator('.table-scroll').evaluate((el) => ({ scrolls: el.scrollWidth > el.clientWidth, right: el.getBoundingClientRect().right }));
      assert.equal(box.scrolls, true, 'the table scrolls within its box');
      assert.ok(box.right <= 420, `the box ends inside the window (${box.right})`);
      await axe(n, 'split rules at 420 px');
      await shot(n, 'split-rules-narrow');
      await goto(n, `/accounts/${k.accountId}/split-rules/${firstRule}/edit`);
      assert.equal(await pageFitsWindow(n), true, 'the form fits too');
      await axe(n, 'split rule form at 420 px');
      await narrow.close();
    });

    test('a settlement run needs a reason and shows its settlements per payee and its failed payouts', async () => {
      const pix = await api('POST', '/v1/payments', { amount: 10_000, method: 'pix' });
      await api('POST', `/v1/sandbox/payments/${pix.body.id}/pay`);
      await page.getByRole('link', { name: 'Liquidações' }).click();
      await page.getByRole('heading', { name: 'Liquidações' }).waitFor();
      await settled(page);
      await axe(page, 'settlement runs');
      await page.getByRole('button', { name: 'Iniciar liquidação' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      await axe(page, 'settlement start dialog');
      await dialog.getByRole('button', { name: 'Iniciar liquidação' }).click();
      await dialog.getByText('Informe o motivo.').waitFor();
      await axe(page, 'settlement start dialog without a reason');
      await dialog.getByLabel('Motivo').fill('Fechamento do dia');
      await dialog.getByRole('button', { name: 'Iniciar liquidação' }).click();
      await page.getByRole('heading', { name: /^Liquidação str_/ }).waitFor();
      await settled(page);
      // A worker carries the run out; the page looks again until it is completed.
      await page.locator('dl.summary .badge', { hasText: /^Concluída$/ }).waitFor();
      const payees = await page.locator('section[aria-labelledby="per-payee"] tbody tr').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.payee));
      for (const payee of [`merchant:${k.accountId}`, `recipient:${seller}`]) assert.ok(payees.includes(payee), `${payee} in ${payees.join()}`);
      // The platform's bank account is a closed one in the sandbox: its payout fails.
      // Waits for I/O: the back office in the browser (and the server it calls).
      await eventually(async () => {
        await page.reload();
        await settled(page);
        return (await page.locator(`section[aria-labelledby="failed"] tr[data-payee="recipient:${platform}"]`).count()) === 1;
      }, 'the failed payout to show');
      await axe(page, 'settlement run');
      await shot(page, 'settlement-run');
    });

    test('the merchant\'s settlement is held until an admin sets its payout bank account, with a reason; then it is paid', async () => {
      // The run above found no payout bank account for the merchant: its own settlement waits.
      const merchantRow = page.locator(`section[aria-labelledby="per-payee"] tr[data-payee="merchant:${k.accountId}"]`);
      assert.match(await merchantRow.innerText(), /Retida/);
      const held = (await api('GET', '/v1/settlements?payeeType=merchant&status=held')).body.data;
      assert.equal(held.length, 1);
      assert.equal(held[0].holdReason, 'no_payout_bank_account');

      await goto(page, `/accounts/${k.accountId}`);
      const section = page.locator('section[aria-labelledby="payout-title"]');
      await section.getByText('Nenhuma conta de repasse cadastrada').waitFor();
      await section.getByRole('button', { name: 'Cadastrar conta de repasse' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      await axe(page, 'payout bank account dialog');
      await dialog.getByLabel('Banco (código)').fill('341');
      await dialog.getByLabel('Agência').fill('1234');
      await dialog.getByLabel('Conta com dígito').fill('12345');
      await dialog.getByLabel('Tipo de conta').selectOption('checking');
      // A reason first (it redirects money), then the server's own check of the account number,
      // shown on its field; the dialog stays open and nothing is saved.
      await dialog.getByRole('button', { name: 'Salvar', exact: true }).click();
      await dialog.getByText('Informe o motivo.').waitFor();
      await dialog.getByLabel('Motivo').fill('Carta do banco de 20/11');
      await dialog.getByRole('button', { name: 'Salvar', exact: true }).click();
      await dialog.locator('#payout-account[aria-invalid="true"]').waitFor();
      assert.match(await dialog.locator('#payout-account-error').innerText(), /check digit/);
      assert.equal((await api('GET', '/v1/settlements?payeeType=merchant&status=held')).body.data.length, 1, 'nothing released');
      await axe(page, 'payout bank account dialog with a refused field');
      await shot(page, 'payout-bank-account');
      await dialog.getByLabel('Conta com dígito').fill('12345-6');
      await dialog.getByRole('button', { name: 'Salvar', exact: true }).click();
      await page.getByText('Conta de repasse salva.').waitFor();
      await section.locator('[data-payout-bank-account="341/1234/12345-6/checking"]').waitFor();
      assert.equal(await section.getByRole('button', { name: 'Alterar conta de repasse' }).count(), 1);
      await axe(page, 'account with its payout bank account');
      // Setting it released the held settlement to payout, to that account.
      // Waits for I/O: the back office in the browser (and the server it calls).
      const paid = await eventually(async () => {
        const s = (await api('GET', `/v1/settlements/${held[0].id}`)).body;
        return s.status === 'paid' && s;
      }, 'the held settlement to be paid');
      assert.deepEqual(paid.bankAccount, { bankCode: '341', agency: '1234', account: '12345-6', accountType: 'checking' });
    });

    test('a failed payout shows where it went (masked) and why; retried with the keyboard and a reason, audited', async () => {
      // The platform's payout failed in the run above (the sandbox's closed account).
      const runs = (await adminGet('/admin/settlement-runs?limit=10')).data as Array<{ id: string }>;
      for (const run of runs) {
        const failed = (await adminGet(`/admin/settlement-runs/${run.id}/settlements?status=failed`)).data as Array<{ id: string; payee: { id: string } }>;
        const mine = failed.find((x) => x.payee.id === platform);
        if (mine) failedPayout = { id: mine.id, runId: run.id };
      }
      assert.ok(failedPayout, 'the platform\'s failed payout');
      const full = (await adminGet(`/admin/settlements?status=failed&limit=100`)).data.find((x: { id: string }) => x.id === failedPayout!.id);
      await goto(page, `/settlement-runs/${failedPayout.runId}`);
      const row = page.locator(`section[aria-labelledby="failed"] tr[data-settlement="${failedPayout.id}"]`);
      await row.waitFor();
      const destination = await row.locator('[data-destination]').innerText();
      assert.match(destination, /^\d{3} ag\. \S+ c\/c \*\*\*/, destination);
      assert.ok(!(await row.innerText()).includes(full.bankAccount.account), 'the account number is masked');
      assert.match(await row.locator('[data-reason]').innerText(), /closed/);
      // Enter on its button, the reason typed in the dialog, then confirmed: all by keyboard.
      await row.getByRole('button', { name: `Tentar de novo o repasse ${failedPayout.id}` }).focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      await axe(page, 'retry payout dialog');
      await dialog.getByRole('button', { name: 'Tentar de novo', exact: true }).click();
      await dialog.getByText('Informe o motivo.').waitFor();
      assert.equal((await t.store.db.selectFrom('settlements').select('id').where('retry_of', '=', failedPayout.id).execute()).length, 0, 'nothing retried without a reason');
      await dialog.getByLabel('Motivo').focus();
      await page.keyboard.type('Conta reaberta pelo parceiro');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      const notice = page.locator('[data-retried]');
      await notice.waitFor();
      const newId = await notice.getAttribute('data-retried');
      assert.ok(newId && newId !== failedPayout.id);
      const made = await t.store.db.selectFrom('settlements').select(['id', 'payee_id', 'retry_of']).where('id', '=', newId).executeTakeFirstOrThrow();
      assert.deepEqual(made, { id: newId, payee_id: platform, retry_of: failedPayout.id });
      const entry = (await adminGet(`/admin/audit-log?objectId=${failedPayout.id}&action=settlement.retry_payout`)).data[0];
      assert.equal(entry.reason, 'Conta reaberta pelo parceiro');
      assert.equal(entry.after.retriedBy, newId);
      assert.equal(await dialog.count(), 0, 'the dialog closed');
      await axe(page, 'settlement run after a retry');
      await shot(page, 'payout-retry');
    });

    test('the daily statement of a payee: opened by keyboard from the account, the paid settlement with its end-to-end id, and the total', async () => {
      // The seller's settlement of the first run was paid by the sandbox, which gives no Pix
      // end-to-end id: record the one a PSP reports (the real path is the server's pix-payouts test).
      // Waits for I/O: the worker paying the first run's payouts.
      const paid = await eventually(async () => {
        const list = (await api('GET', `/v1/settlements?recipientId=${seller}&status=paid&limit=100`)).body.data as Array<{ id: string; amount: number; paidAt: string }>;
        return list.length >= 1 && list;
      }, 'the seller to be paid');
      const e2e = `E09089356${paid[0].paidAt.slice(0, 10).replaceAll('-', '')}1300bo${engine.slice(0, 2)}`.padEnd(32, '0');
      await t.store.write((tx) => tx.updateTable('settlements').set({ payout_e2eid: e2e }).where('id', '=', paid[0].id).execute());
      const expected = (await api('GET', `/v1/settlements/daily-statement?recipientId=${seller}`)).body;
      assert.ok(expected.data.some((i: { settlementId: string }) => i.settlementId === paid[0].id), 'paid today (São Paulo)');

      await goto(page, `/accounts/${k.accountId}`);
      // The account's tab, by keyboard.
      await page.getByRole('link', { name: 'Extrato do dia' }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Extrato do dia', level: 1 }).waitFor();
      await settled(page);
      await axe(page, 'daily statement of the merchant');
      // The payee by typing its name on the focused list, the day left blank (today), then Tab
      // (through the day's fields) to "Ver extrato" and Enter.
      await page.getByLabel('Recebedor do repasse').focus();
      await page.keyboard.type('Loja do Z');
      assert.equal(await page.getByLabel('Recebedor do repasse').inputValue(), seller);
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'st-date');
      for (let i = 0; i < 6 && (await focused(page)).text !== 'Ver extrato'; i++) await page.keyboard.press('Tab');
      assert.equal((await focused(page)).text, 'Ver extrato');
      await page.keyboard.press('Enter');
      await page.waitForURL(new RegExp(`recipientId=${seller}`));
      const row = page.locator(`section[aria-labelledby="statement-title"] tr[data-settlement="${paid[0].id}"]`);
      await row.waitFor();
      await settled(page);
      assert.equal(await row.locator('[data-e2e]').innerText(), e2e);
      assert.match(await page.locator('#statement-title').innerText(), /Loja do Zé LTDA/);
      const total = page.locator('section[aria-labelledby="statement-title"] [data-total]');
      assert.equal(Number(await total.getAttribute('data-total')), expected.total);
      assert.equal(expected.total, expected.data.reduce((sum: number, i: { amount: number }) => sum + i.amount, 0));
      const brl = (cents: number) => new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' }).format(cents / 100).replace(/\s/g, ' ');
      assert.equal((await total.innerText()).replace(/\s/g, ' '), brl(expected.total));
      assert.equal((await row.locator('td.num').innerText()).replace(/\s/g, ' '), brl(paid[0].amount));
      assert.equal(await page.locator('section[aria-labelledby="statement-title"] tbody tr').count(), expected.count);
      await axe(page, 'daily statement of a recipient');
      await shot(page, 'daily-statement');
    });

    test('payments: search by account and status, detail with receivables, refunds and events', async () => {
      await page.getByRole('link', { name: 'Pagamentos' }).click();
      await page.getByRole('heading', { name: 'Pagamentos' }).waitFor();
      await page.getByLabel('ID da conta').fill(k.accountId);
      await page.getByLabel('Situação').selectOption('approved');
      await page.getByRole('button', { name: 'Buscar' }).click();
      await page.waitForURL(/status=approved/);
      await settled(page);
      const links = page.locator('tbody tr td:first-child a');
      assert.ok((await links.count()) >= 3);
      await axe(page, 'payments');
      await shot(page, 'payments');
      await links.first().click();
      await page.getByRole('heading', { name: /^Pagamento pay_/ }).waitFor();
      await settled(page);
      assert.ok((await page.locator('section[aria-labelledby="rcv-title"] tbody tr[data-payee]').count()) >= 1);
      await page.getByText('payment.approved').waitFor();
      assert.equal(await page.locator('section.failure').count(), 0, 'an approved payment has no failure');
      await axe(page, 'payment detail');
      await shot(page, 'payment');
    });

    test('payments: search by id and by date; a declined payment shows why', async () => {
      // A merchant of its own, whose one payment this is: the searches by date must find nothing
      // else on the days around it, even when the suite runs across São Paulo's midnight (the
      // other tests' payments of `k` would then fall on the day before).
      const own = await signup(t, `Loja Datas ${engine}`);
      const created = await api('POST', '/v1/payments', { amountInCents: 4_321, method: 'credit_card', cardToken: 'tok_declined' }, own.secretKey);
      assert.equal(created.status, 200, JSON.stringify(created.body));
      // Waits for I/O: the back office in the browser (and the server it calls).
      const declined = await eventually(async () => {
        const p = (await api('GET', `/v1/payments/${created.body.id}`, undefined, own.secretKey)).body;
        return p.status === 'declined' && p;
      }, 'the card to be declined');
      // By id: that payment alone.
      await goto(page, '/payments');
      await page.getByLabel('ID do pagamento').fill(declined.id);
      await page.getByRole('button', { name: 'Buscar' }).click();
      await page.waitForURL(/[?&]id=/);
      // Waits for I/O: the back office in the browser (and the server it calls).
      await eventually(async () => JSON.stringify(await shownPaymentIds(page)) === JSON.stringify([declined.id]), 'the payment found by id');
      // By date (São Paulo days): its own day finds it; the day after, or up to the day before, does not.
      const day = saoPauloDay(declined.createdAt);
      const searchDates = async (from: string, to: string) => {
        await goto(page, '/payments');
        await page.getByLabel('ID da conta').fill(own.accountId);
        await page.getByLabel('Criado a partir de').fill(from);
        await page.getByLabel('Criado até').fill(to);
        await page.getByRole('button', { name: 'Buscar' }).click();
        await page.waitForURL((url) => url.searchParams.get('from') === (from || null) && url.searchParams.get('to') === (to || null));
        await settled(page);
      };
      await searchDates(day, day);
      // Waits for I/O: the back office in the browser (and the server it calls).
      await eventually(async () => (await shownPaymentIds(page)).includes(declined.id), 'the payment found on its day');
      await searchDates(saoPauloDay(declined.createdAt, 1), '');
      await page.locator('tbody', { hasText: 'Nada encontrado.' }).waitFor();
      await searchDates('', saoPauloDay(declined.createdAt, -1));
      await page.locator('tbody', { hasText: 'Nada encontrado.' }).waitFor();
      // The declined payment's detail says why: the provider's code and message.
      await goto(page, `/payments/${declined.id}`);
      const failure = page.locator('section.failure');
      await failure.getByRole('heading', { name: 'Por que não foi aprovado' }).waitFor();
      assert.equal(await failure.getAttribute('data-failure-code'), declined.failure.code);
      assert.equal(await failure.locator('p').innerText(), `${declined.failure.code}: ${declined.failure.message}`);
      assert.match(await page.locator('dl.summary').innerText(), /Recusado/);
      await axe(page, 'payment detail (declined)');
      await shot(page, 'payment-declined');
    });

    test('the audit log shows each action, who did it, the reason, and before and after', async () => {
      await page.getByRole('link', { name: 'Auditoria' }).click();
      await page.getByRole('heading', { name: 'Auditoria' }).waitFor();
      await settled(page);
      const actions = await page.locator('tbody tr[data-audit-action]').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.auditAction));
      assert.deepEqual(actions, ['settlement.retry_payout', 'account.set_payout_bank_account', 'settlement_run.create', 'split_rule.update', 'split_rule.update', 'split_rule.deactivate', 'split_rule.reorder', 'split_rule.activate', 'split_rule.create', 'split_rule.create', 'account.activate_live']);
      const text = await page.locator('main').innerText();
      for (const reason of ['KYC aprovado, contrato 2026-118', 'Contrato de marketplace assinado', 'Regra de reserva aprovada', 'Campanha de reserva primeiro', 'Fim da campanha', 'Taxa da plataforma reajustada', 'Fechamento do dia', 'Carta do banco de 20/11', 'Conta reaberta pelo parceiro']) assert.ok(text.includes(reason), reason);
      assert.ok(text.includes(adminEmail));
      // Before and after of the deactivation.
      const row = page.locator('tr[data-audit-action="split_rule.deactivate"]');
      await row.locator('summary').click();
      assert.equal(await row.locator('[data-field="active"] [data-before]').textContent(), 'true');
      assert.equal(await row.locator('[data-field="active"] [data-after]').textContent(), 'false');
      const reorder = page.locator('tr[data-audit-action="split_rule.reorder"]');
      await reorder.locator('summary').click();
      assert.match((await reorder.locator('[data-field="splitRules"] [data-before]').textContent()) ?? '', new RegExp(`^\\[\\s*\\{"id":"${firstRule}"`));
      assert.match((await reorder.locator('[data-field="splitRules"] [data-after]').textContent()) ?? '', new RegExp(`^\\[\\s*\\{"id":"${secondRule}"`));
      // The active rule's edit: its reason, and its shares before and after.
      const edit = page.locator(`tr[data-audit-action="split_rule.update"][data-object-id="${firstRule}"]`);
      assert.match(await edit.innerText(), /Taxa da plataforma reajustada/);
      await edit.locator('summary').click();
      assert.match((await edit.locator('[data-field="splits"] [data-before]').textContent()) ?? '', /"amount":250/);
      assert.match((await edit.locator('[data-field="splits"] [data-after]').textContent()) ?? '', /"amount":300/);
      const live = page.locator('tr[data-audit-action="account.activate_live"]');
      await live.locator('summary').click();
      assert.equal(await live.locator('[data-field="liveEnabled"] [data-after]').textContent(), 'true');
      const payout = page.locator('tr[data-audit-action="account.set_payout_bank_account"]');
      await payout.locator('summary').click();
      assert.equal(await payout.locator('[data-field="payoutBankAccount"] [data-before]').textContent(), 'null');
      assert.match((await payout.locator('[data-field="payoutBankAccount"] [data-after]').textContent()) ?? '', /"account":"12345-6"/);
      // Laid out for a 1280 px window: nothing runs off the page, and each value before and after
      // has a readable width (not one character a line).
      assert.equal(await pageFitsWindow(page), true, 'the audit log fits a 1280 px window');
      const widths = await page.locator('details[open] [data-before], details[open] [data-after]').evaluateAll((els) => els.map((el) => el.getBoundingClientRect().width));
      assert.ok(widths.length >= 10 && widths.every((w) => w >= 200), JSON.stringify(widths));
      await axe(page, 'audit log');
      await shot(page, 'audit-log');
      // Filtered by object.
      await page.getByLabel('ID do objeto').fill(secondRule);
      await page.getByRole('button', { name: 'Buscar' }).click();
      await page.waitForURL(/objectId=/);
      await settled(page);
      // The page keeps showing the previous rows while the filtered ones load: wait for them.
      const filtered = ['split_rule.update', 'split_rule.deactivate', 'split_rule.activate', 'split_rule.create'];
      const shown = () => page.locator('tbody tr[data-audit-action]').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.auditAction));
      // Waits for I/O: the back office in the browser (and the server it calls).
      await eventually(async () => JSON.stringify(await shown()) === JSON.stringify(filtered), 'the filtered audit log');
    });

    test('a mutation without the CSRF token, or with a wrong one, gets 403 and changes nothing', async () => {
      // (No named functions inside evaluate: the test's transpiler would wrap them in a helper the page lacks.)
      const results = await page.evaluate(async (id) => Promise.all(([{}, { 'x-csrf-token': 'not-the-token' }] as Array<Record<string, string>>).map(async (headers) => {
        const r = await fetch(`/admin/split-rules/${id}/activate`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ reason: 'csrf test' }) });
        return { status: r.status, code: (await r.json()).error?.code };
      })), secondRule);
      assert.deepEqual(results, [{ status: 403, code: 'PERMISSION_DENIED' }, { status: 403, code: 'PERMISSION_DENIED' }]);
      const rule = await t.store.db.selectFrom('split_rules').select('active').where('id', '=', secondRule).executeTakeFirstOrThrow();
      assert.equal(rule.active, 0);
    });

    test('a viewer sees no edit control and no screen it cannot use; the same mutation sent directly gets 403', async () => {
      const viewerContext = await newContext();
      const v = await newPage(viewerContext);
      await v.goto(`${origin}/backoffice/accounts/${k.accountId}/split-rules`);
      await signInWith(v, viewerEmail);
      await v.getByRole('heading', { name: 'Regras de divisão' }).waitFor();
      assert.deepEqual(await v.locator('header nav a').allTextContents(), ['Início', 'Contas', 'Pagamentos', 'Disputas', 'Liquidações', 'Repasses', 'Conectores (PSP)', 'Auditoria']);
      assert.equal(await v.getByRole('link', { name: 'Nova regra' }).count(), 0);
      assert.equal(await v.locator('table.rules tbody tr').count(), 2);
      assert.equal(await v.locator('table.rules button, table.rules a').count(), 0, 'no move, edit, activate or deactivate control');
      // Reading and previewing are allowed.
      assert.equal((await runPreview(v, '50,00')).rule, firstRule);
      await axe(v, 'split rules (viewer)');
      await shot(v, 'viewer-split-rules');

      await goto(v, '/settlement-runs');
      assert.equal(await v.getByRole('button', { name: 'Iniciar liquidação' }).count(), 0);
      // A failed payout: shown, with no retry control.
      await goto(v, `/settlement-runs/${failedPayout!.runId}`);
      await v.locator(`tr[data-settlement="${failedPayout!.id}"]`).first().waitFor();
      assert.equal(await v.getByRole('button', { name: /^Tentar de novo/ }).count(), 0);
      await axe(v, 'settlement run (viewer)');
      const other = await signup(t, 'Conta sem produção');
      await goto(v, `/accounts/${other.accountId}`);
      assert.equal(await v.getByRole('button', { name: 'Ativar modo produção' }).count(), 0);
      await v.getByText('Nenhuma conta de repasse cadastrada').waitFor();
      assert.equal(await v.getByRole('button', { name: 'Cadastrar conta de repasse' }).count(), 0);
      // The payout bank account is shown to the viewer, with no control to change it.
      await goto(v, `/accounts/${k.accountId}`);
      await v.locator('[data-payout-bank-account="341/1234/12345-6/checking"]').waitFor();
      assert.equal(await v.getByRole('button', { name: 'Alterar conta de repasse' }).count(), 0);
      await axe(v, 'account (viewer)');
      await goto(v, `/accounts/${k.accountId}/split-rules/new`);
      assert.equal(await heading(v), 'Página não encontrada.');

      // The same mutations, sent from the viewer's page with its valid session and CSRF token.
      const statuses = await v.evaluate(async ({ rule, account, failed }) => {
        const { csrfToken } = await (await fetch('/admin/session')).json();
        return Promise.all([`/admin/split-rules/${rule}/activate`, '/admin/settlement-runs', `/admin/accounts/${account}/activate-live`, `/admin/settlements/${failed}/retry`].map(async (url) => {
          const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken }, body: JSON.stringify({ reason: 'viewer' }) });
          return `${r.status} ${(await r.json()).error?.code}`;
        }));
      }, { rule: secondRule, account: other.accountId, failed: failedPayout!.id });
      assert.deepEqual(statuses, ['403 PERMISSION_DENIED', '403 PERMISSION_DENIED', '403 PERMISSION_DENIED', '403 PERMISSION_DENIED']);
      const payout = await v.evaluate(async (account) => {
        const { csrfToken } = await (await fetch('/admin/session')).json();
        const r = await fetch(`/admin/accounts/${account}/payout-bank-account`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken },
          body: JSON.stringify({ bankAccount: { bankCode: '001', agency: '1', account: '1-1', accountType: 'checking' }, reason: 'viewer' }),
        });
        return `${r.status} ${(await r.json()).error?.code}`;
      }, k.accountId);
      assert.equal(payout, '403 PERMISSION_DENIED');
      assert.equal((await t.store.db.selectFrom('accounts').select('payout_bank_account').where('id', '=', k.accountId).executeTakeFirstOrThrow()).payout_bank_account?.includes('12345-6'), true, 'unchanged');
      await viewerContext.close();
    });

    test('the home shows the business from the aggregates: figures, charts with tables, filters by merchant and mode, by keyboard', async () => {
      await goto(page, '/');
      assert.equal(new URL(page.url()).pathname, '/backoffice/home');
      assert.equal(await heading(page), 'Início');
      const stats = await page.evaluate(async () => (await fetch('/admin/stats')).json());
      assert.ok(stats.payments.count >= 3, JSON.stringify(stats.payments));
      const kpi = (name: string) => page.locator('.kpis div', { hasText: name }).locator('dd').innerText();
      assert.equal((await kpi('Pagamentos')).trim(), String(stats.payments.count));
      assert.equal((await kpi('Volume aprovado')).replace(/\s/g, ' '), new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' }).format(stats.payments.volume / 100).replace(/\s/g, ' '));
      // Each chart is an image with a name and a description, and its figures are in a table.
      const charts = page.locator('figure.chart svg[role="img"]');
      assert.equal(await charts.count(), 2);
      assert.equal(await page.getByRole('img', { name: 'Volume aprovado por dia e meio' }).count(), 1);
      assert.ok((await page.locator('figure.chart rect').count()) >= 1, 'bars drawn');
      // Keyboard: the first chart's table opens from its summary with Enter.
      await page.locator('figure.chart summary').first().focus();
      await page.keyboard.press('Enter');
      const rows = page.locator('figure.chart details[open] tbody tr');
      assert.ok((await rows.count()) >= 1);
      assert.match(await page.locator('main').innerText(), /Recusas por motivo[\s\S]*card_declined/);
      assert.match(await page.locator('main').innerText(), /America\/Sao_Paulo/);
      await axe(page, 'home');
      await shot(page, 'home');
      // Filters: this merchant, live mode (nothing there), with the keyboard.
      await page.getByLabel('Lojista').selectOption(k.accountId);
      await page.getByLabel('Modo').selectOption('live');
      await page.getByLabel('Modo').focus();
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.waitForURL(/mode=live/);
      await settled(page);
      await page.locator('main p.muted', { hasText: `Loja Exemplo ${engine}` }).waitFor();
      // Waits for I/O: the back office in the browser (and the server it calls).
      await eventually(async () => (await kpi('Pagamentos')).trim() === '0', 'the live figures');
      await axe(page, 'home (filtered)');
    });

    test('find anything from the header; payments and settlements filtered by method and amount, exported as CSV', async () => {
      const [latest] = (await api('GET', '/v1/payments?limit=1')).body.data;
      // An id opens its screen.
      await page.getByRole('searchbox', { name: 'Buscar qualquer coisa' }).fill(latest.id);
      await page.getByRole('searchbox', { name: 'Buscar qualquer coisa' }).press('Enter');
      await page.waitForURL(new RegExp(`/payments/${latest.id}$`));
      await settled(page);
      // A CNPJ lists the recipients with it, masked, with their merchant's name.
      await page.getByRole('searchbox', { name: 'Buscar qualquer coisa' }).fill('11.222.333/0001-81');
      await page.getByRole('searchbox', { name: 'Buscar qualquer coisa' }).press('Enter');
      await page.getByRole('heading', { name: 'Resultados da busca' }).waitFor();
      await settled(page);
      const row = page.locator('tr[data-result-type="recipient"]');
      assert.match(await row.innerText(), /Loja do Zé LTDA · 11\.\*\*\*\.\*\*\*\/\*\*\*\*-81/);
      assert.match(await row.innerText(), new RegExp(`Loja Exemplo ${engine}`));
      await axe(page, 'search results');
      // Payments: an ambiguous amount is refused on its field, which gets the focus.
      await goto(page, '/payments');
      await page.getByLabel('Meio', { exact: true }).selectOption('credit_card');
      await page.getByLabel('Valor mínimo (R$)').fill('123.45');
      await page.getByRole('button', { name: 'Buscar', exact: true }).last().click();
      await page.locator('#p-min-error', { hasText: /^Valor ambíguo/ }).waitFor();
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'p-min');
      await page.getByLabel('Valor mínimo (R$)').fill('123,45');
      await page.getByLabel('Valor máximo (R$)').fill('123,45');
      await page.getByRole('button', { name: 'Buscar', exact: true }).last().click();
      await page.waitForURL(/amountGte=12345/);
      await settled(page);
      const ids = await shownPaymentIds(page);
      const expected = (await api('GET', '/v1/payments?limit=100')).body.data.filter((p: { amount: number; method: string }) => p.amount === 12345 && p.method === 'credit_card').map((p: { id: string }) => p.id);
      // Waits for I/O: the back office in the browser (and the server it calls).
      await eventually(async () => JSON.stringify(await shownPaymentIds(page)) === JSON.stringify(expected), `the filtered payments (${ids.join(',')})`);
      await axe(page, 'payments filtered by amount');
      const href = await page.getByRole('link', { name: 'Exportar CSV do que está filtrado' }).getAttribute('href');
      assert.match(href ?? '', /^\/admin\/payments\.csv\?.*method=credit_card.*amountGte=12345.*amountLte=12345/);
      const csv = await page.evaluate(async (url) => (await fetch(url)).text(), href as string);
      const lines = csv.trim().split('\r\n');
      assert.equal(lines.length, expected.length + 1);
      assert.ok(lines.slice(1).every((l) => l.includes(',12345,123.45,')), csv);
      // Settlements of every run, filtered by status.
      await page.getByRole('link', { name: 'Repasses', exact: true }).click();
      await page.getByRole('heading', { name: 'Repasses' }).waitFor();
      await settled(page);
      await page.getByLabel('Situação').selectOption('paid');
      await page.getByRole('button', { name: 'Buscar', exact: true }).last().click();
      await page.waitForURL(/status=paid/);
      await settled(page);
      assert.ok((await page.locator('tbody .badge-paid').count()) >= 1);
      assert.equal(await page.locator('tbody .badge-held').count(), 0);
      await axe(page, 'settlements');
      await shot(page, 'settlements');
      // The runs list says who started each run and why; times carry their time zone.
      await goto(page, '/settlement-runs');
      const started = await page.locator('td[data-started-by]').allInnerTexts();
      assert.ok(started.some((c) => c.includes(adminEmail) && c.includes('Motivo: ')), started.join(' | '));
      assert.match(await page.locator('tbody').innerText(), /\d{2}:\d{2}:\d{2} BRT/);
      await axe(page, 'settlement runs with who and why');
    });

    test('context and feedback: the merchant named on every account screen, no recipient preselected, focus on the first wrong field, a confirmation after saving, a first load with no failing request', async () => {
      for (const path of [`/accounts/${k.accountId}`, `/accounts/${k.accountId}/recipients`, `/accounts/${k.accountId}/split-rules`, `/accounts/${k.accountId}/split-rules/new`]) {
        await goto(page, path);
        assert.equal(await page.locator('nav.breadcrumb [data-merchant-name]').innerText(), `Loja Exemplo ${engine}`, path);
      }
      // The new rule's recipient is a choice to make; saving without it puts the focus on it.
      const select = page.getByLabel('Recebedor').first();
      assert.equal(await select.inputValue(), '');
      assert.match(await select.innerText(), /Loja do Zé LTDA · 11\.\*\*\*\.\*\*\*\/\*\*\*\*-81/);
      await page.getByLabel('Percentual (%)').fill('10');
      await page.getByRole('button', { name: 'Salvar', exact: true }).click();
      await page.getByText('Escolha o recebedor desta parte.').waitFor();
      // Waits for I/O: the back office in the browser (and the server it calls).
      await eventually(async () => (await page.evaluate(() => document.activeElement?.id)) === 'share-0-recipient', 'the focus on the recipient');
      await select.selectOption(seller);
      await page.getByLabel('Descrição').fill('Regra de rascunho');
      await page.getByRole('button', { name: 'Salvar', exact: true }).click();
      await page.getByRole('heading', { name: 'Regras de divisão' }).waitFor();
      assert.equal(await page.locator('[data-flash]').innerText(), 'Regra salva.');
      await axe(page, 'split rules after a save');
      // A first load, signed out: the session check answers 200, and no request fails.
      const fresh = await newContext();
      const p = await newPage(fresh);
      const failing: string[] = [];
      p.on('response', (r) => {
        if (r.status() >= 400) failing.push(`${r.status()} ${r.url()}`);
      });
      const consoleErrors: string[] = [];
      p.on('console', (m) => {
        if (m.type() === 'error') consoleErrors.push(m.text());
      });
      await p.goto(`${origin}/backoffice/`);
      await p.getByRole('heading', { name: 'Entrar no backoffice' }).waitFor();
      assert.deepEqual(failing, []);
      assert.deepEqual(consoleErrors, []);
      await fresh.close();
    });

    // The admin API as the signed-in page calls it (its session cookie; GETs need no CSRF token).
    const adminGet = async (url: string) => {
      const res = await t.app.inject({ method: 'GET', url, headers: { cookie: (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ') } });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };
    type Outcome = { rule: { id: string } | null; previewedRuleApplies: boolean; receivables: Array<{ payee: { type: string; id: string }; amount: number }> };
    const outcomeRows = (o: Outcome) => o.receivables.map((r) => ({ payee: `${r.payee.type}:${r.payee.id}`, amount: r.amount }));
    // The two sides of a preview of a change, as drawn, with the server's answer they came from.
    const comparePreview = async (p: Page, submit: () => Promise<void>) => {
      const answered = p.waitForResponse((r) => r.url().endsWith('/admin/split-rules/preview'));
      await submit();
      const res = await answered;
      assert.equal(res.status(), 200);
      const body = await res.json() as { now: Outcome; after: Outcome };
      await p.locator('.preview-compare').waitFor();
      const side = async (kind: 'now' | 'after') => ({
        rule: await p.locator(`[data-outcome="${kind}"] [data-preview-rule]`).getAttribute('data-preview-rule'),
        label: await p.locator(`[data-outcome="${kind}"] [data-preview-rule]`).innerText(),
        rows: await p.locator(`[data-outcome="${kind}"] table.preview tbody tr`).evaluateAll((rows) => rows.map((r) => ({ payee: (r as HTMLElement).dataset.payee as string, amount: Number((r as HTMLElement).dataset.amount) }))),
      });
      const now = await side('now');
      const after = await side('after');
      assert.equal(await p.locator('[data-outcome="now"] h3').innerText(), 'Agora');
      assert.equal(await p.locator('[data-outcome="after"] h3').innerText(), 'Depois da mudança');
      // Drawn exactly as answered, to the centavo.
      assert.deepEqual(now.rows, outcomeRows(body.now));
      assert.deepEqual(after.rows, outcomeRows(body.after));
      return { now, after, body };
    };

    test('preview before activating: an inactive rule from the list, an edit from the editor before saving, "agora" beside "depois da mudança", equal to a real sale after activating', async () => {
      await goto(page, `/accounts/${k.accountId}/split-rules`);
      const rules = (await adminGet(`/admin/split-rules?accountId=${k.accountId}&limit=100`)).data as Array<{ id: string; active: boolean; description: string | null; priority: number }>;
      const draft = rules.find((r) => r.description === 'Regra de rascunho' && !r.active);
      assert.ok(draft, 'the draft saved by the previous test');
      // From the list, by keyboard: the inactive rule's Simular puts it in the preview and the focus on the amount.
      const button = ruleRow(page, draft.id).locator('[data-preview-rule-button]');
      await button.focus();
      await page.keyboard.press('Enter');
      // Waits for I/O: the back office in the browser (and the server it calls).
      await eventually(async () => (await page.evaluate(() => document.activeElement?.id)) === 'preview-amount', 'the focus on the amount');
      assert.equal(await page.locator('#preview-with').inputValue(), draft.id);
      await page.keyboard.type('123,45');
      const listed = await comparePreview(page, () => page.keyboard.press('Enter'));
      // The inactive rule is last by priority: it applies after activating only if no active rule takes the sale first.
      assert.equal(listed.body.after.previewedRuleApplies, listed.body.after.rule?.id === draft.id);
      assert.equal(listed.after.rule, listed.body.after.rule?.id ?? '');
      if (!listed.body.after.previewedRuleApplies) await page.locator('[data-preview-same]').waitFor();
      await axe(page, 'split rules: preview of an inactive rule');
      await shot(page, 'split-rules-preview-inactive');
      assert.equal((await adminGet(`/admin/split-rules/${draft.id}`)).active, false, 'previewing activates nothing');

      // In the editor, before saving: the draft moved first (priority 0). A wrong field is refused first, with the focus on it.
      await goto(page, `/accounts/${k.accountId}/split-rules/${draft.id}/edit`);
      await page.getByLabel('Prioridade').fill('0');
      await page.getByLabel('Percentual (%)').fill('');
      await page.getByLabel('Valor da venda (R$)').fill('123,45');
      await page.getByRole('button', { name: 'Simular a mudança' }).click();
      await page.getByText('Informe o percentual.').waitFor();
      // Waits for I/O: the back office in the browser (and the server it calls).
      await eventually(async () => (await page.evaluate(() => document.activeElement?.id)) === 'share-0-value', 'the focus on the share');
      assert.equal(await page.locator('.preview-result').count(), 0);
      await page.keyboard.type('10');
      await page.getByLabel('Valor da venda (R$)').focus();
      const edited = await comparePreview(page, () => page.keyboard.press('Enter'));
      assert.equal(edited.after.rule, draft.id);
      assert.match(edited.after.label, /com as alterações/);
      assert.notEqual(edited.now.rule, draft.id);
      assert.equal(edited.body.after.previewedRuleApplies, true);
      assert.equal(edited.after.rows.find((r) => r.payee === `recipient:${seller}`)?.amount !== undefined, true);
      await axe(page, 'rule editor: preview before saving');
      await shot(page, 'split-rule-editor-preview');
      assert.equal((await adminGet(`/admin/split-rules/${draft.id}`)).priority, draft.priority, 'previewing saves nothing');

      // Saved and activated as previewed: a real sale gets what "depois da mudança" showed.
      await page.getByRole('button', { name: 'Salvar e ativar' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Motivo').fill('Simulado antes de ativar');
      await dialog.getByRole('button', { name: 'Salvar e ativar' }).click();
      await page.getByRole('heading', { name: 'Regras de divisão' }).waitFor();
      const sale = await cardSale(12_345);
      assert.deepEqual(asSet(sale.map((r) => ({ payee: `${r.payee.type}:${r.payee.id}`, amount: r.amount }))), asSet(edited.after.rows));
      assert.ok(sale.every((r) => r.splitRuleId === draft.id));
    });

    test('merchants are named, not only shown by id: payments, a payment, settlements, a run, the audit log', async () => {
      const name = `Loja Exemplo ${engine}`;
      const namesOn = async (path: string) => {
        await goto(page, path);
        const names = await page.locator('main [data-merchant-name]').allInnerTexts();
        assert.ok(names.includes(name), `${name} on ${path}: ${names.join()}`);
        assert.ok(names.every((n) => n.trim() !== '' && !/^acct_/.test(n)), `names, not ids, on ${path}: ${names.join()}`);
      };
      await namesOn(`/payments?accountId=${k.accountId}`);
      const payment = (await adminGet(`/admin/payments?accountId=${k.accountId}&limit=1`)).data[0];
      assert.equal(payment.accountName, name);
      await namesOn(`/payments/${payment.id}`);
      await namesOn(`/settlements?accountId=${k.accountId}`);
      const run = (await adminGet('/admin/settlement-runs?limit=1')).data[0];
      await namesOn(`/settlement-runs/${run.id}`);
      await namesOn('/audit-log?objectType=split_rule');
      await axe(page, 'audit log with merchant names');
    });

    test('checkout branding by keyboard: display name, a logo refused over 64 KiB, an accent refused below WCAG AA, then saved and served', async () => {
      await goto(page, `/accounts/${k.accountId}`);
      const form = page.locator('section[aria-labelledby="branding-title"]');
      const focusedId = () => page.evaluate(() => document.activeElement?.id ?? null);
      await form.getByLabel('Nome exibido').focus();
      await page.keyboard.type('Zé Marketplace');
      await page.keyboard.press('Tab');
      assert.equal(await focusedId(), 'branding-accentColor');
      await page.keyboard.type('#7dd3fc'); // sky blue: 1.8:1 against white
      await page.keyboard.press('Tab');
      assert.equal(await focusedId(), 'branding-logo');
      // A file over 64 KiB is refused before it is sent, on the logo field.
      const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
      const big = Buffer.concat([png, Buffer.alloc(70 * 1024)]);
      const requests: string[] = [];
      const track = (r: { url(): string; method(): string }) => {
        if (r.url().includes('/checkout-branding') && r.method() === 'PATCH') requests.push(r.url());
      };
      page.on('request', track);
      await form.getByLabel(/^Logotipo/).setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: big });
      await form.locator('#branding-logo-error', { hasText: /O arquivo tem 71 KiB; o limite é 64 KiB/ }).waitFor();
      assert.equal(await form.locator('#branding-logo').getAttribute('aria-invalid'), 'true');
      assert.equal(await focusedId(), 'branding-logo');
      await axe(page, 'branding: logo refused');
      // Saving with the refused file stays on it: nothing is sent.
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      // Waits for I/O: the back office in the browser (and the server it calls).
      await eventually(async () => (await focusedId()) === 'branding-logo', 'the focus back on the logo');
      assert.deepEqual(requests, []);
      // A small PNG; the accent is refused by the server (WCAG AA), the focus goes to it, nothing is saved.
      await form.getByLabel(/^Logotipo/).setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: png });
      await form.locator('#branding-logo-error').waitFor({ state: 'detached' });
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await form.locator('#branding-accentColor-error', { hasText: /^A cor #7dd3fc tem contraste de 1,\d+:1 com o branco; o WCAG AA pede pelo menos 4,5:1/ }).waitFor();
      assert.equal(await focusedId(), 'branding-accentColor');
      assert.equal(await form.locator('#branding-accentColor').getAttribute('aria-invalid'), 'true');
      assert.equal(requests.length, 1);
      assert.equal((await adminGet(`/admin/accounts/${k.accountId}/checkout-branding`)).displayName, null, 'a refused field changes nothing');
      await axe(page, 'branding: accent refused');
      await shot(page, 'branding-refused');
      // A darker accent, submitted with Enter in its field: saved, confirmed, and served.
      await page.keyboard.press('Control+A');
      await page.keyboard.type('#0F766E');
      await page.keyboard.press('Enter');
      await form.getByRole('status').filter({ hasText: 'Marca salva.' }).waitFor();
      page.off('request', track);
      const saved = await adminGet(`/admin/accounts/${k.accountId}/checkout-branding`);
      assert.equal(saved.displayName, 'Zé Marketplace');
      assert.equal(saved.accentColor, '#0f766e');
      assert.equal(saved.logo.bytes, png.length);
      const img = form.locator('img');
      assert.equal(await img.getAttribute('src'), saved.logo.url);
      // Waits for I/O: the back office in the browser (and the server it calls).
      await eventually(async () => (await img.evaluate((el) => (el as HTMLImageElement).naturalWidth)) === 1, 'the logo drawn from the instance');
      const served = await fetch(`${origin}${saved.logo.url}`);
      assert.equal(served.headers.get('content-type'), 'image/png');
      assert.ok(Buffer.from(await served.arrayBuffer()).equals(png));
      assert.equal(await form.locator('[aria-invalid="true"]').count(), 0);
      await axe(page, 'branding saved');
    });

    test('disputes: the list with deadlines and the payment\'s link, filtered with the keyboard, in pt-BR first', async () => {
      // A sandbox has no acquirer to charge a sale back: the server's own dispute service applies
      // a chargeback's stages (what its card sync does with Adyen's notifications).
      const sale = async () => {
        const p = await api('POST', '/v1/payments', { amountInCents: 12_345, method: 'credit_card', cardToken: 'tok_visa' });
        // Waits for I/O: the server's worker confirming the sale (as cardSale above).
        await eventually(async () => (await api('GET', `/v1/payments/${p.body.id}`)).body.status === 'approved', 'card approval');
        return p.body.id as string;
      };
      const stage = (paymentId: string, ref: string, rank: number, status: 'needs_response' | 'lost', respondBy: string | null) => t.store.write((tx) => applyDisputeStage(tx, t.store.engine, paymentId, {
        sourceRef: ref, connectorAccountId: 'cna_backoffice_test', rank, status, amountCents: null, reason: 'Fraude', reasonCode: '10.4', respondBy,
      }, Date.now()));
      const open = await sale();
      const lost = await sale();
      assert.ok(await stage(open, `BO-${engine}-1`, 1, 'needs_response', '2026-12-19T15:00:00.000Z'));
      assert.ok(await stage(lost, `BO-${engine}-2`, 2, 'lost', null));

      // From the navigation, with the keyboard.
      await goto(page, '/home');
      await page.getByRole('link', { name: 'Disputas' }).focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/backoffice\/disputes$/);
      await settled(page);
      assert.equal(await heading(page), 'Disputas');
      const row = (paymentId: string) => page.locator('tr', { has: page.locator(`a[data-payment-link][href$="${paymentId}"]`) });
      await row(open).waitFor();
      // The deadline in São Paulo time, with its zone; a dispute without one says so.
      const deadline = new Intl.DateTimeFormat('pt-BR', { dateStyle: 'short', timeStyle: 'long', timeZone: 'America/Sao_Paulo' }).format(new Date('2026-12-19T15:00:00.000Z'));
      assert.equal((await row(open).locator('[data-respond-by]').innerText()).trim(), deadline);
      assert.match(await row(open).innerText(), /Chargeback \(cartão\)[\s\S]*R\$\s?123,45[\s\S]*Aguardando resposta/);
      assert.equal((await row(lost).locator('[data-respond-by]').innerText()).trim(), 'Sem prazo');
      assert.match(await row(lost).innerText(), /Perdida/);
      assert.match(await row(lost).innerText(), /Debitado: R\$\s?123,45/);
      await axe(page, 'disputes');

      // Filter by status with the keyboard: the lost one only. The filtered answer is held until
      // the screen has been read: until it comes, the old rows say they are not this filter's.
      let release = () => {};
      const held = new Promise<void>((resolve) => { release = resolve; });
      const filtered = (url: URL) => url.pathname.endsWith('/admin/disputes') && url.searchParams.get('status') === 'lost';
      await page.route(filtered, async (route) => { await held; await route.continue(); });
      await page.getByLabel('Situação').focus();
      await page.getByLabel('Situação').selectOption('lost');
      await page.getByRole('button', { name: 'Buscar' }).focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(/status=lost/);
      await page.locator('.loaded.stale[aria-busy="true"]').waitFor({ state: 'attached' });
      assert.match((await page.locator('[role="status"]').first().textContent()) ?? '', /Carregando/);
      assert.equal(await page.locator('.loaded.stale').locator(`a[data-payment-link][href$="${open}"]`).count(), 1, 'the old rows, marked busy');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Buscar', 'the focus stays on the button');
      release();
      await settled(page);
      await page.unroute(filtered);
      assert.equal(await page.locator('.loaded.stale').count(), 0);
      await row(lost).waitFor();
      assert.equal(await row(open).count(), 0);
      await axe(page, 'disputes (filtered)');

      // The payment's link leads to the payment.
      await row(lost).locator('a[data-payment-link]').focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(new RegExp(`/backoffice/payments/${lost}$`));
      await settled(page);
      // Which shows its dispute.
      assert.match(await page.locator('section[aria-labelledby="dsp-title"] tbody').innerText(), /Chargeback \(cartão\)[\s\S]*Perdida[\s\S]*Sem prazo/);
      await axe(page, 'payment with a dispute');
    });

    test('when the session expires, sign-in comes back and then the same page', async () => {
      await goto(page, `/accounts/${k.accountId}`);
      await t.store.write((tx) => tx.updateTable('admin_sessions').set({ expires_at_ms: 0 }).execute());
      await page.getByRole('link', { name: 'Recebedores' }).click();
      await page.getByText('Sua sessão expirou. Entre de novo para voltar a esta página.').waitFor();
      assert.equal(new URL(page.url()).pathname, `/backoffice/accounts/${k.accountId}/recipients`);
      await axe(page, 'sign-in after expiry');
      await signInWith(page, adminEmail);
      await page.getByRole('heading', { name: 'Recebedores' }).waitFor();
      assert.equal(new URL(page.url()).pathname, `/backoffice/accounts/${k.accountId}/recipients`);
    });

    test('English, with amounts in R$', async () => {
      await goto(page, `/accounts/${k.accountId}/split-rules`);
      await page.getByRole('button', { name: 'Switch to English' }).click();
      await page.getByRole('heading', { name: 'Split rules' }).waitFor();
      const preview = await (async () => {
        await page.getByLabel('Sale amount (R$)').fill('1,234.56');
        await page.getByRole('button', { name: 'Preview', exact: true }).click();
        await page.locator('.preview-result').waitFor();
        return page.locator('.preview-result').innerText();
      })();
      assert.match(preview, /R\$1,234\.56/);
      assert.match(await page.locator('html').getAttribute('lang') ?? '', /^en/);
      await axe(page, 'split rules (English)');
      await shot(page, 'english');
      // The Portuguese notation, in English, is refused as ambiguous.
      await page.getByLabel('Sale amount (R$)').fill('1.234,56');
      await page.getByRole('button', { name: 'Preview', exact: true }).click();
      await page.locator('#preview-amount-error', { hasText: /^Ambiguous amount: in English a period separates the cents/ }).waitFor();
      // The choice survives a reload; the only thing stored in the browser is that preference.
      await page.reload();
      await page.getByRole('heading', { name: 'Split rules' }).waitFor();
      assert.deepEqual(await page.evaluate(() => ({ ...localStorage })), { 'backoffice.lang': 'en' });
      assert.deepEqual(await page.evaluate(() => ({ session: sessionStorage.length, cookie: document.cookie })), { session: 0, cookie: '' });
      await page.getByRole('button', { name: 'Mudar para português' }).click();
      await page.getByRole('heading', { name: 'Regras de divisão' }).waitFor();
      await page.reload();
      await page.getByRole('heading', { name: 'Regras de divisão' }).waitFor();
      assert.deepEqual(await page.evaluate(() => ({ ...localStorage })), { 'backoffice.lang': 'pt-BR' });
    });

    test('sign out ends the session', async () => {
      await page.getByRole('button', { name: 'Sair' }).click();
      await page.getByText('Você saiu.').waitFor();
      const status = await page.evaluate(async () => (await fetch('/admin/session')).status);
      assert.equal(status, 401);
    });

    test('every screen passed axe; no CSP violation, no script error, no request outside the instance', async () => {
      assert.ok(axeScreens.length >= 28, `${axeScreens.length}: ${axeScreens.join(', ')}`);
      const csp = await page.evaluate(() => (window as unknown as { __csp: string[] }).__csp);
      assert.deepEqual(csp, []);
      assert.deepEqual(cspViolations, []);
      assert.deepEqual(pageErrors, []);
      assert.deepEqual(foreignRequests, []);
    });
  });
}

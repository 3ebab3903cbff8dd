// Screenshots of every state of the hosted checkout, at desktop (1024 × 768, the modal over the
// example shop) and phone (390 × 844, full-screen) sizes, into docs/images/checkout/ for
// docs/checkout.md. A real server (temporary SQLite), the example shop, headless Chromium
// (playwright-core, /usr/bin/chromium). Run: npm run screenshots -w apps/checkout-page
import { mkdirSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium, type FrameLocator, type Page } from 'playwright-core';
import { adminSession, signup, startApp } from '../../server/test/helpers.js';
import { createDemoServer } from '../../../examples/checkout-demo/server.mjs';

const OUT = fileURLToPath(new URL('../../../docs/images/checkout/', import.meta.url));
const SIZES = { desktop: { width: 1024, height: 768 }, phone: { width: 390, height: 844 } } as const;
type Size = keyof typeof SIZES;

const t = await startApp('sqlite');
await t.app.listen({ port: 0, host: '127.0.0.1' });
const api = `http://localhost:${(t.app.server.address() as AddressInfo).port}`;
const keys = await signup(t, 'Loja Exemplo Ltda');
const shop = createDemoServer({ apiUrl: api, secretKey: keys.secretKey, amount: 15990, description: 'Tênis de corrida (42)' });
await new Promise<void>((r) => shop.listen(0, '127.0.0.1', r));
const shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}/`;
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
mkdirSync(OUT, { recursive: true });

try {
  // A logo drawn by the browser itself, then uploaded through the admin API with an accent color.
  const painter = await browser.newPage({ viewport: { width: 80, height: 80 } });
  await painter.setContent('<div style="width:80px;height:80px;border-radius:16px;background:#7c2d12;color:#fff;font:700 34px/80px system-ui;text-align:center">LE</div>');
  const logo = (await painter.screenshot({ clip: { x: 0, y: 0, width: 80, height: 80 } })).toString('base64');
  await painter.close();
  const admin = await adminSession(t);
  const branded = await t.app.inject({
    method: 'PATCH', url: `/admin/accounts/${keys.accountId}/checkout-branding`,
    headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf },
    payload: { displayName: 'Loja Exemplo', accentColor: '#9a3412', logo: { contentType: 'image/png', dataBase64: logo } },
  });
  if (branded.statusCode !== 200) throw new Error(branded.body);

  const session = async (extra: object = {}) => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/checkout/sessions', headers: { authorization: `Bearer ${keys.secretKey}` }, payload: { amount: 15990, description: 'Tênis de corrida (42)', installments: 4, ...extra } });
    return res.json<{ id: string; clientSecret: string }>();
  };
  const shots: string[] = [];
  const shoot = async (page: Page, size: Size, name: string) => {
    const file = `${OUT}${name}-${size}.png`;
    await page.waitForTimeout(300); // the modal's height transition and the fonts
    // Desktop: the dialog (or the page's card) and a margin around it, not the whole shop; it
    // halves the file.
    const box = size === 'desktop' ? await (await page.locator('[role="dialog"] > div[data-layout]').count() ? page.locator('[role="dialog"] > div[data-layout]') : page.locator('main')).boundingBox() : null;
    const margin = 24;
    await page.screenshot(box
      ? { path: file, clip: { x: Math.max(0, box.x - margin), y: 0, width: Math.min(SIZES.desktop.width, box.width + 2 * margin), height: SIZES.desktop.height } }
      : { path: file });
    shots.push(`${name}-${size}.png ${statSync(file).size} B`);
  };

  for (const size of Object.keys(SIZES) as Size[]) {
    const context = await browser.newContext({ viewport: SIZES[size], locale: 'pt-BR' });
    const fresh = async () => {
      const page = await context.newPage();
      await page.goto(shopUrl);
      await page.waitForFunction(() => typeof (window as unknown as { PagamentosCheckout?: unknown }).PagamentosCheckout === 'object');
      return page;
    };
    const open = async (page: Page, s: { id: string; clientSecret: string }, extra = '') => {
      await page.evaluate(`PagamentosCheckout.open({ sessionId: ${JSON.stringify(s.id)}, clientSecret: ${JSON.stringify(s.clientSecret)} ${extra} })`);
      await page.waitForFunction(() => document.querySelector('[role="dialog"] iframe') && !document.querySelector('[role="dialog"] [role="status"]'));
      return page.frameLocator('[role="dialog"] iframe');
    };
    const fill = async (f: FrameLocator | Page, number: string) => {
      await f.getByLabel('Número do cartão').fill(number);
      await f.getByLabel('Validade (MM/AA)').fill('12/34');
      await f.getByLabel('Código de segurança (CVC)').fill('123');
      await f.getByLabel('Nome impresso no cartão').fill('Maria da Silva');
    };

    // Card form, filled, 4 installments chosen (2 × R$ 39,98 + 2 × R$ 39,97, total beside).
    let page = await fresh();
    let f = await open(page, await session());
    await fill(f, '4242 4242 4242 4242');
    await f.getByLabel('Parcelas').selectOption('4');
    await shoot(page, size, 'card');
    // Checked before sending.
    await f.getByLabel('Número do cartão').fill('4242 4242 4242 4241');
    await f.getByLabel('Validade (MM/AA)').fill('');
    await f.getByRole('button', { name: /^Pagar/ }).click();
    await f.getByRole('alert').getByText('Corrija os campos indicados.').waitFor();
    await shoot(page, size, 'card-errors');
    // Declined.
    await fill(f, '4000 0000 0000 0002');
    await f.getByRole('button', { name: /^Pagar/ }).click();
    await f.getByRole('alert').getByText(/Pagamento recusado/).waitFor();
    await shoot(page, size, 'declined');
    // Approved.
    await fill(f, '4242 4242 4242 4242');
    await f.getByRole('button', { name: /^Pagar/ }).click();
    await f.getByRole('heading', { name: 'Pagamento aprovado' }).waitFor();
    await shoot(page, size, 'success');
    await page.close();

    // Pix: the code (the QR code first on a desktop, copying first on a phone), then back to the card.
    page = await fresh();
    const pixSession = await session();
    f = await open(page, pixSession);
    await f.getByLabel('Pix', { exact: true }).check();
    await shoot(page, size, 'pix-start');
    await f.getByRole('button', { name: 'Gerar código Pix' }).click();
    await f.getByLabel('Pix copia e cola').waitFor();
    await shoot(page, size, 'pix');
    await f.getByRole('button', { name: 'Pagar com cartão' }).click();
    await f.getByRole('button', { name: 'Voltar ao código Pix' }).waitFor();
    await shoot(page, size, 'pix-kept-card');
    await page.close();

    // A Pix that expired before its session.
    page = await fresh();
    const expiring = await session({ methods: ['pix', 'credit_card'] });
    f = await open(page, expiring);
    await f.getByRole('button', { name: 'Gerar código Pix' }).click();
    await f.getByLabel('Pix copia e cola').waitFor();
    const pixId = (await t.app.inject({ method: 'GET', url: `/v1/checkout/sessions/${expiring.id}`, headers: { authorization: `Bearer ${keys.secretKey}` } })).json<{ paymentId: string }>().paymentId;
    const past = Date.now() - 1000;
    await t.store.write(async (tx) => {
      await tx.updateTable('payments').set({ expires_at: new Date(past).toISOString() }).where('id', '=', pixId).execute();
      await tx.updateTable('jobs').set({ run_at_ms: past }).where('type', '=', 'payment.expire').where('payload', 'like', `%${pixId}%`).execute();
    });
    t.worker.kick();
    await f.getByRole('heading', { name: /Pix expirou/ }).waitFor();
    await shoot(page, size, 'pix-expired');
    await page.close();

    // An expired session.
    page = await fresh();
    const gone = await session();
    await t.app.inject({ method: 'POST', url: `/v1/checkout/sessions/${gone.id}/expire`, headers: { authorization: `Bearer ${keys.secretKey}` } });
    f = await open(page, gone);
    await f.getByRole('heading', { name: 'Pagamento expirado' }).waitFor();
    await shoot(page, size, 'expired');
    await page.close();

    // Redirect mode: the page alone, looking like the modal.
    page = await context.newPage();
    const alone = await session({ cancelUrl: shopUrl });
    await page.goto(`${api}/checkout/${alone.id}#${alone.clientSecret}`);
    await page.getByLabel('Número do cartão').waitFor();
    await shoot(page, size, 'redirect');
    await page.close();
    await context.close();
  }
  console.log(shots.join('\n'));
} finally {
  await browser.close();
  shop.close();
  await t.teardown();
}

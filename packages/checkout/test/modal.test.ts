// The library's modal in a real headless Chromium, on a merchant page of its own origin, with the
// built script-tag bundle (dist/checkout.global.js) loaded from a second origin that plays the
// payment service. The page in the iframe is a small stand-in whose buttons send the protocol's
// messages on demand, so that states the real page passes through in milliseconds (a payment in
// flight) can be held while the test presses Esc. The real page and server are exercised by
// apps/checkout-page/test/checkout.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const MISSING = existsSync(CHROMIUM) ? null : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
// In CI a missing browser fails the run: a suite that skips there proves nothing and says so
// nowhere anyone looks. On a developer's machine it is skipped, with a warning.
if (MISSING && process.env.CI) throw new Error(`${MISSING}: the checkout library browser test cannot run, and CI must run it`);
const SKIP = MISSING ? `${MISSING}: checkout library browser test skipped` : false;
if (SKIP) console.warn(SKIP);
const SCRIPT = new URL('../dist/checkout.global.js', import.meta.url);
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const SESSION = 'cs_01fixturesession000000000';
const SECRET = `${SESSION}_secret_abcdefghijklmnopqrstuvwxyz0123456789`;
const SILENT = 'cs_01silentsession0000000000';

// The stand-in page: posts `ready` and `loaded` to its parentOrigin (unless the session is the
// silent one), and buttons post the rest. It is served by the "service" origin.
const standIn = (_sessionId: string) => `<!doctype html><html lang="en"><head><title>page</title><script src="/stand-in.js" defer></script></head>
<body><button id="busy-on">busy on</button><button id="busy-off">busy off</button><button id="success">success</button><button id="close">close</button><input id="last" aria-label="last"></body></html>`;
const STAND_IN_JS = `
const params = new URLSearchParams(location.search);
const parentOrigin = params.get('parentOrigin');
const sessionId = location.pathname.split('/').pop();
const post = (m) => parent.postMessage({ ...m, sessionId }, parentOrigin);
window.__hash = location.hash;
if (!sessionId.startsWith('cs_01silent')) { post({ type: 'pagamentos:checkout:ready' }); post({ type: 'pagamentos:checkout:loaded' }); }
document.getElementById('busy-on').onclick = () => post({ type: 'pagamentos:checkout:busy', busy: true });
document.getElementById('busy-off').onclick = () => post({ type: 'pagamentos:checkout:busy', busy: false });
document.getElementById('success').onclick = () => post({ type: 'pagamentos:checkout:success', paymentId: 'pay_fromthepage', status: 'approved' });
document.getElementById('close').onclick = () => post({ type: 'pagamentos:checkout:close' });
document.addEventListener('keydown', (e) => { if (e.key === 'Escape') post({ type: 'pagamentos:checkout:close' }); });
`;

const MERCHANT = (service: string) => `<!doctype html><html lang="en"><head><title>shop</title>
<script src="${service}/v1/checkout.js"></script><script src="/shop.js" defer></script></head>
<body><main><h1>Shop</h1><button id="pay">Pagar</button><a href="#x" id="after">after</a><div style="height:3000px"></div></main></body></html>`;
const SHOP_JS = `
window.__events = [];
window.openCheckout = (extra = {}) => {
  window.__handle = PagamentosCheckout.open({
    sessionId: '${SESSION}', clientSecret: '${SECRET}',
    onSuccess: (r) => __events.push('success:' + r.paymentId + ':' + r.sessionId),
    onCancel: () => __events.push('cancel'),
    onError: (e) => __events.push('error:' + e.code),
    ...extra,
  });
  return true;
};
document.getElementById('pay').onclick = () => openCheckout();
`;
// A page on a third origin, framed by the merchant, trying to pass for the checkout.
const FOREIGN = `<!doctype html><html><head><title>x</title><script src="/foreign.js"></script></head><body></body></html>`;
const FOREIGN_JS = `parent.postMessage({ type: 'pagamentos:checkout:success', sessionId: '${SESSION}', paymentId: 'pay_forged', status: 'approved' }, '*');
parent.postMessage({ type: 'pagamentos:checkout:close', sessionId: '${SESSION}' }, '*');`;

function serve(routes: (path: string) => { type: string; body: string } | null): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const path = new URL(req.url!, 'http://x').pathname;
    const r = routes(path);
    if (!r) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': r.type, 'cache-control': 'no-store' }).end(r.body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}
const port = (s: http.Server) => (s.address() as AddressInfo).port;

describe('checkout library modal in a real browser', { skip: SKIP }, () => {
  let service: http.Server;
  let merchant: http.Server;
  let browser: Browser;
  let page: Page;
  let serviceOrigin: string;
  let merchantOrigin: string;
  const serviceRequests: string[] = [];

  before(async () => {
    const script = readFileSync(SCRIPT, 'utf8');
    service = await serve((path) => {
      serviceRequests.push(path);
      if (path === '/v1/checkout.js') return { type: 'text/javascript', body: script };
      if (path === '/stand-in.js') return { type: 'text/javascript', body: STAND_IN_JS };
      const m = /^\/checkout\/(cs_[a-z0-9]+)$/.exec(path);
      return m ? { type: 'text/html', body: standIn(m[1]) } : null;
    });
    merchant = await serve((path) => {
      if (path === '/') return { type: 'text/html', body: MERCHANT(serviceOrigin) };
      if (path === '/shop.js') return { type: 'text/javascript', body: SHOP_JS };
      if (path === '/foreign') return { type: 'text/html', body: FOREIGN };
      if (path === '/foreign.js') return { type: 'text/javascript', body: FOREIGN_JS };
      return null;
    });
    // The service on localhost, the shop on 127.0.0.1: two origins.
    serviceOrigin = `http://localhost:${port(service)}`;
    merchantOrigin = `http://127.0.0.1:${port(merchant)}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--host-resolver-rules=MAP notallowed.test 127.0.0.1'] });
  });
  after(async () => {
    await browser?.close();
    service?.close();
    merchant?.close();
  });

  const fresh = async () => {
    await page?.close();
    page = await browser.newPage({ viewport: { width: 1024, height: 768 } });
    page.setDefaultTimeout(15_000);
    await page.goto(merchantOrigin + '/');
    await page.waitForFunction(() => typeof (window as unknown as { PagamentosCheckout?: unknown }).PagamentosCheckout === 'object');
  };
  const events = () => page.evaluate(() => (window as unknown as { __events: string[] }).__events);
  const dialog = () => page.locator('[role="dialog"][aria-modal="true"]');
  const frame = () => page.frameLocator('[role="dialog"] iframe');
  const loaded = () => page.waitForFunction(() => !document.querySelector('[role="dialog"] [role="status"]'));

  test('opens from the button: iframe of the service with the session, the secret only in the fragment, spinner until loaded', async () => {
    await fresh();
    await page.locator('#pay').focus();
    await page.keyboard.press('Enter');
    await dialog().waitFor();
    const src = await page.locator('[role="dialog"] iframe').getAttribute('src');
    const url = new URL(src!);
    assert.equal(url.origin, serviceOrigin, 'the service origin comes from the script src');
    assert.equal(url.pathname, `/checkout/${SESSION}`);
    assert.equal(url.searchParams.get('embed'), '1');
    assert.equal(url.searchParams.get('parentOrigin'), merchantOrigin);
    assert.equal(url.hash, `#${SECRET}`);
    assert.ok(!serviceRequests.some((p) => p.includes('secret')), 'the secret never reaches a server');
    await loaded();
    // Scroll locked, the rest of the page inert, aria-modal set.
    assert.equal(await page.evaluate(() => getComputedStyle(document.documentElement).overflow), 'hidden');
    assert.equal(await page.evaluate(() => (document.querySelector('main') as HTMLElement).inert), true);
    assert.equal(await dialog().getAttribute('aria-modal'), 'true');
    // The shop's page with the dialog open (the checkout page itself is checked by its own test).
    await page.evaluate(AXE);
    const violations = await page.evaluate(async () => {
      const result = await (window as unknown as { axe: { run: (ctx: object, opts: object) => Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }> } }).axe.run({ exclude: [['iframe']] }, { resultTypes: ['violations'], iframes: false });
      return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    });
    assert.deepEqual(violations, []);
  });

  test('focus stays in the dialog with the iframe inside: Tab cycles close button -> page -> close button', async () => {
    // Inside the page: its controls, then out past the last one.
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      const where = await page.evaluate(() => {
        const a = document.activeElement;
        return a?.closest('[role="dialog"]') ? 'dialog' : a === document.body ? 'body' : 'outside';
      });
      assert.equal(where, 'dialog', `Tab #${i + 1} left the dialog`);
    }
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Shift+Tab');
      const inside = await page.evaluate(() => !!document.activeElement?.closest('[role="dialog"]'));
      assert.ok(inside, `Shift+Tab #${i + 1} left the dialog`);
    }
  });

  test('a message from a foreign origin (or from the shop itself) is ignored', async () => {
    await page.evaluate((session) => {
      window.postMessage({ type: 'pagamentos:checkout:success', sessionId: session, paymentId: 'pay_self', status: 'approved' }, '*');
      window.postMessage({ type: 'pagamentos:checkout:close', sessionId: session }, '*');
    }, SESSION);
    await page.evaluate((src) => {
      const f = document.createElement('iframe');
      f.src = src;
      f.id = 'foreign';
      document.body.append(f);
    }, `http://notallowed.test:${port(merchant)}/foreign`);
    await page.frameLocator('#foreign').locator('body').waitFor({ state: 'attached' });
    // A real message after the forged ones: when it is handled, the forged ones were too.
    await frame().locator('#busy-on').click();
    await page.waitForFunction(() => (document.querySelector('[role="dialog"] button') as HTMLButtonElement).disabled);
    await frame().locator('#busy-off').click();
    await page.waitForFunction(() => !(document.querySelector('[role="dialog"] button') as HTMLButtonElement).disabled);
    assert.deepEqual(await events(), []);
    assert.equal(await dialog().count(), 1, 'still open');
    await page.evaluate(() => document.getElementById('foreign')?.remove());
  });

  test('while a payment is in flight neither Esc (inside or outside the iframe) nor the close button closes it', async () => {
    await frame().locator('#busy-on').click();
    await page.waitForFunction(() => (document.querySelector('[role="dialog"] button') as HTMLButtonElement).disabled);
    await frame().locator('#last').focus();
    await page.keyboard.press('Escape');
    await page.locator('[role="dialog"] button[aria-label="Fechar"]').focus();
    await page.keyboard.press('Escape');
    await page.locator('[role="dialog"] button[aria-label="Fechar"]').click({ force: true });
    assert.equal(await dialog().count(), 1);
    assert.deepEqual(await events(), []);
    await frame().locator('#busy-off').click();
    await page.waitForFunction(() => !(document.querySelector('[role="dialog"] button') as HTMLButtonElement).disabled);
  });

  test('Esc inside the iframe closes it: onCancel, focus back on the Pagar button, scroll and page restored', async () => {
    await frame().locator('#last').focus();
    // Key down, wait for the close, then key up: a key-up sent while the iframe that had the
    // focus is being removed is never acknowledged by Chromium (keyboard.press hung here in 4 of
    // 10 runs), so it goes after the iframe is gone, to the shop's page, as a real key-up would.
    await page.keyboard.down('Escape');
    await dialog().waitFor({ state: 'detached' });
    await page.keyboard.up('Escape');
    assert.deepEqual(await events(), ['cancel']);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'pay');
    assert.equal(await page.evaluate(() => getComputedStyle(document.documentElement).overflow), 'visible');
    assert.equal(await page.evaluate(() => (document.querySelector('main') as HTMLElement).inert), false);
  });

  test('reopen after close works; one modal at a time; close() twice is harmless', async () => {
    await page.locator('#pay').click();
    await dialog().waitFor();
    await loaded();
    await page.evaluate(() => (window as unknown as { openCheckout: () => void }).openCheckout());
    assert.equal(await dialog().count(), 1, 'one modal at a time');
    assert.deepEqual(await events(), ['cancel', 'error:checkout_already_open']);
    // Esc on the shop's side (focus on the close button).
    await page.locator('[role="dialog"] button[aria-label="Fechar"]').focus();
    await page.keyboard.press('Escape');
    await dialog().waitFor({ state: 'detached' });
    assert.deepEqual(await events(), ['cancel', 'error:checkout_already_open', 'cancel']);
    await page.evaluate(() => {
      const w = window as unknown as { __handle: { close(): void; destroy(): void } };
      w.__handle.close();
      w.__handle.close();
      w.__handle.destroy();
    });
    assert.equal(await dialog().count(), 0);
    assert.deepEqual(await events(), ['cancel', 'error:checkout_already_open', 'cancel'], 'close() after close reports nothing');
  });

  test('the close button (×) of an idle modal closes it: onCancel, focus back on the Pagar button, page restored', async () => {
    await fresh();
    await page.locator('#pay').click();
    await loaded();
    await page.getByRole('button', { name: 'Fechar' }).click();
    await dialog().waitFor({ state: 'detached' });
    assert.deepEqual(await events(), ['cancel']);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'pay');
    assert.equal(await page.evaluate(() => getComputedStyle(document.documentElement).overflow), 'visible');
    assert.equal(await page.evaluate(() => (document.querySelector('main') as HTMLElement).inert), false);
  });

  test('success from the page calls onSuccess once; closing afterwards is not a cancel', async () => {
    await fresh();
    await page.locator('#pay').click();
    await loaded();
    await frame().locator('#success').click();
    await frame().locator('#success').click();
    await page.waitForFunction(() => (window as unknown as { __events: string[] }).__events.length > 0);
    await frame().locator('#close').click();
    await dialog().waitFor({ state: 'detached' });
    assert.deepEqual(await events(), [`success:pay_fromthepage:${SESSION}`]);
  });

  test('a page that never starts in the iframe: fallback to redirect (the hosted page itself)', async () => {
    await fresh();
    await page.evaluate((silent) => (window as unknown as { openCheckout: (o: object) => void }).openCheckout({ sessionId: silent, clientSecret: `${silent}_secret_abcdefghijklmnopqrstuvwxyz0123456789`, loadTimeoutMs: 1500 }), SILENT);
    await page.waitForURL((u) => u.pathname === `/checkout/${SILENT}`);
    const url = new URL(page.url());
    assert.equal(url.origin, serviceOrigin);
    assert.equal(url.searchParams.get('embed'), null);
    assert.equal(url.hash, `#${SILENT}_secret_abcdefghijklmnopqrstuvwxyz0123456789`);
  });

  test("mode 'redirect' goes to the hosted page with the locale; bad arguments throw", async () => {
    await fresh();
    const err = await page.evaluate(() => {
      try {
        (window as unknown as { PagamentosCheckout: { open: (o: object) => void } }).PagamentosCheckout.open({ sessionId: 'pay_123', clientSecret: 'x' });
        return 'no error';
      } catch (e) {
        return (e as Error).name;
      }
    });
    assert.equal(err, 'TypeError');
    await page.evaluate(() => (window as unknown as { openCheckout: (o: object) => void }).openCheckout({ mode: 'redirect', locale: 'en' }));
    await page.waitForURL((u) => u.pathname === `/checkout/${SESSION}`);
    const url = new URL(page.url());
    assert.equal(url.searchParams.get('locale'), 'en');
    assert.equal(url.hash, `#${SECRET}`);
  });
});

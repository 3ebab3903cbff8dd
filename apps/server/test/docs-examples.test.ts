import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { startApp, eventually, auth, type TestApp } from './helpers.js';

// The guides' examples work when pasted: every ```bash block of a guide runs, in order, in one
// shell against a really listening server (its address in place of localhost:3000), and any
// curl that gets a non-2xx answer fails it (unless the example prints the status itself with
// -w). The card-token page of docs/card-tokens.md runs in headless Chromium from another origin.

const REPO = resolve(new URL('../../..', import.meta.url).pathname);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

function blocks(guide: string, lang: string): string[] {
  const text = readFileSync(join(REPO, 'docs', guide), 'utf8');
  return [...text.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]);
}

function runGuide(guide: string, base: string, env: Record<string, string>, cwd: string): Promise<{ code: number; out: string }> {
  const script = [
    'set -euo pipefail',
    // A failed request fails the guide, unless the example asks for the status code itself.
    // (Each answer on a line of its own, for this test to read.)
    'curl() { case " $* " in *" -w "*) command curl "$@" ;; *) command curl --fail-with-body -w "\\n" "$@" ;; esac; }',
    // The guides run in the project folder; this one runs in a scratch folder.
    `npm() { command npm --prefix ${JSON.stringify(REPO)} "$@"; }`,
    ...blocks(guide, 'bash').map((b) => b.replaceAll('http://localhost:3000', base)),
  ].join('\n');
  return new Promise((done) => {
    execFile('bash', ['-c', script], { cwd, env: { ...process.env, ...env }, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      done({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: `${stdout}\n${stderr}` });
    });
  });
}

describe('the guides\' examples, pasted', () => {
  let t: TestApp;
  let base: string;
  let cwd: string;

  before(async () => {
    t = await startApp('sqlite');
    base = (await t.app.listen({ port: 0, host: '127.0.0.1' })).replace('127.0.0.1', 'localhost');
    cwd = mkdtempSync(join(tmpdir(), 'guide-'));
  });
  after(async () => {
    await t.teardown();
    rmSync(cwd, { recursive: true, force: true });
  });

  test('docs/card-tokens.md: sign-up, tokenize with the publishable key, pay with the secret key', async () => {
    const { code, out } = await runGuide('card-tokens.md', base, { DATABASE_URL: t.db.url }, cwd);
    assert.equal(code, 0, out);
    assert.match(out, /^tok_[0-9a-z]+$/m, 'the token is printed');
    const payment = JSON.parse(out.trim().split('\n').filter((l) => l.startsWith('{')).pop() as string);
    assert.equal(payment.status, 'pending');
    assert.deepEqual(payment.card, { brand: 'visa', last4: '4242' });
    assert.equal(payment.installments, 3);
  });

  test('docs/admin-api.md: admin:create, sign-in, CSRF, split rule, settings, payout account, settlement run, sign-out', async () => {
    const { code, out } = await runGuide('admin-api.md', base, { DATABASE_URL: t.db.url }, cwd);
    assert.equal(code, 0, out);
    assert.match(out, /^403$/m, 'the write without X-CSRF-Token is refused');
    const run = JSON.parse(out.split('\n').find((l) => l.includes('"object":"settlement_run"')) as string);
    assert.equal(run.totalAmount, 9901);
    assert.equal(run.settlementCount, 3);
    // The seller, the courier and the merchant (whose payout account the guide set) are all paid.
    const settlements = await t.store.db.selectFrom('settlements').selectAll().where('run_id', '=', run.id).execute();
    assert.deepEqual(settlements.map((s) => s.amount).sort((a, b) => a - b), [500, 1481, 7920]);
    // Waits for the in-process worker (its poll and store writes; this suite runs on the system clock: time rules are in time-rules.test.ts).
    await eventually(async () => {
      const rows = await t.store.db.selectFrom('settlements').select('status').where('run_id', '=', run.id).execute();
      return rows.every((r) => r.status === 'paid');
    }, 'every settlement of the run paid');
    assert.ok(!existsSync(join(cwd, 'cookies.txt')), 'the guide cleans up its cookie jar');
  });

  test('docs/card-tokens.md: the browser page tokenizes from another origin and sends only the token', { skip: existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM}` }, async () => {
    const signup = (await t.app.inject({ method: 'POST', url: '/v1/sandbox/accounts', payload: { name: 'Browser shop' } })).json();
    const [html] = blocks('card-tokens.md', 'html');
    const page = html.replace("'http://localhost:3000'", JSON.stringify(base)).replace("'pk_test_...'", JSON.stringify(signup.keys.publishableKey.key));
    assert.notEqual(page, html);
    // The merchant's own site: serves the page, and its /checkout/pay receives the token.
    const received: string[] = [];
    const site: Server = createServer((req, res) => {
      if (req.method === 'POST' && req.url === '/checkout/pay') {
        let body = '';
        req.on('data', (c) => (body += c)).on('end', () => {
          received.push(body);
          res.writeHead(204).end();
        });
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    const userDataDir = mkdtempSync(join(tmpdir(), 'tokens-chromium-'));
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    });
    try {
      const browser = context.pages()[0] ?? (await context.newPage());
      await browser.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
      await browser.getByRole('button', { name: 'Pagar' }).click();
      await browser.locator('#result', { hasText: 'visa •••• 4242' }).waitFor();
      // Waits for I/O: the browser's request reaching the merchant's server.
      await eventually(async () => received.length === 1, 'the token reaches the merchant\'s server');
      const { cardToken } = JSON.parse(received[0]);
      assert.match(cardToken, /^tok_/);
      assert.ok(!received[0].includes('4242 4242'), 'no card number reaches the merchant');
      // The merchant's server pays with it.
      const paid = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(signup.keys.secretKey.key), payload: { amountInCents: 2500, method: 'credit_card', cardToken } });
      assert.equal(paid.statusCode, 200, paid.body);
      // A bad number shows the API's message.
      await browser.locator('input[name=number]').fill('4242 4242 4242 4241');
      await browser.getByRole('button', { name: 'Pagar' }).click();
      await browser.locator('#result', { hasText: 'The card number is not valid.' }).waitFor();
    } finally {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
      await new Promise((r) => site.close(r));
    }
  });

  test('no page mentions a client library the repository does not have', () => {
    const pages = ['README.md', ...readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
    const libraries = [
      { mention: /\b(TypeScript|Node)\s+SDK\b|\bour SDK\b|npm install pagamentos\b/i, exists: existsSync(join(REPO, 'packages/sdk/package.json')) },
      { mention: /\bPHP\s+SDK\b|composer require/i, exists: existsSync(join(REPO, 'sdks/php/composer.json')) },
      { mention: /(?<!\.NET )\bSDKs?\b/, exists: existsSync(join(REPO, 'packages/sdk/package.json')) || existsSync(join(REPO, 'sdks/php/composer.json')) },
    ];
    const problems = pages.flatMap((page) => {
      const text = readFileSync(join(REPO, page), 'utf8');
      return libraries.filter((l) => !l.exists && l.mention.test(text)).map((l) => `${page} mentions ${l.mention}`);
    });
    assert.deepEqual(problems, []);
  });

  test('the sizes the pages report are the ones the builds measured (to 0.1 KiB)', () => {
    const measured = (file: string, pick: (j: Record<string, unknown>) => unknown): number => {
      const path = join(REPO, file);
      assert.ok(existsSync(path), `${file} is missing: build the workspaces first (npm install builds them)`);
      return Number(pick(JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>)) / 1024;
    };
    const script = measured('packages/checkout/dist/size.json', (j) => (j.script as { gzipBytes: number }).gzipBytes);
    const page = measured('apps/checkout-page/dist/size.json', (j) => j.jsCssGzipBytes);
    // (The SDK's figure is checked by the SDK's own tests, which build it first.)
    // Where each page states a figure, as the text right before it and its number of KiB.
    const stated: Array<[string, RegExp, number]> = [
      ['README.md', /`\/v1\/checkout\.js` \*\*([\d.]+) KiB\*\*/, script],
      ['README.md', /page's JS \+ CSS \*\*([\d.]+) KiB\*\*/, page],
      ['docs/checkout.md', /script-tag build\) \| ([\d.]+) KiB/, script],
      ['docs/checkout.md', /page's JS \+ CSS \| ([\d.]+) KiB/, page],
      ['packages/checkout/README.md', /script-tag build is \*\*([\d.]+) KiB gzipped/, script],
    ];
    for (const [file, pattern, kib] of stated) {
      const m = pattern.exec(readFileSync(join(REPO, file), 'utf8'));
      assert.ok(m, `${file} states the size (${pattern})`);
      assert.ok(Math.abs(Number(m[1]) - kib) <= 0.1, `${file} says ${m[1]} KiB, the build measured ${kib.toFixed(2)} KiB`);
    }
  });

  test('links between the pages lead somewhere: the file exists, and so does the heading', () => {
    const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
    const headings = (file: string) => [...readFileSync(file, 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]));
    const pages = ['README.md', ...readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(join(REPO, page), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [path, anchor] = target.split('#');
        const file = path ? resolve(join(REPO, page, '..'), path) : join(REPO, page);
        if (!existsSync(file)) broken.push(`${page}: ${target} (no such file)`);
        else if (anchor && file.endsWith('.md') && !headings(file).includes(anchor)) broken.push(`${page}: ${target} (no such heading)`);
      }
    }
    assert.deepEqual(broken, []);
  });
});

// The package as merchants install it: packed from a checkout without dist/ (what `npm publish`
// does: prepack builds it), installed from the tarball into an app of its own, its ESM and CJS
// builds each imported (by name) there and used against a running server, their types checked
// by @arethetypeswrong/cli and by tsc in both module modes, no dependencies, tree-shaking, the
// bundle size the README reports, and the bundle working in a browser (fetch and WebCrypto only).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';
import { chromium } from 'playwright-core';
import { merchant, startProxy, startServer, type Running } from './harness.js';

const run = promisify(execFile);
const pkgDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(pkgDir, 'dist');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

// The environment of a child npm without what `npm test -w ...` sets for its scripts
// (npm_config_workspace would send `npm pack` looking for a workspace under this one).
const npmEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));

describe('the built package', () => {
  let server: Running;
  let key: string;
  // What `npm pack` put in the tarball, the tarball, and an app outside this repository (no
  // workspace link, no self-reference) with the tarball installed.
  let packed: string[];
  let tarball: string;
  let app: string;

  async function node(args: string[], env: Record<string, string> = {}): Promise<string> {
    const { stdout } = await run(process.execPath, args, { cwd: app, env: { ...process.env, ...env } });
    return stdout.trim();
  }

  before(async () => {
    server = await startServer('sqlite');
    key = (await merchant(server.baseUrl)).secretKey;
    // As in a fresh clone: no dist/. npm pack runs prepack, which has to build it.
    rmSync(dist, { recursive: true, force: true });
    app = mkdtempSync(join(tmpdir(), 'pagamentos-app-'));
    const pack = await run('npm', ['pack', '--json', '--pack-destination', app], { cwd: pkgDir, env: npmEnv });
    // The build's own output comes first on stdout (prepack), then npm's JSON.
    const [result] = JSON.parse(pack.stdout.slice(pack.stdout.search(/^\[/m))) as Array<{ filename: string; files: Array<{ path: string }> }>;
    packed = result.files.map((f) => f.path).sort();
    tarball = join(app, result.filename);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'merchant-app', private: true }));
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--no-package-lock', tarball], { cwd: app, env: npmEnv });
  });
  after(async () => {
    await server.close();
    rmSync(app, { recursive: true, force: true });
  });

  test('npm pack from a checkout without dist/ builds it (prepack): the tarball has both builds and their types, and no sources', () => {
    for (const file of ['package.json', 'README.md', 'dist/esm/index.js', 'dist/esm/index.d.ts', 'dist/esm/client.js', 'dist/cjs/index.js', 'dist/cjs/index.d.ts', 'dist/cjs/package.json']) {
      assert.ok(packed.includes(file), `the tarball has ${file}`);
    }
    assert.deepEqual(packed.filter((f) => !f.startsWith('dist/') && f !== 'package.json' && f !== 'README.md'), [], 'only dist/, the README and package.json are published');
    assert.deepEqual(readdirSync(pkgDir).filter((f) => f.endsWith('.tgz')), [], 'no tarball left in the package');
  });

  test('ESM build: default and named import, used against the server', async () => {
    const out = await node(['--input-type=module', '-e', `
      import Pagamentos, { Pagamentos as Named, NotFoundError, verifyWebhook, signWebhook } from 'pagamentos';
      const client = new Pagamentos(process.env.KEY, { baseUrl: process.env.BASE_URL });
      const p = await client.payments.create({ amountInCents: 1234, method: 'pix' });
      const again = await client.payments.retrieve(p.id);
      const missing = await client.payments.retrieve('pay_nope').catch((e) => e);
      const secret = 'whsec_' + btoa('esm secret');
      const event = await verifyWebhook('{"type":"webhook.test"}', await signWebhook('{"type":"webhook.test"}', secret), secret);
      console.log(JSON.stringify({ same: Pagamentos === Named, mode: client.mode, id: again.id === p.id, notFound: missing instanceof NotFoundError, type: event.type, url: import.meta.resolve('pagamentos') }));
    `], { KEY: key, BASE_URL: server.baseUrl });
    const r = JSON.parse(out);
    assert.deepEqual({ ...r, url: undefined }, { same: true, mode: 'test', id: true, notFound: true, type: 'webhook.test', url: undefined });
    assert.match(r.url, /\/node_modules\/pagamentos\/dist\/esm\/index\.js$/);
  });

  test('CJS build: require() is the class, with every named export on it', async () => {
    const out = await node(['-e', `
      const Pagamentos = require('pagamentos');
      const { Pagamentos: Named, NotFoundError, PagamentosError, verifyWebhook } = require('pagamentos');
      (async () => {
        const client = new Pagamentos(process.env.KEY, { baseUrl: process.env.BASE_URL });
        const p = await client.payments.create({ amountInCents: 4321, method: 'pix' });
        const missing = await client.refunds.retrieve('ref_nope').catch((e) => e);
        console.log(JSON.stringify({
          same: Pagamentos === Named && Pagamentos.default === Pagamentos, amount: p.amount,
          notFound: missing instanceof NotFoundError && missing instanceof PagamentosError, verify: typeof verifyWebhook,
          file: require.resolve('pagamentos'),
        }));
      })();
    `], { KEY: key, BASE_URL: server.baseUrl });
    const r = JSON.parse(out);
    assert.deepEqual({ ...r, file: undefined }, { same: true, amount: 4321, notFound: true, verify: 'function', file: undefined });
    assert.match(r.file, /\/node_modules\/pagamentos\/dist\/cjs\/index\.js$/);
  });

  test('types: @arethetypeswrong/cli finds no problem; tsc accepts ESM and CJS consumers', async () => {
    const cli = createRequire(import.meta.url).resolve('@arethetypeswrong/cli/package.json');
    const attw = await run(process.execPath, [join(dirname(cli), 'dist/index.js'), tarball, '--format', 'json'], { cwd: pkgDir }).catch((e) => e);
    const report = JSON.parse(attw.stdout);
    assert.deepEqual(report.problems, {}, attw.stdout.slice(0, 4000));
    assert.deepEqual(report.analysis.problems, []);
    assert.deepEqual(Object.keys(report.analysis.entrypoints), ['.', './package.json']);
    assert.equal(attw.code ?? 0, 0);

    const dir = mkdtempSync(join(app, 'consumers-'));
    try {
      writeFileSync(join(dir, 'esm.mts'), `
        import Pagamentos, { NotFoundError, type Payment, type WebhookEvent } from 'pagamentos';
        const client = new Pagamentos('sk_test_x');
        export const p: Promise<Payment> = client.payments.retrieve('pay_1');
        export const isNotFound = (e: unknown) => e instanceof NotFoundError && e.status === 404;
        export const amount = (e: WebhookEvent) => (e.type === 'payment.approved' ? e.data.object.amount : 0);
      `);
      writeFileSync(join(dir, 'cjs.cts'), `
        import Pagamentos = require('pagamentos');
        import Default from 'pagamentos';
        import { verifyWebhook, type Refund } from 'pagamentos';
        const client = new Pagamentos('sk_test_x');
        const other: Pagamentos = new Default('sk_test_y');
        export const r: Promise<Refund> = client.refunds.retrieve('ref_1');
        export const err = (e: unknown) => e instanceof Pagamentos.RateLimitError ? e.code : other.mode;
        export const v: typeof verifyWebhook = Pagamentos.verifyWebhook;
        export type Evt = Pagamentos.WebhookEvent;
      `);
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, esModuleInterop: true, skipLibCheck: false, types: [], lib: ['ES2022', 'DOM'] }, include: ['*.mts', '*.cts'] }));
      const tsc = await run(process.execPath, [createRequire(import.meta.url).resolve('typescript/bin/tsc'), '-p', dir]).catch((e) => e);
      assert.equal(tsc.code ?? 0, 0, tsc.stdout);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('no runtime dependencies: nothing imported but its own files, fetch the only transport', () => {
    const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
    assert.equal(pkg.dependencies, undefined);
    assert.equal(pkg.peerDependencies, undefined);
    assert.equal(pkg.sideEffects, false);
    const esm = readdirSync(join(dist, 'esm'), { recursive: true }).map(String).filter((f) => f.endsWith('.js'));
    for (const file of esm) {
      const code = readFileSync(join(dist, 'esm', file), 'utf8');
      for (const m of code.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*from\s*['"]([^'"]+)['"]/g)) assert.match(m[1], /^\.\.?\//, `${file} imports ${m[1]}`);
      assert.doesNotMatch(code, /XMLHttpRequest|node:|require\(/, file);
    }
    assert.doesNotMatch(readFileSync(join(dist, 'cjs', 'index.js'), 'utf8'), /require\(/);
  });

  test('tree-shakable: webhook verification alone leaves the client out', async () => {
    const size = async (contents: string) => {
      const r = await esbuild.build({ stdin: { contents, resolveDir: pkgDir, loader: 'js' }, bundle: true, minify: true, format: 'esm', platform: 'neutral', write: false });
      const code = r.outputFiles[0].text;
      return { code, gz: gzipSync(code).length };
    };
    const all = await size(`export * from 'pagamentos';`);
    const webhooksOnly = await size(`export { verifyWebhook } from 'pagamentos';`);
    assert.match(all.code, /\/v1\/payments/);
    assert.doesNotMatch(webhooksOnly.code, /\/v1\/|IDEMPOTENCY_KEY_IN_USE|autoPagingToArray/);
    assert.ok(webhooksOnly.gz < all.gz / 2, `${webhooksOnly.gz} vs ${all.gz}`);
  });

  test('the full bundle is under 15 KB minified and gzipped, as the README says', () => {
    const { gzippedBytes } = JSON.parse(readFileSync(join(dist, 'size.json'), 'utf8')) as { gzippedBytes: number };
    assert.ok(gzippedBytes < 15 * 1024, String(gzippedBytes));
    const readme = readFileSync(join(pkgDir, 'README.md'), 'utf8');
    const stated = /full bundle is \*\*([\d.]+) KB\*\* minified and gzipped/.exec(readme);
    assert.ok(stated, 'the README states the bundle size');
    assert.ok(Math.abs(Number(stated[1]) * 1024 - gzippedBytes) <= 0.3 * 1024, `README says ${stated[1]} KB, the build measured ${(gzippedBytes / 1024).toFixed(1)} KB: update the README`);
    // The project's README states it too (in KiB, to 0.1).
    const root = /bundle, minified, \*\*([\d.]+) KiB\*\*/.exec(readFileSync(join(pkgDir, '..', '..', 'README.md'), 'utf8'));
    assert.ok(root, 'the project README states the bundle size');
    assert.ok(Math.abs(Number(root[1]) * 1024 - gzippedBytes) <= 0.1 * 1024, `the project README says ${root[1]} KiB, the build measured ${(gzippedBytes / 1024).toFixed(2)} KiB`);
  });

  test("the README's webhook handlers are the tested examples, verbatim", () => {
    const readme = readFileSync(join(pkgDir, 'README.md'), 'utf8');
    for (const file of ['webhooks-express.ts', 'webhooks-fastify.ts', 'webhooks-web.ts']) {
      const code = readFileSync(join(pkgDir, 'examples', file), 'utf8');
      assert.ok(readme.includes('```ts\n' + code + '```'), `README.md has examples/${file} as it is`);
    }
  });

  test('in a browser: the client over fetch and webhook verification over WebCrypto', { skip: existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM}` }, async () => {
    const bundle = await esbuild.build({ stdin: { contents: `export * from 'pagamentos';`, resolveDir: pkgDir, loader: 'js' }, bundle: true, format: 'esm', platform: 'browser', write: false });
    const page = `<!doctype html><meta charset="utf-8"><script type="module">${bundle.outputFiles[0].text.replace(/export \{[^}]*\};?\s*$/, '')}
      window.sdk = { Pagamentos, verifyWebhook, signWebhook, NotFoundError };</script>`;
    // The page and the API on one origin (the proxy serves the page and forwards the rest).
    const proxy = await startProxy(server.port, { '/sdk.html': page });
    const userDataDir = mkdtempSync(join(tmpdir(), 'sdk-chromium-'));
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    try {
      const tab = context.pages()[0] ?? (await context.newPage());
      await tab.goto(`${proxy.baseUrl}/sdk.html`);
      await tab.waitForFunction(() => 'sdk' in window);
      const result = await tab.evaluate(async (secretKey) => {
        const { Pagamentos, verifyWebhook, signWebhook, NotFoundError } = (window as unknown as { sdk: typeof import('../src/index.js') }).sdk;
        const client = new Pagamentos(secretKey, { baseUrl: location.origin });
        const p = await client.payments.create({ amountInCents: 999, method: 'pix' });
        const missing = await client.payments.retrieve('pay_nope').catch((e: unknown) => e);
        const secret = 'whsec_' + btoa('browser secret');
        const body = JSON.stringify({ type: 'payment.created', data: { object: p } });
        const event = await verifyWebhook(body, await signWebhook(body, secret), secret);
        return { status: p.status, notFound: missing instanceof NotFoundError, type: event.type, hasBuffer: 'Buffer' in globalThis };
      }, key);
      assert.deepEqual(result, { status: 'pending', notFound: true, type: 'payment.created', hasBuffer: false });
    } finally {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
      await proxy.close();
    }
  });
});

// The smaller findings of the attack run (issue 23, point 4), each fixed and tested here:
// - the admin sign-in lock is kept in the store, so every API process counts the same attempts;
// - a settlement run refuses a date after today (São Paulo): nothing is paid before it is available;
// - production refuses to start without PUBLIC_URL (the Host header would pick checkout links);
// - a request with two Authorization headers is refused, as two Idempotency-Keys are.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { ENGINES, startApp, signup, auth, adminSession, type TestApp, type Keys } from './helpers.js';
import { createAdminUser } from '../src/modules/admin/index.js';
import { addDays, localDate } from '../src/modules/accounts/settings.js';
import { rawRequest } from './raw-http.js';

const SERVER_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');

for (const engine of ENGINES) {
  describe(`the admin sign-in lock is shared by every API process (${engine})`, () => {
    const apps: TestApp[] = [];
    before(async () => {
      apps.push(await startApp(engine));
      // Two more processes on the same database: their own memory, the same store.
      for (let i = 0; i < 2; i++) apps.push(await startApp(engine, {}, { db: apps[0].db, worker: false }));
      await createAdminUser(apps[0].store, 'ops@example.com', 'the right passphrase');
    });
    after(async () => {
      for (const t of apps.slice(1)) await t.teardown();
      await apps[0].teardown();
    });
    const login = (t: TestApp, password: string, remoteAddress: string) =>
      t.app.inject({ method: 'POST', url: '/admin/session', payload: { email: 'ops@example.com', password }, remoteAddress });

    test('15 wrong passwords spread over 3 processes: 5 are checked, 10 refused with 429; then the right one is refused on every process', async () => {
      // Each guess from its own address, so only the per-email limit (5) applies.
      const answers = await Promise.all(Array.from({ length: 15 }, (_, i) => login(apps[i % 3], `wrong ${i}`, `10.23.0.${i + 1}`)));
      const statuses = answers.map((r) => r.statusCode).sort();
      assert.deepEqual(statuses, [...Array<number>(5).fill(401), ...Array<number>(10).fill(429)], 'the docs promise 5 attempts per email, whichever process takes them');
      for (const [i, t] of apps.entries()) {
        const right = await login(t, 'the right passphrase', `10.23.1.${i + 1}`);
        assert.equal(right.statusCode, 429, `process ${i} refuses the right password while the email is locked`);
        assert.equal(right.json().error.code, 'RATE_LIMITED');
        assert.ok(Number(right.headers['retry-after']) > 0);
      }
    });

    test('a success on one process clears the email for all of them', async () => {
      await createAdminUser(apps[0].store, 'second@example.com', 'another passphrase');
      const as = (t: TestApp, password: string, ip: string) => t.app.inject({ method: 'POST', url: '/admin/session', payload: { email: 'second@example.com', password }, remoteAddress: ip });
      for (let i = 0; i < 4; i++) assert.equal((await as(apps[i % 3], 'wrong', `10.23.2.${i + 1}`)).statusCode, 401);
      assert.equal((await as(apps[1], 'another passphrase', '10.23.2.9')).statusCode, 200);
      for (let i = 0; i < 4; i++) assert.equal((await as(apps[(i + 1) % 3], 'wrong', `10.23.3.${i + 1}`)).statusCode, 401, 'the count started again');
    });
  });

  describe(`findings on the API (${engine})`, () => {
    let t: TestApp;
    let k: Keys;
    before(async () => {
      t = await startApp(engine);
      k = await signup(t);
    });
    after(() => t.teardown());

    test('a settlement run for a date after today is refused, and starts nothing; today and earlier are taken', async () => {
      const admin = await adminSession(t);
      const run = (date: string | undefined) => t.app.inject({
        method: 'POST', url: '/admin/settlement-runs', headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf },
        payload: { reason: 'pay out', ...(date === undefined ? {} : { date }) },
      });
      const count = async () => (await t.store.db.selectFrom('settlement_runs').select('id').execute()).length;
      const before = await count();
      for (const date of [addDays(localDate(Date.now()), 1), addDays(localDate(Date.now()), 30), '2099-12-31']) {
        const res = await run(date);
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().error.code, 'VALIDATION_ERROR');
        assert.equal(res.json().error.param, 'date');
        assert.match(res.json().error.message, /today/);
      }
      assert.equal(await count(), before, 'nothing was started');
      for (const date of [localDate(Date.now()), addDays(localDate(Date.now()), -3), undefined]) assert.equal((await run(date)).statusCode, 200);
    });

    test('two Authorization headers are refused, whichever comes first, like two Idempotency-Keys', async () => {
      const other = await signup(t, 'Other');
      // Over a real socket: Node itself keeps only the first Authorization line of a request.
      const port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
      const send = (keys: string[]) => rawRequest(port, `GET /v1/payments HTTP/1.1\r\nHost: x\r\n${keys.map((key) => `Authorization: Bearer ${key}\r\n`).join('')}Connection: close\r\n\r\n`);
      for (const pair of [[k.secretKey, other.secretKey], [k.secretKey, k.secretKey], ['sk_test_nope', k.secretKey]]) {
        const res = await send(pair);
        assert.equal(res?.status, 400, res?.body);
        const body = JSON.parse(res.body) as { error: { code: string; param: string } };
        assert.equal(body.error.code, 'VALIDATION_ERROR');
        assert.equal(body.error.param, 'Authorization');
        assert.doesNotMatch(res.body, /sk_test_/, 'no key is echoed');
      }
      assert.equal((await send([k.secretKey]))?.status, 200);
    });
  });
}

describe('production needs PUBLIC_URL', () => {
  test('`serve` with NODE_ENV=production and no PUBLIC_URL refuses to start, saying what to set', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'payments-public-url-'));
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
      cwd: SERVER_DIR,
      env: { ...process.env, NODE_ENV: 'production', PUBLIC_URL: '', DATABASE_URL: `sqlite:${join(dir, 'x.db')}`, PORT: '0', LOG_LEVEL: 'warn', LOG_FILE: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    // It exits, or it starts listening (what it must not do): whichever comes first.
    const outcome = await new Promise<string>((ok) => {
      child.on('exit', (code) => ok(`exit ${code}`));
      child.stdout.on('data', (c: Buffer) => {
        if (c.toString().includes('listening')) {
          child.kill();
          ok('listening');
        }
      });
    });
    rmSync(dir, { recursive: true, force: true });
    assert.equal(outcome, 'exit 1');
    assert.match(stderr, /PUBLIC_URL is required in production/);
    assert.match(stderr, /PUBLIC_URL=https:\/\/pay\.example\.com/);
  });

  test('with PUBLIC_URL set, a forged Host changes neither the checkout link nor the OpenAPI servers', async () => {
    const t = await startApp('sqlite', { production: true, publicUrl: 'https://pay.example.com', webhookAllowPrivateUrls: true });
    try {
      const k = await signup(t);
      const s = await t.app.inject({ method: 'POST', url: '/v1/checkout/sessions', headers: { ...auth(k.secretKey), host: 'evil.example' }, payload: { amount: 1000 } });
      assert.equal(s.statusCode, 200, s.body);
      assert.match(s.json().url, /^https:\/\/pay\.example\.com\/checkout\/cs_/);
      const doc = await t.app.inject({ method: 'GET', url: '/v1/openapi.json', headers: { host: 'evil.example' } });
      assert.equal(doc.json().servers[0].url, 'https://pay.example.com');
    } finally {
      await t.teardown();
    }
  });
});

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sqliteDriverName } from '../src/store/sqlite.js';
import { CLI, CLI_SHELL } from './cli.js';

// What a newcomer does first, as the README says it: `npm start` (the CLI's serve, on the
// embedded store) prints the URL and a pair of sandbox keys that work; the README's admin quick
// start, pasted, creates an admin, signs in and makes an admin call.

const SERVER_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const README = resolve(SERVER_DIR, '../../README.md');

interface Started {
  child: ChildProcess;
  base: string;
  secretKey: string;
  publishableKey: string;
  listening: string;
}

function serve(env: NodeJS.ProcessEnv): Promise<Started> {
  const child = spawn(process.execPath, [...CLI, 'serve'], { cwd: SERVER_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolvePromise, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`serve printed no keys within 60 s:\n${out}\n${err}`)), 60_000);
    child.stderr?.on('data', (d) => (err += d));
    child.stdout?.on('data', (d) => {
      out += d;
      const base = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      const secretKey = /Sandbox secret key: (sk_test_\w+)/.exec(out)?.[1];
      const publishableKey = /Sandbox publishable key: (pk_test_\w+)/.exec(out)?.[1];
      if (base && secretKey && publishableKey) {
        clearTimeout(timer);
        resolvePromise({ child, base, secretKey, publishableKey, listening: /Payments API listening on .*/.exec(out)?.[0] ?? '' });
      }
    });
    child.on('exit', (code) => reject(new Error(`serve exited (${code}):\n${out}\n${err}`)));
  });
}

async function stop(s: Started): Promise<void> {
  const exited = new Promise((r) => s.child.once('exit', r));
  s.child.kill('SIGTERM');
  await exited;
}

describe('npm start and the README quick start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'payments-start-'));
  const env = { ...process.env, DATABASE_URL: `sqlite:${join(dir, 'payments.db')}`, PORT: '0', HOST: '127.0.0.1', LOG_FILE: join(dir, 'server.log'), NODE_ENV: 'development', PRINT_SANDBOX_KEY: 'true' };
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('npm start prints a sandbox secret key and a publishable key, both working, the same on every start', async () => {
    const first = await serve(env);
    try {
      // The start line names the SQLite driver this Node got (README, "Node versions").
      assert.match(first.listening, new RegExp(`\\(store: sqlite:\\S+ via ${sqliteDriverName().replace(':', '\\:')}, worker: in process\\)`));
      // ...and the README's sample start-up line is what Node 20 prints (its note says what 22+ prints).
      assert.match(readFileSync(README, 'utf8'), /^Payments API listening on http:\/\/localhost:3000 \(store: sqlite:\/…\/data\/payments\.db via better-sqlite3, worker: in process\)$/m);
      if (process.versions.node.startsWith('20.')) assert.equal(sqliteDriverName(), 'better-sqlite3');
      const balance = await fetch(`${first.base}/v1/balance`, { headers: { authorization: `Bearer ${first.secretKey}` } });
      assert.equal(balance.status, 200);
      const token = await fetch(`${first.base}/v1/tokens`, {
        method: 'POST',
        headers: { authorization: `Bearer ${first.publishableKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ card: { number: '4242424242424242', expMonth: 12, expYear: 2099, cvc: '123' } }),
      });
      assert.equal(token.status, 200, await token.text());
      const refused = await fetch(`${first.base}/v1/balance`, { headers: { authorization: `Bearer ${first.publishableKey}` } });
      assert.equal(refused.status, 403, 'the publishable key is for the browser only');
    } finally {
      await stop(first);
    }
    const second = await serve(env);
    await stop(second);
    assert.deepEqual([second.secretKey, second.publishableKey], [first.secretKey, first.publishableKey]);
    // A keys file from before publishable keys were printed gets one.
    const file = join(dir, 'sandbox-key.json');
    const saved = JSON.parse(readFileSync(file, 'utf8'));
    delete saved.publishableKey;
    writeFileSync(file, JSON.stringify(saved));
    const third = await serve(env);
    try {
      assert.equal(third.secretKey, first.secretKey);
      const token = await fetch(`${third.base}/v1/tokens`, {
        method: 'POST',
        headers: { authorization: `Bearer ${third.publishableKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ card: { number: '4242424242424242', expMonth: 12, expYear: 2099, cvc: '123' } }),
      });
      assert.equal(token.status, 200);
    } finally {
      await stop(third);
    }
  });

  test('the README\'s admin quick start works as pasted: admin:create, sign in with a cookie jar, an admin read and write', async () => {
    const readme = readFileSync(README, 'utf8');
    const block = [...readme.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.includes('admin:create'));
    assert.ok(block, 'the README has an admin quick start block');
    const s = await serve(env);
    try {
      const script = block
        .replaceAll('npm run cli --', CLI_SHELL)
        .replaceAll('http://localhost:3000', s.base);
      assert.ok(!/-[cb] admin-cookies/.test(block), 'the cookie jar is not written into the repository');
      const { stdout, stderr } = await promisify(execFile)('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd: SERVER_DIR, env });
      assert.ok(!stderr.includes('warning: --password'), 'the README does not put the password on the command line');
      assert.ok(!existsSync(join(SERVER_DIR, 'admin-cookies.txt')) && !existsSync(join(SERVER_DIR, '../../admin-cookies.txt')), 'no cookie jar left in the repository');
      assert.match(stdout, /admin ops@example\.com created/);
      assert.match(stdout, /"object":"list"/, 'GET /admin/accounts with the cookie');
      assert.match(stdout, /"object":"settlement_run"/, 'POST /admin/settlement-runs with the cookie and the CSRF token');
    } finally {
      await stop(s);
    }
  });
});

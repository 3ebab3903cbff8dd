#!/usr/bin/env node
// A short load run against a fresh embedded store, on a given Node: the reproduction of the
// better-sqlite3 12.x abort on Node 24 (issue 12, point 14), kept as a CI check.
//
//   node .ci/load-smoke.mjs [--node /path/to/node] [--seconds 10] [--connections 16]
//
// Starts `src/cli.ts serve` with that Node (default: the one running this script) on a free port
// and a new SQLite file, signs up a sandbox merchant, then N connections each loop "create a
// payment, list payments" for the given time. Prints one line of figures; exits 1 if the server
// died (signal or exit code), if any request failed, or if nothing completed.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, request } from 'node:http';

const { values } = parseArgs({
  options: {
    node: { type: 'string', default: process.execPath },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '16' },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const serverDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'apps', 'server');

const port = await new Promise((ok, fail) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => ok(p));
  }).on('error', fail);
});
const dir = mkdtempSync(join(tmpdir(), 'load-smoke-'));
const child = spawn(values.node, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
  cwd: serverDir,
  env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: `sqlite:${join(dir, 'payments.db')}`, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '10000000' },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let output = '';
child.stdout.on('data', (d) => { output += d; });
child.stderr.on('data', (d) => { output += d; });
let exited = null;
const exit = new Promise((ok) => child.on('exit', (code, signal) => { exited = { code, signal }; ok(exited); }));

const agent = new Agent({ keepAlive: true, maxSockets: connections });
function call(method, path, headers, body) {
  return new Promise((ok, fail) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => ok({ status: res.statusCode, text }));
    });
    req.on('error', fail);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

function finish(code, line) {
  console.log(line);
  if (code !== 0 && output) console.log(output.split('\n').slice(-15).join('\n'));
  agent.destroy();
  if (!exited) child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
  process.exit(code);
}

// Wait for the server.
const started = Date.now();
for (;;) {
  if (exited) finish(1, `load-smoke: server exited before listening (${JSON.stringify(exited)})`);
  try {
    if ((await call('GET', '/healthz', {})).status < 500) break;
  } catch { /* not yet */ }
  if (Date.now() - started > 60_000) finish(1, 'load-smoke: server did not listen within 60 s');
  await new Promise((r) => setTimeout(r, 200));
}
const version = (await new Promise((ok) => { const p = spawn(values.node, ['-v']); let v = ''; p.stdout.on('data', (d) => { v += d; }); p.on('exit', () => ok(v.trim())); }));

const signup = await call('POST', '/v1/sandbox/accounts', {});
if (signup.status !== 200 && signup.status !== 201) finish(1, `load-smoke: sign-up answered ${signup.status}: ${signup.text}`);
const sk = JSON.parse(signup.text).keys.secretKey.key;
const auth = { authorization: `Bearer ${sk}` };

let completed = 0;
let failed = 0;
const statuses = new Map();
const firstFailures = [];
const deadline = Date.now() + seconds * 1000;
let seq = 0;
async function worker(n) {
  while (Date.now() < deadline && !exited) {
    const i = seq++;
    const steps = [
      ['POST', '/v1/payments', { ...auth, 'idempotency-key': `smoke-${n}-${i}` }, i % 2 ? { amount: 1050, currency: 'BRL', method: 'pix' } : { amountInCents: 2500, method: 'credit_card', cardToken: 'tok_visa' }],
      ['GET', '/v1/payments?limit=10', auth, undefined],
    ];
    for (const [method, path, headers, body] of steps) {
      try {
        const res = await call(method, path, headers, body);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status >= 200 && res.status < 300) completed++;
        else {
          failed++;
          if (firstFailures.length < 3) firstFailures.push(`${method} ${path} ${res.status} ${res.text.slice(0, 200)}`);
        }
      } catch (error) {
        failed++;
        if (firstFailures.length < 3) firstFailures.push(`${method} ${path} ${error.message}`);
        if (exited) return;
      }
    }
  }
}
const t0 = Date.now();
await Promise.all(Array.from({ length: connections }, (_, n) => worker(n)));
const elapsedS = (Date.now() - t0) / 1000;
// Give a crash in the shutdown path a chance to show too.
if (!exited) child.kill('SIGTERM');
const end = await Promise.race([exit, new Promise((r) => setTimeout(() => r(null), 15_000))]);
const died = end === null ? 'did not stop within 15 s' : end.signal && end.signal !== 'SIGTERM' ? `killed by ${end.signal}` : end.code !== 0 && end.code !== null && end.signal !== 'SIGTERM' ? `exit code ${end.code}` : '';
const line = `load-smoke: node ${version}, ${connections} connections, ${elapsedS.toFixed(1)} s: ${completed} requests completed (${Math.round(completed / elapsedS)}/s), ${failed} failed; statuses ${JSON.stringify(Object.fromEntries(statuses))}; server ${died || 'stopped cleanly'}`;
if (firstFailures.length) console.log(firstFailures.join('\n'));
finish(died || failed > 0 || completed === 0 ? 1 : 0, line);

// The open-loop generator (open-loop.ts) times each request from its scheduled send time: a
// server that stalls makes every request scheduled during the stall slow, not only the few a
// closed loop would have in flight.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { openLoop, quantile } from '../open-loop.ts';
import { benchScript } from '../lib.ts';

async function server(handler: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const s = http.createServer(handler);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, close: () => new Promise((r) => { s.closeAllConnections(); s.close(() => r()); }) };
}

test('quantile: nearest rank', () => {
  const v = Float64Array.from({ length: 1000 }, (_, i) => i + 1);
  assert.equal(quantile(v, 0.5), 500);
  assert.equal(quantile(v, 0.99), 990);
  assert.equal(quantile(v, 0.999), 999);
  assert.equal(quantile(new Float64Array(0), 0.5), 0);
});

test('every scheduled request is sent and answered, at the rate asked', async () => {
  const s = await server((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200); res.end('{}'); }); });
  try {
    const r = await openLoop({ url: s.url, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', paths: ['/x'], idempotencyKeys: true, ratePerSec: 200, warmupS: 0, durationS: 1 }, 1, 'k');
    assert.equal(r.scheduled, 200);
    assert.equal(r.completed, 200);
    assert.equal(r.non2xx, 0);
  } finally {
    await s.close();
  }
});

test('a stall counts for every request scheduled during it (no coordinated omission)', async () => {
  // The server holds every answer until 400 ms after the first request arrives, then answers at once.
  let releaseAt = 0;
  const s = await server((req, res) => {
    req.resume();
    if (!releaseAt) releaseAt = Date.now() + 400;
    setTimeout(() => { res.writeHead(200); res.end('{}'); }, Math.max(0, releaseAt - Date.now()));
  });
  try {
    const r = await openLoop({ url: s.url, method: 'GET', headers: {}, paths: ['/x'], ratePerSec: 100, warmupS: 0, durationS: 1 }, 1, 'k');
    assert.equal(r.completed, 100);
    // About 40 of the 100 requests were scheduled during the stall, the first waiting ~400 ms:
    // the max and the p99 are close to the stall, and the p50 (a request sent after it) below the p99.
    assert.ok(r.maxMs >= 350, `max ${r.maxMs}`);
    assert.ok(r.p99Ms >= 300, `p99 ${r.p99Ms}`);
    assert.ok(r.p50Ms < r.p99Ms, `p50 ${r.p50Ms}, p99 ${r.p99Ms}`);
  } finally {
    await s.close();
  }
});

test('the compiled script, spawned as the orchestrator spawns it, prints its measured window and its result', async () => {
  // The sustained-rate search reads both lines; a guard that only knew `open-loop.ts` made the
  // compiled dist/open-loop.js print nothing and exit 0 (a whole quiet bench run failed on it).
  const s = await server((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200); res.end('{}'); }); });
  const dir = mkdtempSync(join(tmpdir(), 'open-loop-'));
  try {
    const specFile = join(dir, 'spec.json');
    writeFileSync(specFile, JSON.stringify({ url: s.url, method: 'GET', headers: {}, paths: ['/x'], ratePerSec: 50, warmupS: 0, durationS: 1 }));
    const compiled = join(import.meta.dirname, '..', 'dist', 'open-loop.js');
    for (const { file, execArgv } of [{ file: compiled, execArgv: [] as string[] }, benchScript('open-loop.ts')]) {
      const child = spawn(process.execPath, [...execArgv, file, specFile], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      assert.equal(await new Promise((r) => child.on('exit', r)), 0, file);
      const lines = out.trim().split('\n');
      assert.deepEqual(JSON.parse(lines[0] ?? 'null'), { phase: 'measured' }, `${file} printed ${JSON.stringify(out)}`);
      assert.equal((JSON.parse(lines.at(-1) ?? 'null') as { measured: { completed: number } }).measured.completed, 50, file);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await s.close();
  }
});

// Open-loop load generator: `node --import tsx bench/open-loop.ts <spec.json>`, in a process of
// its own (never the server's, never the orchestrator's).
//
// Requests go out on a fixed schedule, request i at t0 + i / ratePerSec, whatever the server
// is doing: a slow answer does not delay the next send (a closed loop would wait, and so measure
// only the requests a struggling server lets through: coordinated omission). Each latency is
// timed from the request's SCHEDULED send time to the end of its answer, so any wait, be it in
// this process, for a socket or in the server, is counted.
//
// A request this process could not send on time (its event loop was late by more than
// LATE_MS) is still timed from its schedule, and counted in `lateSends`, with the worst lag in
// `maxSendLagMs`: many late sends mean the generator, not the server, was the limit. A send
// that found all `sockets` busy waits in the agent's queue and is counted in `socketWaits`.
//
// spec: { url, method, headers, body?, paths: string[] (cycled), idempotencyKeys?: boolean,
//         ratePerSec, warmupS, durationS, sockets? (default 512) }
// Prints {"phase":"measured"} when its measured window starts, then, last, one JSON line:
// { warmup: OpenLoopResult | null, measured: OpenLoopResult }.
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import { performance } from 'node:perf_hooks';

export interface OpenLoopSpec {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  paths: string[];
  idempotencyKeys?: boolean;
  ratePerSec: number;
  warmupS: number;
  durationS: number;
  sockets?: number;
}

export interface OpenLoopResult {
  ratePerSec: number;
  durationS: number;
  scheduled: number;
  completed: number;
  achievedRps: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  non2xx: number;
  errors: number;
  lateSends: number;
  maxSendLagMs: number;
  socketWaits: number;
  statusCodes: Record<string, number>;
}

const LATE_MS = 5;
// The clients this process stands for run on other machines. Here it shares the cores with the
// server, its worker and the database, and a send that waited for a core is a late send that
// says nothing about the server: on 2 cores with PostgreSQL, 1-3 % of sends were late even at
// 125/s (2026-11-28), so no step of the sustained-rate search held. Where the kernel allows it
// (root, or CAP_SYS_NICE), the generator asks to run first; elsewhere it runs as it is, and the
// report says which (`nice` in its JSON line).
const GENERATOR_NICE = -10;
function raisePriority(): number {
  try {
    os.setPriority(GENERATOR_NICE);
  } catch {
    // Not allowed here: the default priority, as before.
  }
  return os.getPriority();
}
const TIMEOUT_MS = 30_000;

// The q-quantile of sorted values (nearest rank).
export function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

export async function openLoop(spec: OpenLoopSpec, durationS: number, prefix: string): Promise<OpenLoopResult> {
  if (!(spec.ratePerSec > 0) || !(durationS > 0)) throw new Error('ratePerSec and durationS must be > 0');
  if (spec.paths.length === 0) throw new Error('spec.paths must be a non-empty array');
  const target = new URL(spec.url);
  const sockets = spec.sockets ?? 512;
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
  const total = Math.max(1, Math.round(spec.ratePerSec * durationS));
  const intervalMs = 1000 / spec.ratePerSec;
  const latencies = new Float64Array(total);
  const statusCodes: Record<string, number> = {};
  let completed = 0;
  let non2xx = 0;
  let errors = 0;
  let lateSends = 0;
  let maxSendLagMs = 0;
  let socketWaits = 0;
  let inFlight = 0;
  let next = 0;
  let settled = 0;

  return new Promise((resolve) => {
    const t0 = performance.now() + 20;
    const finish = () => {
      agent.destroy();
      const done = latencies.slice(0, completed).sort();
      resolve({
        ratePerSec: spec.ratePerSec, durationS, scheduled: total, completed,
        achievedRps: completed / ((performance.now() - t0) / 1000),
        p50Ms: round2(quantile(done, 0.5)), p99Ms: round2(quantile(done, 0.99)), p999Ms: round2(quantile(done, 0.999)), maxMs: round2(done.length ? done[done.length - 1] : 0),
        non2xx, errors, lateSends, maxSendLagMs: round2(maxSendLagMs), socketWaits, statusCodes,
      });
    };
    const settle = () => {
      inFlight--;
      if (++settled === total) finish();
    };
    const send = (i: number, scheduledMs: number) => {
      const lag = performance.now() - scheduledMs;
      if (lag > LATE_MS) lateSends++;
      if (lag > maxSendLagMs) maxSendLagMs = lag;
      if (inFlight >= sockets) socketWaits++;
      inFlight++;
      const headers: Record<string, string> = { ...spec.headers };
      if (spec.idempotencyKeys) headers['idempotency-key'] = prefix + i;
      if (spec.body !== undefined) headers['content-length'] = String(Buffer.byteLength(spec.body));
      const req = http.request({ host: target.hostname, port: target.port, method: spec.method, path: spec.paths[i % spec.paths.length], headers, agent, timeout: TIMEOUT_MS }, (res) => {
        res.resume();
        res.once('end', () => {
          const code = res.statusCode ?? 0;
          statusCodes[code] = (statusCodes[code] ?? 0) + 1;
          if (code < 200 || code > 299) non2xx++;
          latencies[completed++] = performance.now() - scheduledMs;
          settle();
        });
        res.once('error', () => { errors++; settle(); });
      });
      req.once('timeout', () => req.destroy(new Error('timeout')));
      req.once('error', () => { errors++; settle(); });
      req.end(spec.body);
    };
    const tick = () => {
      const now = performance.now();
      while (next < total && t0 + next * intervalMs <= now) {
        send(next, t0 + next * intervalMs);
        next++;
      }
      if (next < total) setTimeout(tick, Math.max(0, t0 + next * intervalMs - performance.now()));
    };
    setTimeout(tick, 20);
  });
}

const round2 = (n: number) => Math.round(n * 100) / 100;

// Run as a script (the orchestrator spawns it: open-loop.ts under tsx, or the compiled
// dist/open-loop.js), not when a test imports it.
if (/open-loop\.[jt]s$/.test(process.argv[1] ?? '') && process.argv[2]) {
  const spec = JSON.parse(readFileSync(process.argv[2], 'utf8')) as OpenLoopSpec;
  const nice = raisePriority();
  const prefix = `open-${process.pid}-${randomBytes(6).toString('hex')}-`;
  const warmup = spec.warmupS > 0 ? await openLoop(spec, spec.warmupS, prefix + 'w') : null;
  // The orchestrator reads the confirmation backlog when the measured window starts (sustained.ts).
  process.stdout.write(JSON.stringify({ phase: 'measured' }) + '\n');
  const measured = await openLoop(spec, spec.durationS, prefix + 'm');
  process.stdout.write(JSON.stringify({ warmup, measured, nice }) + '\n');
}

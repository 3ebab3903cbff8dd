// What the bench suites (run.ts, settlement.ts, webhooks.ts) share: paths, settings, the
// processes and temp dirs they start (cleaned up whatever happens), the server under test
// started as production runs it, and the reading of its log.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { rmSync, statSync, existsSync, createReadStream, writeFileSync, readFileSync } from 'node:fs';
import { basename, join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';

// The bench runs compiled (`npm run bench`: bench/dist/*.js, built by scripts/build.mjs) or from
// its TypeScript under tsx (its own tests); either way it starts the compiled server, as
// production runs it (`npm run build`; scripts/ensure-built.mjs builds both when stale).
const HERE = dirname(fileURLToPath(import.meta.url));
const COMPILED = basename(HERE) === 'dist';
export const BENCH_DIR = COMPILED ? dirname(HERE) : HERE;
export const SERVER_DIR = join(BENCH_DIR, '..', 'apps', 'server');
export const CLI = join(SERVER_DIR, 'dist', 'cli.js');
// Node's flags for the server: stack traces name the TypeScript source lines.
const SERVER_NODE_ARGS = ['--enable-source-maps'];

// A bench script that runs in a process of its own (a load generator, the webhook receivers, the
// ceiling plugin the server loads), by its source name: its compiled file when the bench runs
// compiled, else the source, with the Node flags that run it.
export function benchScript(name: string): { file: string; execArgv: string[] } {
  if (COMPILED) return { file: join(HERE, name.replace(/\.ts$/, '.js')), execArgv: [] };
  return { file: join(BENCH_DIR, name), execArgv: ['--import', 'tsx'] };
}
// The ceiling plugin as the compiled server loads it: always JavaScript (bench/dist, built by
// scripts/ensure-built.mjs), since the server runs without a TypeScript loader.
export const CEILING_PLUGIN = join(BENCH_DIR, 'dist', 'ceiling-plugin.js');

export class BenchFailure extends Error {}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function envInt(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number >= ${min}, got "${raw}"`);
  return n;
}

// ---------------------------------------------------------------------------------------------
// Everything we start or create, so that it is cleaned up whatever happens.
export const live = { children: new Set<ChildProcess>(), tempDirs: new Set<string>() };

export function track<T extends ChildProcess>(child: T): T {
  live.children.add(child);
  child.once('exit', () => live.children.delete(child));
  return child;
}

export function killChildren() {
  for (const child of live.children) {
    if (child.exitCode === null && child.signalCode === null) {
      try { child.kill('SIGKILL'); } catch { /* already gone */ }
    }
  }
}

export function removeTempDir(dir: string): void {
  try { rmSync(dir, { recursive: true, force: true }); } catch { /* best effort */ }
  live.tempDirs.delete(dir);
}

function removeTempDirs() {
  for (const dir of [...live.tempDirs]) removeTempDir(dir);
}

// What a suite must undo on a signal beyond children and temp dirs (dropping PostgreSQL
// schemas, say): added with onSignal, run by the cleanup the runner installs.
const signalHooks = new Set<() => Promise<void>>();
export function onSignal(hook: () => Promise<void>): void {
  signalHooks.add(hook);
}

// On exit or a signal: kill the children, remove the temp dirs, then the signal hooks (given at
// most 5 s together). Installed once, by the runner (run.ts).
export function installCleanup(log: (msg: string) => void): void {
  process.on('exit', () => { killChildren(); removeTempDirs(); });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      log(`${signal}: stopping`);
      killChildren();
      removeTempDirs();
      const timer = setTimeout(() => process.exit(130), 5000);
      // Not awaited: a signal listener cannot wait; allSettled never rejects and the process exits in finally.
      void Promise.allSettled([...signalHooks].map((hook) => hook())).finally(() => { clearTimeout(timer); process.exit(130); });
    });
  }
}

// What every suite gives the runner: its tables are printed as it goes; its JSON lines are
// printed together at the very end of `npm run bench`.
export interface SuiteOutcome { failed: boolean; jsonLines: string[] }

export const makeLog = (label: string): ((msg: string) => void) => {
  const t0 = Date.now();
  return (msg: string) => process.stderr.write(`[${label} +${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}\n`);
};

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as import('node:net').AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

// Keeps the last `limit` characters of a stream.
export interface Tail { text: string }
export function tail(stream: Readable, limit = 64 * 1024): Tail {
  const buf = { text: '' };
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buf.text += chunk;
    if (buf.text.length > limit) buf.text = buf.text.slice(-limit);
  });
  return buf;
}

// ---------------------------------------------------------------------------------------------
// A `cli.ts` process (serve or worker) as production runs it, watched: `died` rejects if it
// exits unasked. `env` adds to (or, with undefined, removes from) the production settings.
// `args` go after the command (`serve --plugin bench/ceiling-plugin.ts`, say).
export interface Exit { code: number | null; signal: NodeJS.Signals | null }
export interface Proc {
  child: ChildProcess;
  label: string;
  port: number;
  base: string;
  stdout: Tail;
  stderr: Tail;
  stopping: boolean;
  exit: Exit | null;
  startedMs: number;
  exited: Promise<Exit>;
  // Rejects if the process exits before we ask it to; never resolves.
  died: Promise<never>;
}
export interface StartOptions {
  env?: Record<string, string | undefined>;
  logFile: string;
  label?: string;
  nodeArgs?: string[];
  args?: string[];
}

// Every server process the bench starts gets this bearer token for /metrics (METRICS_TOKEN).
export const METRICS_TOKEN = randomBytes(18).toString('hex');

export async function startCli(command: 'serve' | 'worker', { env = {}, logFile, label = command === 'serve' ? 'server' : command, nodeArgs = [], args = [] }: StartOptions): Promise<Proc> {
  const port = command === 'serve' ? await freePort() : 0;
  const childEnv: Record<string, string | undefined> = {
    ...process.env,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port || 0),
    // Production mode refuses to serve without the address clients reach it at.
    PUBLIC_URL: `http://127.0.0.1:${port || 80}`,
    LOG_FILE: logFile,
    LOG_LEVEL: 'info',
    RATE_LIMIT_PER_MINUTE: '100000000',
    // The bench's own requests without a key (sign-ups, the ceiling) are not what it measures.
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000000',
    // Production mode refuses private webhook URLs; the webhook suite's receivers are local.
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    PRINT_SANDBOX_KEY: 'false',
    METRICS_TOKEN,
    ...env,
  };
  for (const [k, v] of Object.entries(childEnv)) if (v === undefined) delete childEnv[k];
  // cwd = the server workspace, as `npm start` runs it.
  const child = track(spawn(process.execPath, [...SERVER_NODE_ARGS, ...nodeArgs, CLI, command, ...args], { cwd: SERVER_DIR, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] }));
  const stdout = tail(child.stdout);
  const stderr = tail(child.stderr);
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => { proc.exit = { code, signal }; resolve(proc.exit); }));
  const proc: Proc = {
    child, label, port, base: port ? `http://127.0.0.1:${port}` : '', stdout, stderr, stopping: false, exit: null, startedMs: Date.now(), exited,
    died: exited.then(({ code, signal }) => {
      if (proc.stopping) return new Promise<never>(() => {});
      throw new BenchFailure(`the ${label} exited unexpectedly (code ${code}, signal ${signal})\n--- ${label} stderr ---\n${stderr.text || '(empty)'}\n--- ${label} stdout ---\n${stdout.text || '(empty)'}`);
    }),
  };
  proc.died.catch(() => {});
  if (command !== 'serve') return proc;

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exit) await proc.died;
    try {
      const res = await fetch(`${proc.base}/readyz`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) break;
      await res.arrayBuffer();
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) throw new BenchFailure(`the server was not ready within 60 s\n--- server stderr ---\n${stderr.text}`);
    await sleep(100);
  }
  return proc;
}

export interface Stopped extends Exit { ms: number; forced?: boolean }

// SIGTERM, then wait for the graceful shutdown (the server force-exits itself after 30 s).
export async function stopCli(proc: Proc): Promise<Stopped> {
  proc.stopping = true;
  if (proc.exit) return { ...proc.exit, ms: 0 };
  const started = Date.now();
  proc.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([proc.exited, new Promise<null>((r) => { timer = setTimeout(() => r(null), 40_000); })]);
  clearTimeout(timer);
  if (!result) {
    proc.child.kill('SIGKILL');
    await proc.exited;
    return { code: null, signal: 'SIGKILL', forced: true, ms: Date.now() - started };
  }
  return { ...result, ms: Date.now() - started };
}

// `promise`, unless one of the processes dies first.
export const during = <T>(procs: Proc | Proc[], promise: Promise<T>): Promise<T> => Promise.race([promise, ...[procs].flat().map((p) => p.died)]);

// A parsed JSON answer: the bench reads a few known fields of it (eslint.config.js lets bench/ use any).
export type Json = any;
export interface ApiAnswer { status: number; json: Json; text: string; headers: Headers }

export async function api(server: Proc, method: string, path: string, { key, body, idempotencyKey, headers: extra = {} }: { key?: string; body?: unknown; idempotencyKey?: string; headers?: Record<string, string> } = {}): Promise<ApiAnswer> {
  const headers: Record<string, string> = { ...extra };
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
  const res = await during(server, fetch(server.base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30_000) }));
  const text = await res.text();
  let json: Json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, json, text, headers: res.headers };
}

// GET /metrics with the bench's token (the server is started with METRICS_TOKEN set).
export async function metricsText(server: Proc): Promise<string> {
  const res = await api(server, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  if (res.status !== 200) throw new BenchFailure(`GET /metrics answered ${res.status}: ${res.text.slice(0, 300)}`);
  return res.text;
}

// The server's log file: size, lines by level, the first few warnings and errors.
export interface LogInfo { bytes: number; lines: number; byLevel: Record<string, number>; notable: string[] }
export async function logReport(file: string): Promise<LogInfo> {
  if (!existsSync(file)) return { bytes: 0, lines: 0, byLevel: {}, notable: [] };
  const bytes = statSync(file).size;
  const byLevel: Record<string, number> = {};
  const notable: string[] = [];
  let lines = 0;
  const names: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
  const rl = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const text of rl) {
    if (!text) continue;
    lines++;
    let entry: { level: number };
    try { entry = JSON.parse(text) as { level: number }; } catch { byLevel.unparsable = (byLevel.unparsable ?? 0) + 1; continue; }
    const level = names[entry.level] ?? String(entry.level);
    byLevel[level] = (byLevel[level] ?? 0) + 1;
    if (entry.level >= 40 && notable.length < 5) notable.push(text.length > 400 ? text.slice(0, 400) + '...' : text);
  }
  return { bytes, lines, byLevel, notable };
}

// Runs a load-generator script (bench/*-load.ts) in its own process with a JSON spec, while
// watching `procs` (the servers) for an early death; returns the last line it printed, parsed.
// onLine sees each line the script prints as it prints it (the open-loop generator says when its
// measured window starts).
export async function runLoadScript<R = Json>(procs: Proc | Proc[], tmp: string, script: string, name: string, spec: unknown, onLine?: (line: string) => void): Promise<R> {
  const specFile = join(tmp, `${script.replace(/\.ts$/, '')}-${name.replace(/\W+/g, '_')}.json`);
  writeFileSync(specFile, JSON.stringify(spec));
  const { file, execArgv } = benchScript(script);
  const child = track(spawn(process.execPath, [...execArgv, file, specFile], { cwd: BENCH_DIR, stdio: ['ignore', 'pipe', 'pipe'] }));
  if (onLine) {
    let partial = '';
    child.stdout.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    });
  }
  const out = tail(child.stdout, 1024 * 1024);
  const err = tail(child.stderr);
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let done: Exit;
  try {
    done = await during(procs, exited);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  if (err.text.trim()) process.stderr.write(err.text.trimEnd().split('\n').map((l) => `[load ${name}] ${l}`).join('\n') + '\n');
  if (done.code !== 0) throw new BenchFailure(`load generator for "${name}" exited with code ${done.code} (signal ${done.signal})\n${err.text}`);
  return JSON.parse(out.text.trim().split('\n').pop() ?? 'null') as R;
}

// A fresh PostgreSQL schema for one bench run, reached through search_path:
// { schema, databaseUrl, drop() }.
export interface BenchSchema { schema: string; databaseUrl: string; drop: () => Promise<void> }
export async function createBenchSchema(pgUrl: string, prefix = 'bench'): Promise<BenchSchema> {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  await queryOnce(pgUrl, `CREATE SCHEMA ${schema}`);
  return {
    schema,
    databaseUrl: `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}options=-c%20search_path%3D${schema}`,
    drop: async () => { await queryOnce(pgUrl, `DROP SCHEMA IF EXISTS ${schema} CASCADE`); },
  };
}

// One statement on a connection of its own (the bench's few out-of-band queries): its rows.
async function queryOnce<R extends Record<string, unknown>>(pgUrl: string, text: string): Promise<R[]> {
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: pgUrl, connectionTimeoutMillis: 5000 });
  await c.connect();
  try {
    return (await c.query<R>(text)).rows;
  } finally {
    await c.end();
  }
}

// PostgreSQL's WAL position in bytes (pg_current_wal_lsn). The WAL a route writes a request is
// what each commit must flush before the answer, so the core suite reports it beside the rates.
// It is the whole cluster's: on a quiet bench machine, the routes' own (the read routes show the
// floor, about nothing).
export async function walPositionBytes(pgUrl: string): Promise<bigint> {
  return lsnBytes((await queryOnce<{ lsn: string }>(pgUrl, 'select pg_current_wal_lsn()::text as lsn'))[0].lsn);
}

// An LSN as PostgreSQL prints it ("16/B374D848": the high and low 32 bits, in hex) as bytes.
export function lsnBytes(lsn: string): bigint {
  const m = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(lsn);
  if (!m) throw new Error(`not an LSN: "${lsn}"`);
  return (BigInt(`0x${m[1]}`) << 32n) + BigInt(`0x${m[2]}`);
}

// CPU milliseconds (user + system) a process has used so far, from /proc (Linux); null elsewhere.
// Throughput on a shared 2-core machine moves with the neighbours' load; a process's own CPU per
// request moves much less, so the suites report it beside rps.
const CLOCK_TICKS_PER_S = 100; // USER_HZ
export function cpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
  } catch {
    return null;
  }
}

export const round = (n: number, digits: number): number => Math.round(n * 10 ** digits) / 10 ** digits;
export const errorText = (error: unknown): string => (error instanceof BenchFailure ? error.message : error instanceof Error ? error.stack ?? error.message : String(error));

// A one-shot `cli.ts` command (migrate, admin:create, ...) against `databaseUrl`: its stdout.
export async function runCliOnce(args: string[], env: Record<string, string>): Promise<string> {
  const child = track(spawn(process.execPath, [...SERVER_NODE_ARGS, CLI, ...args], { cwd: SERVER_DIR, env: { ...process.env, NODE_ENV: 'production', ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
  const out = tail(child.stdout);
  const err = tail(child.stderr);
  const done = await new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  if (done.code !== 0) throw new BenchFailure(`cli.ts ${args[0]} exited with code ${done.code} (signal ${done.signal})\n${err.text}${out.text}`);
  return out.text;
}

// Ids and dates for rows a suite loads straight into the server's database with SQL (settlement-
// run.ts: a million receivables, far more than the API could create in a setup step). Made here:
// the bench imports nothing from the server's code.
// The id format is the server's public one, as its API answers it: a type prefix (`acct_`,
// `rcp_`, `pay_`, `rcv_`, ...) then a ULID, lowercase Crockford base32: 10 characters of
// milliseconds, then 16 of an 80-bit random part. Within this process ids increase strictly, as
// the server's do (the random part counts up from a random start; the time part never goes back).
const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
let idRandom = BigInt(`0x${randomBytes(10).toString('hex')}`) >> 1n; // half the range: it never wraps
let idLastMs = 0;
export function benchId(prefix: string, nowMs: number = Date.now()): string {
  idLastMs = Math.max(idLastMs, nowMs);
  idRandom++;
  let time = '';
  for (let i = 0, ms = idLastMs; i < 10; i++, ms = Math.floor(ms / 32)) time = CROCKFORD[ms % 32] + time;
  let random = '';
  for (let i = 0, n = idRandom; i < 16; i++, n >>= 5n) random = CROCKFORD[Number(n & 31n)] + random;
  return prefix + time + random;
}

// The server counts receivables' and settlements' dates in São Paulo's calendar: UTC-3 all year
// (Brazil has had no daylight saving since 2019; docs/split-and-settlement.md).
const SAO_PAULO_OFFSET_MS = -3 * 3600_000;
export function saoPauloDate(ms: number = Date.now()): string {
  return new Date(ms + SAO_PAULO_OFFSET_MS).toISOString().slice(0, 10);
}

// `date` (YYYY-MM-DD) moved by `days` calendar days.
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

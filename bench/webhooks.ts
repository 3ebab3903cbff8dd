// `node bench/webhooks.ts` — webhook delivery at volume: 20,000 events fanned out to 4 local
// receivers, one of them slow, every delivery verified.
//
// What it does, per engine (SQLite always; PostgreSQL too when BENCH_DATABASE_URL is set)
//   1. Starts 4 receivers (node:http on 127.0.0.1) in ONE child process of their own
//      (bench/webhooks-receivers.ts): 3 fast ones answer 204 at once, the slow one after 2 s.
//      Each verifies every delivery's Standard Webhooks signature against its endpoint's secret
//      (HMAC-SHA256 on the raw bytes; 1 in 50 also with the `standardwebhooks` package),
//      dedupes on webhook-id and records arrival times.
//   2. Starts the server exactly as production would (`node --import tsx apps/server/src/cli.ts
//      serve`, NODE_ENV=production, info logging to a file, fresh SQLite file or PG schema).
//   3. Signs up (POST /v1/sandbox/accounts), creates 4 endpoints (events ["*"]) pointing at
//      the receivers and hands each receiver its endpoint's secret.
//   4. Produces the events through the API, as real traffic does: EVENTS × POST /v1/payments
//      {"amount":100,"currency":"BRL","method":"pix"} from autocannon in a child process
//      (bench/webhooks-load.ts). A pix payment emits exactly one event (payment.created; its
//      expiry job is an hour away), so EVENTS events → 4 × EVENTS deliveries.
//   5. Waits (bounded) until every receiver has EVENTS distinct valid deliveries, then checks the
//      server's delivery log agrees: nothing pending or failed per endpoint through the API, and
//      after shutdown, by SQL, every row succeeded and how many attempts that took.
//
// Dispatcher settings (the server's WEBHOOK_* environment) and why
//   WEBHOOK_PER_ENDPOINT_MAX_IN_FLIGHT=512: the slow endpoint can only go as fast as
//     slots / 2 s = 256 deliveries/s, so its 20,000 take >= 78 s (at the default 128: 64/s,
//     >= 5 min). 512 keeps the slow run to about a minute and a half.
//   WEBHOOK_MAX_IN_FLIGHT=1024: the slow endpoint can hold at most half of the process's slots;
//     the other 512 are for the fast ones, which at the 1,000/s target is room for 0.5 s per
//     delivery including its bookkeeping commit (Little's law) — far more than they need, so
//     any shortfall is the dispatcher's throughput, not slots.
//
// Timing (all seconds are from t0)
//   live mode (default): t0 = the first POST. The dispatcher runs while the API takes the
//     events, so the fast receivers can finish no earlier than production does.
//   BENCH_WEBHOOK_MODE=worker: as live, but the server runs with WORKER_IN_PROCESS=false and the
//     dispatcher runs in its own `cli.ts worker` process (the production topology the CLI
//     offers), started before the events: API and delivery no longer share an event loop.
//   BENCH_WEBHOOK_MODE=backlog: the server runs with WORKER_IN_PROCESS=false, all events are
//     produced first (deliveries pile up in the outbox), then `cli.ts worker` is started and
//     drains them: t0 = the first delivery received (the worker's boot is left out). This
//     isolates delivery throughput from API throughput (the worker process is the dispatcher
//     alone).
//   per receiver: first→last = first to last distinct valid delivery; deliveries/s = distinct
//     / (last - first). fast deliveries/s = the 3 fast receivers' deliveries / (last fast
//     arrival - first fast arrival). finished = the moment a receiver had all EVENTS.
//   "slow did not hold back the others": the fast receivers' finish time against the slow one's,
//     and how many the slow one had received when the last fast receiver finished. (If events
//     come slower than the slow endpoint's ceiling, it never fills its slots and all four keep
//     the same pace: the table says so.) fastLagAfterProductionSeconds in the JSON: how long
//     after the last event was produced the fast receivers had everything (<= 0: kept pace).
//
// Output
//   A table per engine, then at the very end one JSON line per engine (sqlite first):
//   {"scenario":"webhooks","engine":"sqlite","events":20000,"receivers":4,"fastDeliveriesPerSecond":..,
//    "slowDeliveriesPerSecond":..,"fastFinishedSeconds":..,"slowFinishedSeconds":..,"invalidSignatures":0,"duplicates":..,...}
//   Progress goes to stderr. Exit 1 (and no JSON line for that engine) on an invalid signature,
//   a missing delivery, a non-2xx while producing, a delivery row not succeeded, a server crash
//   or a non-graceful shutdown. Duplicates (allowed: at least once) and retries are reported.
//
// Environment
//   BENCH_WEBHOOK_EVENTS           events to produce (default 20000)
//   BENCH_WEBHOOK_SLOW_MS          the slow receiver's answer delay (default 2000)
//   BENCH_WEBHOOK_PER_ENDPOINT     WEBHOOK_PER_ENDPOINT_MAX_IN_FLIGHT (default 512)
//   BENCH_WEBHOOK_MAX_IN_FLIGHT    WEBHOOK_MAX_IN_FLIGHT (default 1024)
//   BENCH_WEBHOOK_CONNECTIONS      producer connections (default 64)
//   BENCH_WEBHOOK_TIMEOUT_S        wait for all deliveries (default max(300, 1.5 × the slow
//                                  endpoint's lower bound + 60))
//   BENCH_WEBHOOK_MODE             live (default) | worker | backlog
//   BENCH_WEBHOOK_CPU_PROF         a directory: run the server (and worker) with --cpu-prof there
//   BENCH_DATABASE_URL             postgres://... to also run on PostgreSQL (a fresh schema
//                                  whk_<random>, used through search_path, dropped at the end)
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir, loadavg, cpus } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { api, BENCH_DIR, benchScript, BenchFailure, cpuMs, createBenchSchema, during, envInt, errorText, live, logReport, makeLog, removeTempDir, runLoadScript, sleep, startCli as startCliBase, stopCli, tail, track, type Exit, type LogInfo, type Proc, type Stopped, type SuiteOutcome, type Tail } from './lib.ts';
import type { ReceiverMessage, ReceiverReply, ReceiverReport } from './webhooks-receivers.ts';


const EVENTS = envInt('BENCH_WEBHOOK_EVENTS', 20_000);
const SLOW_MS = envInt('BENCH_WEBHOOK_SLOW_MS', 2000, 0);
const PER_ENDPOINT = envInt('BENCH_WEBHOOK_PER_ENDPOINT', 512);
const MAX_IN_FLIGHT = envInt('BENCH_WEBHOOK_MAX_IN_FLIGHT', 1024);
const CONNECTIONS = envInt('BENCH_WEBHOOK_CONNECTIONS', 64);
const SLOW_BOUND_S = (EVENTS * SLOW_MS) / 1000 / PER_ENDPOINT; // the slow endpoint cannot beat this
const TIMEOUT_S = envInt('BENCH_WEBHOOK_TIMEOUT_S', Math.max(300, Math.ceil(1.5 * SLOW_BOUND_S + 60)));
const MODE = process.env.BENCH_WEBHOOK_MODE || 'backlog';
const CPU_PROF = process.env.BENCH_WEBHOOK_CPU_PROF ? resolvePath(process.env.BENCH_WEBHOOK_CPU_PROF) : '';
const PG_URL = process.env.BENCH_DATABASE_URL || '';
if (!['live', 'worker', 'backlog'].includes(MODE)) throw new Error(`BENCH_WEBHOOK_MODE must be live, worker or backlog, got "${MODE}"`);

const RECEIVERS = [
  { name: 'fast-1', delayMs: 0 },
  { name: 'fast-2', delayMs: 0 },
  { name: 'fast-3', delayMs: 0 },
  { name: 'slow', delayMs: SLOW_MS },
];
const FAST = RECEIVERS.filter((r) => r.delayMs === 0).map((r) => r.name);
const SLOW = RECEIVERS.filter((r) => r.delayMs > 0).map((r) => r.name);
const PAYMENT_BODY = JSON.stringify({ amount: 100, currency: 'BRL', method: 'pix' });

const log = makeLog('bench webhooks');
const round = (n: number | null | undefined, digits = 1): number | null => (n === null || n === undefined || !Number.isFinite(n) ? null : Math.round(n * 10 ** digits) / 10 ** digits);
const loadAvg = () => loadavg().map((v) => v.toFixed(2)).join(' ');


// ---------------------------------------------------------------------------------------------


// CPU seconds a process has used so far; null where /proc is not there.
function cpuSeconds(pid: number | undefined): number | null {
  const ms = cpuMs(pid);
  return ms === null ? null : ms / 1000;
}

// ---------------------------------------------------------------------------------------------
// A `cli.ts` process (serve or worker), watched: `died` rejects if it exits unasked.
function startCli(command: 'serve' | 'worker', { env, logFile, label }: { env: Record<string, string>; logFile: string; label: string }): Promise<Proc> {
  const nodeArgs: string[] = [];
  if (CPU_PROF) {
    mkdirSync(CPU_PROF, { recursive: true });
    nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`); // one CPU.<date>.<pid>.<thread>.cpuprofile per thread
  }
  return startCliBase(command, {
    env: { SETTLEMENT_SCHEDULE: 'false', WEBHOOK_PER_ENDPOINT_MAX_IN_FLIGHT: String(PER_ENDPOINT), WEBHOOK_MAX_IN_FLIGHT: String(MAX_IN_FLIGHT), ...env },
    logFile, label, nodeArgs,
  });
}


// ---------------------------------------------------------------------------------------------
// The receivers' process, over IPC.
interface Receivers {
  child: ChildProcess; stderr: Tail; exit: Exit | null; stopping: boolean; died: Promise<never>; ports: Record<string, number>;
  call(msg: ReceiverMessage, answerType: string): Promise<ReceiverReply>;
  report(at?: Record<string, number>): Promise<Record<string, ReceiverReport>>;
  stop(): Promise<void>;
}
async function startReceivers(): Promise<Receivers> {
  const receivers = benchScript('webhooks-receivers.ts');
  const child = track(fork(receivers.file, [], { cwd: BENCH_DIR, execArgv: receivers.execArgv, stdio: ['ignore', 'inherit', 'pipe', 'ipc'] }));
  const stderr = tail(child.stderr!);
  const waiting = new Map<string, (reply: ReceiverReply) => void>();
  let seq = 0;
  const state: { exit: Exit | null; stopping: boolean } = { exit: null, stopping: false };
  const died = new Promise<never>((_, reject) => child.once('exit', (code, signal) => {
    state.exit = { code, signal };
    if (!state.stopping) reject(new BenchFailure(`the receivers' process exited unexpectedly (code ${code}, signal ${signal})\n${stderr.text}`));
  }));
  died.catch(() => {});
  child.on('message', (msg: ReceiverReply) => {
    if (msg.type === 'error') { log(`receivers: ${msg.message}`); return; }
    const key = msg.type === 'report' ? `report:${msg.id}` : msg.type;
    const w = waiting.get(key);
    if (w) { waiting.delete(key); w(msg); }
  });
  const call = (msg: ReceiverMessage, answerType: string): Promise<ReceiverReply> => {
    if (msg.type === 'report') msg.id = ++seq;
    const key = msg.type === 'report' ? `report:${msg.id}` : answerType;
    const p = new Promise<ReceiverReply>((resolve) => waiting.set(key, resolve));
    child.send(msg);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new BenchFailure(`the receivers did not answer "${msg.type}" within 30 s`)), 30_000); });
    return Promise.race([p, died, timeout]).finally(() => clearTimeout(timer));
  };
  const rec: Receivers = {
    child, stderr, died, ports: {}, call,
    get exit() { return state.exit; },
    get stopping() { return state.stopping; },
    async report(at) {
      const reply = await call({ type: 'report', id: 0, at }, 'report');
      if (reply.type !== 'report') throw new BenchFailure(`the receivers answered ${reply.type} to a report`);
      return reply.receivers;
    },
    async stop() {
      state.stopping = true;
      if (state.exit) return;
      child.send({ type: 'stop' });
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await new Promise<void>((r) => (state.exit ? r() : child.once('exit', () => r())));
      clearTimeout(t);
    },
  };
  const started = await call({ type: 'start', receivers: RECEIVERS }, 'listening');
  if (started.type !== 'listening') throw new BenchFailure(`the receivers answered ${started.type} to start`);
  rec.ports = started.ports;
  return rec;
}

// ---------------------------------------------------------------------------------------------


interface Produced { startMs: number; endMs: number; durationS: number; completed: number; ok: number; rps: number; p50Ms: number; p99Ms: number; maxMs: number; non2xx: number; errors: number; timeouts: number; statusCodes: Record<string, number> }
async function produce(server: Proc, tmp: string, key: string, procs: Proc[]): Promise<Produced> {
  return runLoadScript<Produced>(procs, tmp, 'webhooks-load.ts', 'events', {
    url: server.base, path: '/v1/payments', count: EVENTS, connections: CONNECTIONS, body: PAYMENT_BODY,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  });
}


// The delivery log by SQL, per endpoint: rows by status, attempts.
interface SqlRow { endpoint_id: string; status: string; n: number; attempts: number; max_attempts: number }
async function deliveryRows(engine: string, databaseUrl: string): Promise<{ rows: SqlRow[]; events: number }> {
  const q = `select endpoint_id, status, count(*) as n, sum(attempts) as attempts, max(attempts) as max_attempts
             from webhook_deliveries group by endpoint_id, status`;
  const qe = 'select count(*) as n from events';
  if (engine === 'sqlite') {
    const db = new BetterSqlite3(databaseUrl.slice('sqlite:'.length), { readonly: true, fileMustExist: true });
    try {
      return { rows: db.prepare(q).all() as SqlRow[], events: (db.prepare(qe).get() as { n: number }).n };
    } finally {
      db.close();
    }
  }
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const rows = (await c.query<Record<string, string>>(q)).rows.map((r) => ({ endpoint_id: r.endpoint_id, status: r.status, n: Number(r.n), attempts: Number(r.attempts), max_attempts: Number(r.max_attempts) }));
    return { rows, events: Number((await c.query(qe)).rows[0].n) };
  } finally {
    await c.end();
  }
}

// ---------------------------------------------------------------------------------------------
interface Row {
  name: string; delayMs: number; distinct: number; requests: number; bytes: number; invalid: number; duplicates: number; notReady: number; badBody: number;
  libChecked: number; libFailed: number; libAvailable: boolean; maxInFlight: number; firstS: number | null; lastS: number | null; spanS: number | null;
  perSecond: number | null; finishedS: number | null; invalidSamples: string[];
}
type Counts = { succeeded: number; pending: number; failed: number; attempts: number; maxAttempts: number };
interface WebhookRun {
  engine: string; mode: string; problems: string[]; warnings: string[]; loadAvgStart: string; loadAvgEnd?: string;
  load?: Produced; workerBootS?: number; receivers?: Record<string, ReceiverReport>; t0?: number; endpoints?: Record<string, { id: string; secret: string }>;
  cpu?: { serverProducing: number | null; workerProducing: number | null; deliverer: number | null; receivers: number | null };
  shutdown?: Stopped; workerShutdown?: Stopped; sql?: { rows: SqlRow[]; events: number }; logInfo?: LogInfo; workerLogInfo?: LogInfo;
  rows?: Row[]; fastPerSecond?: number | null; slowPerSecond?: number | null; fastFinishedS?: number | null; slowFinishedS?: number | null;
  slowAtFastFinish?: number | null; invalid?: number; duplicates?: number; producedS?: number | null; sqlSummary?: Record<string, Counts>;
}
const minus = (a: number | null, b: number | null | undefined): number | null => (a === null || b === null || b === undefined ? null : a - b);

async function benchEngine(engine: string): Promise<WebhookRun> {
  const tmp = mkdtempSync(join(tmpdir(), `bench-webhooks-${engine}-`));
  live.tempDirs.add(tmp);
  const logFile = join(tmp, 'server.log');
  const workerLogFile = join(tmp, 'worker.log');
  let databaseUrl = `sqlite:${join(tmp, 'bench.db')}`;
  let dropSchema: (() => Promise<void>) | null = null;
  let server: Proc | null = null;
  let worker: Proc | null = null;
  let receivers: Receivers | null = null;
  const problems: string[] = [];
  const warnings: string[] = [];
  const run: WebhookRun = { engine, mode: MODE, problems, warnings, loadAvgStart: loadAvg() };

  try {
    if (engine === 'postgres') {
      const pgSchema = await createBenchSchema(PG_URL, 'whk');
      dropSchema = pgSchema.drop;
      databaseUrl = pgSchema.databaseUrl;
      log(`postgres: schema ${pgSchema.schema}`);
    }

    const recv = await startReceivers();
    receivers = recv;
    log(`${engine}: receivers listening on ${Object.entries(receivers.ports).map(([n, p]) => `${n}:${p}`).join(' ')}`);
    log(`${engine}: starting the server (${MODE} mode; per-endpoint ${PER_ENDPOINT}, max in flight ${MAX_IN_FLIGHT})`);
    const srv = await startCli('serve', { env: { DATABASE_URL: databaseUrl, ...(MODE !== 'live' ? { WORKER_IN_PROCESS: 'false' } : {}) }, logFile, label: 'server' });
    server = srv;
    // The receivers' process watched like the servers: only its `died` counts.
    const procs = (): Proc[] => [srv, recv as unknown as Proc, ...(worker ? [worker] : [])];

    const signup = await api(server, 'POST', '/v1/sandbox/accounts', { body: { name: 'bench' } });
    const key = signup.json?.keys?.secretKey?.key;
    if (signup.status !== 200 || !key) throw new BenchFailure(`POST /v1/sandbox/accounts answered ${signup.status}: ${signup.text.slice(0, 500)}`);
    const endpoints: Record<string, { id: string; secret: string }> = {};
    for (const r of RECEIVERS) {
      const res = await api(server, 'POST', '/v1/webhook-endpoints', { key, body: { url: `http://127.0.0.1:${receivers.ports[r.name]}/hooks/${r.name}`, events: ['*'], description: `bench ${r.name}` } });
      if (res.status !== 200 || !res.json?.secret) throw new BenchFailure(`POST /v1/webhook-endpoints answered ${res.status}: ${res.text.slice(0, 500)}`);
      endpoints[r.name] = { id: res.json.id, secret: res.json.secret };
    }
    await during(procs(), receivers.call({ type: 'secrets', secrets: Object.fromEntries(Object.entries(endpoints).map(([n, e]) => [n, e.secret])) }, 'secrets-set'));
    receivers.child.send({ type: 'expect', count: EVENTS });
    if (MODE === 'worker') {
      log(`${engine}: starting the worker (cli.ts worker): the dispatcher in its own process`);
      worker = await startCli('worker', { env: { DATABASE_URL: databaseUrl }, logFile: workerLogFile, label: 'worker' });
      await during(procs(), sleep(3000)); // its boot (migrations) is not delivery time
    }

    // -- produce --------------------------------------------------------------------------------
    log(`${engine}: producing ${EVENTS} events (POST /v1/payments pix, ${CONNECTIONS} connections)`);
    const cpu0 = { server: cpuSeconds(server.child.pid), receivers: cpuSeconds(receivers.child.pid), worker: worker ? cpuSeconds(worker.child.pid) : null };
    let producing = true;
    const progress = (async () => {
      // Progress while producing (live mode shows delivery keeping up with production).
      while (producing) {
        await sleep(2000);
        if (!producing) break;
        const rep = await receivers.report().catch(() => null);
        if (rep) log(`  producing... ${RECEIVERS.map((r) => `${r.name} ${rep[r.name].distinct}`).join('  ')}`);
      }
    })();
    let load;
    try {
      load = await produce(server, tmp, key, procs());
    } finally {
      producing = false;
      await progress;
    }
    run.load = load;
    log(`${engine}: produced in ${load.durationS.toFixed(1)} s (${load.rps.toFixed(0)} req/s, p99 ${load.p99Ms} ms, non-2xx ${load.non2xx}, errors ${load.errors})`);
    if (load.non2xx > 0 || load.errors > 0 || load.ok !== EVENTS) {
      problems.push(`producing: ${load.ok} of ${EVENTS} POST /v1/payments answered 2xx (non-2xx ${load.non2xx} ${JSON.stringify(load.statusCodes)}, errors ${load.errors}, timeouts ${load.timeouts})`);
    }

    // -- deliver ----------------------------------------------------------------------------------
    let t0: number | null = load.startMs;
    const cpu1 = { server: cpuSeconds(server.child.pid), receivers: cpuSeconds(receivers.child.pid), worker: worker ? cpuSeconds(worker.child.pid) : null };
    if (MODE === 'backlog') {
      const pending = await api(server, 'GET', `/v1/webhook-endpoints/${endpoints[FAST[0]].id}/deliveries?status=succeeded&limit=1`, { key });
      if (pending.json?.data?.length) warnings.push('backlog mode: a delivery succeeded before the worker started (is WORKER_IN_PROCESS honoured?)');
      log(`${engine}: starting the worker (cli.ts worker) on a backlog of ${EVENTS * RECEIVERS.length} deliveries`);
      worker = await startCli('worker', { env: { DATABASE_URL: databaseUrl }, logFile: workerLogFile, label: 'worker' });
      t0 = null; // the first delivery received (set below): the worker's boot is not delivery time
    }
    const deliverer = worker ?? server;
    const deadline = Date.now() + TIMEOUT_S * 1000;
    let rep: Record<string, ReceiverReport>;
    let lastLog = 0;
    for (;;) {
      rep = await during(procs(), receivers.report());
      if (t0 === null) {
        const firsts = RECEIVERS.map((r) => rep[r.name].firstMs).filter((v) => v !== null);
        if (firsts.length) {
          t0 = Math.min(...firsts);
          run.workerBootS = (t0 - (worker?.startedMs ?? t0)) / 1000;
        }
      }
      const done = RECEIVERS.every((r) => rep[r.name].distinct >= EVENTS);
      if (done) break;
      if (Date.now() > deadline) {
        problems.push(`not every delivery arrived within ${TIMEOUT_S} s: ${RECEIVERS.map((r) => `${r.name} ${rep[r.name].distinct}/${EVENTS}`).join(', ')}`);
        break;
      }
      if (Date.now() - lastLog >= 5000) {
        lastLog = Date.now();
        log(`  t0+${t0 === null ? '-' : ((Date.now() - t0) / 1000).toFixed(0)}s: ${RECEIVERS.map((r) => `${r.name} ${rep[r.name].distinct}`).join('  ')} (load ${loadAvg()})`);
      }
      await during(procs(), sleep(250));
    }
    if (t0 === null) t0 = worker?.startedMs ?? Date.now(); // nothing arrived at all
    const cpu2 = { deliverer: cpuSeconds(deliverer.child.pid), receivers: cpuSeconds(receivers.child.pid) };
    const fastFinishMs = Math.max(...FAST.map((n) => rep[n].completeMs ?? Infinity));
    // A short grace period, so that a late duplicate (a second send of something already
    // received) would still be counted.
    await during(procs(), sleep(1000));
    rep = await during(procs(), receivers.report(Number.isFinite(fastFinishMs) ? { fastFinish: fastFinishMs } : {}));
    run.receivers = rep;
    run.t0 = t0;
    run.endpoints = endpoints;
    run.loadAvgEnd = loadAvg();
    run.cpu = {
      // server CPU while producing (API + dispatcher in live mode), and the deliverer's from the
      // end of production to the last delivery
      serverProducing: minus(cpu1.server, cpu0.server),
      workerProducing: minus(cpu1.worker, cpu0.worker),
      deliverer: minus(cpu2.deliverer, MODE === 'backlog' ? 0 : MODE === 'worker' ? cpu1.worker : cpu1.server),
      receivers: minus(cpu2.receivers, cpu0.receivers),
    };

    // -- the server's delivery log agrees ---------------------------------------------------------
    const settleDeadline = Date.now() + 30_000;
    for (const r of RECEIVERS) {
      for (;;) {
        const res = await api(server, 'GET', `/v1/webhook-endpoints/${endpoints[r.name].id}/deliveries?status=pending&limit=1`, { key });
        if (res.status !== 200) throw new BenchFailure(`GET deliveries answered ${res.status}: ${res.text.slice(0, 300)}`);
        if (!res.json.data.length) break;
        if (Date.now() > settleDeadline) { problems.push(`${r.name}: the server still lists pending deliveries 30 s after the receivers had them all`); break; }
        await sleep(250);
      }
      const failed = await api(server, 'GET', `/v1/webhook-endpoints/${endpoints[r.name].id}/deliveries?status=failed&limit=1`, { key });
      if (failed.json?.data?.length) problems.push(`${r.name}: the server lists failed deliveries, e.g. ${JSON.stringify(failed.json.data[0])}`);
    }
  } finally {
    if (worker) {
      log(`${engine}: stopping the worker (SIGTERM)`);
      run.workerShutdown = await stopCli(worker);
    }
    if (server) {
      log(`${engine}: stopping the server (SIGTERM)`);
      run.shutdown = await stopCli(server);
    }
    if (receivers) await receivers.stop();
    try {
      if (run.receivers) run.sql = await deliveryRows(engine, databaseUrl);
    } catch (error) {
      problems.push(`could not read the delivery log by SQL: ${errorText(error)}`);
    }
    if (dropSchema) {
      try { await dropSchema(); } catch (error) { log(`WARNING: could not drop the bench schema: ${errorText(error)}`); }
    }
  }

  run.logInfo = await logReport(logFile);
  if (worker) run.workerLogInfo = await logReport(workerLogFile);
  removeTempDir(tmp);

  for (const [label, sd, proc] of [['server', run.shutdown, server], ['worker', run.workerShutdown, worker]] as const) {
    if (sd && (sd.code !== 0 || sd.forced)) {
      problems.push(`the ${label} did not shut down gracefully: code ${sd.code}, signal ${sd.signal}${sd.forced ? ' (killed after 40 s)' : ''}\n--- ${label} stderr ---\n${proc?.stderr.text || '(empty)'}`);
    }
  }
  analyse(run);
  return run;
}

// Derived numbers, and the correctness checks on them.
function analyse(run: WebhookRun): void {
  const { problems, warnings } = run;
  const rep = run.receivers;
  const t0 = run.t0;
  if (!rep || t0 === undefined) return;
  const s = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : (ms - t0) / 1000);
  const rows: Row[] = RECEIVERS.map((r) => {
    const x = rep[r.name];
    const spanS = x.firstMs !== null && x.lastMs !== null ? (x.lastMs - x.firstMs) / 1000 : null;
    return {
      name: r.name, delayMs: r.delayMs, distinct: x.distinct, requests: x.requests, bytes: x.bytes ?? 0, invalid: x.invalid, duplicates: x.duplicates,
      notReady: x.notReady, badBody: x.badBody, libChecked: x.libChecked, libFailed: x.libFailed, libAvailable: x.libAvailable, maxInFlight: x.maxInFlight,
      firstS: s(x.firstMs), lastS: s(x.lastMs), spanS, perSecond: spanS !== null && spanS > 0 ? x.distinct / spanS : null, finishedS: s(x.completeMs),
      invalidSamples: x.invalidSamples,
    };
  });
  run.rows = rows;
  const fast = rows.filter((r) => FAST.includes(r.name));
  const slow = rows.filter((r) => SLOW.includes(r.name));
  const fastFirst = Math.min(...FAST.map((n) => rep[n].firstMs ?? Infinity));
  const fastLast = Math.max(...FAST.map((n) => rep[n].lastMs ?? -Infinity));
  run.fastPerSecond = fastLast > fastFirst ? fast.reduce((a, r) => a + r.distinct, 0) / ((fastLast - fastFirst) / 1000) : null;
  run.slowPerSecond = slow.length ? slow[0].perSecond : null;
  run.fastFinishedS = fast.every((r) => r.finishedS !== null) ? Math.max(...fast.map((r) => r.finishedS as number)) : null;
  run.slowFinishedS = slow.length && slow[0].finishedS !== null ? slow[0].finishedS : null;
  run.slowAtFastFinish = slow.length ? rep[SLOW[0]].countAt?.fastFinish ?? null : null;
  run.invalid = rows.reduce((a, r) => a + r.invalid, 0);
  run.duplicates = rows.reduce((a, r) => a + r.duplicates, 0);
  run.producedS = run.load ? (run.load.endMs - t0) / 1000 : null; // negative in backlog mode

  for (const r of rows) {
    if (r.invalid > 0) problems.push(`${r.name}: ${r.invalid} deliveries with an invalid signature (${r.invalidSamples.join('; ')})`);
    if (r.distinct < EVENTS) problems.push(`${r.name}: ${EVENTS - r.distinct} of ${EVENTS} deliveries missing`);
    if (r.badBody > 0) problems.push(`${r.name}: ${r.badBody} verified deliveries whose body is not the event named by webhook-id`);
    if (r.libFailed > 0) problems.push(`${r.name}: the standardwebhooks package refused ${r.libFailed} of ${r.libChecked} deliveries our own check accepted`);
    if (r.notReady > 0) warnings.push(`${r.name}: ${r.notReady} deliveries arrived before the receiver had its secret`);
    if (r.duplicates > 0) warnings.push(`${r.name}: ${r.duplicates} duplicate deliveries (allowed: at least once; dedupe on webhook-id)`);
  }
  if (run.sql) {
    const byEndpoint = new Map(Object.entries(run.endpoints ?? {}).map(([name, e]) => [e.id, name]));
    const summary: Record<string, Counts> = {};
    run.sqlSummary = summary;
    for (const row of run.sql.rows) {
      const name = byEndpoint.get(row.endpoint_id) ?? row.endpoint_id;
      const x = (summary[name] ??= { succeeded: 0, pending: 0, failed: 0, attempts: 0, maxAttempts: 0 });
      const status = row.status as 'succeeded' | 'pending' | 'failed';
      x[status] = (x[status] ?? 0) + Number(row.n);
      x.attempts += Number(row.attempts);
      x.maxAttempts = Math.max(x.maxAttempts, Number(row.max_attempts));
    }
    if (run.sql.events !== EVENTS) problems.push(`the server holds ${run.sql.events} events, expected ${EVENTS}`);
    for (const r of RECEIVERS) {
      const x = summary[r.name] ?? { succeeded: 0, pending: 0, failed: 0, attempts: 0, maxAttempts: 0 };
      if (x.succeeded !== EVENTS || x.pending || x.failed) problems.push(`${r.name}: the server's delivery log has ${x.succeeded} succeeded, ${x.pending} pending, ${x.failed} failed (expected ${EVENTS} succeeded)`);
      if (x.attempts > x.succeeded + x.failed) warnings.push(`${r.name}: ${x.attempts - x.succeeded - x.failed} retried attempts (max ${x.maxAttempts} attempts for one delivery)`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
function fmtTable(rows: Array<Array<string | number>>): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  const fmt = (r: Array<string | number>) => r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  return [fmt(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(fmt)];
}

const f1 = (n: number | null | undefined): string => (n === null || n === undefined || !Number.isFinite(n) ? '-' : n.toFixed(1));
const f0 = (n: number | null | undefined): string => (n === null || n === undefined || !Number.isFinite(n) ? '-' : n.toFixed(0));

function table(run: WebhookRun): string {
  const lines = [`== webhooks: ${run.engine}, ${MODE} mode — ${EVENTS} events × ${RECEIVERS.length} receivers (${FAST.length} fast, ${SLOW.length} slow answering after ${SLOW_MS} ms); WEBHOOK_PER_ENDPOINT_MAX_IN_FLIGHT=${PER_ENDPOINT}, WEBHOOK_MAX_IN_FLIGHT=${MAX_IN_FLIGHT} ==`];
  if (run.load) {
    lines.push(`events: ${run.load.ok}/${EVENTS} POST /v1/payments 2xx in ${run.load.durationS.toFixed(1)} s (${run.load.rps.toFixed(0)} events/s, p99 ${run.load.p99Ms} ms, ${CONNECTIONS} connections)${MODE === 'backlog' ? ', before the worker started' : ''}`);
  }
  lines.push(`t0 = ${MODE !== 'backlog' ? 'the first POST' : `the first delivery received (the worker had started ${f1(run.workerBootS)} s before)`}; seconds below are from t0`);
  if (run.rows) {
    const rows: Array<Array<string | number>> = [['receiver', 'answers', 'deliveries', 'requests', 'invalid sig', 'duplicates', 'first s', 'last s', 'first→last s', 'deliveries/s', 'all in at s', 'max conc']];
    for (const r of run.rows) {
      rows.push([r.name, r.delayMs ? `${r.delayMs} ms` : 'at once', r.distinct, r.requests, r.invalid, r.duplicates, f1(r.firstS), f1(r.lastS), f1(r.spanS), f0(r.perSecond), f1(r.finishedS), r.maxInFlight]);
    }
    lines.push(...fmtTable(rows));
    const bound = MODE !== 'backlog' && run.load ? `; when delivery follows production, at most ${FAST.length} × the event rate = ${f0(FAST.length * run.load.rps)}/s` : '';
    lines.push(`fast receivers combined: ${f0(run.fastPerSecond)} deliveries/s (target >= 1000/s: ${(run.fastPerSecond ?? 0) >= 1000 ? 'met' : 'NOT met'}${bound}); slow: ${f0(run.slowPerSecond)}/s, its ceiling ${f0(PER_ENDPOINT / (SLOW_MS / 1000))}/s (${PER_ENDPOINT} slots / ${SLOW_MS / 1000} s), so >= ${f1(SLOW_BOUND_S)} s for ${EVENTS}`);
    if (run.fastFinishedS != null) {
      const pct = run.slowAtFastFinish != null ? (100 * run.slowAtFastFinish) / EVENTS : null;
      const slowMax = run.rows.find((r) => SLOW.includes(r.name))?.maxInFlight ?? 0;
      const verdict = run.slowFinishedS == null || run.fastFinishedS < run.slowFinishedS - 0.5
        ? 'the slow receiver did not hold back the others'
        : slowMax < PER_ENDPOINT
          ? `the slow one never had all ${PER_ENDPOINT} of its slots busy (at most ${slowMax} at once): all four kept the same pace, set by ${MODE === 'backlog' ? 'the dispatcher' : 'production or the dispatcher'}, not by the slow receiver`
          : 'the fast receivers did NOT finish before the slow one: held back';
      lines.push(`slow vs fast: the fast receivers had all ${EVENTS} each at ${f1(run.fastFinishedS)} s${MODE !== 'backlog' && run.producedS !== null ? ` (production ended at ${f1(run.producedS)} s)` : ''}, when the slow one had ${run.slowAtFastFinish} (${f1(pct)}%); the slow one finished at ${f1(run.slowFinishedS)} s — ${verdict}`);
    }
    const lib = run.rows.reduce((a, r) => a + r.libChecked, 0);
    const reqs = run.rows.reduce((a, r) => a + r.requests, 0);
    lines.push(`signatures: ${reqs} requests verified (HMAC-SHA256 on the raw bytes; ${f0(run.rows.reduce((a, r) => a + r.bytes, 0) / Math.max(1, reqs))} bytes a body on average), ${run.invalid} invalid; ${run.rows[0].libAvailable ? `${lib} also checked with the standardwebhooks package, ${run.rows.reduce((a, r) => a + r.libFailed, 0)} refused` : 'standardwebhooks package not found: no cross-check'}`);
  }
  if (run.sqlSummary) {
    lines.push(`server delivery log (SQL): ${RECEIVERS.map((r) => { const x: Partial<Counts> = run.sqlSummary?.[r.name] ?? {}; return `${r.name} ${x.succeeded ?? 0} succeeded/${x.pending ?? 0} pending/${x.failed ?? 0} failed, ${x.attempts ?? 0} attempts`; }).join('; ')}`);
  }
  if (run.cpu) {
    lines.push(`CPU seconds: server ${f1(run.cpu.serverProducing)}${MODE === 'worker' ? `, worker ${f1(run.cpu.workerProducing)}` : ''} while producing; ${MODE === 'live' ? 'server' : 'worker'} ${f1(run.cpu.deliverer)} from ${MODE === 'backlog' ? 'its start (boot included)' : 'the end of production'} to the last delivery; receivers ${f1(run.cpu.receivers)} in all (${cpus().length} cores)`);
  }
  lines.push(`load average (1/5/15 min): ${run.loadAvgStart} at the start, ${run.loadAvgEnd ?? loadAvg()} at the end`);
  for (const [label, li] of [['server', run.logInfo], ['worker', run.workerLogInfo]] as const) {
    if (!li) continue;
    lines.push(`${label} log: ${(li.bytes / 1024 / 1024).toFixed(1)} MiB, ${li.lines} lines (${Object.entries(li.byLevel).map(([k, v]) => `${k} ${v}`).join(', ') || 'empty'})`);
    for (const n of li.notable) lines.push(`  log ${n}`);
  }
  if (run.shutdown) lines.push(`shutdown: SIGTERM -> exit code ${run.shutdown.code}${run.shutdown.signal ? ` signal ${run.shutdown.signal}` : ''} in ${run.shutdown.ms} ms`);
  for (const w of run.warnings) lines.push(`WARNING: ${w}`);
  for (const p of run.problems) lines.push(`PROBLEM: ${p}`);
  return lines.join('\n');
}

function jsonLine(run: WebhookRun): string {
  return JSON.stringify({
    scenario: 'webhooks',
    engine: run.engine,
    events: EVENTS,
    receivers: RECEIVERS.length,
    fastDeliveriesPerSecond: round(run.fastPerSecond, 0),
    slowDeliveriesPerSecond: round(run.slowPerSecond, 0),
    fastFinishedSeconds: round(run.fastFinishedS, 1),
    slowFinishedSeconds: round(run.slowFinishedS, 1),
    invalidSignatures: run.invalid,
    duplicates: run.duplicates,
    mode: MODE,
    eventsPerSecond: round(run.load?.rps, 0),
    slowDeliveredWhenFastFinished: run.slowAtFastFinish,
    fastLagAfterProductionSeconds: MODE !== 'backlog' && run.fastFinishedS != null && run.producedS != null ? round(run.fastFinishedS - run.producedS, 1) : null,
    perEndpointMaxInFlight: PER_ENDPOINT,
    maxInFlight: MAX_IN_FLIGHT,
  });
}

export async function runWebhooks(): Promise<SuiteOutcome> {
  const engines: string[] = ['sqlite'];
  if (PG_URL) {
    if (!/^postgres(ql)?:\/\//.test(PG_URL)) throw new BenchFailure(`BENCH_DATABASE_URL must be a postgres:// URL, got "${PG_URL.replace(/\/\/[^@]*@/, '//***@')}"`);
    engines.push('postgres');
  }
  log(`${EVENTS} events, ${MODE} mode, wait up to ${TIMEOUT_S} s; ${cpus().length} cores, load average ${loadAvg()}`);
  const jsonLines: string[] = [];
  let failed = false;
  for (const engine of engines) {
    let run: WebhookRun;
    try {
      run = await benchEngine(engine);
    } catch (error) {
      failed = true;
      process.stdout.write(`== webhooks: ${engine}: FAILED ==\n${errorText(error)}\n\n`);
      continue;
    }
    process.stdout.write(table(run) + '\n\n');
    if (run.problems.length) failed = true;
    else jsonLines.push(jsonLine(run));
  }
  return { failed, jsonLines };
}

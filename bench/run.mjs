// `npm run bench` — the payments API against its own ceiling, on the same stack; then the
// marketplace suite (bench/settlement.mjs: 1,000,000 receivables settled in one run, the cost of
// a three-recipient split) and the webhook suite (bench/webhooks.mjs: 20,000 events to four
// receivers, one slow). BENCH_SUITES=core,marketplace,webhooks picks some.
//
// What it measures
//   For each engine (SQLite always; PostgreSQL too when BENCH_DATABASE_URL=postgres://... is set)
//   it starts a fresh server exactly as production would run it (`node --import tsx
//   apps/server/src/cli.ts serve`, NODE_ENV=production, real info-level logging to a file) and
//   runs five autocannon scenarios, 64 connections each, a short warm-up then a measured run:
//
//     ceiling POST  POST /v1/_bench/noop        same plugins, auth, idempotency header schema,
//                                               body validation and serialization; no store work
//     ceiling durable POST                      the same, plus the least any acknowledged keyed
//                   POST /v1/_bench/durable     POST writes: one idempotency-key row, group
//                                               committed and fsync'd before the answer
//     POST          POST /v1/payments           a real card payment, fresh Idempotency-Key each
//     ceiling GET   GET  /v1/_bench/noop/:id
//     GET           GET  /v1/payments/:id       cycling over 1000 payments created beforehand
//
//   The ceiling routes exist only with BENCH_CEILING=true (apps/server/src/modules/bench-ceiling.ts).
//   ratio = rps / ceiling rps: the fraction of the stack's own throughput the real route reaches.
//   The durable ceiling is not in the ratio; it shows what durability alone costs on this machine
//   (rps and p99), so what is left is the create's own work.
//   Pairs run back to back (ceiling first) and the job backlog is drained before each pair, so
//   both sides of a ratio see a similar machine state.
//
// Where card payments are confirmed
//   As each engine runs in production: on SQLite (the embedded store, one writer) by the job
//   worker inside the server process; on PostgreSQL by a separate `cli.ts worker` process, the
//   API running with WORKER_IN_PROCESS=false (docs/production-postgres.md). Either way the worker
//   takes at most WORKER_CONCURRENCY jobs at once and requests come first, so under a full POST
//   load confirmations fall behind. The bench says by how much: the payments still pending when
//   the POST run ends, and how long the worker then takes to confirm them all ("backlog").
//
// Durability
//   POST /v1/payments only answers after its group-committed SQLite transaction (WAL,
//   synchronous=FULL) commits: every 200 counted here is a payment that survives a crash or a
//   power cut. (On PostgreSQL: after COMMIT, with the server's own synchronous_commit setting.)
//
// Isolation
//   autocannon runs in a separate child process (bench/load.mjs), never in the server's process
//   nor in this one. On a small machine the two still share CPUs; so does the ceiling, which is
//   why the ratio is the number to watch rather than the absolute rps.
//
// Output
//   A human table per engine (scenario, rps, p50, p99, non-2xx, errors), the server log's size
//   and its warnings, then at the very end one JSON line per engine (sqlite first):
//   {"engine":"sqlite","post":{"rps":..,"p99Ms":..},"get":{..},"ceiling":{"post":{..},"get":{..},"durablePost":{..}},"ratio":{"post":..,"get":..},
//    "backlog":{"pendingAfterPost":..,"drainMs":..}}
//   Progress goes to stderr. Exit 1 (and no JSON line for that engine) on any non-2xx, connection
//   error, server crash or non-graceful shutdown.
//
// Environment
//   BENCH_DURATION_S     measured seconds per scenario (default 10)
//   BENCH_WARMUP_S       warm-up seconds per scenario (default 2)
//   BENCH_CONNECTIONS    concurrent connections (default 64)
//   BENCH_SEED_PAYMENTS  payments created for the GET scenario (default 1000)
//   BENCH_DATABASE_URL   postgres://... to also bench PostgreSQL (a fresh schema bench_<random>
//                        is created, used through search_path, and dropped at the end)
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { api, BENCH_DIR, BenchFailure, createBenchSchema, envInt, installCleanup, live, logReport, removeTempDir, runLoadScript, sleep, startCli, stopCli } from './lib.mjs';

const DURATION_S = envInt('BENCH_DURATION_S', 10);
const WARMUP_S = envInt('BENCH_WARMUP_S', 2, 0);
const CONNECTIONS = envInt('BENCH_CONNECTIONS', 64);
const SEED_PAYMENTS = envInt('BENCH_SEED_PAYMENTS', 1000);
const PG_URL = process.env.BENCH_DATABASE_URL || '';
// /metrics is behind a bearer token (as in production): one per run.
const METRICS_TOKEN = randomBytes(24).toString('hex');
const BODY = JSON.stringify({ amountInCents: 2500, method: 'credit_card', cardToken: 'tok_visa' });

const T0 = Date.now();
const log = (msg) => process.stderr.write(`[bench +${((Date.now() - T0) / 1000).toFixed(1)}s] ${msg}\n`);

installCleanup(log);

async function createSandboxKey(server) {
  const res = await api(server, 'POST', '/v1/sandbox/accounts', { body: { name: 'bench' } });
  const key = res.json?.keys?.secretKey?.key;
  if (res.status !== 200 || !key) throw new BenchFailure(`POST /v1/sandbox/accounts answered ${res.status}: ${res.text.slice(0, 500)}`);
  return key;
}

async function seedPayments(server, key, count) {
  const ids = [];
  let next = 0;
  const tag = randomBytes(6).toString('hex');
  const one = async () => {
    while (next < count) {
      const i = next++;
      const res = await api(server, 'POST', '/v1/payments', { key, body: JSON.parse(BODY), idempotencyKey: `seed-${tag}-${i}` });
      if (res.status !== 200 || !res.json?.id) throw new BenchFailure(`seeding: POST /v1/payments answered ${res.status}: ${res.text.slice(0, 500)}`);
      ids.push(res.json.id);
    }
  };
  await Promise.all(Array.from({ length: 16 }, one));
  return ids;
}

// Payments still pending (the gauge of /metrics): card payments not confirmed yet.
async function pendingPayments(server) {
  const res = await api(server, 'GET', '/metrics', { key: METRICS_TOKEN });
  if (res.status !== 200) throw new BenchFailure(`GET /metrics answered ${res.status}`);
  const line = res.text.split('\n').find((l) => l.startsWith('payments{status="pending",livemode="false"}'));
  return line ? Number(line.split(' ').pop()) : 0;
}

// Waits until the worker has confirmed every pending card payment, so the next pair of
// scenarios does not start with (or inherit half of) a job backlog. Returns how long it took.
async function drainBacklog(server, key, label) {
  const started = Date.now();
  const deadline = started + 180_000;
  for (;;) {
    const res = await api(server, 'GET', '/v1/payments?status=pending&limit=1', { key });
    if (res.status !== 200) throw new BenchFailure(`GET /v1/payments?status=pending answered ${res.status}: ${res.text.slice(0, 500)}`);
    if (!res.json?.data?.length) break;
    if (Date.now() > deadline) { log(`WARNING: job backlog still not drained after 180 s (${label}); going on`); return null; }
    await sleep(250);
  }
  const ms = Date.now() - started;
  if (ms > 300) log(`job backlog drained in ${(ms / 1000).toFixed(1)} s (${label})`);
  return ms;
}

// One scenario, with autocannon in its own process.
async function runLoad(server, tmp, name, spec, watched = server) {
  log(`${name}: ${WARMUP_S ? `${WARMUP_S} s warm-up + ` : ''}${DURATION_S} s, ${CONNECTIONS} connections`);
  return runLoadScript(watched, tmp, 'load.mjs', name, { url: server.base, connections: CONNECTIONS, warmupS: WARMUP_S, durationS: DURATION_S, ...spec });
}


// ---------------------------------------------------------------------------------------------
async function benchEngine(engine) {
  const tmp = mkdtempSync(join(tmpdir(), `bench-${engine}-`));
  live.tempDirs.add(tmp);
  const logFile = join(tmp, 'server.log');
  let databaseUrl = `sqlite:${join(tmp, 'bench.db')}`;
  let dropSchema = null;
  let server = null;
  const problems = [];
  const results = {};
  let shutdown = null;
  let worker = null;
  const backlog = { pendingAfterPost: 0, drainMs: 0 };

  try {
    if (engine === 'postgres') {
      const pgSchema = await createBenchSchema(PG_URL);
      dropSchema = pgSchema.drop;
      databaseUrl = pgSchema.databaseUrl;
      log(`postgres: schema ${pgSchema.schema}`);
    }

    log(`${engine}: starting the server`);
    const separateWorker = engine === 'postgres';
    server = await startCli('serve', { env: { DATABASE_URL: databaseUrl, BENCH_CEILING: 'true', METRICS_TOKEN, ...(separateWorker ? { WORKER_IN_PROCESS: 'false' } : {}) }, logFile });
    if (separateWorker) {
      log(`${engine}: starting a worker process`);
      worker = await startCli('worker', { env: { DATABASE_URL: databaseUrl }, logFile: join(tmp, 'worker.log') });
    }
    const key = await createSandboxKey(server);
    log(`${engine}: seeding ${SEED_PAYMENTS} payments`);
    const ids = await seedPayments(server, key, SEED_PAYMENTS);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const getHeaders = { authorization: `Bearer ${key}` };

    const post = { method: 'POST', headers, body: BODY, idempotencyKeys: true };
    const scenarios = [
      { name: 'ceiling POST', drainFirst: true, spec: { ...post, paths: ['/v1/_bench/noop'] } },
      { name: 'POST', spec: { ...post, paths: ['/v1/payments'] } },
      // After the pair it would otherwise sit between (its rows grow the store the POST writes to);
      // the POST's backlog is drained by then (below).
      { name: 'ceiling durable POST', spec: { ...post, paths: ['/v1/_bench/durable'] } },
      { name: 'ceiling GET', drainFirst: true, spec: { method: 'GET', headers: getHeaders, paths: [`/v1/_bench/noop/${ids[0]}`] } },
      { name: 'GET', spec: { method: 'GET', headers: getHeaders, paths: ids.map((id) => `/v1/payments/${id}`) } },
    ];
    for (const s of scenarios) {
      if (s.drainFirst) await drainBacklog(server, key, `before ${s.name}`);
      results[s.name] = await runLoad(server, tmp, s.name, s.spec, worker ? [server, worker] : server);
      if (s.name === 'POST') {
        backlog.pendingAfterPost = await pendingPayments(server);
        backlog.drainMs = (await drainBacklog(server, key, 'after POST')) ?? -1;
        log(`POST: ${backlog.pendingAfterPost} payments still pending at its end, confirmed ${(backlog.drainMs / 1000).toFixed(1)} s later`);
      }
      const m = results[s.name].measured;
      const w = results[s.name].warmup;
      log(`${s.name}: ${m.rps.toFixed(0)} req/s, p99 ${m.p99Ms} ms, non-2xx ${m.non2xx}, errors ${m.errors}`);
      const bad = (r, phase) => {
        if (!r) return;
        if (r.non2xx > 0) problems.push(`${s.name} (${phase}): ${r.non2xx} non-2xx responses ${JSON.stringify(r.statusCodes)}`);
        if (r.errors > 0) problems.push(`${s.name} (${phase}): ${r.errors} connection errors (${r.timeouts} timeouts)`);
      };
      bad(w, 'warm-up');
      bad(m, 'measured');
    }
  } finally {
    if (server) {
      log(`${engine}: stopping the server (SIGTERM)`);
      shutdown = await stopCli(server);
    }
    if (worker) {
      const w = await stopCli(worker);
      if (w.code !== 0 || w.forced) problems.push(`the worker did not shut down gracefully: code ${w.code}, signal ${w.signal}\n--- worker stderr ---\n${worker.stderr.text || '(empty)'}`);
    }
    if (dropSchema) {
      try { await dropSchema(); } catch (error) { log(`WARNING: could not drop the bench schema: ${error.message}`); }
    }
  }

  const logInfo = await logReport(logFile);
  removeTempDir(tmp);

  if (shutdown && (shutdown.code !== 0 || shutdown.forced)) {
    problems.push(`the server did not shut down gracefully: code ${shutdown.code}, signal ${shutdown.signal}${shutdown.forced ? ' (killed after 40 s)' : ''}\n--- server stderr ---\n${server.stderr.text || '(empty)'}`);
  }
  return { engine, results, logInfo, shutdown, problems, backlog, separateWorker: engine === 'postgres', serverStderr: server?.stderr.text ?? '' };
}


// ---------------------------------------------------------------------------------------------
const round = (n, digits) => Math.round(n * 10 ** digits) / 10 ** digits;

function table(run) {
  const rows = [['scenario', 'rps', 'p50 ms', 'p99 ms', 'max ms', 'requests', 'non-2xx', 'errors']];
  for (const [name, r] of Object.entries(run.results)) {
    const m = r.measured;
    rows.push([name, m.rps.toFixed(0), String(m.p50Ms), String(m.p99Ms), String(m.maxMs), String(m.completed), String(m.non2xx), String(m.errors)]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const fmt = (r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  const lines = [`== ${run.engine} (${CONNECTIONS} connections, ${WARMUP_S} s warm-up + ${DURATION_S} s measured per scenario) ==`, fmt(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(fmt)];
  const R = run.results;
  if (R.POST && R['ceiling POST'] && R.GET && R['ceiling GET']) {
    lines.push(`ratio POST ${(R.POST.measured.rps / R['ceiling POST'].measured.rps).toFixed(3)}   ratio GET ${(R.GET.measured.rps / R['ceiling GET'].measured.rps).toFixed(3)}`);
  }
  if (R.POST) {
    lines.push(`confirmations (${run.separateWorker ? 'a separate worker process' : 'the worker inside the server'}): ${run.backlog.pendingAfterPost} of the POST run's ${R.POST.measured.completed + (R.POST.warmup?.completed ?? 0)} payments still pending at its end, all confirmed ${(run.backlog.drainMs / 1000).toFixed(1)} s later`);
  }
  const li = run.logInfo;
  lines.push(`server log: ${(li.bytes / 1024 / 1024).toFixed(1)} MiB, ${li.lines} lines (${Object.entries(li.byLevel).map(([k, v]) => `${k} ${v}`).join(', ') || 'empty'})`);
  for (const n of li.notable) lines.push(`  log ${n}`);
  if (run.shutdown) lines.push(`shutdown: SIGTERM -> exit code ${run.shutdown.code}${run.shutdown.signal ? ` signal ${run.shutdown.signal}` : ''} in ${run.shutdown.ms} ms`);
  for (const p of run.problems) lines.push(`PROBLEM: ${p}`);
  return lines.join('\n');
}

function jsonLine(run) {
  const m = (name) => ({ rps: round(run.results[name].measured.rps, 1), p99Ms: run.results[name].measured.p99Ms });
  return JSON.stringify({
    engine: run.engine,
    post: m('POST'),
    get: m('GET'),
    ceiling: { post: m('ceiling POST'), get: m('ceiling GET'), durablePost: m('ceiling durable POST') },
    ratio: {
      post: round(run.results.POST.measured.rps / run.results['ceiling POST'].measured.rps, 3),
      get: round(run.results.GET.measured.rps / run.results['ceiling GET'].measured.rps, 3),
    },
    backlog: run.backlog,
  });
}

// BENCH_SUITES: core (payments POST/GET against the ceiling), marketplace (settlement at scale,
// split approval cost), webhooks (fan-out to four receivers). Default: all three.
const SUITES = (process.env.BENCH_SUITES || 'core,marketplace,webhooks').split(',').map((x) => x.trim()).filter(Boolean);
for (const x of SUITES) if (!['core', 'marketplace', 'webhooks'].includes(x)) throw new Error(`BENCH_SUITES: unknown suite "${x}" (core, marketplace, webhooks)`);

async function main() {
  const engines = SUITES.includes('core') ? ['sqlite'] : [];
  if (PG_URL && engines.length) {
    if (!/^postgres(ql)?:\/\//.test(PG_URL)) throw new BenchFailure(`BENCH_DATABASE_URL must be a postgres:// URL, got "${PG_URL.replace(/\/\/[^@]*@/, '//***@')}"`);
    engines.push('postgres');
  }
  const jsonLines = [];
  let failed = false;
  for (const engine of engines) {
    let run;
    try {
      run = await benchEngine(engine);
    } catch (error) {
      failed = true;
      process.stdout.write(`== ${engine}: FAILED ==\n${error instanceof BenchFailure ? error.message : error?.stack ?? error}\n\n`);
      continue;
    }
    process.stdout.write(table(run) + '\n\n');
    if (run.problems.length) failed = true;
    else jsonLines.push(jsonLine(run));
  }
  // The other suites (their own scripts, each printing tables then JSON lines) run after the
  // core one; the core JSON lines are printed last, so the bench still ends with them.
  for (const suite of SUITES.filter((x) => x !== 'core')) {
    const script = { marketplace: 'settlement.mjs', webhooks: 'webhooks.mjs' }[suite];
    process.stderr.write(`== suite ${suite}: node bench/${script} ==\n`);
    const code = await new Promise((resolve) => {
      // The webhook suite measures delivery itself: events first, then a worker drains the
      // fan-out (BENCH_WEBHOOK_MODE=live measures it behind the API's own event rate).
      const env = suite === 'webhooks' ? { BENCH_WEBHOOK_MODE: 'backlog', ...process.env } : process.env;
      const child = spawn(process.execPath, [join(BENCH_DIR, script)], { stdio: ['ignore', 'inherit', 'inherit'], env });
      child.on('exit', (c) => resolve(c ?? 1));
    });
    if (code !== 0) failed = true;
    process.stdout.write('\n');
  }
  if (jsonLines.length) process.stdout.write(jsonLines.join('\n') + '\n');
  process.exitCode = failed ? 1 : 0;
}

main().catch((error) => {
  process.stdout.write(`bench failed: ${error instanceof BenchFailure ? error.message : error?.stack ?? error}\n`);
  process.exit(1); // the exit handler kills the children and removes the temp dirs
});

// The marketplace suite of `npm run bench` (run.ts; BENCH_SUITES=marketplace): money paths at
// scale, against a server started as production runs it.
//
// Two scenarios per engine (SQLite always; PostgreSQL too when BENCH_DATABASE_URL=postgres://...
// is set), in this order:
//
// A. settlement        "1,000,000 pending receivables over 1,000 payees settle in one run in under
//                      60 s." A fresh database is migrated (`cli.ts migrate`) and loaded straight
//                      with SQL (settlement-run.ts: one account, 999 recipients + the merchant =
//                      1,000 payees, the receivables; setup, not timed). Then the server starts
//                      (`cli.ts serve`, its worker in process), an admin signs in and starts ONE
//                      run (POST /admin/settlement-runs), which the server's worker carries out;
//                      the time is the run's own startedAt -> finishedAt. SQL then checks that
//                      every receivable is settled, belongs to exactly one settlement (of its own
//                      payee, of this run), that there is exactly one settlement per payee and
//                      that each settlement's amount and count equal its receivables'.
//                      Reported: seconds, rows/s = receivables / seconds (on PostgreSQL, the
//                      table's buffer and update counters too).
//
// B. split-approval    "Approving a payment with a three-recipient split adds at most 20% to the
//                      cost of approving one without split." Through HTTP, against a server started
//                      as production runs it (`node --import tsx apps/server/src/cli.ts serve`,
//                      NODE_ENV=production, info logging to a file). Account A has no split rule;
//                      account B has one active rule with three recipients (10%, 20%, R$ 1,00
//                      fixed), created through POST /v1/recipients and written into split_rules.
//                      Pending Pix payments (R$ 100,00) are created beforehand for both, then paid
//                      with POST /v1/sandbox/payments/{id}/pay by autocannon in its own process
//                      (bench/split-load.ts), 64 connections, each request paying a different
//                      payment exactly once (a fixed number of requests, never a duration). After a
//                      warm-up of each, the measured runs interleave: no-split, split, no-split,
//                      split (BENCH_SPLIT_PAIRS); the better run of each side counts.
//                      overhead = rpsNoSplit / rpsSplit - 1 (target <= 0.20). The server process's
//                      CPU time per request is shown too: on a shared machine it is the steadier
//                      measure of what one approval costs.
//
// Output
//   Human tables per engine and scenario, then at the very end one JSON line per scenario run
//   (sqlite first; settlement before split-approval), nothing after them:
//   {"scenario":"settlement","engine":"sqlite","receivables":1000000,"payees":1000,"seconds":..,"rowsPerSecond":..,"settlements":1000}
//   {"scenario":"split-approval","engine":"sqlite","noSplit":{"rps":..,"p99Ms":..},"split":{"rps":..,"p99Ms":..},"overhead":..}
//   Progress goes to stderr. Exit 1 (and no JSON line for that scenario) on any failed
//   verification, non-2xx, connection error, server crash or non-graceful shutdown. A missed
//   target (60 s, 20 %) is reported in the table; it fails the run only with BENCH_ENFORCE_TARGETS=true.
//
// Environment
//   BENCH_SCENARIOS            settlement,split (default both; one name runs only that one)
//   BENCH_SETTLEMENT_ROWS      receivables to settle (default 1000000)
//   BENCH_SETTLEMENT_PAYEES    payees: the merchant + PAYEES-1 recipients (default 1000)
//   BENCH_SPLIT_REQUESTS       pay requests per measured run (default 6000)
//   BENCH_SPLIT_WARMUP         pay requests of the warm-up, per account (default 1500)
//   BENCH_SPLIT_PAIRS          measured (no-split, split) pairs (default 2)
//   BENCH_CONNECTIONS          concurrent connections (default 64)
//   BENCH_DATABASE_URL         postgres://... to also bench PostgreSQL (a fresh schema bench_<hex> per
//                              scenario, used through search_path, dropped at the end)
//   BENCH_ENFORCE_TARGETS      true: exit 1 when a target is missed
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir, loadavg, cpus } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { api, BenchFailure, cpuMs, createBenchSchema, envInt, errorText, live, logReport, makeLog, onSignal, removeTempDir, round, runCliOnce, runLoadScript, sleep, startCli, stopCli, type Json, type LogInfo, type Proc, type Stopped, type SuiteOutcome } from './lib.ts';
import { diffStats, loadSettlementData, openDb, pgTableStats, verifySettlement, type Db, type EngineName, type PgStatsDiff, type RunView } from './settlement-run.ts';

const ROWS = envInt('BENCH_SETTLEMENT_ROWS', 1_000_000);
const PAYEES = envInt('BENCH_SETTLEMENT_PAYEES', 1000);
const SPLIT_REQUESTS = envInt('BENCH_SPLIT_REQUESTS', 6000);
const SPLIT_WARMUP = envInt('BENCH_SPLIT_WARMUP', 1500);
const SPLIT_PAIRS = envInt('BENCH_SPLIT_PAIRS', 2);
const CONNECTIONS = envInt('BENCH_CONNECTIONS', 64);
const PG_URL = process.env.BENCH_DATABASE_URL || '';
const ENFORCE = ['1', 'true', 'yes'].includes(String(process.env.BENCH_ENFORCE_TARGETS ?? '').toLowerCase());
const SCENARIOS = (process.env.BENCH_SCENARIOS || 'settlement,split').split(',').map((s) => s.trim()).filter(Boolean);
const SETTLEMENT_TARGET_S = 60;
const SPLIT_TARGET = 0.20;
// Extra payments beyond the requests sent: a request the load generator builds but never sends
// skips a payment, so a small margin keeps "each request pays a different payment" true.
const SPARE = 256;

const log = makeLog('bench marketplace');


// ---------------------------------------------------------------------------------------------
// Schemas this run created, by name, with how to drop each.
const schemas = new Map<string, () => Promise<void>>();
async function dropSchema(schema: string): Promise<void> {
  await schemas.get(schema)?.();
  schemas.delete(schema);
}
async function dropSchemas(): Promise<void> {
  for (const schema of [...schemas.keys()]) {
    try { await dropSchema(schema); } catch (error) { log(`WARNING: could not drop schema ${schema}: ${errorText(error)}`); }
  }
}
onSignal(dropSchemas);


// A fresh database: a SQLite file in `tmp`, or a fresh PostgreSQL schema reached through
// search_path (as bench/run.ts does).
async function freshDatabase(engine: EngineName, tmp: string): Promise<{ databaseUrl: string; schema: string | null }> {
  if (engine === 'sqlite') return { databaseUrl: `sqlite:${join(tmp, 'bench.db')}`, schema: null };
  const { schema, databaseUrl, drop } = await createBenchSchema(PG_URL);
  schemas.set(schema, drop);
  log(`postgres: schema ${schema}`);
  return { databaseUrl, schema };
}

function machineNote(): string {
  const [l1, l5] = loadavg();
  return `load average ${l1.toFixed(2)} / ${l5.toFixed(2)} (1 / 5 min) on ${cpus().length} cores`;
}

// ---------------------------------------------------------------------------------------------
// A. Settlement at scale: data loaded straight into a migrated database (setup, not timed), then
// ONE run started through the admin API and carried out by the server's own worker; timed by
// the run's own startedAt -> finishedAt, then verified with SQL (settlement-run.ts).
interface SettlementResult {
  receivables: number; payees: number; settlements: number; loadSeconds: number; seconds: number; wallSeconds: number; rowsPerSecond: number; pgStats: PgStatsDiff | null;
}
interface SettlementRunOutcome { engine: EngineName; result: SettlementResult | null; problems: string[]; loadBefore: string; loadAfter: string; logInfo: LogInfo | null }

async function benchSettlement(engine: EngineName): Promise<SettlementRunOutcome> {
  const tmp = mkdtempSync(join(tmpdir(), `bench-settlement-${engine}-`));
  live.tempDirs.add(tmp);
  let schema: string | null = null;
  let server: Proc | null = null;
  let db: Db | null = null;
  const problems: string[] = [];
  const loadBefore = machineNote();
  const logFile = join(tmp, 'server.log');
  let result: SettlementResult;
  try {
    const fresh = await freshDatabase(engine, tmp);
    schema = fresh.schema;
    const env = { DATABASE_URL: fresh.databaseUrl };
    log(`settlement ${engine}: ${ROWS} receivables over ${PAYEES} payees (${loadBefore})`);
    await runCliOnce(['migrate'], env);
    const loaded = await loadSettlementData(engine, fresh.databaseUrl, ROWS, PAYEES, log);
    log(`loaded in ${loaded.loadSeconds.toFixed(1)} s`);
    const email = 'bench@example.com';
    const password = randomBytes(12).toString('hex');
    await runCliOnce(['admin:create', '--email', email, '--password', password, '--role', 'admin'], env);

    server = await startCli('serve', { env: { ...env, SETTLEMENT_SCHEDULE: 'false' }, logFile });
    const login = await api(server, 'POST', '/admin/session', { body: { email, password } });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    if (login.status !== 200 || !cookie) throw new BenchFailure(`POST /admin/session answered ${login.status}: ${login.text.slice(0, 300)}`);
    const adminHeaders = { cookie, 'x-csrf-token': String(login.json.csrfToken) };

    db = await openDb(engine, fresh.databaseUrl);
    const statsBefore = engine === 'postgres' ? await pgTableStats(db) : null;
    const wallStart = Date.now();
    const started = await api(server, 'POST', '/admin/settlement-runs', { headers: adminHeaders, body: { reason: 'bench: settlement at scale' } });
    if (started.status !== 200) throw new BenchFailure(`POST /admin/settlement-runs answered ${started.status}: ${started.text.slice(0, 300)}`);
    const runId = String(started.json.id);
    log(`run ${runId} started`);
    let run: RunView;
    for (;;) {
      const res = await api(server, 'GET', `/admin/settlement-runs/${runId}`, { headers: adminHeaders });
      if (res.status !== 200) throw new BenchFailure(`GET /admin/settlement-runs/${runId} answered ${res.status}: ${res.text.slice(0, 300)}`);
      run = res.json as RunView;
      if (run.status !== 'pending' && run.status !== 'running') break;
      if (Date.now() - wallStart > 15 * 60_000) throw new BenchFailure(`run ${runId} still ${run.status} after 15 minutes`);
      await sleep(100);
    }
    const wallSeconds = (Date.now() - wallStart) / 1000;
    const seconds = run.startedAt && run.finishedAt ? (Date.parse(run.finishedAt) - Date.parse(run.startedAt)) / 1000 : wallSeconds;
    const pgStats = statsBefore ? diffStats(statsBefore, await pgTableStats(db, 1500)) : null;
    log(`run ${runId}: ${run.status} in ${seconds.toFixed(2)} s (${wallSeconds.toFixed(1)} s from the request to seeing it finished); ${run.settlementCount} settlements, ${run.receivableCount} receivables`);
    const verified = await verifySettlement(db, loaded, ROWS, PAYEES, run);
    problems.push(...verified.problems);
    result = { receivables: ROWS, payees: PAYEES, settlements: verified.settlements, loadSeconds: loaded.loadSeconds, seconds, wallSeconds, rowsPerSecond: ROWS / seconds, pgStats };
  } finally {
    await db?.close();
    if (server) {
      const shutdown = await stopCli(server);
      if (shutdown.code !== 0 || shutdown.forced) problems.push(`the server did not shut down gracefully: code ${shutdown.code}, signal ${shutdown.signal}`);
    }
    if (schema) {
      try { await dropSchema(schema); } catch (error) { log(`WARNING: could not drop schema ${schema}: ${errorText(error)}`); }
    }
  }
  const logInfo = await logReport(logFile);
  removeTempDir(tmp);
  return { engine, result, problems, loadBefore, loadAfter: machineNote(), logInfo };
}

// ---------------------------------------------------------------------------------------------
async function apiOk(server: Proc, method: string, path: string, options?: Parameters<typeof api>[3]): Promise<Json> {
  const res = await api(server, method, path, options);
  if (res.status !== 200) throw new BenchFailure(`${method} ${path} answered ${res.status}: ${res.text.slice(0, 500)}`);
  return res.json;
}

// The split rule goes straight into split_rules of the server's own database.
async function insertSplitRule(engine: EngineName, databaseUrl: string, accountId: string, splits: unknown[]): Promise<string> {
  const now = new Date().toISOString();
  const id = `spr_bench${randomBytes(9).toString('hex')}`;
  const values = [id, accountId, 0, 1, null, JSON.stringify(splits), 1, null, now, now];
  const text = 'insert into split_rules (id, account_id, livemode, priority, conditions, splits, active, description, created_at, updated_at) values ';
  if (engine === 'sqlite') {
    const { default: BetterSqlite3 } = await import('better-sqlite3');
    const db = new BetterSqlite3(databaseUrl.slice('sqlite:'.length));
    try {
      db.pragma('busy_timeout = 5000');
      db.prepare(text + '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').run(values);
    } finally {
      db.close();
    }
  } else {
    const { default: pg } = await import('pg');
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    try { await c.query(text + '($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)', values); } finally { await c.end(); }
  }
  return id;
}

// One autocannon run in its own process.
interface SplitLoad { completed: number; seconds: number; rps: number; p50Ms: number; p99Ms: number; maxMs: number; non2xx: number; errors: number; timeouts: number; reusedPaths: number; statusCodes: Record<string, number> }
async function runLoad(server: Proc, tmp: string, name: string, spec: Record<string, unknown>): Promise<SplitLoad> {
  return runLoadScript<SplitLoad>(server, tmp, 'split-load.ts', name, { url: server.base, connections: CONNECTIONS, ...spec });
}

// `count` pending Pix payments of one account, created under load (ids collected from the 200s).
async function createPayments(server: Proc, tmp: string, label: string, key: string, count: number): Promise<string[]> {
  const idsFile = join(tmp, `ids-${label}.txt`);
  const r = await runLoad(server, tmp, `create ${label}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ amount: 10000, currency: 'BRL', method: 'pix', pixExpiresInSeconds: 7 * 86_400 }),
    amount: count,
    paths: ['/v1/payments'],
    collectIds: idsFile,
  });
  const ids = readFileSync(idsFile, 'utf8').split('\n').filter(Boolean);
  if (r.non2xx || r.errors || ids.length !== count) {
    throw new BenchFailure(`creating ${count} payments for ${label}: ${ids.length} created, non-2xx ${r.non2xx} ${JSON.stringify(r.statusCodes)}, errors ${r.errors}`);
  }
  log(`created ${count} pending Pix payments for ${label} (${r.rps.toFixed(0)} req/s)`);
  return ids;
}


type Side = 'noSplit' | 'split';
interface SplitRun extends SplitLoad { name: string; side: Side; phase: string; cpuMsPerRequest: number | null }
interface SplitOutcome { engine: EngineName; runs: SplitRun[]; best: Record<Side, SplitRun | undefined>; logInfo: LogInfo; shutdown: Stopped | null; problems: string[]; loadBefore: string; loadAfter: string }
async function benchSplit(engine: EngineName): Promise<SplitOutcome> {
  const tmp = mkdtempSync(join(tmpdir(), `bench-split-${engine}-`));
  live.tempDirs.add(tmp);
  const logFile = join(tmp, 'server.log');
  let server: Proc | null = null;
  let schema: string | null = null;
  let shutdown: Stopped | null = null;
  const problems: string[] = [];
  const runs: SplitRun[] = [];
  const loadBefore = machineNote();
  try {
    const db = await freshDatabase(engine, tmp);
    schema = db.schema;
    log(`split-approval ${engine}: starting the server (${loadBefore})`);
    const srv = await startCli('serve', { env: { DATABASE_URL: db.databaseUrl, SETTLEMENT_SCHEDULE: 'false' }, logFile });
    server = srv;

    const accountA = await apiOk(server, 'POST', '/v1/sandbox/accounts', { body: { name: 'bench no split' } });
    const accountB = await apiOk(server, 'POST', '/v1/sandbox/accounts', { body: { name: 'bench split' } });
    const keyA = accountA.keys.secretKey.key;
    const keyB = accountB.keys.secretKey.key;
    const recipients: string[] = [];
    for (let i = 1; i <= 3; i++) {
      const r = await apiOk(server, 'POST', '/v1/recipients', {
        key: keyB,
        body: { name: `Bench Recipient ${i} Ltda`, document: '11.222.333/0001-81', bankAccount: { bankCode: '341', agency: '0001', account: `1234${i}-${i}`, accountType: 'checking' } },
      });
      recipients.push(r.id);
    }
    const splits = [
      { recipientId: recipients[0], percentage: 10 },
      { recipientId: recipients[1], percentage: 20 },
      { recipientId: recipients[2], amount: 100 },
    ];
    const ruleId = await insertSplitRule(engine, db.databaseUrl, accountB.account.id, splits);
    log(`account A ${accountA.account.id} (no split), account B ${accountB.account.id} with rule ${ruleId} over 3 recipients`);

    const perAccount = SPLIT_WARMUP + SPLIT_PAIRS * SPLIT_REQUESTS + (SPLIT_PAIRS + 1) * SPARE; // warm-up + measured runs, each with its spares
    const idsA = await createPayments(srv, tmp, 'A (no split)', keyA, perAccount);
    const idsB = await createPayments(srv, tmp, 'B (split)', keyB, perAccount);
    const queues: Record<Side, { ids: string[]; next: number; key: string }> = { noSplit: { ids: idsA, next: 0, key: keyA }, split: { ids: idsB, next: 0, key: keyB } };

    const pay = async (side: Side, phase: string, amount: number) => {
      const q = queues[side];
      const slice = q.ids.slice(q.next, q.next + amount + SPARE);
      q.next += amount + SPARE;
      if (slice.length < amount + SPARE) throw new BenchFailure(`not enough payments left for ${side}`);
      const name = `${phase} ${side === 'noSplit' ? 'no-split' : 'split'}`;
      log(`${name}: ${amount} pays, ${CONNECTIONS} connections`);
      const cpuBefore = cpuMs(srv.child.pid);
      const r = await runLoad(srv, tmp, name, {
        method: 'POST',
        headers: { authorization: `Bearer ${q.key}` },
        amount,
        paths: slice.map((id) => `/v1/sandbox/payments/${id}/pay`),
      });
      const cpuAfter = cpuMs(srv.child.pid);
      const cpuMsPerRequest = cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) / r.completed;
      log(`${name}: ${r.rps.toFixed(0)} req/s, p99 ${r.p99Ms} ms, server CPU ${cpuMsPerRequest?.toFixed(2) ?? '?'} ms/request, non-2xx ${r.non2xx}, errors ${r.errors}`);
      if (r.non2xx > 0) problems.push(`${name}: ${r.non2xx} non-2xx responses ${JSON.stringify(r.statusCodes)}`);
      if (r.errors > 0) problems.push(`${name}: ${r.errors} connection errors (${r.timeouts} timeouts)`);
      if (r.reusedPaths > 0) problems.push(`${name}: ${r.reusedPaths} requests reused a payment`);
      if (r.completed !== amount) problems.push(`${name}: ${r.completed} responses for ${amount} requests`);
      runs.push({ name, side, phase, ...r, cpuMsPerRequest });
      return { r, slice };
    };

    // Warm-up, then check that the split applies (B: 4 receivables a payment) and A's does not (1).
    const wA = await pay('noSplit', 'warm-up', SPLIT_WARMUP);
    const wB = await pay('split', 'warm-up', SPLIT_WARMUP);
    const recA = await apiOk(server, 'GET', `/v1/receivables?paymentId=${wA.slice[0]}&limit=10`, { key: keyA });
    const recB = await apiOk(server, 'GET', `/v1/receivables?paymentId=${wB.slice[0]}&limit=10`, { key: keyB });
    if (recA.data?.length !== 1) problems.push(`a no-split approval made ${recA.data?.length} receivables (1 expected)`);
    if (recB.data?.length !== 4 || !(recB.data as Array<{ splitRuleId: string }>).every((r) => r.splitRuleId === ruleId)) problems.push(`a split approval made ${recB.data?.length} receivables of rule ${recB.data?.[0]?.splitRuleId} (4 of ${ruleId} expected)`);

    for (let i = 0; i < SPLIT_PAIRS; i++) for (const side of ['noSplit', 'split'] as const) await pay(side, 'measured', SPLIT_REQUESTS);
  } finally {
    if (server) {
      log(`split-approval ${engine}: stopping the server (SIGTERM)`);
      shutdown = await stopCli(server);
    }
    if (schema) {
      try { await dropSchema(schema); } catch (error) { log(`WARNING: could not drop schema ${schema}: ${errorText(error)}`); }
    }
  }
  const logInfo = await logReport(logFile);
  removeTempDir(tmp);
  if (shutdown && (shutdown.code !== 0 || shutdown.forced)) {
    problems.push(`the server did not shut down gracefully: code ${shutdown.code}, signal ${shutdown.signal}${shutdown.forced ? ' (killed after 40 s)' : ''}\n--- server stderr ---\n${server?.stderr.text || '(empty)'}`);
  }
  const best = (side: Side) => runs.filter((r) => r.phase === 'measured' && r.side === side).sort((a, b) => b.rps - a.rps)[0];
  return { engine, runs, best: { noSplit: best('noSplit'), split: best('split') }, logInfo, shutdown, problems, loadBefore, loadAfter: machineNote() };
}

// ---------------------------------------------------------------------------------------------

function formatRows(rows: Array<Array<string | number>>): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  const fmt = (r: Array<string | number>) => r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  return [fmt(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(fmt)];
}

function settlementTable(run: SettlementRunOutcome): string {
  const r = run.result;
  const lines = [`== settlement, ${run.engine}: ${ROWS} pending receivables over ${PAYEES} payees, ONE run (POST /admin/settlement-runs, the server's worker) ==`];
  if (r) {
    lines.push(...formatRows([
      ['engine', 'receivables', 'payees', 'settlements', 'load s', 'run s', 'rows/s', 'request to seen s', `target < ${SETTLEMENT_TARGET_S} s`],
      [run.engine, r.receivables, r.payees, r.settlements, r.loadSeconds.toFixed(1), r.seconds.toFixed(2), r.rowsPerSecond.toFixed(0), r.wallSeconds.toFixed(1), r.seconds < SETTLEMENT_TARGET_S ? 'met' : 'MISSED'],
    ]));
  }
  if (r?.pgStats) {
    const g = r.pgStats;
    lines.push(`postgres counters for receivables during the run: ${g.tuplesUpdated} tuples updated (${g.hotUpdates} HOT), heap blocks ${g.heapBlocksHit} hit / ${g.heapBlocksRead} read, index blocks ${g.indexBlocksHit} hit / ${g.indexBlocksRead} read; table ${g.heapMiB} MiB + indexes ${g.indexMiB} MiB, shared_buffers ${g.sharedBuffers}`);
  }
  lines.push(`verification: ${run.problems.length ? 'FAILED' : 'every receivable settled, in exactly one settlement of its own payee; one settlement per payee; amounts = sums'}`);
  lines.push(`machine: before ${run.loadBefore}; after ${run.loadAfter}`);
  for (const p of run.problems) lines.push(`PROBLEM: ${p}`);
  return lines.join('\n');
}

function splitTable(run: SplitOutcome): string {
  const lines = [`== split-approval, ${run.engine}: POST /v1/sandbox/payments/{id}/pay, ${CONNECTIONS} connections, ${SPLIT_REQUESTS} pays per measured run ==`];
  lines.push(...formatRows([
    ['run', 'requests', 'seconds', 'rps', 'p50 ms', 'p99 ms', 'max ms', 'server CPU ms/req', 'non-2xx', 'errors'],
    ...run.runs.map((r) => [r.name, r.completed, r.seconds.toFixed(2), r.rps.toFixed(0), r.p50Ms, r.p99Ms, r.maxMs, r.cpuMsPerRequest?.toFixed(2) ?? '-', r.non2xx, r.errors]),
  ]));
  const { noSplit, split } = run.best;
  if (noSplit && split) {
    const overhead = noSplit.rps / split.rps - 1;
    lines.push(`best no-split ${noSplit.rps.toFixed(0)} rps (p99 ${noSplit.p99Ms} ms), best split ${split.rps.toFixed(0)} rps (p99 ${split.p99Ms} ms): overhead ${(overhead * 100).toFixed(1)} % (target <= ${SPLIT_TARGET * 100} %: ${overhead <= SPLIT_TARGET ? 'met' : 'MISSED'})`);
    const cpu = (side: Side) => {
      const values = run.runs.filter((r) => r.phase === 'measured' && r.side === side && r.cpuMsPerRequest !== null).map((r) => r.cpuMsPerRequest as number);
      return values.length ? Math.min(...values) : null;
    };
    const [cpuNo, cpuSplit] = [cpu('noSplit'), cpu('split')];
    if (cpuNo && cpuSplit) lines.push(`server CPU per approval (lowest run of each): no-split ${cpuNo.toFixed(2)} ms, split ${cpuSplit.toFixed(2)} ms: +${((cpuSplit / cpuNo - 1) * 100).toFixed(1)} %${run.engine === 'postgres' ? ' (the API process only; PostgreSQL\'s own CPU is not in it)' : ''}`);
  }
  const li = run.logInfo;
  lines.push(`server log: ${(li.bytes / 1024 / 1024).toFixed(1)} MiB, ${li.lines} lines (${Object.entries(li.byLevel).map(([k, v]) => `${k} ${v}`).join(', ') || 'empty'})`);
  for (const n of li.notable) lines.push(`  log ${n}`);
  if (run.shutdown) lines.push(`shutdown: SIGTERM -> exit code ${run.shutdown.code}${run.shutdown.signal ? ` signal ${run.shutdown.signal}` : ''} in ${run.shutdown.ms} ms`);
  lines.push(`machine: before ${run.loadBefore}; after ${run.loadAfter}`);
  for (const p of run.problems) lines.push(`PROBLEM: ${p}`);
  return lines.join('\n');
}

export async function runMarketplace(): Promise<SuiteOutcome> {
  const engines: EngineName[] = ['sqlite'];
  if (PG_URL) {
    if (!/^postgres(ql)?:\/\//.test(PG_URL)) throw new BenchFailure(`BENCH_DATABASE_URL must be a postgres:// URL, got "${PG_URL.replace(/\/\/[^@]*@/, '//***@')}"`);
    engines.push('postgres');
  }
  for (const s of SCENARIOS) if (!['settlement', 'split'].includes(s)) throw new BenchFailure(`BENCH_SCENARIOS: unknown scenario "${s}" (settlement, split)`);
  const jsonLines: string[] = [];
  let failed = false;
  for (const engine of engines) {
    if (SCENARIOS.includes('settlement')) {
      try {
        const run = await benchSettlement(engine);
        process.stdout.write(settlementTable(run) + '\n\n');
        const r = run.result;
        if (run.problems.length || !r) failed = true;
        else {
          if (ENFORCE && !(r.seconds < SETTLEMENT_TARGET_S)) failed = true;
          jsonLines.push(JSON.stringify({ scenario: 'settlement', engine, receivables: r.receivables, payees: r.payees, seconds: round(r.seconds, 2), rowsPerSecond: Math.round(r.rowsPerSecond), settlements: r.settlements }));
        }
      } catch (error) {
        failed = true;
        process.stdout.write(`== settlement, ${engine}: FAILED ==\n${errorText(error)}\n\n`);
      }
    }
    if (SCENARIOS.includes('split')) {
      try {
        const run = await benchSplit(engine);
        process.stdout.write(splitTable(run) + '\n\n');
        const { noSplit, split } = run.best;
        if (run.problems.length || !noSplit || !split) failed = true;
        else {
          const overhead = noSplit.rps / split.rps - 1;
          if (ENFORCE && overhead > SPLIT_TARGET) failed = true;
          jsonLines.push(JSON.stringify({
            scenario: 'split-approval', engine,
            noSplit: { rps: round(noSplit.rps, 1), p99Ms: noSplit.p99Ms },
            split: { rps: round(split.rps, 1), p99Ms: split.p99Ms },
            overhead: round(overhead, 3),
          }));
        }
      } catch (error) {
        failed = true;
        process.stdout.write(`== split-approval, ${engine}: FAILED ==\n${errorText(error)}\n\n`);
      }
    }
  }
  await dropSchemas();
  return { failed, jsonLines };
}

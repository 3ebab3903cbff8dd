import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { sql } from 'kysely';
import { loadConfig, type Config } from '../src/config.js';
import { Store } from '../src/store/index.js';
import { buildApp, type App } from '../src/app.js';
import type { PaymentProvider } from '../src/providers/port.js';
import { ManualClock, type Clock } from '../src/clock.js';

export type EngineName = 'sqlite' | 'postgres';

// Every storage suite runs on SQLite, and on PostgreSQL too when TEST_DATABASE_URL is set.
// TEST_ENGINES=postgres narrows a run to one engine (CI's PostgreSQL pass).
export const ENGINES: EngineName[] = process.env.TEST_ENGINES
  ? (process.env.TEST_ENGINES.split(',') as EngineName[])
  : process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
if (ENGINES.includes('postgres') && !process.env.TEST_DATABASE_URL) throw new Error('TEST_ENGINES includes postgres but TEST_DATABASE_URL is not set');

export interface TestDb {
  url: string;
  drop(): Promise<void>;
}

// A private database per suite: a temp file on SQLite, a fresh schema on PostgreSQL.
export async function testDatabase(engine: EngineName): Promise<TestDb> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'payments-test-'));
    return { url: `sqlite:${join(dir, 'test.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const base = process.env.TEST_DATABASE_URL as string;
  const schema = 't_' + randomBytes(6).toString('hex');
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const sep = base.includes('?') ? '&' : '?';
  return {
    url: `${base}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    drop: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop schema ${schema} cascade`);
      await c.end();
    },
  };
}

// A database with every migration applied, for an app: on SQLite a copy of one migrated once per
// process (the migrations cost a fresh database about 0.3 s of CPU, and a test process starts
// several apps); on PostgreSQL a fresh schema, migrated by the caller as before.
let sqliteTemplate: Promise<string> | null = null;
async function migratedSqliteTemplate(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'payments-template-'));
  const file = join(dir, 'template.db');
  const store = Store.open({ url: `sqlite:${file}` });
  try {
    await store.migrate();
    // Everything into the database file itself: the copy is whole without the WAL beside it.
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(store.db);
  } finally {
    await store.close();
  }
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return file;
}
async function appDatabase(engine: EngineName): Promise<TestDb> {
  const db = await testDatabase(engine);
  if (engine === 'sqlite') {
    sqliteTemplate ??= migratedSqliteTemplate();
    copyFileSync(await sqliteTemplate, db.url.slice('sqlite:'.length));
  }
  return db;
}

export interface TestApp extends App {
  store: Store;
  config: Config;
  db: TestDb;
  // Closes the app, the store and drops the database.
  teardown(): Promise<void>;
}

export const TEST_CONFIG: Partial<Config> = {
  workerPollMs: 20,
  providerRetryBaseMs: 10,
  rateLimitPerMinute: 100_000,
  // Suites send many requests without a key from one address on purpose (hardening.test.ts
  // tests the anonymous limit with its own, small one).
  rateLimitAnonymousPerMinute: 100_000,
  sandboxSignupPerHour: 1000,
  authCacheTtlMs: 0,
  // Suites change connector accounts in the store directly too (connector-cache.test.ts tests the cache).
  connectorCacheTtlMs: 0,
  settlementScheduleEnabled: false,
  // Any store write a mutating request makes around its idempotent write fails the request.
  writeGuard: true,
};

export async function startApp(engine: EngineName, overrides: Partial<Config> = {}, options: { provider?: PaymentProvider; db?: TestDb; worker?: boolean; http?: ServerOptions; clock?: Clock; https?: import('node:https').ServerOptions } = {}): Promise<TestApp> {
  const db = options.db ?? (await appDatabase(engine));
  const config = loadConfig({}, { ...TEST_CONFIG, databaseUrl: db.url, ...overrides });
  const store = Store.open({ url: db.url, writeBatchMax: config.writeBatchMax, writeQueueMaxPending: config.writeQueueMaxPending, pgWriters: config.pgWriters, clock: options.clock });
  await store.migrate();
  const built = await buildApp({ config, store, logger: false, provider: options.provider, checkContract: true, http: options.http, clock: store.clock, https: options.https });
  if (options.worker !== false) await built.startWorker();
  let closed = false;
  return {
    ...built,
    store,
    config,
    db,
    async teardown() {
      if (!closed) {
        closed = true;
        await built.close();
      }
      if (!options.db) await db.drop();
      // Every response of the suite kept its route's documented contract (statuses, headers).
      if (built.contractViolations.length > 0) {
        throw new Error(`responses the OpenAPI document does not declare:\n  ${[...new Set(built.contractViolations)].join('\n  ')}`);
      }
    },
  };
}

export interface ManualApp extends TestApp {
  clock: ManualClock;
  // Moves the clock forward by `ms`, then runs what fell due: the jobs (and the jobs those make
  // due now), then the webhook deliveries. Returns how many of each ran.
  advance(ms: number): Promise<{ jobs: number; deliveries: number }>;
  // Runs what is due now without moving the clock.
  runDue(): Promise<{ jobs: number; deliveries: number }>;
}

// An app whose time moves only when the test says so (clock.ts): its worker and dispatcher do not
// poll; a test advances the clock across a rule's edge and runs what is due, instead of waiting.
export async function startManualApp(engine: EngineName, overrides: Partial<Config> = {}, options: { provider?: PaymentProvider; db?: TestDb; startMs?: number } = {}): Promise<ManualApp> {
  const clock = new ManualClock(options.startMs);
  const t = await startApp(engine, overrides, { ...options, clock, worker: false });
  const runDue = async () => {
    const jobs = await t.worker.runDue();
    const deliveries = await t.dispatcher.runDue();
    // A delivery's bookkeeping may have made jobs due (none today), and jobs deliveries: once more.
    const more = deliveries > 0 ? await t.worker.runDue() : 0;
    return { jobs: jobs + more, deliveries };
  };
  return Object.assign(t, {
    clock,
    runDue,
    async advance(ms: number) {
      clock.advance(ms);
      return runDue();
    },
  });
}

// For an app started with `worker: false` on the system clock: runs the jobs and the webhook
// deliveries that are due now, and those they make due now, until none is left, so a suite that
// needs the worker's work done asks for it instead of polling for its result. (What falls due
// later, a retry's back-off say, is not run: move a ManualClock for that, startManualApp.)
export async function drain(t: TestApp): Promise<{ jobs: number; deliveries: number }> {
  const ran = { jobs: 0, deliveries: 0 };
  for (let round = 0; round < 100; round++) {
    const jobs = await t.worker.runDue();
    const deliveries = await t.dispatcher.runDue();
    ran.jobs += jobs;
    ran.deliveries += deliveries;
    if (jobs === 0 && deliveries === 0) return ran;
  }
  throw new Error('drain: work still due after 100 rounds (a job that keeps making work due now?)');
}

export interface Keys {
  accountId: string;
  secretKey: string;
  publishableKey: string;
}

export async function signup(t: TestApp, name = 'Test merchant'): Promise<Keys> {
  const res = await t.app.inject({ method: 'POST', url: '/v1/sandbox/accounts', payload: { name } });
  if (res.statusCode !== 200) throw new Error(`signup failed: ${res.statusCode} ${res.body}`);
  const body = res.json();
  return { accountId: body.account.id, secretKey: body.keys.secretKey.key, publishableKey: body.keys.publishableKey.key };
}

export function auth(key: string, extra: Record<string, string> = {}) {
  return { authorization: `Bearer ${key}`, ...extra };
}

// Polls until `check` returns a value (not a timed assertion: the deadline only bounds a hang).
export async function eventually<T>(check: () => Promise<T | undefined | null | false>, what: string, deadlineMs = 30_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() - start > deadlineMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

// A new admin user, signed in: its session cookie and CSRF token.
let adminSeq = 0;
export async function adminSession(t: TestApp, role: 'admin' | 'viewer' = 'admin'): Promise<{ cookie: string; csrf: string }> {
  const { createAdminUser } = await import('../src/modules/admin/index.js');
  const email = `admin-${process.pid}-${++adminSeq}@example.com`;
  await createAdminUser(t.store, email, 'a long enough passphrase', role);
  // A client address of its own: the sign-in throttle counts per address.
  const res = await t.app.inject({ method: 'POST', url: '/admin/session', payload: { email, password: 'a long enough passphrase' }, remoteAddress: `10.99.${Math.floor(adminSeq / 250)}.${(adminSeq % 250) + 1}` });
  if (res.statusCode !== 200) throw new Error(`admin sign-in failed: ${res.statusCode} ${res.body}`);
  return { cookie: (res.headers['set-cookie'] as string).split(';')[0], csrf: res.json().csrfToken };
}

// A webhook endpoint on loopback that answers 200 to everything and keeps what it got.
export async function webhookReceiver(): Promise<{ url: string; hits: Array<{ headers: IncomingHttpHeaders; body: string }>; close: () => void }> {
  const hits: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      hits.push({ headers: req.headers, body });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, hits, close: () => void server.close() };
}

// PostgreSQL: how many backends wait, directly or through another waiter, on the locks `holder`
// (a connection of the test's own) holds. Tests make an interleaving with it instead of hoping
// for one: lock a row, send the requests, wait until they queue behind it, let go.
export async function waitersOn(holder: pg.Client): Promise<number> {
  const holderPid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0].pid;
  // pg_stat_activity is read once per transaction and kept until it ends, and the holder is in
  // one (it holds the lock): without this, every call after the first sees the first's backends.
  await holder.query('select pg_stat_clear_snapshot()');
  const { rows } = await holder.query<{ pid: number; blockers: number[] }>(
    "select pid, pg_blocking_pids(pid) as blockers from pg_stat_activity where wait_event_type = 'Lock'",
  );
  const blocked = new Set<number>([holderPid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const r of rows) {
      if (!blocked.has(r.pid) && r.blockers.some((b) => blocked.has(b))) {
        blocked.add(r.pid);
        grew = true;
      }
    }
  }
  return blocked.size - 1;
}

// A merchant settlement held for the PSP balance (issue 26), with its one receivable, written
// straight to the store: what the walks of every admin route retry (POST
// /admin/settlements/{id}/retry) without a PSP. The store's audit holds for it.
export async function heldForBalance(t: TestApp, accountId: string, amount = 500): Promise<string> {
  return t.store.write(async (tx) => {
    const nowMs = t.store.clock.nowMs();
    const now = new Date(nowMs).toISOString();
    const day = now.slice(0, 10);
    const tag = `${nowMs.toString(36)}${Math.random().toString(36).slice(2, 10)}`;
    const runId = `str_walk${tag}`;
    const id = `stl_walk${tag}`;
    await tx.insertInto('settlement_runs').values({ id: runId, run_date: day, status: 'completed', trigger: 'admin', settlement_count: 1, receivable_count: 1, total_amount: amount, started_at: now, finished_at: now }).execute();
    await tx.insertInto('settlements').values({
      id, account_id: accountId, livemode: 0, run_id: runId, payee_type: 'merchant', payee_id: accountId, amount, receivable_count: 1, status: 'held',
      bank_account: JSON.stringify({ bankCode: '341', agency: '0001', account: '12345-6', accountType: 'checking' }), pix_key: null, hold_reason: 'insufficient_psp_balance',
      settlement_date: day, paid_at: null, failure_reason: null, created_at: now, updated_at: now,
    }).execute();
    await tx.insertInto('receivables').values({
      id: `rcv_walk${tag}`, account_id: accountId, livemode: 0, payment_id: `pay_walk${tag}`, source_id: `pay_walk${tag}`, line: 0, payee_type: 'merchant', payee_id: accountId,
      split_rule_id: null, amount, original_amount: amount, status: 'settled', available_on: day, settlement_id: id, refund_id: null, created_at: now, updated_at: now,
    }).execute();
    return id;
  });
}

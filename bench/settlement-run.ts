// Scenario A worker for bench/settlement.ts: settlement at scale, in process.
//
//   node --import tsx bench/settlement-run.ts <spec.json>      (cwd: apps/server, as the server runs)
//
// spec: { engine: 'sqlite'|'postgres', databaseUrl, rows, payees }
//
// Loads a fresh, migrated database with one account, payees-1 recipients and `rows` pending
// receivables spread evenly over the merchant and the recipients (setup, not measured), then
// times ONE runSettlement({ store, provider }, { trigger: 'admin' }) and verifies the result
// with SQL. Every SQL statement the store runs is timed by its text (better-sqlite3 is
// synchronous, so on SQLite the times are exact; on PostgreSQL they overlap across the
// concurrent writers), which is the profile printed with the result.
//
// Prints ONE JSON line to stdout: { ok, problems[], seconds, rowsPerSecond, settlements, load, profile, ... }.
// Progress goes to stderr. Exit 1 if the run threw or a verification failed.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { sql } from 'kysely';
import { Store } from '../apps/server/src/store/index.ts';
import { runSettlement } from '../apps/server/src/modules/settlements/service.ts';
import { SandboxProvider } from '../apps/server/src/providers/sandbox.ts';
import { newId } from '../apps/server/src/domain/ids.ts';
import { localDate, addDays } from '../apps/server/src/modules/accounts/settings.ts';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const { engine, databaseUrl } = spec;
const ROWS = spec.rows;
const PAYEES = spec.payees;
const T0 = performance.now();
const log = (msg) => process.stderr.write(`[settlement ${engine} +${((performance.now() - T0) / 1000).toFixed(1)}s] ${msg}\n`);

// ---------------------------------------------------------------------------------------------
// Statement profile: time every statement by its SQL text.
const profile = new Map();
let profiling = false;
function record(text, ms, rows) {
  if (!profiling) return;
  const key = text.replace(/\s+/g, ' ').trim();
  const e = profile.get(key) ?? { sql: key, count: 0, ms: 0, rows: 0 };
  e.count++;
  e.ms += ms;
  e.rows += rows;
  profile.set(key, e);
}
{
  const probe = new BetterSqlite3(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('select 1'));
  probe.close();
  for (const method of ['run', 'all', 'get']) {
    const original = proto[method];
    proto[method] = function timed(...args) {
      const t = performance.now();
      const result = original.apply(this, args);
      const rows = method === 'run' ? result.changes : method === 'all' ? result.length : result ? 1 : 0;
      record(this.source, performance.now() - t, rows);
      return result;
    };
  }
  const originalQuery = pg.Client.prototype.query;
  pg.Client.prototype.query = function timed(config, values, callback) {
    const text = typeof config === 'string' ? config : config?.text;
    if (!profiling || typeof text !== 'string' || typeof callback === 'function' || typeof values === 'function') return originalQuery.call(this, config, values, callback);
    const t = performance.now();
    const p = originalQuery.call(this, config, values);
    return p.then((r) => { record(text, performance.now() - t, r?.rowCount ?? 0); return r; });
  };
}

// ---------------------------------------------------------------------------------------------
// Data: one account, PAYEES-1 recipients + the merchant as payees, ROWS pending receivables.
// Receivable i goes to payee i % PAYEES; four receivables share a synthetic payment (lines 0..3),
// so (source_id, line) is unique. available_on spreads over the last 60 days (all due today).
const today = localDate();
const nowIso = new Date().toISOString();
const accountId = newId('account');
const payees = [{ type: 'merchant', id: accountId }];
const recipients = [];
for (let i = 1; i < PAYEES; i++) {
  const id = newId('recipient');
  payees.push({ type: 'recipient', id });
  recipients.push({
    id, account_id: accountId, livemode: 0, name: `Bench Recipient ${i} Ltda`, document: '11222333000181',
    bank_code: '341', agency: String(1000 + (i % 9000)), account: `${100000 + i}-${i % 10}`, account_type: 'checking',
    metadata: null, created_at: nowIso, updated_at: nowIso,
  });
}
const LINES_PER_PAYMENT = 4;
const dates = Array.from({ length: 60 }, (_, d) => addDays(today, -d));
const expected = new Map(payees.map((p) => [`${p.type}:${p.id}`, { amount: 0, count: 0 }]));
let expectedTotal = 0;
let paymentId = '';
function receivable(i) {
  if (i % LINES_PER_PAYMENT === 0) paymentId = newId('payment');
  const payee = payees[i % PAYEES];
  const amount = 100 + ((i * 7919) % 9901); // 1.00 .. 100.00 BRL, positive
  const e = expected.get(`${payee.type}:${payee.id}`);
  e.amount += amount;
  e.count++;
  expectedTotal += amount;
  const availableOn = dates[Math.floor(i / PAYEES) % dates.length];
  const created = `${availableOn}T12:00:00.000Z`;
  return [newId('receivable'), accountId, 0, paymentId, paymentId, i % LINES_PER_PAYMENT, payee.type, payee.id, null, amount, 'pending', availableOn, null, null, created, created];
}
const RCV_COLUMNS = ['id', 'account_id', 'livemode', 'payment_id', 'source_id', 'line', 'payee_type', 'payee_id', 'split_rule_id', 'amount', 'status', 'available_on', 'settlement_id', 'refund_id', 'created_at', 'updated_at'];
const RCP_COLUMNS = ['id', 'account_id', 'livemode', 'name', 'document', 'bank_code', 'agency', 'account', 'account_type', 'metadata', 'created_at', 'updated_at'];

function loadSqlite(file) {
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF'); // setup only: this connection's own loading
  db.pragma('cache_size = -1000000');
  db.pragma('foreign_keys = ON');
  const insertAccount = db.prepare('insert into accounts (id, name, email, live_enabled, settings, created_at) values (?, ?, ?, ?, ?, ?)');
  const insertRecipient = db.prepare(`insert into recipients (${RCP_COLUMNS.join(', ')}) values (${RCP_COLUMNS.map(() => '?').join(', ')})`);
  const PER = 500; // 500 rows x 16 columns = 8000 parameters
  const multi = db.prepare(`insert into receivables (${RCV_COLUMNS.join(', ')}) values ${Array.from({ length: PER }, () => `(${RCV_COLUMNS.map(() => '?').join(', ')})`).join(', ')}`);
  const single = db.prepare(`insert into receivables (${RCV_COLUMNS.join(', ')}) values (${RCV_COLUMNS.map(() => '?').join(', ')})`);
  const CHUNK = 100_000;
  db.transaction(() => {
    insertAccount.run(accountId, 'Bench marketplace', null, 0, '{}', nowIso);
    for (const r of recipients) insertRecipient.run(RCP_COLUMNS.map((c) => r[c]));
  })();
  for (let start = 0; start < ROWS; start += CHUNK) {
    const end = Math.min(ROWS, start + CHUNK);
    db.transaction(() => {
      let i = start;
      for (; i + PER <= end; i += PER) {
        const params = [];
        for (let k = i; k < i + PER; k++) params.push(...receivable(k));
        multi.run(params);
      }
      for (; i < end; i++) single.run(receivable(i));
    })();
    if (end % 200_000 === 0 || end === ROWS) log(`loaded ${end} receivables`);
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

async function loadPostgres(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('set synchronous_commit = off'); // setup only
    await client.query('begin');
    await client.query('insert into accounts (id, name, email, live_enabled, settings, created_at) values ($1, $2, $3, $4, $5, $6)', [accountId, 'Bench marketplace', null, 0, '{}', nowIso]);
    const rcpTypes = ['text', 'text', 'int', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text'];
    await client.query(
      `insert into recipients (${RCP_COLUMNS.join(', ')}) select * from unnest(${RCP_COLUMNS.map((_, k) => `$${k + 1}::${rcpTypes[k]}[]`).join(', ')})`,
      RCP_COLUMNS.map((c) => recipients.map((r) => r[c])),
    );
    await client.query('commit');
    const rcvTypes = ['text', 'text', 'int', 'text', 'text', 'int', 'text', 'text', 'text', 'bigint', 'text', 'text', 'text', 'text', 'text', 'text'];
    const insert = `insert into receivables (${RCV_COLUMNS.join(', ')}) select * from unnest(${RCV_COLUMNS.map((_, k) => `$${k + 1}::${rcvTypes[k]}[]`).join(', ')})`;
    const PER = 20_000;
    for (let start = 0; start < ROWS; start += PER) {
      const end = Math.min(ROWS, start + PER);
      const cols = RCV_COLUMNS.map(() => []);
      for (let i = start; i < end; i++) {
        const row = receivable(i);
        for (let c = 0; c < row.length; c++) cols[c].push(row[c]);
      }
      await client.query(insert, cols);
      if (end % 200_000 === 0 || end === ROWS) log(`loaded ${end} receivables`);
    }
    // A table that grew to a million rows in production has been auto-analyzed many times over.
    await client.query('vacuum analyze receivables');
    await client.query('analyze recipients');
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------
const problems = [];
const check = (ok, message) => { if (!ok) problems.push(message); };
const num = (v) => Number(v ?? 0);

async function verify(store, run) {
  const q = async (text) => (await sql.raw(text).execute(store.db)).rows;
  const [all] = await q(`select count(*) as n, sum(case when status = 'settled' then 1 else 0 end) as settled,
      sum(case when settlement_id is null then 1 else 0 end) as unassigned, sum(amount) as total from receivables`);
  check(num(all.n) === ROWS, `expected ${ROWS} receivables, found ${all.n}`);
  check(num(all.settled) === ROWS, `${ROWS - num(all.settled)} receivables are not settled`);
  check(num(all.unassigned) === 0, `${all.unassigned} receivables have no settlement`);
  check(num(all.total) === expectedTotal, `receivables total ${all.total} != loaded total ${expectedTotal}`);

  // Each receivable belongs to exactly one settlement (one settlement_id column): an existing
  // settlement of this run, of the receivable's own payee.
  const [orphans] = await q(`select count(*) as n from receivables r left join settlements s on s.id = r.settlement_id
      where s.id is null or s.run_id <> '${run.id}' or s.account_id <> r.account_id or s.livemode <> r.livemode
         or s.payee_type <> r.payee_type or s.payee_id <> r.payee_id`);
  check(num(orphans.n) === 0, `${orphans.n} receivables point to a missing settlement, another run's, or another payee's`);

  const [st] = await q(`select count(*) as n, count(distinct payee_type || ':' || payee_id) as payees,
      sum(case when run_id = '${run.id}' then 1 else 0 end) as in_run from settlements`);
  check(num(st.n) === PAYEES, `expected exactly ${PAYEES} settlements, found ${st.n}`);
  check(num(st.payees) === num(st.n), `settlements cover ${st.payees} distinct payees for ${st.n} settlements (one per payee expected)`);
  check(num(st.in_run) === num(st.n), `${num(st.n) - num(st.in_run)} settlements are not of this run`);

  const [mismatch] = await q(`select count(*) as n from settlements s
      left join (select settlement_id, sum(amount) as total, count(*) as c from receivables group by settlement_id) x on x.settlement_id = s.id
      where x.total is null or s.amount <> x.total or s.receivable_count <> x.c`);
  check(num(mismatch.n) === 0, `${mismatch.n} settlements whose amount or receivable_count differs from the sum of their receivables`);

  // Against what was loaded, payee by payee.
  const rows = await q('select payee_type, payee_id, amount, receivable_count from settlements');
  let wrong = 0;
  for (const r of rows) {
    const e = expected.get(`${r.payee_type}:${r.payee_id}`);
    if (!e || e.amount !== num(r.amount) || e.count !== num(r.receivable_count)) wrong++;
  }
  check(wrong === 0, `${wrong} settlements differ from the loaded receivables of their payee`);

  check(run.status === 'completed', `run status ${run.status}`);
  check(run.settlementCount === PAYEES, `run.settlementCount ${run.settlementCount} != ${PAYEES}`);
  check(run.receivableCount === ROWS, `run.receivableCount ${run.receivableCount} != ${ROWS}`);
  check(run.totalAmount === expectedTotal, `run.totalAmount ${run.totalAmount} != ${expectedTotal}`);
  const [jobs] = await q(`select count(*) as n from jobs where type = 'settlement.payout'`);
  const [events] = await q(`select count(*) as n from events where type = 'settlement.created'`);
  check(num(jobs.n) === PAYEES, `${jobs.n} payout jobs for ${PAYEES} settlements`);
  check(num(events.n) === PAYEES, `${events.n} settlement.created events for ${PAYEES} settlements`);
  return { settlements: num(st.n) };
}

// PostgreSQL's own counters for receivables (buffers hit/read, tuples updated, HOT updates),
// before and after the run: where the UPDATE's time goes. Stats reach the shared counters when
// a backend goes idle (at most ~1 s later), hence the pause before the second snapshot.
async function pgTableStats(store, waitMs = 0) {
  if (store.engine !== 'postgres') return null;
  if (waitMs) await new Promise((r) => setTimeout(r, waitMs));
  const { rows: [row] } = await sql.raw(`select
      io.heap_blks_read, io.heap_blks_hit, io.idx_blks_read, io.idx_blks_hit,
      st.n_tup_upd, st.n_tup_hot_upd,
      pg_relation_size('receivables') as heap_bytes, pg_indexes_size('receivables') as index_bytes,
      current_setting('shared_buffers') as shared_buffers
    from pg_statio_user_tables io join pg_stat_user_tables st using (relid)
    where io.relid = 'receivables'::regclass`).execute(store.db);
  return row;
}
function diffStats(a, b) {
  const d = (k) => Number(b[k]) - Number(a[k]);
  return {
    heapBlocksRead: d('heap_blks_read'), heapBlocksHit: d('heap_blks_hit'), indexBlocksRead: d('idx_blks_read'), indexBlocksHit: d('idx_blks_hit'),
    tuplesUpdated: d('n_tup_upd'), hotUpdates: d('n_tup_hot_upd'),
    heapMiB: Math.round(Number(b.heap_bytes) / 1048576), indexMiB: Math.round(Number(b.index_bytes) / 1048576), sharedBuffers: b.shared_buffers,
  };
}

// ---------------------------------------------------------------------------------------------
async function main() {
  const store = Store.open({ url: databaseUrl });
  let result;
  try {
    await store.migrate();
    log(`loading 1 account, ${recipients.length} recipients, ${ROWS} receivables over ${PAYEES} payees`);
    const loadStart = performance.now();
    if (engine === 'sqlite') loadSqlite(databaseUrl.slice('sqlite:'.length));
    else await loadPostgres(databaseUrl);
    const loadSeconds = (performance.now() - loadStart) / 1000;
    log(`loaded in ${loadSeconds.toFixed(1)} s`);

    let run;
    const provider = new SandboxProvider(store, async () => 'approve');
    const statsBefore = await pgTableStats(store);
    log('runSettlement: start');
    profiling = true;
    const t = performance.now();
    run = await runSettlement({ store, provider }, { trigger: 'admin' });
    const seconds = (performance.now() - t) / 1000;
    profiling = false;
    const pgStats = statsBefore ? diffStats(statsBefore, await pgTableStats(store, 1500)) : null;
    log(`runSettlement: ${seconds.toFixed(2)} s (${run.settlementCount} settlements, ${run.receivableCount} receivables)`);

    const verifyStart = performance.now();
    const { settlements } = await verify(store, run);
    log(`verified in ${((performance.now() - verifyStart) / 1000).toFixed(1)} s: ${problems.length ? problems.length + ' problem(s)' : 'ok'}`);
    const top = [...profile.values()].sort((a, b) => b.ms - a.ms).slice(0, 8)
      .map((e) => ({ ...e, ms: Math.round(e.ms), sql: e.sql.length > 160 ? e.sql.slice(0, 157) + '...' : e.sql }));
    const statementMs = [...profile.values()].reduce((s, e) => s + e.ms, 0);
    result = {
      ok: problems.length === 0, problems, engine, receivables: ROWS, payees: PAYEES,
      seconds, rowsPerSecond: ROWS / seconds, settlements, loadSeconds,
      run: { id: run.id, settlementCount: run.settlementCount, receivableCount: run.receivableCount, totalAmount: run.totalAmount },
      profile: { statementMs: Math.round(statementMs), top },
      pgStats,
    };
  } finally {
    await store.close();
  }
  process.stdout.write(JSON.stringify(result) + '\n');
  process.exitCode = result.ok ? 0 : 1;
}

main().catch((error) => {
  process.stderr.write(`settlement worker failed: ${error?.stack ?? error}\n`);
  process.stdout.write(JSON.stringify({ ok: false, problems: [String(error?.message ?? error)] }) + '\n');
  process.exit(1);
});

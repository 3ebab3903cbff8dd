// Scenario A of the marketplace suite (settlement.ts): the data a settlement run at scale
// starts from, loaded straight into the server's database, and the SQL that verifies the run.
//
// The database is migrated by `cli.ts migrate`, the run is started through the admin API and
// carried out by the server's own worker (settlement.ts); this file only knows the tables'
// columns; its ids and São Paulo dates come from the bench's own lib.ts. Loading is setup, not
// timed: one account, payees-1 recipients (+ the merchant = `payees`) and `rows` pending
// receivables spread evenly over them.
import { addDays, benchId, saoPauloDate } from './lib.ts';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';

export type EngineName = 'sqlite' | 'postgres';

// One SQL connection of the bench's own to the server's database.
export interface Db { query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<R[]>; close(): Promise<void> }
export async function openDb(engine: EngineName, databaseUrl: string): Promise<Db> {
  if (engine === 'sqlite') {
    const db = new BetterSqlite3(databaseUrl.slice('sqlite:'.length));
    db.pragma('busy_timeout = 10000');
    return {
      async query<R>(text: string, params: unknown[] = []) {
        const st = db.prepare(text);
        return (st.reader ? st.all(...params) : (st.run(...params), [])) as R[];
      },
      async close() { db.close(); },
    };
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  return {
    async query<R>(text: string, params: unknown[] = []) { return (await client.query(text, params)).rows as R[]; },
    async close() { await client.end(); },
  };
}

export interface Loaded {
  accountId: string;
  // By `${payee_type}:${payee_id}`: what the run must settle for each payee.
  expected: Map<string, { amount: number; count: number }>;
  expectedTotal: number;
  loadSeconds: number;
}

// Receivable i goes to payee i % payees; four receivables share a synthetic payment (lines 0..3),
// so (source_id, line) is unique. available_on spreads over the last 60 days (all due today).
export async function loadSettlementData(engine: EngineName, databaseUrl: string, rows: number, payeeCount: number, log: (msg: string) => void): Promise<Loaded> {
  const started = Date.now();
  const today = saoPauloDate();
  const nowIso = new Date().toISOString();
  const accountId = benchId('acct_');
  const payees: Array<{ type: 'merchant' | 'recipient'; id: string }> = [{ type: 'merchant', id: accountId }];
  const recipients: Array<Record<string, string | number | null>> = [];
  for (let i = 1; i < payeeCount; i++) {
    const id = benchId('rcp_');
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
  const receivable = (i: number): Array<string | number | null> => {
    if (i % LINES_PER_PAYMENT === 0) paymentId = benchId('pay_');
    const payee = payees[i % payeeCount];
    const amount = 100 + ((i * 7919) % 9901); // 1.00 .. 100.00 BRL, positive
    const e = expected.get(`${payee.type}:${payee.id}`)!;
    e.amount += amount;
    e.count++;
    expectedTotal += amount;
    const availableOn = dates[Math.floor(i / payeeCount) % dates.length];
    const created = `${availableOn}T12:00:00.000Z`;
    return [benchId('rcv_'), accountId, 0, paymentId, paymentId, i % LINES_PER_PAYMENT, payee.type, payee.id, null, amount, 'pending', availableOn, null, null, created, created];
  };
  const RCV = ['id', 'account_id', 'livemode', 'payment_id', 'source_id', 'line', 'payee_type', 'payee_id', 'split_rule_id', 'amount', 'status', 'available_on', 'settlement_id', 'refund_id', 'created_at', 'updated_at'];
  const RCP = ['id', 'account_id', 'livemode', 'name', 'document', 'bank_code', 'agency', 'account', 'account_type', 'metadata', 'created_at', 'updated_at'];
  log(`loading 1 account, ${recipients.length} recipients, ${rows} receivables over ${payeeCount} payees`);

  if (engine === 'sqlite') {
    const db = new BetterSqlite3(databaseUrl.slice('sqlite:'.length));
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = OFF'); // setup only: this connection's own loading
      db.pragma('cache_size = -1000000');
      db.pragma('foreign_keys = ON');
      const insertAccount = db.prepare('insert into accounts (id, name, email, live_enabled, settings, created_at) values (?, ?, ?, ?, ?, ?)');
      const insertRecipient = db.prepare(`insert into recipients (${RCP.join(', ')}) values (${RCP.map(() => '?').join(', ')})`);
      const PER = 500; // 500 rows x 16 columns = 8000 parameters
      const multi = db.prepare(`insert into receivables (${RCV.join(', ')}) values ${Array.from({ length: PER }, () => `(${RCV.map(() => '?').join(', ')})`).join(', ')}`);
      const single = db.prepare(`insert into receivables (${RCV.join(', ')}) values (${RCV.map(() => '?').join(', ')})`);
      const CHUNK = 100_000;
      db.transaction(() => {
        insertAccount.run(accountId, 'Bench marketplace', null, 0, '{}', nowIso);
        for (const r of recipients) insertRecipient.run(RCP.map((c) => r[c]));
      })();
      for (let start = 0; start < rows; start += CHUNK) {
        const end = Math.min(rows, start + CHUNK);
        db.transaction(() => {
          let i = start;
          for (; i + PER <= end; i += PER) {
            const params: Array<string | number | null> = [];
            for (let k = i; k < i + PER; k++) params.push(...receivable(k));
            multi.run(params);
          }
          for (; i < end; i++) single.run(receivable(i));
        })();
        if (end % 200_000 === 0 || end === rows) log(`loaded ${end} receivables`);
      }
      db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      db.close();
    }
  } else {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await client.query('set synchronous_commit = off'); // setup only
      await client.query('begin');
      await client.query('insert into accounts (id, name, email, live_enabled, settings, created_at) values ($1, $2, $3, $4, $5, $6)', [accountId, 'Bench marketplace', null, 0, '{}', nowIso]);
      const rcpTypes = ['text', 'text', 'int', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text'];
      await client.query(
        `insert into recipients (${RCP.join(', ')}) select * from unnest(${RCP.map((_, k) => `$${k + 1}::${rcpTypes[k]}[]`).join(', ')})`,
        RCP.map((c) => recipients.map((r) => r[c])),
      );
      await client.query('commit');
      const rcvTypes = ['text', 'text', 'int', 'text', 'text', 'int', 'text', 'text', 'text', 'bigint', 'text', 'text', 'text', 'text', 'text', 'text'];
      const insert = `insert into receivables (${RCV.join(', ')}) select * from unnest(${RCV.map((_, k) => `$${k + 1}::${rcvTypes[k]}[]`).join(', ')})`;
      const PER = 20_000;
      for (let start = 0; start < rows; start += PER) {
        const end = Math.min(rows, start + PER);
        const cols: Array<Array<string | number | null>> = RCV.map(() => []);
        for (let i = start; i < end; i++) {
          const row = receivable(i);
          for (let c = 0; c < row.length; c++) cols[c].push(row[c]);
        }
        await client.query(insert, cols);
        if (end % 200_000 === 0 || end === rows) log(`loaded ${end} receivables`);
      }
      // A table that grew to a million rows in production has been auto-analyzed many times over.
      await client.query('vacuum analyze receivables');
      await client.query('analyze recipients');
    } finally {
      await client.end();
    }
  }
  return { accountId, expected, expectedTotal, loadSeconds: (Date.now() - started) / 1000 };
}

// The run as the admin API answers it (SettlementRun).
export interface RunView { id: string; status: string; settlementCount: number; receivableCount: number; totalAmount: number; startedAt: string | null; finishedAt: string | null }

// Every receivable settled, in exactly one settlement of this run and of its own payee; one
// settlement per payee; each settlement's amount and count equal its receivables'; and the run's
// totals equal what was loaded. Returns the problems found.
export async function verifySettlement(db: Db, loaded: Loaded, rows: number, payeeCount: number, run: RunView): Promise<{ problems: string[]; settlements: number }> {
  const problems: string[] = [];
  const check = (ok: boolean, message: string) => { if (!ok) problems.push(message); };
  const num = (v: unknown) => Number(v ?? 0);
  type Row = Record<string, unknown>;
  const one = async (text: string, params?: unknown[]) => (await db.query<Row>(text, params))[0] ?? {};

  const all = await one(`select count(*) as n, sum(case when status = 'settled' then 1 else 0 end) as settled,
      sum(case when settlement_id is null then 1 else 0 end) as unassigned, sum(amount) as total from receivables`);
  check(num(all.n) === rows, `expected ${rows} receivables, found ${String(all.n)}`);
  check(num(all.settled) === rows, `${rows - num(all.settled)} receivables are not settled`);
  check(num(all.unassigned) === 0, `${String(all.unassigned)} receivables have no settlement`);
  check(num(all.total) === loaded.expectedTotal, `receivables total ${String(all.total)} != loaded total ${loaded.expectedTotal}`);

  const runId = run.id.replace(/[^A-Za-z0-9_]/g, '');
  const orphans = await one(`select count(*) as n from receivables r left join settlements s on s.id = r.settlement_id
      where s.id is null or s.run_id <> '${runId}' or s.account_id <> r.account_id or s.livemode <> r.livemode
         or s.payee_type <> r.payee_type or s.payee_id <> r.payee_id`);
  check(num(orphans.n) === 0, `${String(orphans.n)} receivables point to a missing settlement, another run's, or another payee's`);

  const st = await one(`select count(*) as n, count(distinct payee_type || ':' || payee_id) as payees,
      sum(case when run_id = '${runId}' then 1 else 0 end) as in_run from settlements`);
  check(num(st.n) === payeeCount, `expected exactly ${payeeCount} settlements, found ${String(st.n)}`);
  check(num(st.payees) === num(st.n), `settlements cover ${String(st.payees)} distinct payees for ${String(st.n)} settlements (one per payee expected)`);
  check(num(st.in_run) === num(st.n), `${num(st.n) - num(st.in_run)} settlements are not of this run`);

  const mismatch = await one(`select count(*) as n from settlements s
      left join (select settlement_id, sum(amount) as total, count(*) as c from receivables group by settlement_id) x on x.settlement_id = s.id
      where x.total is null or s.amount <> x.total or s.receivable_count <> x.c`);
  check(num(mismatch.n) === 0, `${String(mismatch.n)} settlements whose amount or receivable_count differs from the sum of their receivables`);

  let wrong = 0;
  for (const r of await db.query<Row>('select payee_type, payee_id, amount, receivable_count from settlements')) {
    const e = loaded.expected.get(`${String(r.payee_type)}:${String(r.payee_id)}`);
    if (!e || e.amount !== num(r.amount) || e.count !== num(r.receivable_count)) wrong++;
  }
  check(wrong === 0, `${wrong} settlements differ from the loaded receivables of their payee`);

  check(run.status === 'completed', `run status ${run.status}`);
  check(run.settlementCount === payeeCount, `run.settlementCount ${run.settlementCount} != ${payeeCount}`);
  check(run.receivableCount === rows, `run.receivableCount ${run.receivableCount} != ${rows}`);
  check(run.totalAmount === loaded.expectedTotal, `run.totalAmount ${run.totalAmount} != ${loaded.expectedTotal}`);
  const events = await one(`select count(*) as n from events where type = 'settlement.created'`);
  check(num(events.n) === payeeCount, `${String(events.n)} settlement.created events for ${payeeCount} settlements`);
  return { problems, settlements: num(st.n) };
}

// PostgreSQL's own counters for receivables (buffers hit/read, tuples updated, HOT updates),
// before and after the run: where the UPDATE's time goes. Stats reach the shared counters when
// a backend goes idle (at most ~1 s later), hence the pause before the second snapshot.
export type PgStats = Record<string, string | number>;
export async function pgTableStats(db: Db, waitMs = 0): Promise<PgStats> {
  if (waitMs) await new Promise((r) => setTimeout(r, waitMs));
  const [row] = await db.query<PgStats>(`select
      io.heap_blks_read, io.heap_blks_hit, io.idx_blks_read, io.idx_blks_hit,
      st.n_tup_upd, st.n_tup_hot_upd,
      pg_relation_size('receivables') as heap_bytes, pg_indexes_size('receivables') as index_bytes,
      current_setting('shared_buffers') as shared_buffers
    from pg_statio_user_tables io join pg_stat_user_tables st using (relid)
    where io.relid = 'receivables'::regclass`);
  return row;
}
export interface PgStatsDiff { heapBlocksRead: number; heapBlocksHit: number; indexBlocksRead: number; indexBlocksHit: number; tuplesUpdated: number; hotUpdates: number; heapMiB: number; indexMiB: number; sharedBuffers: string }
export function diffStats(a: PgStats, b: PgStats): PgStatsDiff {
  const d = (k: string) => Number(b[k]) - Number(a[k]);
  return {
    heapBlocksRead: d('heap_blks_read'), heapBlocksHit: d('heap_blks_hit'), indexBlocksRead: d('idx_blks_read'), indexBlocksHit: d('idx_blks_hit'),
    tuplesUpdated: d('n_tup_upd'), hotUpdates: d('n_tup_hot_upd'),
    heapMiB: Math.round(Number(b.heap_bytes) / 1048576), indexMiB: Math.round(Number(b.index_bytes) / 1048576), sharedBuffers: String(b.shared_buffers),
  };
}

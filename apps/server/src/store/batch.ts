import assert from 'node:assert/strict';
import pg from 'pg';
import type { DeferredWork, Engine, RawExec, Row, Tx } from './types.js';
import type { Access } from './access.js';

// One group-committed transaction, seen from the writes inside it.
//
// The plain way to give every write of a batch its own isolation is a savepoint around each,
// and to run each statement as it comes. Both cost a round trip per statement on PostgreSQL
// and a statement step each on SQLite, which is most of what a payment create costs. So a
// batch runs optimistically first:
//
// - Lazy savepoints. A write's savepoint is taken just before its first writing statement.
//   A write that only reads (or only defers, below) and then fails has nothing to undo.
// - Deferred inserts. Hot-path inserts (defer() in store/raw.ts: payments, events, jobs,
//   idempotency keys, receivables, deliveries) are buffered per write and written at the end
//   of the batch, a multi-row INSERT per table on PostgreSQL. A write that fails loses its
//   buffer, which is all the undo it needs. A write that reads a table it has buffered rows
//   for first writes them (read your own writes). Collectors (the webhook fan-out of events)
//   run once per batch over every write's items.
// - If the end-of-batch flush fails (a unique key two writes of the batch both claimed, say),
//   nothing of the batch can be told apart, so the whole transaction is rolled back and the
//   batch runs again the plain way, where each write meets its own error. So does a batch
//   where, on PostgreSQL, a statement failed outside any savepoint (which aborts the whole
//   transaction there). Writes are functions of the transaction, so running one again is safe.


export interface BatchOptions {
  // flush() returns the statements that write the batch's rows, with their values inlined as
  // literals, instead of running them: the batcher sends them with BEGIN and COMMIT as one
  // simple query, one round trip for the whole batch (PostgreSQL).
  bundle?: boolean;
  // Where collectors read (see DeferredWork.run); the batch's own transaction when unset.
  read?: Tx;
}


interface OpState {
  rows: Map<string, Row[]>;
  collected: Map<string, { collector: DeferredWork<unknown>; items: unknown[] }>;
  savepoint: boolean;
  // PostgreSQL: a statement of this write failed inside its savepoint, which is then aborted.
  abortedBy: { error: unknown } | null;
}

export class BatchAborted extends Error {}

// The batch a write's Kysely belongs to (set by the batcher when it binds one), so the store's
// helpers (store/raw.ts defer, deferWork) find it. Nothing outside store/ sees a batch.
const contexts = new WeakMap<Tx, BatchContext>();
export function batchOf(db: Tx): BatchContext | undefined {
  return contexts.get(db);
}
export function bindBatch(db: Tx, ctx: BatchContext): void {
  contexts.set(db, ctx);
  ctx.tx = db;
}


const PG_MAX_PARAMS = 30_000;

export class BatchContext {
  private op: OpState | null = null;
  private readonly rows = new Map<string, Row[]>();
  private readonly collected = new Map<string, { collector: DeferredWork<unknown>; items: unknown[] }>();
  // PostgreSQL aborts the whole transaction on any failed statement outside a savepoint.
  poisoned = false;
  private flushing = false;
  // The collectors run at the end of the batch: their rows are deferred to the batch's.
  private collecting = false;
  // Tables the batch's statements wrote to (see DeferredWork.reads); null: any (raw SQL wrote).
  private written: Set<string> | null = new Set<string>();
  // The Kysely the batch's writes get (set by the batcher), for the collectors.
  tx: Tx | null = null;

  constructor(
    readonly engine: Engine,
    // Runs a statement on the batch's connection, outside the hooks below.
    private readonly exec: RawExec,
    // false: the plain mode (every statement at once, a savepoint around each write).
    readonly optimistic: boolean,
    // A batch of one write needs no savepoint: its transaction is its isolation.
    private readonly alone: boolean,
    private readonly options: BatchOptions = {},
  ) {}

  // The write running now; the batcher calls startOp before and endOp or failOp after each.
  private currentOp(): OpState {
    assert(this.op !== null, 'no write of the batch is running');
    return this.op;
  }

  private boundTx(): Tx {
    assert(this.tx !== null, 'the batch has no bound Kysely (bindBatch)');
    return this.tx;
  }

  get deferring(): boolean {
    return this.optimistic && ((this.op !== null && !this.flushing) || this.collecting);
  }

  async startOp(): Promise<void> {
    this.op = { rows: new Map(), collected: new Map(), savepoint: false, abortedBy: null };
    // The plain mode isolates every write in a savepoint; alone, only on PostgreSQL, where a write
    // that catches a failed statement and goes on would otherwise commit an aborted transaction.
    if (!this.optimistic && (!this.alone || this.engine === 'postgres')) await this.savepoint(this.op);
  }

  // The write returned: its buffered rows and items join the batch's.
  async endOp(): Promise<void> {
    const op = this.currentOp();
    this.op = null;
    for (const [table, rows] of op.rows) {
      const all = this.rows.get(table);
      if (all) for (const r of rows) all.push(r);
      else this.rows.set(table, rows);
    }
    for (const [key, c] of op.collected) {
      const all = this.collected.get(key);
      if (all) for (const i of c.items) all.items.push(i);
      else this.collected.set(key, c);
    }
    if (op.savepoint) await this.exec('RELEASE SAVEPOINT w', []);
  }

  // The write threw: undo what it did. Returns false when that is not possible within this
  // transaction (the caller then rolls back the batch).
  async failOp(): Promise<boolean> {
    const op = this.currentOp();
    this.op = null;
    if (this.poisoned) return false;
    if (op.savepoint) {
      await this.exec('ROLLBACK TO SAVEPOINT w', []);
      await this.exec('RELEASE SAVEPOINT w', []);
    }
    return true;
  }

  defer(table: string, rows: readonly Row[]): void {
    const op = this.op;
    const target = op ? op.rows : this.rows;
    const list = target.get(table);
    if (list) for (const r of rows) list.push(r);
    else target.set(table, rows.slice());
  }

  collect<T>(collector: DeferredWork<T>, item: T): void {
    const op = this.currentOp();
    let c = op.collected.get(collector.key);
    if (!c) {
      // Stored untyped beside other works' items; run() gets back exactly the items collected for it.
      c = { collector: collector, items: [] };
      op.collected.set(collector.key, c);
    }
    c.items.push(item);
  }

  // Called before every statement a write runs. Returns a promise only when there is work to do
  // first, so the common case costs no extra await.
  before(access: Access): Promise<void> | undefined {
    // Only the outside reads (options.read) look at which tables the batch wrote.
    if (access.writes && this.options.read && this.written) {
      if (access.tables === null) this.written = null;
      else for (const t of access.tables) this.written.add(t);
    }
    const op = this.op;
    if (!op || this.flushing) return undefined;
    if (this.readsOwnRows(op, access.tables)) return this.flushOp(op);
    if (access.writes && !op.savepoint && !this.alone) return this.savepoint(op);
    return undefined;
  }

  // A statement failed. On PostgreSQL that aborts everything since the last savepoint: with
  // none around this write, the batch must be run again the plain way.
  failed(error: unknown): void {
    if (this.engine !== 'postgres') return;
    const op = this.op;
    if (!op?.savepoint) this.poisoned = true;
    else op.abortedBy ??= { error };
  }

  // A write that returned although PostgreSQL aborted its savepoint under it (it caught a failed
  // statement and went on): nothing it did can commit. The statement's error, or null.
  abortedBy(): { error: unknown } | null {
    return this.op?.abortedBy ?? null;
  }

  // End of the batch: the collectors (whose rows join the batch's), then every buffered row.
  // With the bundle option, returns the statements that write the rows instead of running them.
  async flush(): Promise<string[]> {
    const bundled: string[] = [];
    this.collecting = true;
    try {
      for (const { collector, items } of this.collected.values()) {
        if (this.options.bundle && collector.bundled) {
          bundled.push(collector.bundled(items, pgLiteral));
          continue;
        }
        const written = this.written;
        const outside = this.options.read && written && !collector.reads.some((t) => written.has(t) || this.rows.has(t));
        const tx = this.boundTx();
        await collector.run(tx, items, outside && this.options.read ? this.options.read : tx);
      }
    } finally {
      this.collecting = false;
    }
    this.collected.clear();
    this.flushing = true;
    try {
      // The works' statements after the rows: they may read what the rows wrote.
      if (this.options.bundle) return [...literalInserts(this.rows), ...bundled];
      await this.writeRows(this.rows);
      return [];
    } finally {
      this.rows.clear();
      this.flushing = false;
    }
  }

  // Whether a statement touching `tables` (null: any) may read rows this write deferred.
  private readsOwnRows(op: OpState, tables: readonly string[] | null): boolean {
    if (op.rows.size === 0 && op.collected.size === 0) return false;
    if (tables === null) return true;
    for (const t of tables) {
      if (op.rows.has(t)) return true;
      for (const { collector } of op.collected.values()) if (collector.tables.includes(t)) return true;
    }
    return false;
  }

  private async savepoint(op: OpState): Promise<void> {
    op.savepoint = true;
    await this.exec('SAVEPOINT w', []);
  }

  private async flushOp(op: OpState): Promise<void> {
    if (!op.savepoint && !this.alone) await this.savepoint(op);
    this.flushing = true;
    try {
      await this.writeRows(op.rows);
      const tx = this.boundTx();
      for (const { collector, items } of op.collected.values()) await collector.run(tx, items, tx);
    } finally {
      this.flushing = false;
    }
    op.rows.clear();
    op.collected.clear();
  }

  private async writeRows(byTable: Map<string, Row[]>): Promise<void> {
    for (const [table, rows] of byTable) {
      for (const [sig, group] of groupByColumns(rows)) await this.insert(table, sig.split(','), group);
    }
  }

  private async insert(table: string, columns: string[], rows: Row[]): Promise<void> {
    const head = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values `;
    if (this.engine === 'sqlite') {
      // A cached one-row statement per row: better-sqlite3 steps it in a couple of µs, and one
      // shape keeps the statement cache small.
      const text = head + `(${columns.map(() => '?').join(', ')})`;
      for (const row of rows) await this.exec(text, columns.map((c) => row[c]));
      return;
    }
    const perStatement = Math.max(1, Math.floor(PG_MAX_PARAMS / columns.length));
    for (let start = 0; start < rows.length; start += perStatement) {
      const chunk = rows.slice(start, start + perStatement);
      const params: unknown[] = [];
      const tuples: string[] = [];
      for (const row of chunk) {
        const slots: string[] = [];
        for (const c of columns) {
          params.push(row[c]);
          slots.push(`$${params.length}`);
        }
        tuples.push(`(${slots.join(', ')})`);
      }
      await this.exec(head + tuples.join(', '), params);
    }
  }
}

function groupByColumns(rows: Row[]): Map<string, Row[]> {
  // Rows of one table normally share their columns; group them in case they do not.
  const groups = new Map<string, Row[]>();
  for (const row of rows) {
    const sig = Object.keys(row).join(',');
    const g = groups.get(sig);
    if (g) g.push(row);
    else groups.set(sig, [row]);
  }
  return groups;
}

// A value as a PostgreSQL literal. Strings go through pg's escapeLiteral (quotes doubled,
// backslashes in the E'' form), so a string is always one literal, whatever it holds.
function pgLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return pg.escapeLiteral(value);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  // Unreachable with the tables we defer into; refusing makes the batch replay the plain way.
  throw new Error(`cannot inline a ${typeof value} as a SQL literal`);
}

const ROWS_PER_LITERAL_INSERT = 1000;

// The PostgreSQL INSERTs of the rows, values inlined (for one simple-protocol query).
function literalInserts(byTable: Map<string, Row[]>): string[] {
  const statements: string[] = [];
  for (const [table, rows] of byTable) {
    for (const [sig, group] of groupByColumns(rows)) {
      const columns = sig.split(',');
      const head = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values `;
      for (let start = 0; start < group.length; start += ROWS_PER_LITERAL_INSERT) {
        const tuples = group.slice(start, start + ROWS_PER_LITERAL_INSERT).map((row) => `(${columns.map((c) => pgLiteral(row[c])).join(', ')})`);
        statements.push(head + tuples.join(', '));
      }
    }
  }
  return statements;
}

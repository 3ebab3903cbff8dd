import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { CompiledQuery, Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type DatabaseConnection, type Dialect, type KyselyProps } from 'kysely';
import { BatchAborted, BatchContext, isWrite, type RawExec } from './batch.js';
import type { Database } from './schema.js';
import { migrationProvider } from './migrations.js';
import { ApiError } from '../errors.js';

export const DEFAULT_WRITE_QUEUE_MAX_PENDING = 20_000;

export type Engine = 'sqlite' | 'postgres';
export type Tx = Kysely<Database>;
export type WriteOp<T> = (tx: Tx) => Promise<T>;

export interface StoreOptions {
  url: string;
  // Upper bound on writes sharing one commit; bounds the latency a batch adds to its last member.
  writeBatchMax?: number;
  // Concurrent committing connections on PostgreSQL (SQLite has exactly one writer).
  pgWriters?: number;
  pgPoolSize?: number;
  // Writes accepted and not yet answered (queued or in a batch being committed). Past it a
  // write is refused at once with 503 SERVICE_UNAVAILABLE and Retry-After, rather than waiting
  // in a queue that grows without bound (memory and latency) when load exceeds what commits can take.
  writeQueueMaxPending?: number;
}

// A write refused because the queue was full: what a client sees (src/errors.ts), and how long
// it should wait (a commit takes milliseconds; one second lets the queue drain).
const QUEUE_FULL_RETRY_AFTER_SECONDS = 1;
function queueFull(): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', 'The service is taking more writes than it can commit; nothing was written. Retry after Retry-After with the same Idempotency-Key.', {
    headers: { 'retry-after': String(QUEUE_FULL_RETRY_AFTER_SECONDS) },
  });
}

// The one store of the service. Reads go through `db` (on SQLite a separate read-only connection,
// so a read never sees the uncommitted part of a batch in progress); every write goes through
// `write()`, which groups concurrent writes into one transaction and one fsync (group commit),
// each isolated in its own savepoint and each answered only after the commit.
export class Store {
  readonly engine: Engine;
  readonly db: Kysely<Database>;
  private readonly writer: Kysely<Database>;
  private readonly batcher: WriteBatcher;
  private closed = false;
  private readonly writeChecks: Array<() => void> = [];

  private constructor(engine: Engine, db: Kysely<Database>, writer: Kysely<Database>, batcher: WriteBatcher) {
    this.engine = engine;
    this.db = db;
    this.writer = writer;
    this.batcher = batcher;
  }

  static open(options: StoreOptions): Store {
    const { url } = options;
    const batchMax = options.writeBatchMax ?? 256;
    const maxPending = options.writeQueueMaxPending ?? DEFAULT_WRITE_QUEUE_MAX_PENDING;
    assert(Number.isSafeInteger(maxPending) && maxPending >= 1, 'writeQueueMaxPending must be a positive integer');
    if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
      // bigint (int8) columns hold centavos and milliseconds: both far below 2^53.
      pg.types.setTypeParser(20, (v) => Number(v));
      const pool = new pg.Pool({ connectionString: url, max: options.pgPoolSize ?? 20 });
      const dialect = new PostgresDialect({ pool });
      const db = new Kysely<Database>({ dialect });
      const batcher = new WriteBatcher(db, dialect, 'postgres', batchMax, maxPending, options.pgWriters ?? 4);
      return new Store('postgres', db, db, batcher);
    }
    if (!url.startsWith('sqlite:')) throw new Error(`DATABASE_URL must start with sqlite: or postgres://, got "${url.split(':')[0]}:..."`);
    const file = url.slice('sqlite:'.length);
    if (!file) throw new Error('DATABASE_URL sqlite:<file> needs a file name');
    mkdirSync(dirname(resolve(file)), { recursive: true });
    const writerConn = new BetterSqlite3(file);
    writerConn.pragma('journal_mode = WAL');
    writerConn.pragma('synchronous = FULL');
    writerConn.pragma('busy_timeout = 5000');
    writerConn.pragma('foreign_keys = ON');
    const readerConn = new BetterSqlite3(file);
    readerConn.pragma('busy_timeout = 5000');
    const writerStatements = cachedStatements(writerConn);
    const readerStatements = cachedStatements(readerConn);
    const writerDialect = new SqliteDialect({ database: writerStatements });
    const writer = new Kysely<Database>({ dialect: writerDialect });
    const reader = new Kysely<Database>({ dialect: new SqliteDialect({ database: readerStatements }) });
    attachRaw(reader, readerStatements);
    return new Store('sqlite', reader, writer, new WriteBatcher(writer, writerDialect, 'sqlite', batchMax, maxPending, 1, writerStatements));
  }

  // Group-commit counters, for /metrics: how many writes share a commit, and what commits cost.
  get stats(): WriteStats {
    return this.batcher.stats;
  }

  // Runs after every successful commit (cheap listeners only: they run on the hot path).
  onCommit(listener: () => void): void {
    this.batcher.commitListeners.push(listener);
  }

  write<T>(op: WriteOp<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    if (this.writeChecks.length > 0) {
      try {
        for (const check of this.writeChecks) check();
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return this.batcher.enqueue(op);
  }

  // A check every write() runs first, synchronously, in its caller's context: the idempotency
  // plugin's guard against request code writing around its idempotent write.
  checkWrites(check: () => void): void {
    this.writeChecks.push(check);
  }

  // Up to the latest migration, or up to `target` (a migration's name; tests of a migration).
  async migrate(target?: string): Promise<string[]> {
    // Kysely looks for its bookkeeping tables across all schemas; pin them to ours so that
    // several deployments (or test schemas) in one PostgreSQL database do not see each other's.
    let migrationTableSchema: string | undefined;
    if (this.engine === 'postgres') {
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(this.writer);
      migrationTableSchema = rows[0].schema;
    }
    const migrator = new Migrator({ db: this.writer, provider: migrationProvider, migrationTableSchema });
    const { error, results } = target ? await migrator.migrateTo(target) : await migrator.migrateToLatest();
    if (error) throw error;
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error('store is closed');
    await sql`select 1`.execute(this.db);
  }

  // Waits for queued writes to commit, then closes the connections.
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.batcher.drain();
    await this.db.destroy();
    if (this.writer !== this.db) await this.writer.destroy();
  }
}

// better-sqlite3 compiles a statement per prepare(); Kysely prepares per query. Caching by SQL
// text makes the hot path a bind-and-step. Bounded so ad hoc SQL cannot grow it without limit.
function cachedStatements(conn: BetterSqlite3.Database) {
  const cache = new Map<string, BetterSqlite3.Statement>();
  const maxStatements = 500;
  return {
    prepare(sqlText: string) {
      let stmt = cache.get(sqlText);
      if (!stmt) {
        stmt = conn.prepare(sqlText);
        if (cache.size >= maxStatements) cache.delete(cache.keys().next().value as string);
        cache.set(sqlText, stmt);
      }
      return stmt;
    },
    close() {
      conn.close();
    },
  } as unknown as BetterSqlite3.Database;
}

export interface WriteStats {
  commits: number;
  writes: number;
  failedCommits: number;
  refusedQueueFull: number; // writes refused because writeQueueMaxPending were pending
  replays: number; // optimistic batches run again the plain way (store/batch.ts)
  commitMs: number; // time spent in COMMIT (the fsync on SQLite)
  batchMs: number; // time from BEGIN to the end of COMMIT
}

// The better-sqlite3 statements behind a SQLite Kysely instance, so store/fast.ts can run a
// compiled-once query without Kysely's executor (it is synchronous underneath anyway).
export const RAW = Symbol('raw sqlite statements');

function attachRaw(db: Kysely<Database>, statements: BetterSqlite3.Database): void {
  (db as unknown as Record<symbol, unknown>)[RAW] = statements;
}

interface Pending {
  op: WriteOp<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}


class WriteBatcher {
  private queue: Pending[] = [];
  private running = 0;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];
  readonly commitListeners: Array<() => void> = [];
  // KyselyProps wants a driver; a batch's Kysely never opens connections or transactions itself.
  private readonly driverProps = {};
  readonly stats: WriteStats = { commits: 0, writes: 0, failedCommits: 0, refusedQueueFull: 0, replays: 0, commitMs: 0, batchMs: 0 };

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly engine: Engine,
    private readonly batchMax: number,
    private readonly maxPending: number,
    private readonly concurrency: number,
    // SQLite: the writer's statements, lent to the ops of a batch for the compiled-once fast path.
    private readonly rawStatements: BetterSqlite3.Database | null = null,
  ) {}

  // Writes queued plus writes in batches being committed: those accepted and not yet answered.
  private pending = 0;

  enqueue<T>(op: WriteOp<T>): Promise<T> {
    if (this.pending >= this.maxPending) {
      this.stats.refusedQueueFull++;
      return Promise.reject(queueFull());
    }
    this.pending++;
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ op, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  drain(): Promise<void> {
    if (this.queue.length === 0 && this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate, not a microtask: every request that arrived in this turn of the event loop
    // gets to enqueue before the batch is cut, which is what makes the commit shared.
    setImmediate(() => {
      this.scheduled = false;
      while (this.running < this.concurrency && this.queue.length > 0) {
        const batch = this.queue.splice(0, this.batchMax);
        this.running++;
        this.run(batch).finally(() => {
          this.running--;
          this.pending -= batch.length;
          assert(this.pending >= 0, 'more writes answered than accepted');
          if (this.queue.length > 0) this.schedule();
          else if (this.running === 0) for (const w of this.idleWaiters.splice(0)) w();
        });
      }
    });
  }

  private async run(batch: Pending[]): Promise<void> {
    const startedMs = performance.now();
    let outcome = await this.attempt(batch, true);
    // The optimistic pass could not tell its writes apart (see store/batch.ts): again, plainly.
    if (outcome === 'retry') {
      this.stats.replays++;
      outcome = await this.attempt(batch, false);
    }
    if (outcome === 'retry' || outcome instanceof Failure) {
      // The commit itself failed: nothing of this batch is durable, so nobody gets a success.
      this.stats.failedCommits++;
      const error = outcome === 'retry' ? new Error('write batch could not be replayed') : outcome.error;
      for (const item of batch) item.reject(error);
      return;
    }
    this.stats.commits++;
    this.stats.writes += batch.length;
    this.stats.batchMs += performance.now() - startedMs;
    for (const listener of this.commitListeners) listener();
    batch.forEach((item, i) => {
      const r = outcome[i];
      if (r.ok) item.resolve(r.value);
      else item.reject(r.error);
    });
  }

  private async attempt(batch: Pending[], optimistic: boolean): Promise<Result[] | 'retry' | Failure> {
    const results: Result[] = [];
    const alone = batch.length === 1;
    const postgres = this.engine === 'postgres';
    try {
      return await this.db.getExecutor().provideConnection(async (connection) => {
        const statements = this.rawStatements;
        const send: RawExec = statements
          ? async (text, params) => { const stmt = statements.prepare(text); return stmt.reader ? stmt.all(params as unknown[]) : stmt.run(params as unknown[]); }
          : (text, params) => connection.executeQuery(CompiledQuery.raw(text, params as unknown[]));
        // PostgreSQL: BEGIN waits for the batch's first statement. A batch whose writes only
        // defer rows (a payment create) then sends BEGIN, its rows and COMMIT as one query.
        let begun = !postgres;
        const begin = async () => {
          if (begun) return;
          begun = true;
          await send('BEGIN', []);
        };
        const exec: RawExec = postgres ? async (text, params) => { await begin(); return send(text, params); } : send;
        const rollback = async () => { if (begun) await send('ROLLBACK', []); };
        const ctx = new BatchContext(this.engine, exec, optimistic, alone, postgres && optimistic ? { bundle: true, read: this.db } : {});
        const tx = this.bind(connection, ctx, postgres ? begin : null);
        if (!postgres) await send('BEGIN IMMEDIATE', []);
        try {
          for (const item of batch) {
            await ctx.startOp();
            let ok = true;
            try {
              results.push({ ok: true, value: await item.op(tx) });
            } catch (error) {
              ok = false;
              results.push({ ok: false, error });
            }
            if (ctx.poisoned) throw new BatchAborted();
            if (ok) await ctx.endOp();
            else if (alone) {
              // Alone, the transaction itself is the isolation: roll it all back.
              await rollback();
              return results;
            } else if (!(await ctx.failOp())) throw new BatchAborted();
          }
          let committed = false;
          let commitStartMs = 0;
          try {
            const tail = await ctx.flush();
            commitStartMs = performance.now();
            if (tail.length > 0) {
              // One simple-protocol query (no parameters: the values are inlined literals). If
              // any INSERT fails, PostgreSQL skips the rest, COMMIT included.
              const script = [...(begun ? [] : ['BEGIN']), ...tail, 'COMMIT'].join(';\n');
              begun = true;
              await send(script, []);
              committed = true;
            }
          } catch (error) {
            // The batch's rows failed to go in: in the optimistic pass, replay it plainly.
            if (!optimistic) throw error;
            throw new BatchAborted();
          }
          if (!committed && begun) await send('COMMIT', []);
          this.stats.commitMs += performance.now() - commitStartMs;
          return results;
        } catch (error) {
          try { await rollback(); } catch { /* connection may be gone */ }
          throw error;
        }
      });
    } catch (error) {
      if (error instanceof BatchAborted && optimistic) return 'retry';
      return new Failure(error);
    }
  }

  // The Kysely every write of a batch gets: bound to the batch's connection, with each
  // statement passing through the batch's hooks (lazy savepoints, read-your-own-writes).
  private bind(connection: DatabaseConnection, ctx: BatchContext, begin: (() => Promise<void>) | null): Tx {
    const hooked: DatabaseConnection = {
      async executeQuery(query) {
        const wait = ctx.before(query.sql, isWrite(query));
        if (wait) await wait;
        if (begin) await begin();
        try {
          return await connection.executeQuery(query);
        } catch (error) {
          ctx.failed();
          throw error;
        }
      },
      streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
    };
    const executor = this.db.getExecutor().withConnectionProvider({ provideConnection: (consumer) => consumer(hooked) });
    const tx = new Kysely<Database>({ config: { dialect: this.dialect }, driver: this.driverProps, executor, dialect: this.dialect } as KyselyProps);
    if (this.rawStatements) attachRaw(tx, this.rawStatements);
    (tx as unknown as Record<symbol, unknown>)[BATCH] = ctx;
    ctx.tx = tx;
    return tx;
  }
}

type Result = { ok: true; value: unknown } | { ok: false; error: unknown };
class Failure {
  constructor(readonly error: unknown) {}
}

export const BATCH = Symbol('batch context');

export function batchOf(db: Kysely<Database>): BatchContext | undefined {
  return (db as unknown as Record<symbol, BatchContext | undefined>)[BATCH];
}

export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE';
}

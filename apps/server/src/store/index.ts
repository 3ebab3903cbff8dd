import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import pg from 'pg';
import { Kysely, Migrator, SqliteDialect, sql } from 'kysely';
import type { Database } from './schema.js';
import { migrationProvider } from './migrations.js';
import { WriteBatcher } from './batcher.js';
import { cachedStatements, lendStatements } from './raw.js';
import { batchOf } from './batch.js';
import type { DeferredWork, Engine, StoreOptions, Tx, WriteOp, WriteOptions, WriteStats } from './types.js';
import { openSqlite, sqliteDriverName, type SqliteDriverName } from './sqlite.js';
import { OwnSchemaPostgresDialect } from './pg-introspector.js';
import { systemClock, type Clock } from '../clock.js';

// The write path, behind this one module: Store.write (the group commit, store/batcher.ts and
// store/batch.ts), what a write defers (defer, deferWork), the compiled-once statements
// (store/raw.ts) and the types they share (store/types.ts). Modules import from here only.
export type { DeferredWork, Engine, StoreOptions, Tx, WriteOp, WriteOptions, WriteStats } from './types.js';
export { defer, selectWhere, updateWhere, deleteWhere } from './raw.js';
export { MicroBatch, type Settled } from './micro-batch.js';

export const DEFAULT_WRITE_QUEUE_MAX_PENDING = 20_000;

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
  // Which SQLite driver this Node got (store/sqlite.ts); null on PostgreSQL.
  sqliteDriver: SqliteDriverName | null = null;
  // The one clock of the process's app, worker and jobs: every module that has the store takes
  // "now" from here (time is an input, clock.ts); code that has only a transaction is given it.
  clock: Clock = systemClock;

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
      const dialect = new OwnSchemaPostgresDialect({ pool });
      const db = new Kysely<Database>({ dialect });
      const batcher = new WriteBatcher(db, dialect, 'postgres', batchMax, maxPending, options.pgWriters ?? 4);
      const store = new Store('postgres', db, db, batcher);
      store.clock = options.clock ?? systemClock;
      return store;
    }
    if (!url.startsWith('sqlite:')) throw new Error(`DATABASE_URL must start with sqlite: or postgres://, got "${url.split(':')[0]}:..."`);
    const file = url.slice('sqlite:'.length);
    if (!file) throw new Error('DATABASE_URL sqlite:<file> needs a file name');
    mkdirSync(dirname(resolve(file)), { recursive: true });
    const driver = sqliteDriverName();
    const writerConn = openSqlite(file, driver);
    writerConn.exec('pragma journal_mode = WAL');
    writerConn.exec('pragma synchronous = FULL');
    writerConn.exec('pragma busy_timeout = 5000');
    writerConn.exec('pragma foreign_keys = ON');
    const readerConn = openSqlite(file, driver);
    readerConn.exec('pragma busy_timeout = 5000');
    const writerStatements = cachedStatements(writerConn);
    const readerStatements = cachedStatements(readerConn);
    const writerDialect = new SqliteDialect({ database: writerStatements });
    const writer = new Kysely<Database>({ dialect: writerDialect });
    const reader = new Kysely<Database>({ dialect: new SqliteDialect({ database: readerStatements }) });
    lendStatements(reader, readerStatements);
    const store = new Store('sqlite', reader, writer, new WriteBatcher(writer, writerDialect, 'sqlite', batchMax, maxPending, 1, writerStatements));
    store.sqliteDriver = driver;
    store.clock = options.clock ?? systemClock;
    return store;
  }

  // Group-commit counters, for /metrics: how many writes share a commit, and what commits cost.
  get stats(): WriteStats {
    return this.batcher.stats;
  }

  // Writes accepted and not yet answered (queued, or in a batch being committed): for /metrics.
  get pendingWrites(): number {
    return this.batcher.pending;
  }

  // Runs after every successful commit (cheap listeners only: they run on the hot path).
  onCommit(listener: () => void): void {
    this.batcher.commitListeners.push(listener);
  }

  write<T>(op: WriteOp<T>, options: WriteOptions = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    if (this.writeChecks.length > 0) {
      try {
        for (const check of this.writeChecks) check();
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return this.enqueueRetrying(op, options.ownTransaction === true);
  }

  // PostgreSQL may end a transaction with a serialization failure or a deadlock (another
  // transaction took the same rows in the other order). Nothing of the write was kept (its
  // savepoint or its batch rolled back), and a write is a function of its transaction: it runs
  // again, in a new transaction, a bounded number of times before the error is answered. Again
  // in a transaction of its own: the batch it shared may be what made the cycle (WriteOptions).
  private async enqueueRetrying<T>(op: WriteOp<T>, ownTransaction: boolean): Promise<T> {
    const postgres = this.engine === 'postgres';
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.batcher.enqueue(op, postgres && (ownTransaction || attempt > 1));
      } catch (error) {
        if (!isTransientConflict(error) || attempt >= MAX_WRITE_ATTEMPTS) throw error;
        this.batcher.stats.conflictRetries++;
      }
    }
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
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- what the migration threw, passed on as is
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

// Work deferred to the end of the write's batch and run once over every write's items there
// (see DeferredWork); outside a batch, or in the plain pass, it runs now over these items.
export async function deferWork<T>(tx: Tx, work: DeferredWork<T>, items: T[]): Promise<void> {
  if (items.length === 0) return;
  const batch = batchOf(tx);
  if (batch?.deferring) {
    for (const item of items) batch.collect(work, item);
    return;
  }
  await work.run(tx, items, tx);
}

// How many times a write meets a serialization failure or a deadlock before its error is
// answered (each time in a new transaction; the other transaction has moved on meanwhile).
export const MAX_WRITE_ATTEMPTS = 5;

// PostgreSQL's serialization_failure (40001) and deadlock_detected (40P01).
export function isTransientConflict(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || !('code' in error)) return false;
  return error.code === '40001' || error.code === '40P01';
}

// PostgreSQL's unique_violation, or SQLite's primary key or unique constraint (store/sqlite.ts
// gives node:sqlite's errors better-sqlite3's codes); anything thrown may come here, so it is
// checked, not cast.
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || !('code' in error)) return false;
  return error.code === '23505' || error.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || error.code === 'SQLITE_CONSTRAINT_UNIQUE';
}

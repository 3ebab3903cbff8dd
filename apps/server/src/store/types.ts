import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { Clock } from '../clock.js';

// The types the write path shares, in one place (store/index.ts re-exports what modules use).

export type Engine = 'sqlite' | 'postgres';
export type Tx = Kysely<Database>;
export type WriteOp<T> = (tx: Tx) => Promise<T>;
export type Row = Record<string, unknown>;

export interface WriteOptions {
  // PostgreSQL: the write runs in a transaction of its own, not group-committed with others.
  // For a write that locks rows other writers lock too (receivables: a refund, a payee's
  // settlement), in id order. Each such write locks in that one order, so two of them never
  // wait on each other in a cycle; but a batch of several is one transaction that takes each
  // write's locks in turn, which is no order at all (a deadlock, seen in CI). SQLite has one
  // writer and takes no row locks: there it is group-committed as any write.
  ownTransaction?: boolean;
}

// Runs one statement on a connection, below Kysely (store/raw.ts has the one per engine).
export type RawExec = (sqlText: string, params: readonly unknown[]) => Promise<unknown>;

export interface StoreOptions {
  url: string;
  // Upper bound on writes sharing one commit; bounds the latency a batch adds to its last member.
  writeBatchMax?: number;
  // Writes accepted and not yet answered (queued or in a batch being committed). Past it a
  // write is refused at once with 503 SERVICE_UNAVAILABLE and Retry-After, rather than waiting
  // in a queue that grows without bound (memory and latency) when load exceeds what commits take.
  writeQueueMaxPending?: number;
  // Concurrent committing connections on PostgreSQL (SQLite has exactly one writer).
  pgWriters?: number;
  pgPoolSize?: number;
  // Where the store's users take the time (clock.ts): systemClock unless given (tests pass a
  // ManualClock, and buildApp the same one).
  clock?: Clock;
}

export interface WriteStats {
  commits: number;
  writes: number;
  failedCommits: number;
  refusedQueueFull: number; // writes refused because writeQueueMaxPending were pending
  replays: number; // optimistic batches run again the plain way (store/batch.ts)
  conflictRetries: number; // writes run again after a serialization failure or deadlock (Store.write)
  commitMs: number; // time spent in COMMIT (the fsync on SQLite)
  batchMs: number; // time from BEGIN to the end of COMMIT
}

// Work a write defers to the end of its batch, run once over every write's items (the webhook
// fan-out of events: one endpoint lookup per batch instead of one per event). Outside a batch
// (or when a write reads what it would write) it runs at once over that write's items.
export interface DeferredWork<T> {
  key: string;
  // Tables the work writes: a write reading one of them gets its own items run first.
  tables: readonly string[];
  // Tables it reads. Where that saves a round trip (PostgreSQL) it reads them outside the
  // transaction, unless a write of the batch changed one of them.
  reads: readonly string[];
  // `read`: where to read them.
  run(tx: Tx, items: T[], read: Tx): Promise<void>;
  // PostgreSQL, when a batch's rows go with its COMMIT as one script (store/batch.ts, bundle):
  // the one statement that does the work there, after the rows, reading inside the transaction,
  // instead of run() with its read before the script (a round trip). `literal` inlines a value.
  bundled?(items: T[], literal: (value: unknown) => string): string;
}

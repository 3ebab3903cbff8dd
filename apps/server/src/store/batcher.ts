import { Kysely, type DatabaseConnection, type Dialect, type Driver, type KyselyProps } from 'kysely';
import { ApiError } from '../errors.js';
import { BatchAborted, BatchContext, bindBatch } from './batch.js';
import { accessOf } from './access.js';
import { lendStatements, rawExec, type SqliteStatements } from './raw.js';
import { MicroBatch, type Settled } from './micro-batch.js';
import type { Database } from './schema.js';
import type { Engine, RawExec, Tx, WriteOp, WriteStats } from './types.js';

// The group commit: writes that arrive in one turn of the event loop share one transaction
// and one fsync, each isolated in its own savepoint (store/batch.ts) and each answered only
// after the commit. Store.write (store/index.ts) is its one way in.

// A write refused because the queue was full: what a client sees (src/errors.ts), and how long
// it should wait (a commit takes milliseconds; one second lets the queue drain).
const QUEUE_FULL_RETRY_AFTER_SECONDS = 1;
function queueFull(): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', 'The service is taking more writes than it can commit; nothing was written. Retry after Retry-After with the same Idempotency-Key.', {
    headers: { 'retry-after': String(QUEUE_FULL_RETRY_AFTER_SECONDS) },
  });
}



// A batch's Kysely runs on the batch's connection (its executor), never opening connections or
// transactions of its own: Kysely wants a driver anyway.
const refuse = async (): Promise<never> => {
  throw new Error("a write batch's Kysely opens no connection or transaction of its own");
};
const NO_DRIVER: Driver = {
  init: async () => {},
  acquireConnection: refuse,
  beginTransaction: refuse,
  commitTransaction: refuse,
  rollbackTransaction: refuse,
  releaseConnection: async () => {},
  destroy: async () => {},
};

// A write in the queue; `alone`: it runs in a transaction of its own (Store.write's options).
interface QueuedWrite {
  op: WriteOp<unknown>;
  alone: boolean;
}

export class WriteBatcher {
  private readonly batches: MicroBatch<QueuedWrite, unknown>;
  readonly commitListeners: Array<() => void> = [];
  readonly stats: WriteStats = { commits: 0, writes: 0, failedCommits: 0, refusedQueueFull: 0, replays: 0, conflictRetries: 0, commitMs: 0, batchMs: 0 };

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly engine: Engine,
    batchMax: number,
    // Writes accepted and not yet answered (queued or in a batch being committed).
    maxPending: number,
    concurrency: number,
    // SQLite: the writer's statements, lent to the ops of a batch for the compiled-once fast path.
    private readonly rawStatements: SqliteStatements | null = null,
  ) {
    this.batches = new MicroBatch<QueuedWrite, unknown>({
      maxItemsPerRun: batchMax,
      maxConcurrentRuns: concurrency,
      maxPending,
      alone: (write) => write.alone,
      onFull: () => {
        this.stats.refusedQueueFull++;
        return queueFull();
      },
      run: (writes) => this.run(writes.map((w) => w.op)),
    });
  }

  enqueue<T>(op: WriteOp<T>, alone = false): Promise<T> {
    // A cast, honestly: one queue holds ops of many answer types, which TypeScript can only say as
    // unknown (it has no per-item type parameter). The value this promise gets is this op's own:
    // run() answers each op with what that op returned, in the ops' order, and MicroBatch checks
    // there is exactly one answer per item and hands answer i to item i's caller only.
    return this.batches.add({ op, alone }) as Promise<T>;
  }

  // Writes accepted and not yet answered (queued or in a batch being committed).
  get pending(): number {
    return this.batches.pendingItems;
  }

  drain(): Promise<void> {
    return this.batches.drain();
  }

  private async run(batch: Array<WriteOp<unknown>>): Promise<Array<Settled<unknown>>> {
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
      throw outcome === 'retry' ? new Error('write batch could not be replayed') : outcome.error;
    }
    this.stats.commits++;
    this.stats.writes += batch.length;
    this.stats.batchMs += performance.now() - startedMs;
    for (const listener of this.commitListeners) listener();
    return outcome;
  }

  private async attempt(batch: Array<WriteOp<unknown>>, optimistic: boolean): Promise<Array<Settled<unknown>> | 'retry' | Failure> {
    const results: Array<Settled<unknown>> = [];
    const alone = batch.length === 1;
    const postgres = this.engine === 'postgres';
    try {
      return await this.db.getExecutor().provideConnection(async (connection) => {
        const send: RawExec = rawExec(this.rawStatements, connection);
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
          for (const op of batch) {
            await ctx.startOp();
            let ok = true;
            try {
              results.push({ ok: true, value: await op(tx) });
            } catch (error) {
              ok = false;
              results.push({ ok: false, error });
            }
            if (ctx.poisoned) throw new BatchAborted();
            const aborted = ok ? ctx.abortedBy() : null;
            if (aborted) {
              // Optimistic: run the batch again the plain way, where the write meets this again.
              if (optimistic) throw new BatchAborted();
              results[results.length - 1] = { ok: false, error: aborted.error };
              ok = false;
            }
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
        const wait = ctx.before(accessOf(query));
        if (wait) await wait;
        if (begin) await begin();
        try {
          return await connection.executeQuery(query);
        } catch (error) {
          ctx.failed(error);
          throw error;
        }
      },
      streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
    };
    const executor = this.db.getExecutor().withConnectionProvider({ provideConnection: (consumer) => consumer(hooked) });
    const props: KyselyProps = { config: { dialect: this.dialect }, driver: NO_DRIVER, executor, dialect: this.dialect };
    const tx = new Kysely<Database>(props);
    if (this.rawStatements) lendStatements(tx, this.rawStatements);
    bindBatch(tx, ctx);
    return tx;
  }
}

class Failure {
  constructor(readonly error: unknown) {}
}

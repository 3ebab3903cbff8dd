import assert from 'node:assert/strict';
import { Kysely, type DatabaseConnection, type Dialect, type Driver, type KyselyProps } from 'kysely';
import { ApiError } from '../errors.js';
import { BatchAborted, BatchContext, bindBatch, isWrite } from './batch.js';
import { lendStatements, rawExec, type SqliteStatements } from './raw.js';
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

interface Pending {
  op: WriteOp<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
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

export class WriteBatcher {
  private queue: Pending[] = [];
  private running = 0;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];
  readonly commitListeners: Array<() => void> = [];
  readonly stats: WriteStats = { commits: 0, writes: 0, failedCommits: 0, refusedQueueFull: 0, replays: 0, commitMs: 0, batchMs: 0 };

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly engine: Engine,
    private readonly batchMax: number,
    private readonly maxPending: number,
    private readonly concurrency: number,
    // SQLite: the writer's statements, lent to the ops of a batch for the compiled-once fast path.
    private readonly rawStatements: SqliteStatements | null = null,
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
    const props: KyselyProps = { config: { dialect: this.dialect }, driver: NO_DRIVER, executor, dialect: this.dialect };
    const tx = new Kysely<Database>(props);
    if (this.rawStatements) lendStatements(tx, this.rawStatements);
    bindBatch(tx, ctx);
    return tx;
  }
}

type Result = { ok: true; value: unknown } | { ok: false; error: unknown };
class Failure {
  constructor(readonly error: unknown) {}
}

import assert from 'node:assert/strict';

// Micro-batching, written once: items that arrive in one turn of the event loop are handed
// together to `run`, which answers each. The store's group commit (store/batcher.ts), the
// idempotency key lookups (plugins/idempotency.ts) and the webhook success recording
// (modules/webhooks/dispatcher.ts) are this one thing with different `run`s.

export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface MicroBatchOptions<I, R> {
  // Most items handed to one run (bounds what one run costs, and the latency it adds).
  maxItemsPerRun: number;
  // Runs at once (1: one after the other).
  maxConcurrentRuns: number;
  // Items accepted and not yet answered (queued or in a run); past it add() refuses with
  // onFull()'s error at once. Infinity: unbounded (callers bounded elsewhere).
  maxPending: number;
  onFull?: () => Error;
  // Items that must be run by themselves (a run of one); the queue's order is kept around them.
  alone?: (item: I) => boolean;
  // Answers the items, in their order (one answer per item), or throws to fail them all.
  run(items: I[]): Promise<Array<Settled<R>>>;
}

interface Queued<I, R> {
  item: I;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

export class MicroBatch<I, R> {
  private queue: Array<Queued<I, R>> = [];
  private running = 0;
  private pending = 0;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly options: MicroBatchOptions<I, R>) {
    assert(options.maxItemsPerRun >= 1 && options.maxConcurrentRuns >= 1 && options.maxPending >= 1, 'micro-batch limits must be at least 1');
  }

  // Items accepted and not yet answered (queued or in a run).
  get pendingItems(): number {
    return this.pending;
  }

  add(item: I): Promise<R> {
    if (this.pending >= this.options.maxPending) {
      return Promise.reject(this.options.onFull ? this.options.onFull() : new Error('micro-batch queue is full'));
    }
    this.pending++;
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  // Resolves once every item added so far is answered.
  drain(): Promise<void> {
    if (this.queue.length === 0 && this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate, not a microtask: everything that arrives in this turn of the event loop
    // gets in before the batch is cut, which is what makes the run shared.
    setImmediate(() => {
      this.scheduled = false;
      while (this.running < this.options.maxConcurrentRuns && this.queue.length > 0) {
        const batch = this.queue.splice(0, this.runLength());
        this.running++;
        // Not awaited: runBatch settles every item itself; finally only does the bookkeeping.
        void this.runBatch(batch).finally(() => {
          this.running--;
          this.pending -= batch.length;
          assert(this.pending >= 0, 'more items answered than accepted');
          if (this.queue.length > 0) this.schedule();
          else if (this.running === 0) for (const w of this.idleWaiters.splice(0)) w();
        });
      }
    });
  }

  // How many of the queue's first items the next run takes: up to the limit, and never an item
  // that must run alone together with another.
  private runLength(): number {
    const { alone, maxItemsPerRun } = this.options;
    if (!alone) return maxItemsPerRun;
    if (alone(this.queue[0].item)) return 1;
    const end = Math.min(maxItemsPerRun, this.queue.length);
    for (let i = 1; i < end; i++) if (alone(this.queue[i].item)) return i;
    return end;
  }

  private async runBatch(batch: Array<Queued<I, R>>): Promise<void> {
    let answers: Array<Settled<R>>;
    try {
      answers = await this.options.run(batch.map((q) => q.item));
    } catch (error) {
      for (const q of batch) q.reject(error);
      return;
    }
    assert.equal(answers.length, batch.length, 'a micro-batch run answers every item');
    batch.forEach((q, i) => {
      const a = answers[i];
      if (a.ok) q.resolve(a.value);
      else q.reject(a.error);
    });
  }
}

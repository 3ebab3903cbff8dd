import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../store/index.js';
import type { TSchema } from 'typebox';
import { claim, enqueue, reschedule, type JobRow } from './queue.js';
import { PayloadCheck } from './payloads.js';
import type { Clock, ClockTimer } from '../clock.js';

export type JobHandler = (job: JobRow, workerId: string) => Promise<void>;
// Runs the jobs of one type from one claim together (one transaction for all, say). If it
// throws, each job is run again alone by its JobHandler, with the usual retries.
export type BatchJobHandler = (jobs: JobRow[], workerId: string) => Promise<void>;

export interface WorkerOptions {
  pollMs: number;
  leaseMs: number;
  batchSize?: number; // jobs claimed per round
  concurrency?: number; // jobs running at once
  maxAttempts?: number; // for jobs whose handler throws: then parked, never deleted
  // In the API process: while `busy()` says requests are saturating the event loop, one round
  // (at most `concurrency` jobs) per `busyRoundMs`, however much work is waiting (jobs/load.ts).
  // While requests are in flight at all, at most `concurrencyWithRequests` jobs at once.
  yieldTo?: { busy(): boolean; readonly requestsInFlight: number };
  busyRoundMs?: number;
  // Jobs running at once while the process has requests in flight (in the API process). A batch
  // of card confirmations is one stretch of JavaScript on the event loop the requests share: 32
  // at once held requests up long enough to set their p99 (54 ms against the durable ceiling's 20
  // at half the maximum create rate, measured open loop); smaller rounds interleave with them,
  // and with no request in flight the worker goes back to `concurrency`.
  concurrencyWithRequests?: number;
  // Payload schemas of job types beyond the product's (jobs/payloads.ts), e.g. a test's.
  payloads?: Record<string, TSchema>;
}

const YIELD_STEP_MS = 10;
const PARKED_AT_MS = 8_000_000_000_000_000; // far future: kept for inspection, never run again
// A job whose handler throws runs again after 2^attempts seconds (2 s, 4 s, 8 s ...), at most an hour.
export const JOB_RETRY_BASE_MS = 1000;
export const JOB_RETRY_MAX_MS = 3_600_000;
// runDue() rounds before it gives up: a handler that keeps making due work is a bug, not a test.
const RUN_DUE_MAX_ROUNDS = 1_000;

// Runs jobs from the jobs table: in the server process by default, or alone as `cli worker`.
// Any number of workers can share one PostgreSQL; claims never overlap (SKIP LOCKED + lease).
export class Worker {
  readonly id = 'wrk_' + randomBytes(6).toString('hex');
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private kicked = false;
  // Waiting out a busy round: kicks and finished jobs do not cut it short (stop does).
  private yielding = false;
  private lastRoundMs = -Infinity;
  private busyWaits = 0;
  private active = new Set<Promise<void>>();
  private activeJobs = 0;
  private readonly recurring: Array<{ id: string; type: string; everyMs: number }> = [];
  private readonly payloads: PayloadCheck;
  // The store's: job times, leases, back-off and the poll timer all come from it (clock.ts).
  private readonly clock: Clock;

  constructor(
    private readonly store: Store,
    private readonly handlers: Record<string, JobHandler>,
    private readonly options: WorkerOptions,
    private readonly log: FastifyBaseLogger,
    private readonly batchHandlers: Record<string, BatchJobHandler> = {},
  ) {
    this.payloads = new PayloadCheck(options.payloads);
    this.clock = store.clock;
    // A handler without a payload schema is a mistake of the code, found when the worker is
    // made rather than when its first job fails.
    for (const type of [...Object.keys(handlers), ...Object.keys(batchHandlers)]) this.requireSchema(type);
  }

  private requireSchema(type: string): void {
    if (!this.payloads.has(type)) throw new Error(`Job type ${type} has a handler but no payload schema (jobs/payloads.ts).`);
  }

  // A job that re-schedules itself (purges, daily runs): one row with a fixed id, so any
  // number of workers starting together still make exactly one.
  every(type: string, everyMs: number, handler: JobHandler): void {
    this.requireSchema(type);
    const id = `job_recurring_${type}`;
    this.recurring.push({ id, type, everyMs });
    this.handlers[type] = async (job, workerId) => {
      await handler(job, workerId);
      await this.store.write((tx) => reschedule(tx, job, workerId, this.clock.nowMs() + everyMs, null));
    };
  }

  async start(): Promise<void> {
    if (this.running) return;
    await this.scheduleRecurring();
    this.running = true;
    this.loop = this.run();
  }

  private async scheduleRecurring(): Promise<void> {
    for (const r of this.recurring) {
      await this.store.write(async (tx) => {
        const exists = await tx.selectFrom('jobs').select('id').where('id', '=', r.id).executeTakeFirst();
        const nowMs = this.clock.nowMs();
        if (!exists) await enqueue(tx, nowMs, r.type, {}, nowMs + 1000, r.id);
      });
    }
  }

  // Runs every job due at the clock's now, and what those jobs make due now, to the end; returns
  // how many ran. Work they put off (a retry's back-off, the next round of a recurring job) waits
  // for the clock. What tests on a ManualClock call after advance(), instead of starting the
  // polling loop and waiting for it.
  async runDue(): Promise<number> {
    const batchSize = this.options.batchSize ?? 64;
    await this.scheduleRecurring();
    let ran = 0;
    for (let round = 0; round < RUN_DUE_MAX_ROUNDS; round++) {
      const jobs = await this.checkPayloads(await claim(this.store, this.id, batchSize, this.options.leaseMs));
      if (jobs.length === 0) return ran;
      await Promise.all(this.groups(jobs).map((group) => (group.length > 1 ? this.executeBatch(group) : this.execute(group[0]))));
      ran += jobs.length;
    }
    throw new Error(`runDue: jobs still due after ${RUN_DUE_MAX_ROUNDS} rounds (a job that keeps rescheduling itself at now?)`);
  }

  kick(): void {
    this.kicked = true;
    if (!this.yielding) this.wake?.();
  }

  // Waits (of at most YIELD_STEP_MS) because requests were saturating the process.
  get busyWaitCount(): number {
    return this.busyWaits;
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    await Promise.allSettled([...this.active]);
  }

  private async run(): Promise<void> {
    const batchSize = this.options.batchSize ?? 64;
    const concurrency = this.options.concurrency ?? 32;
    while (this.running) {
      this.kicked = false;
      let jobs: JobRow[] = [];
      const free = this.concurrencyNow(concurrency) - this.activeJobs;
      const yieldMs = free > 0 ? this.yieldMs() : 0;
      if (yieldMs > 0) {
        this.busyWaits++;
        this.yielding = true;
        // In short steps: when the load drops, the next round need not wait out the rest.
        await this.sleep(Math.min(yieldMs, YIELD_STEP_MS));
        this.yielding = false;
        continue;
      }
      if (free > 0) {
        this.lastRoundMs = this.clock.nowMs();
        try {
          jobs = await claim(this.store, this.id, Math.min(batchSize, free), this.options.leaseMs);
        } catch (error) {
          if (!this.running) break;
          this.log.error({ err: error }, 'job claim failed');
        }
      }
      jobs = await this.checkPayloads(jobs);
      for (const group of this.groups(jobs)) {
        this.activeJobs += group.length;
        const p = (group.length > 1 ? this.executeBatch(group) : this.execute(group[0])).finally(() => {
          this.activeJobs -= group.length;
          this.active.delete(p);
          if (!this.yielding) this.wake?.();
        });
        this.active.add(p);
      }
      if (!this.running) break;
      if (jobs.length === batchSize) continue;
      if (this.kicked) continue;
      await this.sleep(this.options.pollMs);
    }
  }

  private concurrencyNow(concurrency: number): number {
    const { yieldTo, concurrencyWithRequests } = this.options;
    if (!yieldTo || concurrencyWithRequests === undefined || yieldTo.requestsInFlight === 0) return concurrency;
    return Math.min(concurrency, concurrencyWithRequests);
  }

  // How long to wait before the next round: while the process is saturated with requests, a
  // round only every busyRoundMs.
  private yieldMs(): number {
    const busy = this.options.yieldTo;
    if (!busy) return 0;
    const waitMs = this.lastRoundMs + (this.options.busyRoundMs ?? 100) - this.clock.nowMs();
    return waitMs > 0 && busy.busy() ? waitMs : 0;
  }

  private async sleep(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer: ClockTimer = this.clock.setTimeout(resolve, ms);
      this.wake = () => {
        this.clock.clearTimeout(timer);
        resolve();
      };
    });
    this.wake = null;
  }

  // Each claimed row's payload against its type's schema, before any handler runs. A malformed
  // one fails at once, parked with the reason as its last_error (kept for inspection, never run
  // again: a retry would find the same payload); the others go on, and their handlers'
  // readPayload returns the value checked here (jobs/payloads.ts).
  private async checkPayloads(jobs: JobRow[]): Promise<JobRow[]> {
    const good: JobRow[] = [];
    const bad: Array<{ job: JobRow; reason: string }> = [];
    for (const job of jobs) {
      try {
        this.payloads.read(job);
        good.push(job);
      } catch (error) {
        bad.push({ job, reason: (error as Error).message });
      }
    }
    if (bad.length === 0) return good;
    for (const { job, reason } of bad) this.log.error({ jobId: job.id, jobType: job.type, attempts: job.attempts }, reason);
    try {
      await this.store.write(async (tx) => {
        for (const { job, reason } of bad) await reschedule(tx, job, this.id, PARKED_AT_MS, reason);
      });
    } catch (error) {
      // The lease runs out and the next claim checks (and parks) them again.
      this.log.error({ err: error }, 'could not park jobs with malformed payloads');
    }
    return good;
  }

  // Jobs whose type has a batch handler go together; every other job alone, and so does a job
  // running again (attempts > 1): its handler may have to find out what its last attempt did.
  private groups(jobs: JobRow[]): JobRow[][] {
    const out: JobRow[][] = [];
    const byType = new Map<string, JobRow[]>();
    for (const job of jobs) {
      if (!this.batchHandlers[job.type] || job.attempts > 1) {
        out.push([job]);
        continue;
      }
      const group = byType.get(job.type);
      if (group) group.push(job);
      else {
        const fresh = [job];
        byType.set(job.type, fresh);
        out.push(fresh);
      }
    }
    return out;
  }

  private async executeBatch(jobs: JobRow[]): Promise<void> {
    try {
      await this.batchHandlers[jobs[0].type](jobs, this.id);
    } catch (error) {
      this.log.warn({ err: error, jobType: jobs[0].type, jobs: jobs.length }, 'job batch failed; running its jobs one by one');
      for (const job of jobs) await this.execute(job);
    }
  }

  private async execute(job: JobRow): Promise<void> {
    const handler = this.handlers[job.type];
    try {
      if (!handler) throw new Error(`no handler for job type ${job.type}`);
      await handler(job, this.id);
    } catch (error) {
      const maxAttempts = this.options.maxAttempts ?? 20;
      const nowMs = this.clock.nowMs();
      const runAtMs = job.attempts >= maxAttempts ? PARKED_AT_MS : nowMs + Math.min(JOB_RETRY_BASE_MS * 2 ** job.attempts, JOB_RETRY_MAX_MS);
      this.log.error({ err: error, jobId: job.id, jobType: job.type, attempts: job.attempts }, 'job failed');
      try {
        await this.store.write((tx) => reschedule(tx, job, this.id, runAtMs, (error as Error).message ?? String(error)));
      } catch (e) {
        // The lease runs out and another round retries it: nothing is lost.
        this.log.error({ err: e, jobId: job.id }, 'could not reschedule job');
      }
    }
  }
}

import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../store/index.js';
import { claim, enqueue, reschedule, type JobRow } from './queue.js';

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
}

const PARKED_AT_MS = 8_000_000_000_000_000; // far future: kept for inspection, never run again

// Runs jobs from the jobs table: in the server process by default, or alone as `cli worker`.
// Any number of workers can share one PostgreSQL; claims never overlap (SKIP LOCKED + lease).
export class Worker {
  readonly id = 'wrk_' + randomBytes(6).toString('hex');
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private kicked = false;
  private active = new Set<Promise<void>>();
  private activeJobs = 0;
  private readonly recurring: Array<{ id: string; type: string; everyMs: number }> = [];

  constructor(
    private readonly store: Store,
    private readonly handlers: Record<string, JobHandler>,
    private readonly options: WorkerOptions,
    private readonly log: FastifyBaseLogger,
    private readonly batchHandlers: Record<string, BatchJobHandler> = {},
  ) {}

  // A job that re-schedules itself (purges, daily runs): one row with a fixed id, so any
  // number of workers starting together still make exactly one.
  every(type: string, everyMs: number, handler: JobHandler): void {
    const id = `job_recurring_${type}`;
    this.recurring.push({ id, type, everyMs });
    this.handlers[type] = async (job, workerId) => {
      await handler(job, workerId);
      await this.store.write((tx) => reschedule(tx, job, workerId, Date.now() + everyMs, null));
    };
  }

  async start(): Promise<void> {
    if (this.running) return;
    for (const r of this.recurring) {
      await this.store.write(async (tx) => {
        const exists = await tx.selectFrom('jobs').select('id').where('id', '=', r.id).executeTakeFirst();
        if (!exists) await enqueue(tx, r.type, {}, Date.now() + 1000, r.id);
      });
    }
    this.running = true;
    this.loop = this.run();
  }

  kick(): void {
    this.kicked = true;
    this.wake?.();
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
      const free = concurrency - this.activeJobs;
      if (free > 0) {
        try {
          jobs = await claim(this.store, this.id, Math.min(batchSize, free), this.options.leaseMs);
        } catch (error) {
          if (!this.running) break;
          this.log.error({ err: error }, 'job claim failed');
        }
      }
      for (const group of this.groups(jobs)) {
        this.activeJobs += group.length;
        const p = (group.length > 1 ? this.executeBatch(group) : this.execute(group[0])).finally(() => {
          this.activeJobs -= group.length;
          this.active.delete(p);
          this.wake?.();
        });
        this.active.add(p);
      }
      if (!this.running) break;
      if (jobs.length === batchSize) continue;
      if (this.kicked) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.options.pollMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  // Jobs whose type has a batch handler go together; every other job alone.
  private groups(jobs: JobRow[]): JobRow[][] {
    const out: JobRow[][] = [];
    const byType = new Map<string, JobRow[]>();
    for (const job of jobs) {
      if (!this.batchHandlers[job.type]) {
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
      const delayMs = job.attempts >= maxAttempts ? PARKED_AT_MS - Date.now() : Math.min(1000 * 2 ** job.attempts, 3_600_000);
      this.log.error({ err: error, jobId: job.id, jobType: job.type, attempts: job.attempts }, 'job failed');
      try {
        await this.store.write((tx) => reschedule(tx, job, this.id, Date.now() + delayMs, (error as Error).message ?? String(error)));
      } catch (e) {
        // The lease runs out and another round retries it: nothing is lost.
        this.log.error({ err: e, jobId: job.id }, 'could not reschedule job');
      }
    }
  }
}

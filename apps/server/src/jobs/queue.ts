import type { Store, Tx } from '../store/index.js';
import { newId } from '../domain/ids.js';
import { deleteWhere, defer } from '../store/index.js';

// The outbox: background work is a row written in the same transaction as the change that
// causes it, so it exists if and only if the change committed.
export interface JobRow {
  id: string;
  type: string;
  payload: string;
  run_at_ms: number;
  attempts: number;
}

// `nowMs`: the caller's Clock's now; the job runs at `runAtMs` (now by default).
export async function enqueue(tx: Tx, nowMs: number, type: string, payload: unknown, runAtMs: number = nowMs, id?: string): Promise<string> {
  const jobId = id ?? newId('job', nowMs);
  await defer(tx, 'jobs', [{
    id: jobId,
    type,
    payload: JSON.stringify(payload),
    run_at_ms: runAtMs,
    attempts: 0,
    locked_until_ms: null,
    locked_by: null,
    last_error: null,
    created_at: new Date(nowMs).toISOString(),
  }]);
  return jobId;
}

// Claims due jobs with a lease. On PostgreSQL, FOR UPDATE SKIP LOCKED lets many workers claim
// side by side without waiting on each other; SQLite has one writer at a time, so a plain
// UPDATE ... RETURNING in the write transaction is already exclusive. A worker that dies keeps
// its jobs only until the lease ends; then another claims them again (at least once).
export async function claim(store: Store, workerId: string, limit: number, leaseMs: number, nowMs = store.clock.nowMs()): Promise<JobRow[]> {
  return store.write(async (tx) => {
    const due = (qb: Tx) => qb.selectFrom('jobs').select('id')
      .where('run_at_ms', '<=', nowMs)
      .where((eb) => eb.or([eb('locked_until_ms', 'is', null), eb('locked_until_ms', '<', nowMs)]))
      .orderBy('run_at_ms')
      .limit(limit);
    const sub = store.engine === 'postgres' ? due(tx).forUpdate().skipLocked() : due(tx);
    const rows = await tx.updateTable('jobs')
      .set((eb) => ({ locked_by: workerId, locked_until_ms: nowMs + leaseMs, attempts: eb('attempts', '+', 1) }))
      .where('id', 'in', sub)
      .returning(['id', 'type', 'payload', 'run_at_ms', 'attempts'])
      .execute();
    return rows;
  });
}

// Done: delete in the transaction of the job's effects, guarded by the lease holder so a job
// whose lease was taken over is not completed twice.
export async function complete(tx: Tx, job: JobRow, workerId: string): Promise<boolean> {
  return (await deleteWhere(tx, 'jobs', { id: job.id, locked_by: workerId })) === 1;
}

// The same for several jobs of one worker, in one statement.
export async function completeAll(tx: Tx, jobIds: readonly string[], workerId: string): Promise<void> {
  if (jobIds.length > 0) await tx.deleteFrom('jobs').where('locked_by', '=', workerId).where('id', 'in', jobIds).execute();
}

export async function reschedule(tx: Tx, job: JobRow, workerId: string, runAtMs: number, error: string | null): Promise<void> {
  await tx.updateTable('jobs')
    .set({ run_at_ms: runAtMs, locked_by: null, locked_until_ms: null, last_error: error ? error.slice(0, 500) : null })
    .where('id', '=', job.id).where('locked_by', '=', workerId)
    .execute();
}

export async function nextDueMs(store: Store): Promise<number | null> {
  const row = await store.db.selectFrom('jobs').select((eb) => eb.fn.min('run_at_ms').as('next')).executeTakeFirst();
  return row?.next == null ? null : Number(row.next);
}

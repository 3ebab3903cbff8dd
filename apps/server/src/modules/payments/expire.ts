import type { JobRow } from '../../jobs/queue.js';
import { complete } from '../../jobs/queue.js';
import { readPayload } from '../../jobs/payloads.js';
import { JOB_EXPIRE, moveWithEvent, type PaymentDeps } from './common.js';
import { readPayment } from './repository.js';

// Worker: a Pix payment nobody paid expires with its BR Code. Load, persist the move (if still
// pending) and the job's completion in one transaction.
export async function expirePixJob(deps: PaymentDeps, job: JobRow, workerId: string): Promise<void> {
  const { paymentId } = readPayload(job, JOB_EXPIRE);
  await deps.store.write(async (tx) => {
    const row = await readPayment(tx, paymentId);
    if (row && row.status === 'pending') await moveWithEvent(tx, row, 'expired', deps.store.clock.nowMs());
    await complete(tx, job, workerId);
  });
}

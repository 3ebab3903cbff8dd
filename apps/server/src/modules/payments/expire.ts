import type { JobRow } from '../../jobs/queue.js';
import { complete } from '../../jobs/queue.js';
import { readPayload } from '../../jobs/payloads.js';
import { JOB_EXPIRE, moveWithEvent, retryLater, type PaymentDeps } from './common.js';
import { readPayment } from './repository.js';
import { expireAtProvider } from './live-pix.js';

// Worker: a Pix payment nobody paid expires with its BR Code. A live one's charge is removed at
// its PSP first and read once more (a payment made meanwhile approves it instead); a PSP that
// does not answer puts the expiry off (the job runs again later). Then load, persist the move
// (if still pending) and the job's completion in one transaction.
export async function expirePixJob(deps: PaymentDeps, job: JobRow, workerId: string): Promise<void> {
  const { paymentId } = readPayload(job, JOB_EXPIRE);
  const before = await readPayment(deps.store.db, paymentId);
  if (before?.status === 'pending' && before.connector_account_id && !(await expireAtProvider(deps, before))) {
    await deps.store.write((tx) => retryLater(deps, tx, job, workerId, 'the PSP did not answer the removal of the charge'));
    return;
  }
  await deps.store.write(async (tx) => {
    const row = await readPayment(tx, paymentId);
    if (row && row.status === 'pending') await moveWithEvent(tx, row, 'expired', deps.store.clock.nowMs());
    await complete(tx, job, workerId);
  });
}

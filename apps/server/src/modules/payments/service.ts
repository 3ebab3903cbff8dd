import type { Owner } from '../events/service.js';
import type { PaymentDeps } from './common.js';
import { listPayments as listPaymentRows, readPaymentOutsideWrites, toPayment } from './repository.js';
import type { ListPaymentsQuery, Payment } from './schemas.js';

// The payments module's operations, one file each (validate, load, persist, call the provider,
// persist): create.ts, confirm.ts (the confirmation job), approve.ts (approve or void),
// cancel.ts, expire.ts. Their SQL is in repository.ts, where a payment is read one way.
export { JOB_CONFIRM, JOB_EXPIRE, moveWithEvent, type PaymentDeps } from './common.js';
export { cardOutcome, checkPaymentShape, createPayment, insertPayment, maskCustomer, maskDocument, preparePayment, type PreparedPayment } from './create.js';
export { confirmCardJob, confirmCardJobs } from './confirm.js';
export { sandboxPayPix } from './approve.js';
export { cancelPayment } from './cancel.js';
export { expirePixJob } from './expire.js';

export async function getPayment(deps: PaymentDeps, owner: Owner, id: string): Promise<Payment> {
  return toPayment(await readPaymentOutsideWrites(deps.store, owner, id));
}

export async function listPayments(deps: PaymentDeps, owner: Owner, query: ListPaymentsQuery) {
  return listPaymentRows(deps.store.db, owner, query);
}

import type { RequestContext } from '../../plugins/idempotency.js';
import { moveWithEvent, type PaymentDeps } from './common.js';
import { loadPayment } from './repository.js';
import type { Payment } from './schemas.js';

// Cancel: load (the owner's payment), persist the move and its event. The state table refuses
// a payment past pending; the guarded UPDATE refuses one that moved meanwhile. A confirmation
// whose approval arrives after this voids it (approve.ts voidUnwanted).
export async function cancelPayment(_deps: PaymentDeps, ctx: RequestContext, id: string): Promise<Payment> {
  return ctx.write(async (tx) => moveWithEvent(tx, await loadPayment(tx, ctx, id), 'canceled', ctx.clock.nowMs()));
}

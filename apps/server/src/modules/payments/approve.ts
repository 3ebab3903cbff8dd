import { ApiError, invalidState } from '../../errors.js';
import type { RequestContext } from '../../plugins/idempotency.js';
import type { Engine, Tx } from '../../store/index.js';
import { computeFee, type PaymentMethod } from '../../domain/fees.js';
import type { SplitRule } from '../../domain/split.js';
import { complete, completeAll, type JobRow } from '../../jobs/queue.js';
import type { AccountSettings } from '../accounts/settings.js';
import { activeRules, createSaleReceivables } from '../receivables/service.js';
import { emitEvents } from '../events/service.js';
import { completeCheckoutSession } from '../checkout/repository.js';
import { isApproval, moveWithEvent, providerKey, retryLater, type Authorization, type PaymentDeps } from './common.js';
import { approvePending, checkTransition, loadPayment, readAccountSettings, toPayment, transition, type PendingApproval, type PaymentRow } from './repository.js';
import type { Payment } from './schemas.js';
import { readPayment } from './repository.js';
import { voidAtAcquirer } from './live-card.js';

// Approve or void: the persistence of an approval (the card provider's, or the payer's for a
// sandbox Pix), and the void of an approval the payment can no longer take.

// What approvals in one transaction share: each account's settings and each owner's split rules
// are read once.
export interface ApprovalMemo {
  settings: Map<string, AccountSettings>;
  rules: Map<string, SplitRule[]>;
}

// The approvals and job completions of a batch of confirmations, written together at its end:
// one guarded multi-row UPDATE and one DELETE instead of a round trip each (PostgreSQL).
export class ApprovalBatch {
  private readonly approvals: PendingApproval[] = [];
  private readonly jobIds: string[] = [];
  private readonly nowIso: string;

  constructor(nowMs: number) {
    this.nowIso = new Date(nowMs).toISOString();
  }

  approve(row: PaymentRow, changes: Partial<PaymentRow>): PaymentRow {
    checkTransition(row, 'approved');
    this.approvals.push({ id: row.id, changes });
    return { ...row, ...changes, status: 'approved', updated_at: this.nowIso };
  }

  complete(job: JobRow): void {
    this.jobIds.push(job.id);
  }

  async write(tx: Tx, engine: Engine, workerId: string): Promise<void> {
    const updated = await approvePending(tx, engine, this.approvals, this.nowIso);
    // Guarded by the status read in this transaction: a payment that moved meanwhile fails the
    // whole batch, whose jobs then run one by one.
    if (updated !== this.approvals.length) throw invalidState('A payment changed while its confirmation was being saved.');
    await completeAll(tx, this.jobIds, workerId);
  }
}

// Approval is one transaction: the status move, its fee and net, the receivables of the split
// and their events. The guarded UPDATE in transition() makes a second approval impossible, and
// the receivables' unique (source_id, line) key would refuse a second set anyway.
// `nowMs` from the caller's Clock: the approval's time, and the D+N of its receivables counts from it.
export async function approve(tx: Tx, row: PaymentRow, changes: Partial<PaymentRow>, nowMs: number, memo?: ApprovalMemo, later?: ApprovalBatch): Promise<Payment> {
  // Manual capture: the authorization is held (requires_capture), and nothing is owed to the
  // merchant (no fee, no receivable) until the acquirer confirms the capture asked later.
  if (row.capture_method === 'manual' && changes.capture_status !== 'succeeded') {
    if (row.status === 'requires_capture') throw new Error(`payment ${row.id} is approved only by its capture`);
    const held = await moveWithEvent(tx, row, 'requires_capture', nowMs, changes);
    // The buyer's part is done: a checkout session completes with the authorization (as
    // Stripe's with manual capture); the merchant captures later.
    if (row.checkout_session_id) await completeCheckoutSession(tx, row.checkout_session_id, row.id, nowMs);
    return held;
  }
  let settings = memo?.settings.get(row.account_id);
  if (!settings) {
    settings = await readAccountSettings(tx, row.account_id);
    memo?.settings.set(row.account_id, settings);
  }
  const method = row.method as PaymentMethod;
  const { feeCents, netCents } = computeFee(row.amount, method, settings.fees);
  const owner = { accountId: row.account_id, livemode: row.livemode === 1 };
  let rules: SplitRule[] | undefined;
  if (memo) {
    const ownerKey = `${row.account_id}:${row.livemode}`;
    rules = memo.rules.get(ownerKey);
    if (!rules) {
      rules = await activeRules(tx, owner);
      memo.rules.set(ownerKey, rules);
    }
  }
  const moved = { ...changes, fee_amount: feeCents, net_amount: netCents };
  const approved = toPayment(later ? later.approve(row, moved) : await transition(tx, row, 'approved', moved, new Date(nowMs).toISOString()));
  // A checkout session completes with its payment's approval, in this same transaction.
  if (row.checkout_session_id) await completeCheckoutSession(tx, row.checkout_session_id, approved.id, nowMs);
  const receivables = await createSaleReceivables(tx, { paymentId: row.id, ...owner, amountCents: row.amount, netCents, method }, settings, nowMs, rules);
  await emitEvents(tx, owner, [
    { type: 'payment.approved', object: approved },
    ...receivables.map((r) => ({ type: 'receivable.created' as const, object: r })),
  ], nowMs);
  return approved;
}

// The sandbox payer pays a Pix: validate (sandbox, a pix payment, not expired), load, persist
// the approval.
export async function sandboxPayPix(_deps: PaymentDeps, ctx: RequestContext, id: string): Promise<Payment> {
  if (ctx.livemode) throw new ApiError('PERMISSION_DENIED', 'The payer simulator only exists in the sandbox; use a sk_test_ key.');
  return ctx.write(async (tx) => {
    const row = await loadPayment(tx, ctx, id);
    if (row.method !== 'pix') throw invalidState('Only pix payments are paid through the simulator; card payments are confirmed by the provider.');
    const nowMs = ctx.clock.nowMs();
    if (row.status === 'pending' && row.expires_at && Date.parse(row.expires_at) <= nowMs) {
      throw new ApiError('INVALID_STATE', 'This Pix BR Code has expired.');
    }
    return approve(tx, row, {}, nowMs);
  });
}

// An approval the payment could not take (canceled while the provider was approving, or before
// the retry of a call whose answer was lost): give it back, then let the job go, in that order.
// If the void fails, the job stays and runs again later (backoff), and that attempt voids it.
export async function voidUnwanted(deps: PaymentDeps, job: JobRow, workerId: string, paymentId: string, auth: Authorization, honoured: boolean): Promise<void> {
  if (honoured || !isApproval(auth)) return;
  try {
    const row = await readPayment(deps.store.db, paymentId);
    if (row?.connector_account_id) await voidAtAcquirer(deps, paymentId, auth.outcome.chargeId);
    else await deps.provider.void({ idempotencyKey: providerKey(paymentId, 'void'), chargeId: auth.outcome.chargeId });
  } catch (error) {
    await deps.store.write((tx) => retryLater(deps, tx, job, workerId, `void failed: ${error instanceof Error ? error.message : String(error)}`));
    return;
  }
  await deps.store.write((tx) => complete(tx, job, workerId));
}

import { createHash } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Engine, Store, Tx } from '../../store/index.js';
import type { RefundsTable } from '../../store/schema.js';
import type { RequestContext } from '../../plugins/idempotency.js';
import { ApiError, notFound } from '../../errors.js';
import { newId } from '../../domain/ids.js';
import { prorateReduction } from '../../domain/split.js';
import { prorateRefund } from '../../domain/refund.js';
import { aPayment, refundMove, type PaymentStatus } from '../../domain/states.js';
import { paginate } from '../../http/pagination.js';
import { localDate } from '../accounts/settings.js';
import { emitEvents, recordEvent, type Owner } from '../events/service.js';
import { enqueue, complete, reschedule, type JobRow } from '../../jobs/queue.js';
import { readPayload, type JobType } from '../../jobs/payloads.js';
import { ProviderRejected, ProviderUnavailable } from '../../providers/port.js';
import type { PaymentDeps } from '../payments/common.js';
import { finishRefund, REFUND_POLL_INTERVAL_MS, refundAtProvider } from '../payments/live-pix.js';
import { refundAtAcquirer } from '../payments/live-card.js';
import { findPayment, readPayment, toPayment, transition } from '../payments/repository.js';
import { toReceivable, type ReceivableRow } from '../receivables/service.js';
import { blocksRefund, recordMedDispute } from '../disputes/service.js';
import type { CreateRefundBody, ListRefundsQuery, Refund } from './schemas.js';

export const JOB_REFUND = 'refund.process' satisfies JobType;

const PIX_NATURE = { requested: 'ORIGINAL', med_fraud: 'MED_FRAUDE', med_operational: 'MED_OPERACIONAL' } as const;
const PIX_RETURN_STATUS = { pending: 'EM_PROCESSAMENTO', succeeded: 'DEVOLVIDO', failed: 'NAO_REALIZADO' } as const;
type RefundKind = keyof typeof PIX_NATURE;

// A refund is a devolução at a PSP when the bank's return made it (MED), or when its id at the
// provider is the devolução id derived from its own id (providers/pix-api/money.ts, returnIdOf):
// the sandbox's refund ids are never of that form.
function pixReturnOf(row: Selectable<RefundsTable>, kind: RefundKind): Refund['pixReturn'] {
  const id = row.provider_refund_id;
  if (!id) return null;
  if (kind === 'requested' && id !== 'rf' + row.id.replace(/^ref_/, '')) return null;
  return { id, rtrId: row.provider_rtr_id ?? null, nature: PIX_NATURE[kind], status: PIX_RETURN_STATUS[row.status] };
}

export function toRefund(row: Selectable<RefundsTable>): Refund {
  const kind: RefundKind = row.kind in PIX_NATURE ? (row.kind as RefundKind) : 'requested';
  return {
    id: row.id,
    object: 'refund',
    paymentId: row.payment_id,
    amount: row.amount,
    feeRefunded: row.fee_refunded,
    netAmount: row.net_amount,
    status: row.status,
    reason: row.reason,
    kind,
    pixReturn: pixReturnOf(row, kind),
    metadata: row.metadata ? JSON.parse(row.metadata) : {},
    createdAt: row.created_at,
    livemode: row.livemode === 1,
  };
}

function assert(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(`invariant broken: ${message}`);
}

// One transaction: the refund, the payment's new state, and the payees' receivables reduced in
// proportion to what each still holds from this sale (floored, the merchant takes the
// remainder). A pending receivable shrinks (to 0: canceled); a settled one gets a negative
// receivable that the payee's next settlement deducts. The provider call happens after, from
// the jobs table, with a key derived from the refund id.
// `kind`: a return the payer's bank started (Pix MED) is recorded by the same rules, already
// done at the PSP (its job only marks it succeeded); `nowMs` from the caller's Clock when given.
export async function createRefund(ctx: RequestContext, body: CreateRefundBody, deps: { engine: Engine; kickWorker: () => void; kind?: 'requested' | 'med_fraud' | 'med_operational'; providerRefundId?: string; providerRtrId?: string | null; nowMs?: number }): Promise<Refund> {
  const refund = await ctx.write(async (tx) => {
    // Locked on PostgreSQL, where another batch may be refunding the same payment at this moment:
    // everything below is computed from this row (what is left to refund, what each receivable
    // keeps), and the status guard of the UPDATE cannot see a refund that left the status as it
    // was (partially_refunded). The second refund waits here and reads what the first wrote.
    const payment = await findPayment(tx, ctx, body.paymentId, { lockOn: deps.engine });
    if (!payment) throw notFound('payment', 'paymentId');
    if (payment.status !== 'approved' && payment.status !== 'partially_refunded') {
      throw new ApiError('INVALID_STATE', `${aPayment(payment.status as PaymentStatus)} cannot be refunded; only approved payments can.`);
    }
    // A chargeback not won: the money is going back to the card holder through the dispute.
    if (await blocksRefund(tx, payment.id)) {
      throw new ApiError('INVALID_STATE', 'A payment with a chargeback that is not won cannot be refunded (GET /v1/disputes?paymentId=...).');
    }
    const refundableCents = payment.amount - payment.amount_refunded;
    const amountCents = body.amount ?? refundableCents;
    if (amountCents > refundableCents) {
      throw new ApiError('UNPROCESSABLE', `The refund exceeds what can still be refunded (${refundableCents} centavos).`, { param: 'amount' });
    }
    const previous = await tx.selectFrom('refunds').select([(eb) => eb.fn.sum<number>('amount').as('amount'), (eb) => eb.fn.sum<number>('fee_refunded').as('fee'), (eb) => eb.fn.sum<number>('net_amount').as('net')])
      .where('payment_id', '=', payment.id).executeTakeFirstOrThrow();
    const feeCents = payment.fee_amount ?? 0;
    const netCents = payment.net_amount ?? 0;
    const refundedBeforeCents = Number(previous.amount ?? 0);
    const feeReturnedBeforeCents = Number(previous.fee ?? 0);
    assert(refundedBeforeCents === payment.amount_refunded, "a payment's refunded amount is the sum of its refunds");
    const completes = amountCents === refundableCents;

    const nowMs = deps.nowMs ?? ctx.clock.nowMs();
    const nowIso = new Date(nowMs).toISOString();
    const id = newId('refund', nowMs);
    const owner: Owner = { accountId: payment.account_id, livemode: payment.livemode === 1 };

    // Read under lock, in id order (PostgreSQL): a settlement run taking these receivables at
    // this moment either finished (we read them settled) or waits for us (it takes them reduced).
    // Every writer locks receivables in id order, so the two never wait on each other in a cycle.
    const receivables = await saleReceivablesForUpdate(tx, payment.id, deps.engine);
    const held = holdings(receivables, payment.account_id);
    const heldTotal = held.reduce((s, h) => s + h.amount, 0);
    assert(heldTotal === netCents - Number(previous.net ?? 0), "a sale's receivables sum to its net value minus refunds");
    // The fee and net parts, and each payee's part, prorated cumulatively (domain/refund.ts).
    const sale = { saleAmountCents: payment.amount, saleFeeCents: feeCents, refundedBeforeCents, feeReturnedBeforeCents, refundCents: amountCents };
    let feeRefundedCents: number;
    let netReductionCents: number;
    let reductions: number[];
    if (held.every((h) => h.shareCents !== null)) {
      const split = prorateRefund({ ...sale, payees: held.map((h) => ({ shareCents: h.shareCents as number, takenBeforeCents: (h.shareCents as number) - h.amount })) });
      ({ feeCents: feeRefundedCents, netCents: netReductionCents, payeeCents: reductions } = split);
    } else {
      // A sale approved before 0009 whose receivables' original amounts could not be recovered
      // (their events were purged): the fee and net parts by the same cumulative rule, the net
      // part over what each payee still holds.
      const split = prorateRefund({ ...sale, payees: [{ shareCents: netCents, takenBeforeCents: netCents - heldTotal }] });
      ({ feeCents: feeRefundedCents, netCents: netReductionCents } = split);
      reductions = heldTotal === 0 ? held.map(() => 0) : prorateReduction(held.map((h) => h.amount), heldTotal, netReductionCents);
    }
    assert(feeRefundedCents >= 0 && netReductionCents >= 0 && feeRefundedCents + netReductionCents === amountCents, 'refund split into fee and net is non-negative and adds up');
    assert(reductions.reduce((s, r) => s + r, 0) === netReductionCents, 'reductions sum to the net refund');
    if (completes) assert(feeReturnedBeforeCents + feeRefundedCents === feeCents && netReductionCents === heldTotal, 'the refund that completes a sale returns exactly what is left of its fee and net');

    const updatedEvents: ReceivableRow[] = [];
    const adjustments: ReceivableRow[] = [];
    held.forEach((h, i) => {
      const cut = reductions[i];
      if (cut === 0) return;
      if (h.pending && h.pending.amount >= cut) {
        const amount = h.pending.amount - cut;
        updatedEvents.push({ ...h.pending, amount, status: amount === 0 ? 'canceled' : 'pending', updated_at: nowIso });
      } else {
        adjustments.push({
          id: newId('receivable', nowMs), account_id: payment.account_id, livemode: payment.livemode, payment_id: payment.id,
          source_id: id, line: i, payee_type: h.payeeType, payee_id: h.payeeId, split_rule_id: h.splitRuleId,
          amount: -cut, original_amount: -cut, status: 'pending', available_on: localDate(nowMs), settlement_id: null, refund_id: id, dispute_id: null,
          created_at: nowIso, updated_at: nowIso,
        });
      }
    });
    for (const r of updatedEvents) {
      const res = await tx.updateTable('receivables').set({ amount: r.amount, status: r.status, updated_at: nowIso })
        .where('id', '=', r.id).where('status', '=', 'pending').executeTakeFirst();
      assert(Number(res.numUpdatedRows) === 1, 'a pending receivable is reduced once');
    }
    if (adjustments.length > 0) await tx.insertInto('receivables').values(adjustments).execute();

    const row: Selectable<RefundsTable> = {
      id, account_id: payment.account_id, livemode: payment.livemode, payment_id: payment.id, amount: amountCents,
      fee_refunded: feeRefundedCents, net_amount: netReductionCents, status: 'pending', reason: body.reason ?? null,
      metadata: body.metadata ? JSON.stringify(body.metadata) : null, provider_refund_id: deps.providerRefundId ?? null, provider_rtr_id: deps.providerRtrId ?? null, created_at: nowIso, updated_at: nowIso,
      kind: deps.kind ?? 'requested',
    };
    await tx.insertInto('refunds').values(row).execute();
    const moved = await transition(tx, payment, completes ? 'refunded' : 'partially_refunded', { amount_refunded: payment.amount_refunded + amountCents }, nowIso);
    const resource = toRefund(row);
    await emitEvents(tx, owner, [
      { type: 'refund.created', object: resource },
      { type: completes ? 'payment.refunded' : 'payment.partially_refunded', object: toPayment(moved) },
      ...updatedEvents.map((r) => ({ type: 'receivable.updated' as const, object: toReceivable(r) })),
      ...adjustments.map((r) => ({ type: 'receivable.created' as const, object: toReceivable(r) })),
    ], nowMs);
    // A return the payer's bank started (MED) is a dispute too, lost: the refund above took the
    // money from the payees (modules/disputes/service.ts).
    if (row.kind !== 'requested') await recordMedDispute(tx, payment, { refundId: id, returnId: deps.providerRefundId ?? id, amountCents, nature: PIX_NATURE[row.kind as RefundKind] }, nowMs);
    await enqueue(tx, nowMs, JOB_REFUND, { refundId: id });
    return resource;
    // Its own transaction: it locks the sale's receivables in id order (WriteOptions).
  }, { ownTransaction: true });
  deps.kickWorker();
  return refund;
}

interface Holding {
  payeeType: 'merchant' | 'recipient';
  payeeId: string;
  splitRuleId: string | null;
  amount: number; // what this payee still holds from the sale
  // Its share of the sale's net value, as the sale made its receivables; null for a sale
  // approved before migration 0009 whose original amounts could not be recovered.
  shareCents: number | null;
  pending: ReceivableRow | null; // its sale receivable, while not settled
}

// What each payee holds from a sale and what the sale gave it, merchant first (it takes the
// rounding remainder; present even when its share was 0 and the sale made it no receivable).
function holdings(rows: ReceivableRow[], merchantId: string): Holding[] {
  const byPayee = new Map<string, Holding>();
  byPayee.set(`merchant:${merchantId}`, { payeeType: 'merchant', payeeId: merchantId, splitRuleId: null, amount: 0, shareCents: 0, pending: null });
  for (const r of rows) {
    const k = `${r.payee_type}:${r.payee_id}`;
    let h = byPayee.get(k);
    if (!h) {
      h = { payeeType: r.payee_type, payeeId: r.payee_id, splitRuleId: r.split_rule_id, amount: 0, shareCents: 0, pending: null };
      byPayee.set(k, h);
    }
    h.amount += r.amount;
    if (r.source_id === r.payment_id) {
      h.splitRuleId = r.split_rule_id;
      h.shareCents = h.shareCents === null || r.original_amount === null ? null : h.shareCents + r.original_amount;
      if (r.status === 'pending') h.pending = r;
    }
  }
  const list = [...byPayee.values()];
  list.sort((a, b) => (a.payeeType === 'merchant' ? -1 : b.payeeType === 'merchant' ? 1 : 0));
  assert(list[0].payeeType === 'merchant' && list.filter((h) => h.payeeType === 'merchant').length === 1, "a sale's receivables are the merchant's and its recipients'");
  return list;
}

// A sale's receivables, locked on PostgreSQL in id order, the order in which a settlement run
// locks a payee's receivables too (modules/settlements/service.ts). SQLite's write transaction
// is the whole database's: nothing moves under it.
async function saleReceivablesForUpdate(tx: Tx, paymentId: string, engine: Engine): Promise<ReceivableRow[]> {
  const q = tx.selectFrom('receivables').selectAll().where('payment_id', '=', paymentId).orderBy('id');
  return engine === 'postgres' ? q.forUpdate().execute() : q.execute();
}

export async function getRefund(store: Store, owner: Owner, id: string): Promise<Refund> {
  const row = await store.db.selectFrom('refunds').selectAll()
    .where('id', '=', id).where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0).executeTakeFirst();
  if (!row) throw notFound('refund', 'id');
  return toRefund(row);
}

export async function listRefunds(store: Store, owner: Owner, q: ListRefundsQuery) {
  const scope = store.db.selectFrom('refunds').selectAll().where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0);
  let qb = scope;
  if (q.paymentId) qb = qb.where('payment_id', '=', q.paymentId);
  if (q.status) qb = qb.where('status', '=', q.status);
  return paginate(qb, q, toRefund, scope);
}

export async function refundJob(deps: PaymentDeps & { retryBaseMs: number }, job: JobRow, workerId: string): Promise<void> {
  const { store, provider } = deps;
  const { refundId } = readPayload(job, JOB_REFUND);
  const refund = await store.db.selectFrom('refunds').selectAll().where('id', '=', refundId).executeTakeFirst();
  if (!refund || refund.status !== 'pending') {
    await store.write((tx) => complete(tx, job, workerId));
    return;
  }
  const payment = await readPayment(store.db, refund.payment_id);
  assert(payment !== undefined, "a refund's payment exists (foreign key)");
  const owner = { accountId: refund.account_id, livemode: refund.livemode === 1 };
  if (payment.connector_account_id && payment.method === 'credit_card') {
    // A live card payment at its acquirer: the refund is only received there; its REFUND (or
    // REFUND_FAILED) notification finishes it (live-card.ts), so the job ends here.
    let step;
    try {
      step = await refundAtAcquirer(deps, refund.id, payment, refund.amount);
    } catch (error) {
      if (!(error instanceof ProviderUnavailable)) throw error;
      await store.write((tx) => reschedule(tx, job, workerId, deps.clock.nowMs() + Math.min(deps.retryBaseMs * 2 ** job.attempts, 3_600_000), error.message));
      return;
    }
    if (step === 'failed') await finishRefund(deps, refund.id, 'failed');
    await store.write((tx) => complete(tx, job, workerId));
    return;
  }
  if (payment.connector_account_id) {
    // A live Pix at its PSP: a devolução, which may stay processing (read again later).
    let step;
    try {
      step = await refundAtProvider(deps, refund.id, payment, refund.amount, refund.kind);
    } catch (error) {
      if (!(error instanceof ProviderUnavailable)) throw error;
      await store.write((tx) => reschedule(tx, job, workerId, deps.clock.nowMs() + Math.min(deps.retryBaseMs * 2 ** job.attempts, 3_600_000), error.message));
      return;
    }
    if (step === 'processing') {
      await store.write((tx) => reschedule(tx, job, workerId, deps.clock.nowMs() + REFUND_POLL_INTERVAL_MS, 'devolução processing at the PSP'));
      return;
    }
    await finishRefund(deps, refund.id, step);
    await store.write((tx) => complete(tx, job, workerId));
    return;
  }
  let outcome: { status: 'succeeded'; providerId: string } | { status: 'failed' };
  try {
    const r = await provider.refund({ idempotencyKey: createHash('sha256').update(`${refund.id}:refund`).digest('hex').slice(0, 40), chargeId: payment.provider_charge_id, amountCents: refund.amount, livemode: owner.livemode });
    outcome = { status: 'succeeded', providerId: r.refundId };
  } catch (error) {
    if (error instanceof ProviderUnavailable) {
      await store.write((tx) => reschedule(tx, job, workerId, store.clock.nowMs() + Math.min(deps.retryBaseMs * 2 ** job.attempts, 3_600_000), error.message));
      return;
    }
    if (!(error instanceof ProviderRejected)) throw error;
    outcome = { status: 'failed' };
  }
  await store.write(async (tx: Tx) => {
    const nowMs = store.clock.nowMs();
    const nowIso = new Date(nowMs).toISOString();
    const move = refundMove('pending', outcome.status);
    const changes = outcome.status === 'succeeded' ? { status: move.to, provider_refund_id: outcome.providerId, updated_at: nowIso } : { status: move.to, updated_at: nowIso };
    const r = await tx.updateTable('refunds').set(changes).where('id', '=', refund.id).where('status', '=', move.from).executeTakeFirst();
    if (Number(r.numUpdatedRows) === 1) await recordEvent(tx, owner, `refund.${outcome.status}`, toRefund({ ...refund, ...changes }), nowMs);
    await complete(tx, job, workerId);
  });
}

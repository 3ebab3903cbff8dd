import type { Selectable } from 'kysely';
import type { Engine, Store, Tx } from '../../store/index.js';
import type { DisputesTable } from '../../store/schema.js';
import { notFound } from '../../errors.js';
import { newId } from '../../domain/ids.js';
import { prorateDispute } from '../../domain/dispute.js';
import { disputeMove, IllegalMove, type DisputeStatus } from '../../domain/states.js';
import { paginate } from '../../http/pagination.js';
import { localDate } from '../accounts/settings.js';
import { emitEvents, type Owner } from '../events/service.js';
import type { EventType } from '../events/types.js';
import { readPayment, type PaymentRow } from '../payments/repository.js';
import { toReceivable, type ReceivableRow } from '../receivables/service.js';
import type { Dispute, ListDisputesQuery } from './schemas.js';

// Disputes (issue 27). A dispute is made and moved by its source, never through the API:
// - a card chargeback by Adyen's dispute notifications, applied by the payment's card sync
//   (payments/live-card.ts) through applyDisputeStage below;
// - a Pix MED return by the refund that records it (refunds/service.ts), through
//   recordMedDispute.
//
// Money (docs/split-and-settlement.md, "Disputes"). When a card dispute becomes lost, the
// disputed amount is taken from the sale's payees in proportion to what the sale gave each
// (domain/dispute.ts): one negative receivable per payee, available today, in the same
// transaction as the move; when it becomes won again, each payee gets back exactly what it gave
// (positive receivables, the debit's own figures negated). `debited_amount` says which is the
// case, so a repeat never debits twice, and `money_moves` numbers the receivables' lines so the
// unique (source_id, line) would refuse a second one anyway. A Pix MED return is a refund (issue
// 25): the refund already took the money from the payees, so its dispute moves none.

export type DisputeRow = Selectable<DisputesTable>;

export function toDispute(row: DisputeRow): Dispute {
  return {
    id: row.id,
    object: 'dispute',
    paymentId: row.payment_id,
    kind: row.kind,
    status: row.status,
    amount: Number(row.amount),
    currency: 'BRL',
    amountDebited: Number(row.debited_amount),
    reason: row.reason,
    reasonCode: row.reason_code,
    respondBy: row.respond_by,
    refundId: row.refund_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    closedAt: row.closed_at,
    livemode: row.livemode === 1,
  };
}

function assert(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(`invariant broken: ${message}`);
}

const ownerOf = (row: { account_id: string; livemode: number }): Owner => ({ accountId: row.account_id, livemode: row.livemode === 1 });
const closes = (s: DisputeStatus) => s === 'won' || s === 'lost';

export async function getDispute(store: Store, owner: Owner, id: string): Promise<Dispute> {
  const row = await store.db.selectFrom('disputes').selectAll()
    .where('id', '=', id).where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0).executeTakeFirst();
  if (!row) throw notFound('dispute', 'id');
  return toDispute(row);
}

export async function listDisputes(store: Store, owner: Owner, q: ListDisputesQuery) {
  const scope = store.db.selectFrom('disputes').selectAll().where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0);
  let qb = scope;
  if (q.paymentId) qb = qb.where('payment_id', '=', q.paymentId);
  if (q.status) qb = qb.where('status', '=', q.status);
  if (q.kind) qb = qb.where('kind', '=', q.kind);
  return paginate(qb, q, toDispute, scope);
}

// A card payment with a chargeback that is not won cannot be refunded (the acquirer refuses it
// too): the money is already on its way back to the card holder through the dispute.
export async function blocksRefund(tx: Tx, paymentId: string): Promise<boolean> {
  const open = await tx.selectFrom('disputes').select('id').where('payment_id', '=', paymentId).where('kind', '=', 'card_chargeback').where('status', '<>', 'won').executeTakeFirst();
  return open !== undefined;
}

// ---------------------------------------------------------------------------------------------
// Money.

// What the sale gave each payee, merchant first (present even when its share was 0), then the
// recipients in the split's order: the shares a dispute is prorated on.
async function saleShares(tx: Tx, payment: PaymentRow): Promise<Array<{ payeeType: 'merchant' | 'recipient'; payeeId: string; splitRuleId: string | null; shareCents: number }>> {
  const rows = await tx.selectFrom('receivables').selectAll().where('payment_id', '=', payment.id).whereRef('source_id', '=', 'payment_id').orderBy('line').execute();
  const merchant = { payeeType: 'merchant' as const, payeeId: payment.account_id, splitRuleId: null as string | null, shareCents: 0 };
  const recipients: Array<typeof merchant | { payeeType: 'recipient'; payeeId: string; splitRuleId: string | null; shareCents: number }> = [];
  for (const r of rows) {
    // Sale rows from before migration 0009 without their original amount: what they hold now.
    const share = Number(r.original_amount ?? r.amount);
    if (r.payee_type === 'merchant') {
      merchant.shareCents += share;
      merchant.splitRuleId = r.split_rule_id;
    } else {
      recipients.push({ payeeType: 'recipient', payeeId: r.payee_id, splitRuleId: r.split_rule_id, shareCents: share });
    }
  }
  return [merchant, ...recipients];
}

// Debits the payees (lost) or gives back what they gave (won), in the caller's transaction.
async function moveMoney(tx: Tx, payment: PaymentRow, dispute: DisputeRow, direction: 'debit' | 'give_back', nowMs: number): Promise<{ rows: ReceivableRow[]; debitedCents: number }> {
  const nowIso = new Date(nowMs).toISOString();
  let parts: Array<{ payeeType: 'merchant' | 'recipient'; payeeId: string; splitRuleId: string | null; cents: number }>;
  let debitedCents: number;
  if (direction === 'debit') {
    assert(Number(dispute.debited_amount) === 0, 'a dispute is debited once while lost');
    const shares = await saleShares(tx, payment);
    const amounts = prorateDispute({ shareCents: shares.map((s) => s.shareCents), disputedCents: Number(dispute.amount) });
    parts = shares.map((s, i) => ({ ...s, cents: -amounts[i] }));
    debitedCents = Number(dispute.amount);
  } else {
    // Exactly what the payees gave up, per payee: the dispute's receivables so far, negated.
    const made = await tx.selectFrom('receivables').select(['payee_type', 'payee_id', 'split_rule_id', 'amount']).where('dispute_id', '=', dispute.id).orderBy('line').execute();
    const byPayee = new Map<string, { payeeType: 'merchant' | 'recipient'; payeeId: string; splitRuleId: string | null; cents: number }>();
    for (const r of made) {
      const k = `${r.payee_type}:${r.payee_id}`;
      const p = byPayee.get(k) ?? { payeeType: r.payee_type, payeeId: r.payee_id, splitRuleId: r.split_rule_id, cents: 0 };
      p.cents -= Number(r.amount);
      byPayee.set(k, p);
    }
    parts = [...byPayee.values()];
    assert(parts.reduce((s, p) => s + p.cents, 0) === Number(dispute.debited_amount), 'what is given back is what was debited');
    debitedCents = 0;
  }
  const rows: ReceivableRow[] = [];
  parts.forEach((p, i) => {
    if (p.cents === 0) return;
    rows.push({
      id: newId('receivable', nowMs), account_id: payment.account_id, livemode: payment.livemode, payment_id: payment.id,
      source_id: dispute.id, line: dispute.money_moves * 1000 + i, payee_type: p.payeeType, payee_id: p.payeeId, split_rule_id: p.splitRuleId,
      amount: p.cents, original_amount: p.cents, status: 'pending', available_on: localDate(nowMs), settlement_id: null, refund_id: null, dispute_id: dispute.id,
      created_at: nowIso, updated_at: nowIso,
    });
  });
  if (rows.length > 0) await tx.insertInto('receivables').values(rows).execute();
  return { rows, debitedCents };
}

// ---------------------------------------------------------------------------------------------
// Card chargebacks.

export interface DisputeStage {
  // Adyen's dispute pspReference: the same for every notification of one dispute.
  sourceRef: string;
  connectorAccountId: string;
  rank: number;
  status: DisputeStatus;
  amountCents: number | null;
  reason: string | null;
  reasonCode: string | null;
  respondBy: string | null;
}

// Applies one stage of a card dispute, in the caller's write: creates the dispute at its first
// stage, moves it at a later one (through the guarded move, and only from the status and stage
// read here), and ignores a stage at or before the one applied (a duplicate, or one that arrived
// late). Returns whether anything changed.
export async function applyDisputeStage(tx: Tx, engine: Engine, paymentId: string, stage: DisputeStage, nowMs: number): Promise<boolean> {
  // Locked on PostgreSQL: a refund of the same payment reads the disputes under this lock.
  const payment = await readPayment(tx, paymentId, { lockOn: engine });
  if (!payment) return false;
  // Only a payment that took money can be charged back.
  if (payment.status !== 'approved' && payment.status !== 'partially_refunded' && payment.status !== 'refunded') return false;
  const nowIso = new Date(nowMs).toISOString();
  const owner = ownerOf(payment);
  const amountOf = (cents: number | null, fallback: number) => (cents !== null && cents > 0 ? Math.min(cents, payment.amount) : fallback);
  const existing = await tx.selectFrom('disputes').selectAll().where('payment_id', '=', paymentId).where('source_ref', '=', stage.sourceRef).executeTakeFirst();
  const events: Array<{ type: EventType; object: unknown }> = [];

  if (!existing) {
    const row: DisputeRow = {
      id: newId('dispute', nowMs), account_id: payment.account_id, livemode: payment.livemode, payment_id: payment.id, kind: 'card_chargeback',
      status: stage.status, amount: amountOf(stage.amountCents, payment.amount), reason: stage.reason?.slice(0, 300) ?? null, reason_code: stage.reasonCode,
      respond_by: stage.respondBy, source_ref: stage.sourceRef, connector_account_id: stage.connectorAccountId, refund_id: null,
      stage_rank: stage.rank, debited_amount: 0, money_moves: 0, created_at: nowIso, updated_at: nowIso, closed_at: closes(stage.status) ? nowIso : null,
    };
    let receivables: ReceivableRow[] = [];
    if (stage.status === 'lost') {
      const moved = await moveMoney(tx, payment, row, 'debit', nowMs);
      receivables = moved.rows;
      row.debited_amount = moved.debitedCents;
      row.money_moves = 1;
    }
    await tx.insertInto('disputes').values(row).execute();
    events.push({ type: 'dispute.created', object: toDispute(row) });
    if (closes(row.status)) events.push({ type: 'dispute.closed', object: toDispute(row) });
    events.push(...receivables.map((r) => ({ type: 'receivable.created' as const, object: toReceivable(r) })));
    await emitEvents(tx, owner, events, nowMs);
    return true;
  }

  if (stage.rank <= existing.stage_rank) return false;
  let to: DisputeStatus = existing.status;
  if (stage.status !== existing.status) {
    try {
      to = disputeMove(existing.status, stage.status).to;
    } catch (error) {
      // A stage that would move it where its table does not allow (none of Adyen's, in order):
      // recorded as reached, the status left as it is.
      if (!(error instanceof IllegalMove)) throw error;
    }
  }
  const next: DisputeRow = {
    ...existing,
    status: to,
    stage_rank: stage.rank,
    reason: stage.reason?.slice(0, 300) ?? existing.reason,
    reason_code: stage.reasonCode ?? existing.reason_code,
    respond_by: stage.respondBy ?? existing.respond_by,
    // The amount follows the source until the payees are debited for it.
    amount: Number(existing.debited_amount) === 0 ? amountOf(stage.amountCents, Number(existing.amount)) : Number(existing.amount),
    updated_at: nowIso,
    closed_at: to !== existing.status && closes(to) ? nowIso : closes(to) ? existing.closed_at : null,
  };
  let receivables: ReceivableRow[] = [];
  const debited = Number(existing.debited_amount) > 0;
  if ((to === 'lost' && !debited) || (to === 'won' && debited)) {
    const moved = await moveMoney(tx, payment, next, to === 'lost' ? 'debit' : 'give_back', nowMs);
    receivables = moved.rows;
    next.debited_amount = moved.debitedCents;
    next.money_moves = existing.money_moves + 1;
  }
  // Guarded by the status and stage read above: a concurrent apply that got there first makes
  // this one change nothing (and its receivables are rolled back with the write).
  const r = await tx.updateTable('disputes').set({
    status: next.status, stage_rank: next.stage_rank, reason: next.reason, reason_code: next.reason_code, respond_by: next.respond_by, amount: next.amount,
    debited_amount: next.debited_amount, money_moves: next.money_moves, updated_at: next.updated_at, closed_at: next.closed_at,
  }).where('id', '=', existing.id).where('status', '=', existing.status).where('stage_rank', '=', existing.stage_rank).executeTakeFirst();
  assert(Number(r.numUpdatedRows) === 1, 'a dispute moves from the stage it was read at (the payment is locked)');
  events.push({ type: to !== existing.status && closes(to) ? 'dispute.closed' : 'dispute.updated', object: toDispute(next) });
  events.push(...receivables.map((x) => ({ type: 'receivable.created' as const, object: toReceivable(x) })));
  await emitEvents(tx, owner, events, nowMs);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Pix MED.

// A Pix returned by the payer's bank (MED) is recorded as a refund (issue 25), which takes the
// money from the payees by the refund rule in the same transaction. Its dispute is made there
// too, already lost (the payer's bank decided before returning the money), naming the refund.
export async function recordMedDispute(tx: Tx, payment: PaymentRow, medReturn: { refundId: string; returnId: string; amountCents: number; nature: string }, nowMs: number): Promise<Dispute> {
  const nowIso = new Date(nowMs).toISOString();
  const row: DisputeRow = {
    id: newId('dispute', nowMs), account_id: payment.account_id, livemode: payment.livemode, payment_id: payment.id, kind: 'pix_med',
    status: 'lost', amount: medReturn.amountCents, reason: medReturn.nature, reason_code: null, respond_by: null, source_ref: medReturn.returnId,
    connector_account_id: payment.connector_account_id, refund_id: medReturn.refundId, stage_rank: 0, debited_amount: 0, money_moves: 0,
    created_at: nowIso, updated_at: nowIso, closed_at: nowIso,
  };
  await tx.insertInto('disputes').values(row).execute();
  const resource = toDispute(row);
  await emitEvents(tx, ownerOf(payment), [{ type: 'dispute.created', object: resource }, { type: 'dispute.closed', object: resource }], nowMs);
  return resource;
}

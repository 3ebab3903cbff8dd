import type { Selectable } from 'kysely';
import type { Store, Tx } from '../../store/index.js';
import type { ReceivablesTable } from '../../store/schema.js';
import { newId } from '../../domain/ids.js';
import { computeSplit, selectRule, type SplitRule, type SplitShare } from '../../domain/split.js';
import type { PaymentMethod } from '../../domain/fees.js';
import { addDays, localDate, type AccountSettings } from '../accounts/settings.js';
import { notFound } from '../../errors.js';
import { paginate } from '../../http/pagination.js';
import type { Owner } from '../events/service.js';
import { defer, selectWhere } from '../../store/index.js';
import type { ListReceivablesQuery, Receivable } from './schemas.js';

export type ReceivableRow = Selectable<ReceivablesTable>;

export function toReceivable(row: ReceivableRow): Receivable {
  return {
    id: row.id,
    object: 'receivable',
    paymentId: row.payment_id,
    payee: { type: row.payee_type, id: row.payee_id },
    splitRuleId: row.split_rule_id,
    amount: row.amount,
    status: row.status,
    availableOn: row.available_on,
    settlementId: row.settlement_id,
    refundId: row.refund_id,
    disputeId: row.dispute_id ?? null,
    createdAt: row.created_at,
    livemode: row.livemode === 1,
  };
}

function assert(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(`invariant broken: ${message}`);
}

export async function activeRules(tx: Tx, owner: Owner): Promise<SplitRule[]> {
  const rows = await selectWhere(tx, 'split_rules', ['id', 'priority', 'created_at', 'active', 'conditions', 'splits'], { account_id: owner.accountId, livemode: owner.livemode ? 1 : 0, active: 1 });
  return rows.map(domainRule);
}

// A stored rule as the domain takes it; the preview (admin/split-rules/actions.ts) maps a rule
// it has not stored (a draft, an edit) through here too, from the columns a save would write.
export function domainRule(r: { id: string; priority: number; created_at: string; active: number; conditions: string | null; splits: string }): SplitRule {
  return {
    id: r.id,
    priority: r.priority,
    createdAt: r.created_at,
    active: r.active === 1,
    conditions: r.conditions ? (JSON.parse(r.conditions) as SplitRule['conditions']) : undefined,
    // The API says `amount`; the domain says `amountCents`.
    splits: (JSON.parse(r.splits) as Array<{ recipientId: string; percentage?: number; amount?: number }>).map(
      (s): SplitShare => (s.amount !== undefined ? { recipientId: s.recipientId, amountCents: s.amount } : { recipientId: s.recipientId, percentage: s.percentage as number }),
    ),
  };
}

export interface SalePlan {
  rule: SplitRule | null;
  // The receivables a sale gets, merchant first: `line` is the line's index in the split (its
  // share's position), kept even where a zero share makes no receivable.
  lines: Array<{ line: number; payee: { type: 'merchant' | 'recipient'; id: string }; amountCents: number }>;
}

// Which rule a sale gets and what each payee receives: the one function both the approval of a
// sale and the back office's preview (POST /admin/split-rules/preview) run, so the preview is
// the sale's own arithmetic. Zero shares make no receivable (one that could never be paid out).
export function planSale(
  rules: readonly SplitRule[],
  sale: { accountId: string; amountCents: number; netCents: number; method: PaymentMethod },
): SalePlan {
  const rule = selectRule(rules, { amountCents: sale.amountCents, method: sale.method, netCents: sale.netCents });
  const lines: SalePlan['lines'] = [];
  computeSplit(sale.netCents, rule).forEach((line, index) => {
    if (line.amountCents === 0) return;
    lines.push({ line: index, payee: line.payee.type === 'merchant' ? { type: 'merchant', id: sale.accountId } : { type: 'recipient', id: line.payee.id }, amountCents: line.amountCents });
  });
  assert(lines.reduce((s, l) => s + l.amountCents, 0) === sale.netCents, "a sale's receivables sum to its net value");
  return { rule, lines };
}

// Runs inside the transaction that approves the payment: the receivables exist if and only if
// the approval committed, and the (source_id, line) unique key makes a second set impossible.
// The caller emits their `receivable.created` events together with the approval's.
export async function createSaleReceivables(
  tx: Tx,
  sale: { paymentId: string; accountId: string; livemode: boolean; amountCents: number; netCents: number; method: PaymentMethod },
  settings: AccountSettings,
  nowMs: number,
  // The owner's active rules, when the caller already has them (approvals in a batch).
  rules?: SplitRule[],
): Promise<Receivable[]> {
  const owner = { accountId: sale.accountId, livemode: sale.livemode };
  const { rule, lines } = planSale(rules ?? (await activeRules(tx, owner)), sale);
  const availableOn = addDays(localDate(nowMs), settings.settlementDelayDays[sale.method]);
  const nowIso = new Date(nowMs).toISOString();
  const rows: ReceivableRow[] = lines.map((line) => ({
    id: newId('receivable', nowMs),
    account_id: sale.accountId,
    livemode: sale.livemode ? 1 : 0,
    payment_id: sale.paymentId,
    source_id: sale.paymentId,
    line: line.line,
    payee_type: line.payee.type,
    payee_id: line.payee.id,
    split_rule_id: rule?.id ?? null,
    amount: line.amountCents,
    original_amount: line.amountCents,
    status: 'pending',
    available_on: availableOn,
    settlement_id: null,
    refund_id: null,
    dispute_id: null,
    created_at: nowIso,
    updated_at: nowIso,
  }));
  if (rows.length === 0) return [];
  await defer(tx, 'receivables', rows);
  return rows.map(toReceivable);
}

export async function getReceivable(store: Store, owner: Owner, id: string): Promise<Receivable> {
  const row = await store.db.selectFrom('receivables').selectAll()
    .where('id', '=', id).where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0)
    .executeTakeFirst();
  if (!row) throw notFound('receivable', 'id');
  return toReceivable(row);
}

export async function listReceivables(store: Store, owner: Owner, q: ListReceivablesQuery) {
  const scope = store.db.selectFrom('receivables').selectAll()
    .where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0);
  let qb = scope;
  if (q.paymentId) qb = qb.where('payment_id', '=', q.paymentId);
  if (q.recipientId) qb = qb.where('payee_type', '=', 'recipient').where('payee_id', '=', q.recipientId);
  if (q.payeeType) qb = qb.where('payee_type', '=', q.payeeType);
  if (q.status) qb = qb.where('status', '=', q.status);
  if (q.settlementId) qb = qb.where('settlement_id', '=', q.settlementId);
  if (q.availableOnGte) qb = qb.where('available_on', '>=', q.availableOnGte);
  if (q.availableOnLte) qb = qb.where('available_on', '<=', q.availableOnLte);
  return paginate(qb, q, toReceivable, scope);
}

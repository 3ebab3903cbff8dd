import type { Selectable } from 'kysely';
import type { Store, Tx } from '../../../store/index.js';
import type { SplitRulesTable } from '../../../store/schema.js';
import type { RequestContext } from '../../../plugins/idempotency.js';
import { ApiError, notFound } from '../../../errors.js';
import { newId } from '../../../domain/ids.js';
import { validateSplitRuleShape } from '../../../domain/split.js';
import { paginate, type Page } from '../../../http/pagination.js';
import type { AuditSpec } from '../shared/audit.js';
import { ListSplitRulesQuery, type CreateSplitRuleRequest, type SplitRule, type SplitRuleConditionsBody, type SplitShareBody, type UpdateSplitRuleRequest } from './schemas.js';
import { nowIso } from '../../../clock.js';

// Split rules are configured only here (never under /v1). Validation of a rule, as a whole, on
// create and on every update:
// - shape (schema, then the domain's validateSplitRuleShape): priority 0..1e6, 1-20 shares, each
//   exactly one of `percentage` (0 < p <= 100, two decimals) or `amount` (positive integer
//   centavos), percentages summing to at most 100, minAmount <= maxAmount;
// - each recipient appears at most once in a rule (a second share for the same recipient is
//   refused: give it one share with the total instead);
// - the account exists (`accountId`), and every recipient exists for that account in the rule's
//   mode (`splits[i].recipientId`).
// All are VALIDATION_ERROR naming the field; nothing is stored. API shares say `amount`; the
// domain says `amountCents`, mapped here (and back in receivables/service.ts when applied).

type Row = Selectable<SplitRulesTable>;

export interface RuleFields {
  priority: number;
  active: boolean;
  conditions: SplitRuleConditionsBody;
  splits: SplitShareBody[];
}

export function normalizeConditions(c: SplitRuleConditionsBody | null | undefined): SplitRuleConditionsBody {
  const out: SplitRuleConditionsBody = {};
  if (!c) return out;
  if (c.method !== undefined) out.method = c.method;
  if (c.minAmount !== undefined) out.minAmount = c.minAmount;
  if (c.maxAmount !== undefined) out.maxAmount = c.maxAmount;
  return out;
}

// Stored without its `type` (what the share holds says it); answered with it (SplitShare's
// discriminator).
export function normalizeShare(s: SplitShareBody): SplitShareBody {
  return s.amount !== undefined ? { recipientId: s.recipientId, amount: s.amount } : { recipientId: s.recipientId, percentage: s.percentage };
}
function answerShare(s: SplitShareBody): SplitRule['splits'][number] {
  return s.amount !== undefined
    ? { type: 'amount', recipientId: s.recipientId, amount: s.amount }
    : { type: 'percentage', recipientId: s.recipientId, percentage: s.percentage as number };
}

export function toSplitRule(row: Row): SplitRule {
  return {
    id: row.id,
    object: 'split_rule',
    accountId: row.account_id,
    livemode: row.livemode === 1,
    priority: row.priority,
    conditions: normalizeConditions(row.conditions ? (JSON.parse(row.conditions) as SplitRuleConditionsBody) : null),
    splits: (JSON.parse(row.splits) as SplitShareBody[]).map(answerShare),
    active: row.active === 1,
    description: row.description,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const apiName = (text: string) => text.replace(/amountCents/g, 'amount');

// `prefix`: where the rule sits in the body (`rule.` in a preview's), so the error names the field.
function refuse(errors: Array<{ param: string; message: string }>, prefix = ''): never {
  const named = errors.map((e) => ({ param: `${prefix}${e.param}`, message: e.message }));
  const first = named[0];
  throw new ApiError('VALIDATION_ERROR', `${first.param} ${first.message}.`, {
    param: first.param,
    details: named.length > 1 ? named.map((e) => ({ param: e.param, issue: e.message })) : undefined,
  });
}

// The shape rule of SplitShare's oneOf, in words: exactly one of percentage/amount per share.
// Run on a rule body that matches no shape (http/shapes.ts); checkRuleShape says the same.
export function checkShares(body: { splits?: SplitShareBody[] }, prefix = ''): void {
  const errors = (body.splits ?? []).flatMap((s, i) => {
    if ((s.percentage === undefined) === (s.amount === undefined)) return [{ param: `splits[${i}]`, message: 'must have exactly one of percentage or amount' }];
    const holds = s.amount !== undefined ? 'amount' : 'percentage';
    if (s.type !== undefined && s.type !== holds) return [{ param: `splits[${i}].type`, message: `must be "${holds}" for a share with ${holds === 'amount' ? 'an amount' : 'a percentage'} (or be left out)` }];
    return [];
  });
  if (errors.length > 0) refuse(errors, prefix);
}

// The same for a preview's rule (`rule.splits[i]`).
export function checkPreviewShares(body: { rule?: { splits?: SplitShareBody[] } }): void {
  checkShares(body.rule ?? {}, 'rule.');
}

// Pure checks: the domain's shape rules, then one share per recipient.
export function checkRuleShape(rule: RuleFields, prefix = ''): void {
  const domainRule = {
    priority: rule.priority,
    active: rule.active,
    conditions: rule.conditions,
    splits: rule.splits.map((s) => {
      const share: Record<string, unknown> = { recipientId: s.recipientId };
      if (s.percentage !== undefined) share.percentage = s.percentage;
      if (s.amount !== undefined) share.amountCents = s.amount;
      return share;
    }),
  };
  const errors = validateSplitRuleShape(domainRule).map((e) => ({ param: apiName(e.param), message: apiName(e.message) }));
  if (errors.length > 0) refuse(errors, prefix);

  const seen = new Set<string>();
  rule.splits.forEach((s, i) => {
    if (seen.has(s.recipientId)) errors.push({ param: `splits[${i}].recipientId`, message: 'appears more than once in this rule; give each recipient one share' });
    seen.add(s.recipientId);
  });
  if (errors.length > 0) refuse(errors, prefix);
}

async function checkAccount(tx: Tx, accountId: string): Promise<void> {
  const account = await tx.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
  if (!account) throw new ApiError('VALIDATION_ERROR', 'accountId does not name a merchant account.', { param: 'accountId' });
}

// Another account's recipient, the other mode's, and a made-up id all get the same answer.
export async function checkRecipients(tx: Tx, accountId: string, livemode: boolean, splits: SplitShareBody[], prefix = ''): Promise<void> {
  const ids = [...new Set(splits.map((s) => s.recipientId))];
  const rows = await tx.selectFrom('recipients').select('id')
    .where('account_id', '=', accountId).where('livemode', '=', livemode ? 1 : 0).where('id', 'in', ids)
    .execute();
  const found = new Set(rows.map((r) => r.id));
  const errors = splits.flatMap((s, i) => (found.has(s.recipientId)
    ? []
    : [{ param: `splits[${i}].recipientId`, message: `is not a recipient of this account in ${livemode ? 'live' : 'sandbox'} mode` }]));
  if (errors.length > 0) refuse(errors, prefix);
}

export async function loadRule(db: Store['db'] | Tx, id: string): Promise<Row> {
  const row = await db.selectFrom('split_rules').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('split rule', 'id');
  return row;
}

// A rule's conditions and shares as stored (the preview computes from the same columns).
export function storedColumns(fields: Pick<RuleFields, 'conditions' | 'splits'>): { conditions: string | null; splits: string } {
  return {
    conditions: Object.keys(fields.conditions).length > 0 ? JSON.stringify(fields.conditions) : null,
    splits: JSON.stringify(fields.splits),
  };
}

// A stored rule with a PATCH's changes: what is left out keeps its value.
export function editedFields(row: Row, body: Pick<UpdateSplitRuleRequest, 'priority' | 'active' | 'conditions' | 'splits'>): RuleFields {
  const current = toSplitRule(row);
  return {
    priority: body.priority ?? current.priority,
    active: body.active ?? current.active,
    conditions: body.conditions === undefined ? (current.conditions as SplitRuleConditionsBody) : normalizeConditions(body.conditions),
    splits: (body.splits ?? current.splits) as SplitShareBody[],
  };
}

export async function createSplitRule(ctx: RequestContext, body: CreateSplitRuleRequest): Promise<SplitRule> {
  const livemode = body.livemode ?? false;
  const fields: RuleFields = {
    priority: body.priority,
    active: body.active ?? true,
    conditions: normalizeConditions(body.conditions as SplitRuleConditionsBody | undefined),
    splits: body.splits as SplitShareBody[],
  };
  // Checked as sent (a share with both `percentage` and `amount` must be refused, not trimmed).
  checkRuleShape(fields);
  fields.splits = fields.splits.map(normalizeShare);
  return ctx.write(async (tx) => {
    await checkAccount(tx, body.accountId);
    await checkRecipients(tx, body.accountId, livemode, fields.splits);
    const nowMs = ctx.clock.nowMs();
    const now = new Date(nowMs).toISOString();
    const row: Row = {
      id: newId('splitRule', nowMs),
      account_id: body.accountId,
      livemode: livemode ? 1 : 0,
      priority: fields.priority,
      ...storedColumns(fields),
      active: fields.active ? 1 : 0,
      description: body.description ?? null,
      created_at: now,
      updated_at: now,
    };
    await tx.insertInto('split_rules').values(row).execute();
    return toSplitRule(row);
  });
}

export async function updateSplitRule(ctx: RequestContext, id: string, body: UpdateSplitRuleRequest): Promise<SplitRule> {
  return ctx.write(async (tx) => {
    const row = await loadRule(tx, id);
    const fields = editedFields(row, body);
    checkRuleShape(fields);
    fields.splits = fields.splits.map(normalizeShare);
    await checkRecipients(tx, row.account_id, row.livemode === 1, fields.splits);
    const changes = {
      priority: fields.priority,
      active: fields.active ? 1 : 0,
      ...storedColumns(fields),
      description: body.description === undefined ? row.description : body.description,
      updated_at: nowIso(ctx.clock),
    };
    await tx.updateTable('split_rules').set(changes).where('id', '=', id).execute();
    return toSplitRule({ ...row, ...changes });
  });
}

// Activates or deactivates a rule; a rule already in that state is answered as it is.
export async function setSplitRuleActive(ctx: RequestContext, id: string, active: boolean): Promise<SplitRule> {
  return ctx.write(async (tx) => {
    const row = await loadRule(tx, id);
    if ((row.active === 1) === active) return toSplitRule(row);
    const changes = { active: active ? 1 : 0, updated_at: nowIso(ctx.clock) };
    await tx.updateTable('split_rules').set(changes).where('id', '=', id).execute();
    return toSplitRule({ ...row, ...changes });
  });
}

// The rule as the audit log shows it, before and after a change.
export async function splitRuleSnapshot(tx: Tx, id: string): Promise<SplitRule | null> {
  const row = await tx.selectFrom('split_rules').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toSplitRule(row) : null;
}

const idParam = (req: { params: unknown }) => (req.params as { id: string }).id;
const ACTIVATION_HINT = 'activating a split rule changes who gets paid; send active: false to save it without activating';
// An active rule decides who gets paid on the next sale: any edit of one goes live at once (there
// is no draft of an active rule), so it is a money decision like activating one.
export const ACTIVE_RULE_HINT = 'an active split rule decides who gets paid, so changing or activating one needs a reason';

export const splitRuleAudit = {
  create: {
    action: 'split_rule.create', objectType: 'split_rule', snapshot: splitRuleSnapshot,
    objectId: (_req, result) => (result as SplitRule | undefined)?.id,
    reasonRequired: (req) => (req.body as CreateSplitRuleRequest).active !== false,
    reasonHint: ACTIVATION_HINT,
  },
  update: {
    action: 'split_rule.update', objectType: 'split_rule', snapshot: splitRuleSnapshot, objectId: idParam,
    // Any PATCH of an active rule, and a PATCH that activates one (a missing rule is the route's 404).
    reasonRequired: (req, before) => before !== null && ((before as SplitRule).active || (req.body as UpdateSplitRuleRequest).active === true),
    reasonHint: ACTIVE_RULE_HINT,
  },
  activate: {
    action: 'split_rule.activate', objectType: 'split_rule', snapshot: splitRuleSnapshot, objectId: idParam,
    reasonRequired: true, reasonHint: 'activating a split rule changes who gets paid',
  },
  deactivate: { action: 'split_rule.deactivate', objectType: 'split_rule', snapshot: splitRuleSnapshot, objectId: idParam },
} satisfies Record<string, AuditSpec>;

export async function getSplitRule(store: Store, id: string): Promise<SplitRule> {
  return toSplitRule(await loadRule(store.db, id));
}

export async function listSplitRules(store: Store, query: ListSplitRulesQuery): Promise<Page<SplitRule>> {
  const scope = store.db.selectFrom('split_rules').selectAll();
  let qb = scope;
  if (query.accountId !== undefined) qb = qb.where('account_id', '=', query.accountId);
  if (query.livemode !== undefined) qb = qb.where('livemode', '=', query.livemode ? 1 : 0);
  if (query.active !== undefined) qb = qb.where('active', '=', query.active ? 1 : 0);
  return paginate(qb, query, toSplitRule, scope);
}


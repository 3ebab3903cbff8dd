import type { Store, Tx } from '../../../store/index.js';
import type { RequestContext } from '../../../plugins/idempotency.js';
import { ApiError } from '../../../errors.js';
import { computeFee } from '../../../domain/fees.js';
import type { Page } from '../../../http/pagination.js';
import { parseSettings } from '../../accounts/settings.js';
import { activeRules, domainRule, planSale, type SalePlan } from '../../receivables/service.js';
import type { SplitRule as DomainSplitRule } from '../../../domain/split.js';
import { newId } from '../../../domain/ids.js';
import type { SplitRulesTable } from '../../../store/schema.js';
import type { Selectable } from 'kysely';
import type { AuditSpec } from '../shared/audit.js';
import { checkRecipients, checkRuleShape, editedFields, normalizeConditions, normalizeShare, splitRuleSnapshot, storedColumns, toSplitRule, type RuleFields } from './service.js';
import { type ReorderSplitRulesRequest, type SplitPreview, type SplitPreviewOutcome, type SplitPreviewRequest, type SplitPreviewRule, type SplitRule, type SplitRuleConditionsBody, type SplitShareBody } from './schemas.js';
import { nowIso as isoOf } from '../../../clock.js';

type SplitRuleRow = Selectable<SplitRulesTable>;

// What the back office does to split rules beyond create/update/(de)activate: put an account's
// rules in a new order, and preview what a sale would produce now and after a change to a rule.

// Priorities a reorder gives: 10, 20, 30, ... (gaps leave room for a PATCH in between).
const PRIORITY_STEP = 10;

async function accountRules(tx: Tx, accountId: string, livemode: boolean) {
  return tx.selectFrom('split_rules').selectAll()
    .where('account_id', '=', accountId).where('livemode', '=', livemode ? 1 : 0)
    .orderBy('priority', 'asc').orderBy('created_at', 'asc').orderBy('id', 'asc')
    .execute();
}

async function checkAccountExists(db: Tx, accountId: string): Promise<string | null> {
  const account = await db.selectFrom('accounts').select('settings').where('id', '=', accountId).executeTakeFirst();
  if (!account) throw new ApiError('VALIDATION_ERROR', 'accountId: no such merchant account.', { param: 'accountId' });
  return account.settings;
}

export async function reorderSplitRules(ctx: RequestContext, body: ReorderSplitRulesRequest): Promise<Page<SplitRule>> {
  const livemode = body.livemode ?? false;
  if (new Set(body.ruleIds).size !== body.ruleIds.length) {
    throw new ApiError('VALIDATION_ERROR', 'ruleIds must name each rule once.', { param: 'ruleIds' });
  }
  return ctx.write(async (tx) => {
    await checkAccountExists(tx, body.accountId);
    const rows = await accountRules(tx, body.accountId, livemode);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const unknown = body.ruleIds.findIndex((id) => !byId.has(id));
    if (unknown >= 0) {
      throw new ApiError('VALIDATION_ERROR', `ruleIds[${unknown}] is not a split rule of this account in ${livemode ? 'live' : 'sandbox'} mode.`, { param: `ruleIds[${unknown}]` });
    }
    if (body.ruleIds.length !== rows.length) {
      throw new ApiError('VALIDATION_ERROR', `ruleIds must list every split rule of this account in ${livemode ? 'live' : 'sandbox'} mode (${rows.length}), in the new order.`, { param: 'ruleIds' });
    }
    const nowIso = isoOf(ctx.clock);
    const ordered: SplitRule[] = [];
    for (const [index, id] of body.ruleIds.entries()) {
      const row = byId.get(id)!;
      const priority = (index + 1) * PRIORITY_STEP;
      if (row.priority === priority) {
        ordered.push(toSplitRule(row));
        continue;
      }
      await tx.updateTable('split_rules').set({ priority, updated_at: nowIso }).where('id', '=', id).execute();
      ordered.push(toSplitRule({ ...row, priority, updated_at: nowIso }));
    }
    return { object: 'list' as const, data: ordered, hasMore: false };
  });
}

// The same steps as the approval of a sale (payments/service.ts approve): the account's fee
// schedule, computeFee, the owner's active rules and planSale. With a rule to preview (issue 29:
// an inactive rule, a draft, an edit before it is saved), planSale runs a second time on the
// active rules with that rule in them as it would be saved and active, mapped from the columns a
// save would write (receivables/service.ts domainRule), so `after` is what a sale approved after
// the change gets. Nothing is written.
export async function previewSplit(store: Store, body: SplitPreviewRequest): Promise<SplitPreview> {
  const method = body.method;
  const settings = parseSettings(await checkAccountExists(store.db, body.accountId));
  const existing = body.ruleId === undefined ? null : await previewedRule(store.db, body.accountId, body.ruleId, body.livemode);
  const livemode = body.livemode ?? (existing ? existing.livemode === 1 : false);
  // Checked before any computation: a wrong draft is refused, not previewed.
  const changed = body.ruleId !== undefined || body.rule !== undefined
    ? await changedRule(store, body.accountId, livemode, existing, body.rule as SplitPreviewRule | undefined)
    : null;
  const { feeCents, netCents } = computeFee(body.amount, method, settings.fees);
  const rules = await activeRules(store.db, { accountId: body.accountId, livemode });
  const sale = { accountId: body.accountId, amountCents: body.amount, netCents, method };
  const now = await outcome(store.db, planSale(rules, sale), body.ruleId ?? null, null);
  const after = changed
    ? await outcome(store.db, planSale([...rules.filter((r) => r.id !== changed.domain.id), changed.domain], sale), changed.domain.id, changed)
    : null;
  return {
    object: 'split_preview',
    livemode,
    accountId: body.accountId,
    amount: body.amount,
    method,
    fee: feeCents,
    net: netCents,
    rule: now.rule,
    receivables: now.receivables,
    now,
    after,
  };
}

// `ruleId` names a rule of this account (in the mode asked for, when one is).
async function previewedRule(db: Store['db'], accountId: string, ruleId: string, livemode: boolean | undefined) {
  const row = await db.selectFrom('split_rules').selectAll().where('id', '=', ruleId).executeTakeFirst();
  if (!row || row.account_id !== accountId) throw new ApiError('VALIDATION_ERROR', 'ruleId is not a split rule of this merchant account.', { param: 'ruleId' });
  if (livemode !== undefined && (row.livemode === 1) !== livemode) {
    throw new ApiError('VALIDATION_ERROR', `ruleId is a ${row.livemode === 1 ? 'live' : 'sandbox'} rule; preview it in its own mode (leave livemode out, or send ${row.livemode === 1}).`, { param: 'livemode' });
  }
  return row;
}

interface ChangedRule {
  domain: DomainSplitRule;
  // The rule as it would be answered after the save; null for a draft (it has no id yet).
  answer: SplitRule | null;
}

// The previewed rule as a save would store it, active, validated as a save validates it (the
// errors name `rule.` fields).
async function changedRule(store: Store, accountId: string, livemode: boolean, existing: SplitRuleRow | null, change: SplitPreviewRule | undefined): Promise<ChangedRule> {
  let fields: RuleFields;
  if (existing) {
    fields = editedFields(existing, { ...(change ?? {}), active: true });
  } else {
    if (change?.priority === undefined) throw new ApiError('VALIDATION_ERROR', 'rule.priority is required for a new rule (without ruleId).', { param: 'rule.priority' });
    if (change.splits === undefined) throw new ApiError('VALIDATION_ERROR', 'rule.splits is required for a new rule (without ruleId).', { param: 'rule.splits' });
    fields = { priority: change.priority, active: true, conditions: normalizeConditions(change.conditions as SplitRuleConditionsBody | null | undefined), splits: change.splits as SplitShareBody[] };
  }
  checkRuleShape(fields, 'rule.');
  fields.splits = fields.splits.map(normalizeShare);
  await checkRecipients(store.db, accountId, livemode, fields.splits, 'rule.');
  const columns = { priority: fields.priority, active: 1, ...storedColumns(fields) };
  if (existing) {
    const row = { ...existing, ...columns, description: change?.description === undefined ? existing.description : change.description };
    return { domain: domainRule(row), answer: toSplitRule(row) };
  }
  // A new rule: created now, so it comes after the rules of its priority that exist.
  const nowMs = store.clock.nowMs();
  return { domain: domainRule({ id: newId('splitRule', nowMs), created_at: new Date(nowMs).toISOString(), ...columns }), answer: null };
}

async function outcome(db: Store['db'], plan: SalePlan, previewedId: string | null, changed: ChangedRule | null): Promise<SplitPreviewOutcome> {
  const previewed = plan.rule !== null && plan.rule.id === previewedId;
  const rule = plan.rule === null ? null : previewed && changed ? changed.answer : await splitRuleSnapshot(db, plan.rule.id);
  return { rule, previewedRuleApplies: previewed, receivables: plan.lines.map((l) => ({ payee: l.payee, amount: l.amountCents })) };
}

// A reorder is audited as one change of the account's rule order.
async function ruleOrderSnapshot(tx: Tx, accountId: string, req: { body: unknown }) {
  const livemode = (req.body as ReorderSplitRulesRequest).livemode ?? false;
  const rows = await accountRules(tx, accountId, livemode);
  return { livemode, splitRules: rows.map((r) => ({ id: r.id, priority: r.priority, active: r.active === 1 })) };
}

export const splitRuleActionAudit = {
  reorder: {
    action: 'split_rule.reorder', objectType: 'account', snapshot: ruleOrderSnapshot,
    objectId: (req) => (req.body as ReorderSplitRulesRequest).accountId,
    // The order decides which rule a sale gets, so who gets paid: always a reason.
    reasonRequired: true, reasonHint: 'the order of the split rules decides who gets paid',
  },
} satisfies Record<string, AuditSpec>;


import type { Store, Tx } from '../../../store/index.js';
import type { RequestContext } from '../../../plugins/idempotency.js';
import { ApiError } from '../../../errors.js';
import { computeFee } from '../../../domain/fees.js';
import type { Page } from '../../../http/pagination.js';
import { parseSettings } from '../../accounts/settings.js';
import { activeRules, planSale } from '../../receivables/service.js';
import type { AuditSpec } from '../shared/audit.js';
import { splitRuleSnapshot, toSplitRule } from './service.js';
import { type ReorderSplitRulesRequest, type SplitPreview, type SplitPreviewRequest, type SplitRule } from './schemas.js';
import { nowIso as isoOf } from '../../../clock.js';

// What the back office does to split rules beyond create/update/(de)activate: put an account's
// rules in a new order, and preview what a sale would produce now.

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
// schedule, computeFee, the owner's active rules and planSale. Nothing is written.
export async function previewSplit(store: Store, body: SplitPreviewRequest): Promise<SplitPreview> {
  const livemode = body.livemode ?? false;
  const method = body.method;
  const settings = parseSettings(await checkAccountExists(store.db, body.accountId));
  const { feeCents, netCents } = computeFee(body.amount, method, settings.fees);
  const rules = await activeRules(store.db, { accountId: body.accountId, livemode });
  const plan = planSale(rules, { accountId: body.accountId, amountCents: body.amount, netCents, method });
  const rule = plan.rule ? await splitRuleSnapshot(store.db, plan.rule.id) : null;
  return {
    object: 'split_preview',
    livemode,
    accountId: body.accountId,
    amount: body.amount,
    method,
    fee: feeCents,
    net: netCents,
    rule,
    receivables: plan.lines.map((l) => ({ payee: l.payee, amount: l.amountCents })),
  };
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


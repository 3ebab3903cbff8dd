import type { FastifyInstance } from 'fastify';
import type { Store } from '../../../store/index.js';
import { ref, refTo } from '../../../http/common.js';
import { AdminMutationHeaders, IdParams, security, tags } from '../shared/schemas.js';
import { ActivateSplitRuleRequest, CreateSplitRuleRequest, DeactivateSplitRuleRequest, ListSplitRulesQuery, ReorderSplitRulesRequest, SplitPreviewRequest, UpdateSplitRuleRequest } from './schemas.js';
import { createSplitRule, getSplitRule, listSplitRules, setSplitRuleActive, splitRuleAudit, updateSplitRule } from './service.js';
import { previewSplit, reorderSplitRules, splitRuleActionAudit as audits } from './actions.js';
import { typed } from '../../../http/typed.js';

const SplitRuleIdParams = IdParams('Split rule id (`spr_...`).');

export function splitRuleRoutes(scopeInstance: FastifyInstance, store: Store): void {
  const scope = typed(scopeInstance);
  scope.post('/admin/split-rules', {
    config: { auth: 'none', permission: 'split_rules:create', audit: splitRuleAudit.create },
    schema: {
      operationId: 'adminCreateSplitRule', tags, security, summary: 'Create a split rule',
      description: 'Creates a split rule for a merchant account and mode. The rule is validated as a whole: shares (`percentage` with at most two decimals, 0 < p <= 100, summing to at most 100; or a positive integer `amount` in centavos), one share per recipient, recipients of the same account and mode, `minAmount <= maxAmount`. Applies to sales approved from now on. A rule created active (the default) needs a `reason`; `active: false` saves it without activating it.',
      headers: AdminMutationHeaders,
      body: refTo(CreateSplitRuleRequest),
      response: { 200: ref('SplitRule') },
    },
  }, (req) => createSplitRule(req.ctx, req.body));

  scope.get('/admin/split-rules', {
    config: { auth: 'none', permission: 'split_rules:view' },
    schema: {
      operationId: 'adminListSplitRules', tags, security, summary: 'List split rules',
      description: 'Every merchant\'s split rules, newest first, with cursors. Filter by `accountId`, `livemode`, `active`.',
      querystring: ListSplitRulesQuery,
      response: { 200: ref('SplitRuleList') },
    },
  }, (req) => listSplitRules(store, req.query));

  scope.get('/admin/split-rules/:id', {
    config: { auth: 'none', permission: 'split_rules:view' },
    schema: {
      operationId: 'adminGetSplitRule', tags, security, summary: 'Fetch a split rule',
      description: 'One split rule by id.',
      params: SplitRuleIdParams,
      response: { 200: ref('SplitRule') },
    },
  }, (req) => getSplitRule(store, req.params.id));

  scope.patch('/admin/split-rules/:id', {
    config: { auth: 'none', permission: 'split_rules:update', audit: splitRuleAudit.update },
    schema: {
      operationId: 'adminUpdateSplitRule', tags, security, summary: 'Update a split rule',
      description: 'Changes `priority`, `conditions` (replaced as a whole; `null` removes them), `splits` (replaced as a whole), `active` or `description`. The resulting rule is validated as on create. The account and mode never change. A `reason` is required when the rule is active (an edit of an active rule applies to the next sale: it changes who gets paid) and when `active: true` activates an inactive rule; an inactive rule is edited without one. To stop an active rule without a reason, `POST .../deactivate`.',
      headers: AdminMutationHeaders,
      params: SplitRuleIdParams,
      body: refTo(UpdateSplitRuleRequest),
      response: { 200: ref('SplitRule') },
    },
  }, (req) => updateSplitRule(req.ctx, req.params.id, req.body));

  scope.post('/admin/split-rules/:id/deactivate', {
    // The body is optional: a bare POST deactivates.
    config: { auth: 'none', permission: 'split_rules:deactivate', audit: splitRuleAudit.deactivate, bodyOptional: true },
    schema: {
      operationId: 'adminDeactivateSplitRule', tags, security, summary: 'Deactivate a split rule',
      description: 'The rule stops applying to new sales (existing receivables are untouched). Deactivating an inactive rule answers it unchanged; `POST .../activate` reactivates. Optional body: `{reason}`.',
      headers: AdminMutationHeaders,
      params: SplitRuleIdParams,
      body: refTo(DeactivateSplitRuleRequest),
      response: { 200: ref('SplitRule') },
    },
  }, (req) => setSplitRuleActive(req.ctx, req.params.id, false));

  scope.post('/admin/split-rules/:id/activate', {
    config: { auth: 'none', permission: 'split_rules:activate', audit: splitRuleAudit.activate },
    schema: {
      operationId: 'adminActivateSplitRule', tags, security, summary: 'Activate a split rule',
      description: 'The rule applies to sales approved from now on, at its priority. Needs a `reason` (it changes who gets paid), kept in the audit log. Activating an active rule answers it unchanged.',
      headers: AdminMutationHeaders,
      params: SplitRuleIdParams,
      body: refTo(ActivateSplitRuleRequest),
      response: { 200: ref('SplitRule') },
    },
  }, (req) => setSplitRuleActive(req.ctx, req.params.id, true));
}

export function splitRuleActionRoutes(scopeInstance: FastifyInstance, store: Store): void {
  const scope = typed(scopeInstance);
  scope.post('/admin/split-rules/reorder', {
    config: { auth: 'none', permission: 'split_rules:update', audit: audits.reorder },
    schema: {
      operationId: 'adminReorderSplitRules', tags, security, summary: 'Reorder an account\'s split rules',
      description: 'Gives the account\'s rules (in one mode) new priorities in one transaction: `ruleIds` lists every rule, each once, first to run first; they get priorities 10, 20, 30, ... Needs a `reason` (the order decides which rule a sale gets), kept in the audit log. Answers the rules in their new order.',
      headers: AdminMutationHeaders,
      body: refTo(ReorderSplitRulesRequest),
      response: { 200: ref('SplitRuleList') },
    },
  }, (req) => reorderSplitRules(req.ctx, req.body));

  scope.post('/admin/split-rules/preview', {
    // Reads only: nothing to store or replay under an Idempotency-Key.
    config: { auth: 'none', idempotent: false, writes: false, permission: 'split_rules:preview', audit: { exempt: 'computes a preview; writes nothing' } },
    schema: {
      operationId: 'adminPreviewSplit', tags, security, summary: 'Preview the split of a sale',
      description: 'What a sale of `amount` centavos paid with `method` would produce if approved now: the fee, the net value, the split rule that applies (or none) and each receivable (`payee`, `amount`), merchant first (`rule` and `receivables`, also as `now`). To preview a change before making it, send `ruleId` (an existing rule, e.g. an inactive one: as if it were activated), `rule` (a draft: as if it were created active) or both (an edit of that rule: as if saved with those changes, and active); `after` then answers which rule the sale would get and its receivables after the change, and `previewedRuleApplies` says whether it is the previewed rule. The previewed rule is validated as a save would validate it (errors name `rule.` fields). Computed by the same code that approves a sale; writes nothing.',
      headers: AdminMutationHeaders,
      body: refTo(SplitPreviewRequest),
      response: { 200: ref('SplitPreview') },
    },
  }, (req) => previewSplit(store, req.body));
}

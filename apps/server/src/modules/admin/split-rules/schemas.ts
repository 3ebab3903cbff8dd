import { Type, type Static } from 'typebox';
import { ListQueryBase, listOf, ref, stringEnum, constant, cents, int32 } from '../../../http/common.js';
import { MAX_PRIORITY, MAX_SPLITS_PER_RULE } from '../../../domain/split.js';
import { MAX_AMOUNT_CENTS } from '../../payments/schemas.js';
import { optionalReason, reasonText, requiredReason } from '../shared/schemas.js';

// ---------------------------------------------------------------------------------------------
// Split rules

const centavos = (description: string) => cents({ minimum: 0, maximum: MAX_AMOUNT_CENTS, description });

export const SplitRuleConditions = Type.Object(
  {
    method: Type.Optional(stringEnum(['pix', 'credit_card'], { description: 'Only sales paid with this method.' })),
    minAmount: Type.Optional(centavos('Only sales of at least this gross amount (centavos, inclusive).')),
    maxAmount: Type.Optional(centavos('Only sales of at most this gross amount (centavos, inclusive).')),
  },
  { $id: 'SplitRuleConditions', additionalProperties: false, description: 'When the rule applies. Omitted fields match every sale; `{}` matches all.' },
);

const shareFields = {
  recipientId: Type.String({ minLength: 1, maxLength: 64, description: 'A recipient (`rcp_`) of the same merchant account and mode.' }),
  percentage: Type.Number({ exclusiveMinimum: 0, maximum: 100, description: 'Share of the net value, 0 < p <= 100, at most two decimals.', examples: [12.5] }),
  amount: cents({ minimum: 1, maximum: MAX_AMOUNT_CENTS, description: 'Fixed share in centavos.', examples: [500] }),
};

// A share as a rule answers it carries its `type`, the discriminator of SplitShare: without one,
// `{"recipientId", "percentage"}` parsed as both branches in a lenient parser (issue 28). A
// request may send the `type` back (what a client read) or leave it out; its two shapes differ
// in their required fields, so a deduction tells them apart.
const SHARE_TYPES = ['percentage', 'amount'] as const;
export type SplitShareType = (typeof SHARE_TYPES)[number];
export const PercentageSplitShare = Type.Object(
  { type: constant('percentage'), recipientId: shareFields.recipientId, percentage: shareFields.percentage },
  { $id: 'PercentageSplitShare', additionalProperties: false, description: 'A percentage of the net value.', examples: [{ type: 'percentage', recipientId: 'rcp_01jc6v8x2a9m3yq0d7b4e5f6g8', percentage: 12.5 }] },
);
export const AmountSplitShare = Type.Object(
  { type: constant('amount'), recipientId: shareFields.recipientId, amount: shareFields.amount },
  { $id: 'AmountSplitShare', additionalProperties: false, description: 'A fixed amount in centavos.', examples: [{ type: 'amount', recipientId: 'rcp_01jc6v8x2a9m3yq0d7b4e5f6g8', amount: 500 }] },
);
export const SplitShare = Type.Unsafe<Static<typeof PercentageSplitShare> | Static<typeof AmountSplitShare>>({
  $id: 'SplitShare',
  oneOf: [ref('PercentageSplitShare'), ref('AmountSplitShare')],
  discriminator: { propertyName: 'type', mapping: { percentage: '#/components/schemas/PercentageSplitShare', amount: '#/components/schemas/AmountSplitShare' } },
  description: 'One recipient\'s share, by `type`: `percentage` (of the net value) or `amount` (centavos). Each recipient appears at most once per rule.',
});

export const PercentageSplitShareRequest = Type.Object(
  { type: Type.Optional(constant('percentage')), recipientId: shareFields.recipientId, percentage: shareFields.percentage },
  { $id: 'PercentageSplitShareRequest', additionalProperties: false, description: 'A percentage of the net value (`type` optional).', examples: [{ recipientId: 'rcp_01jc6v8x2a9m3yq0d7b4e5f6g8', percentage: 12.5 }] },
);
export const AmountSplitShareRequest = Type.Object(
  { type: Type.Optional(constant('amount')), recipientId: shareFields.recipientId, amount: shareFields.amount },
  { $id: 'AmountSplitShareRequest', additionalProperties: false, description: 'A fixed amount in centavos (`type` optional).', examples: [{ recipientId: 'rcp_01jc6v8x2a9m3yq0d7b4e5f6g8', amount: 500 }] },
);
export const SplitShareRequest = Type.Unsafe<SplitShareBody>({
  $id: 'SplitShareRequest',
  oneOf: [ref('PercentageSplitShareRequest'), ref('AmountSplitShareRequest')],
  description: 'One recipient\'s share: exactly one of `percentage` (of the net value) or `amount` (centavos); `type` may be sent and must then match. Each recipient appears at most once per rule.',
});

// A share with both or neither of percentage/amount, for the loose twins of the rule bodies
// (see http/shapes.ts).
export const LooseSplitShare = Type.Object(
  { type: Type.Optional(stringEnum([...SHARE_TYPES])), recipientId: shareFields.recipientId, percentage: Type.Optional(shareFields.percentage), amount: Type.Optional(shareFields.amount) },
  { additionalProperties: false },
);

const prioritySchema = int32({ minimum: 0, maximum: MAX_PRIORITY, description: `0-${MAX_PRIORITY}; lower runs first, ties by creation order.` });
const splitsSchema = Type.Array(ref('SplitShareRequest'), { minItems: 1, maxItems: MAX_SPLITS_PER_RULE, description: `1-${MAX_SPLITS_PER_RULE} shares; percentages sum to at most 100.` });
const descriptionSchema = Type.String({ maxLength: 500 });

export const CreateSplitRuleRequest = Type.Object(
  {
    accountId: Type.String({ minLength: 1, maxLength: 64, description: 'The merchant account (`acct_`) the rule belongs to.' }),
    livemode: Type.Optional(Type.Boolean({ description: 'Live (true) or sandbox (false, the default) sales.' })),
    priority: prioritySchema,
    conditions: Type.Optional(ref('SplitRuleConditions')),
    splits: splitsSchema,
    active: Type.Optional(Type.Boolean({ description: 'Default true. Creating an active rule activates it: send a `reason`. `false` saves the rule without activating it (no reason needed).' })),
    description: Type.Optional(descriptionSchema),
    reason: Type.Optional(reasonText('Why, for the audit log. Required when the rule is created active.')),
  },
  {
    $id: 'CreateSplitRuleRequest',
    additionalProperties: false,
    examples: [{ accountId: 'acct_01jc6v8x2a9m3yq0d7b4e5f6g8', priority: 10, conditions: { method: 'credit_card' }, splits: [{ recipientId: 'rcp_01jc6v8x2a9m3yq0d7b4e5f6g8', percentage: 15 }], reason: 'Marketplace agreement #42' }],
  },
);
export type CreateSplitRuleRequest = Static<typeof CreateSplitRuleRequest>;

export const UpdateSplitRuleRequest = Type.Object(
  {
    priority: Type.Optional(prioritySchema),
    conditions: Type.Optional(Type.Union([ref('SplitRuleConditions'), Type.Null()], { description: 'Replaces the conditions; `null` or `{}` removes them.' })),
    splits: Type.Optional(splitsSchema),
    active: Type.Optional(Type.Boolean({ description: '`true` on an inactive rule activates it: send a `reason`.' })),
    description: Type.Optional(Type.Union([descriptionSchema, Type.Null()])),
    reason: Type.Optional(reasonText('Why, for the audit log. Required when the rule is active (any change to it applies to the next sale) and when the update activates it.')),
  },
  {
    $id: 'UpdateSplitRuleRequest',
    additionalProperties: false,
    minProperties: 1,
    description: 'Fields to change; the resulting rule is validated as a whole. The account and mode of a rule never change.',
    examples: [{ priority: 5 }, { active: false }],
  },
);
export type UpdateSplitRuleRequest = Static<typeof UpdateSplitRuleRequest>;

export const SplitRule = Type.Object(
  {
    id: Type.String({ description: 'Prefix `spr_`.' }),
    object: constant('split_rule'),
    accountId: Type.String(),
    livemode: Type.Boolean(),
    priority: int32({ minimum: 0, maximum: MAX_PRIORITY }),
    conditions: ref('SplitRuleConditions'),
    splits: Type.Array(ref('SplitShare')),
    active: Type.Boolean(),
    description: Type.Union([Type.String(), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'SplitRule', additionalProperties: false, description: 'How a merchant\'s sales are split between recipients.' },
);
export type SplitRule = Static<typeof SplitRule>;
export type SplitShareBody = { type?: SplitShareType; recipientId: string; percentage?: number; amount?: number };

const looseSplits = Type.Array(LooseSplitShare, { minItems: 1, maxItems: MAX_SPLITS_PER_RULE });
export const LooseCreateSplitRuleRequest = Type.Object({ ...CreateSplitRuleRequest.properties, splits: looseSplits }, { additionalProperties: false });
export const LooseUpdateSplitRuleRequest = Type.Object({ ...UpdateSplitRuleRequest.properties, splits: Type.Optional(looseSplits) }, { additionalProperties: false, minProperties: 1 });
export type SplitRuleConditionsBody = { method?: 'pix' | 'credit_card'; minAmount?: number; maxAmount?: number };

export const SplitRuleList = listOf('SplitRule', 'SplitRuleList');

export const ListSplitRulesQuery = Type.Object(
  {
    ...ListQueryBase,
    accountId: Type.Optional(Type.String({ maxLength: 64, description: 'Only this merchant account\'s rules.' })),
    livemode: Type.Optional(Type.Boolean({ description: 'Only live (true) or sandbox (false) rules.' })),
    active: Type.Optional(Type.Boolean({ description: 'Only active (true) or deactivated (false) rules.' })),
  },
  { additionalProperties: false },
);
export type ListSplitRulesQuery = Static<typeof ListSplitRulesQuery>;

export const ActivateSplitRuleRequest = Type.Object(
  { reason: requiredReason },
  { $id: 'ActivateSplitRuleRequest', additionalProperties: false, examples: [{ reason: 'Seller contract signed' }] },
);

export const DeactivateSplitRuleRequest = Type.Object(
  { reason: optionalReason },
  { $id: 'DeactivateSplitRuleRequest', additionalProperties: false, description: 'Optional body.' },
);

export const ReorderSplitRulesRequest = Type.Object(
  {
    accountId: Type.String({ minLength: 1, maxLength: 64, description: 'The merchant account (`acct_`).' }),
    livemode: Type.Optional(Type.Boolean({ description: 'Live (true) or sandbox (false, the default) rules.' })),
    ruleIds: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 1000, description: 'Every split rule of the account in that mode (active or not), each once, in the order they should run: the first gets priority 10, the next 20, and so on.' }),
    reason: reasonText('Why, for the audit log. Required: the order decides which rule a sale gets, so who gets paid.'),
  },
  { $id: 'ReorderSplitRulesRequest', additionalProperties: false, examples: [{ accountId: 'acct_01jc6v8x2a9m3yq0d7b4e5f6g8', ruleIds: ['spr_01jc6v8x2a9m3yq0d7b4e5f6g9', 'spr_01jc6v8x2a9m3yq0d7b4e5f6g8'], reason: 'Campaign rule first' }] },
);
export type ReorderSplitRulesRequest = Static<typeof ReorderSplitRulesRequest>;

// A rule to preview before it is saved or activated: with `ruleId`, the changes to that rule (as a
// PATCH: fields left out keep their value); without, a draft (priority and splits, as on create).
export const SplitPreviewRule = Type.Object(
  {
    priority: Type.Optional(prioritySchema),
    conditions: Type.Optional(Type.Union([ref('SplitRuleConditions'), Type.Null()], { description: '`null` or `{}`: no conditions.' })),
    splits: Type.Optional(splitsSchema),
    description: Type.Optional(Type.Union([descriptionSchema, Type.Null()], { description: 'Not used by the computation; accepted so an editor can send the body it would save.' })),
  },
  {
    $id: 'SplitPreviewRule',
    additionalProperties: false,
    description: 'A split rule as it would be saved: with `ruleId`, the changes to that rule (fields left out keep their value, as in a PATCH); without `ruleId`, a new rule (a draft), which needs `priority` and `splits`, as on create.',
    examples: [{ priority: 10, conditions: { method: 'credit_card' }, splits: [{ recipientId: 'rcp_01jc6v8x2a9m3yq0d7b4e5f6g8', percentage: 15 }] }],
  },
);
export type SplitPreviewRule = Static<typeof SplitPreviewRule>;

const previewFields = {
  accountId: Type.String({ minLength: 1, maxLength: 64, description: 'The merchant account (`acct_`).' }),
  livemode: Type.Optional(Type.Boolean({ description: 'Live (true) or sandbox (false) rules. Defaults to the mode of `ruleId`\'s rule, or sandbox.' })),
  amount: cents({ minimum: 1, maximum: MAX_AMOUNT_CENTS, description: 'Gross sale amount in centavos.' }),
  method: stringEnum(['pix', 'credit_card']),
  ruleId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'A split rule (`spr_`) of the account, active or not. Alone: previews it as if it were active (an inactive rule before activating it). With `rule`: previews that rule with those changes, saved and active (an edit before saving it).' })),
};

export const SplitPreviewRequest = Type.Object(
  { ...previewFields, rule: Type.Optional(ref('SplitPreviewRule')) },
  {
    $id: 'SplitPreviewRequest',
    additionalProperties: false,
    description: 'A sale to preview. With neither `ruleId` nor `rule`, what the active rules do to it now. With either, also what they would do after the change (`after`).',
    examples: [
      { accountId: 'acct_01jc6v8x2a9m3yq0d7b4e5f6g8', amount: 10000, method: 'credit_card' },
      { accountId: 'acct_01jc6v8x2a9m3yq0d7b4e5f6g8', amount: 10000, method: 'credit_card', ruleId: 'spr_01jc6v8x2a9m3yq0d7b4e5f6g8' },
      { accountId: 'acct_01jc6v8x2a9m3yq0d7b4e5f6g8', amount: 10000, method: 'credit_card', rule: { priority: 5, splits: [{ recipientId: 'rcp_01jc6v8x2a9m3yq0d7b4e5f6g8', amount: 500 }] } },
    ],
  },
);
export type SplitPreviewRequest = Static<typeof SplitPreviewRequest>;
// Its loose twin (http/shapes.ts): the rule's shares without the oneOf.
export const LooseSplitPreviewRequest = Type.Object(
  { ...previewFields, rule: Type.Optional(Type.Object({ ...SplitPreviewRule.properties, splits: Type.Optional(looseSplits) }, { additionalProperties: false })) },
  { additionalProperties: false },
);

export const SplitPreviewReceivable = Type.Object(
  { payee: ref('Payee'), amount: cents({ description: 'Centavos.' }) },
  { $id: 'SplitPreviewReceivable', additionalProperties: false, description: 'What one payee would be owed from the sale.' },
);

export const SplitPreviewOutcome = Type.Object(
  {
    rule: Type.Union([ref('SplitRule'), Type.Null()], { description: 'The saved split rule that applies (as it would be after the change, when it is the previewed one), or null: no rule applies and the merchant receives the whole net value, or the previewed draft applies (see `previewedRuleApplies`).' }),
    previewedRuleApplies: Type.Boolean({ description: 'Whether the rule that applies is the previewed one (the draft, or `ruleId`\'s rule with its changes). Always false in `now` for a draft or an inactive rule.' }),
    receivables: Type.Array(ref('SplitPreviewReceivable'), { description: 'One per payee, merchant first, as a sale approved then would create them (zero shares create none).' }),
  },
  { $id: 'SplitPreviewOutcome', additionalProperties: false, description: 'Which rule a sale gets and what each payee receives.' },
);
export type SplitPreviewOutcome = Static<typeof SplitPreviewOutcome>;

export const SplitPreview = Type.Object(
  {
    object: constant('split_preview'),
    livemode: Type.Boolean(),
    accountId: Type.String(),
    amount: cents({ description: 'Gross amount, centavos.' }),
    method: stringEnum(['pix', 'credit_card']),
    fee: cents({ description: 'Processing fee with the account\'s current settings, centavos.' }),
    net: cents({ description: '`amount - fee`: what the receivables add up to.' }),
    rule: Type.Union([ref('SplitRule'), Type.Null()], { description: 'The split rule that applies now (the first active rule, by priority, whose conditions match and whose shares fit), or null: the merchant receives the whole net value. The same as `now.rule`.' }),
    receivables: Type.Array(
      ref('SplitPreviewReceivable'),
      { description: 'One per payee, merchant first, as a sale approved now would create them (zero shares create none). The same as `now.receivables`.' },
    ),
    now: ref('SplitPreviewOutcome'),
    after: Type.Union([ref('SplitPreviewOutcome'), Type.Null()], { description: 'What the sale would get after the change (the draft saved active, `ruleId`\'s rule activated, or saved with its changes and active), or null when the request previews no change.' }),
  },
  { $id: 'SplitPreview', additionalProperties: false, description: 'What a sale of this amount and method would produce now, and after a change to the rules when one is previewed, computed by the same code that approves a sale.' },
);
export type SplitPreview = Static<typeof SplitPreview>;

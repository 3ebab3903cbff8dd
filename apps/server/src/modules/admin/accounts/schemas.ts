import { Type, type Static } from 'typebox';
import { BankAccount, ListQueryBase, listOf, ref, refTo, stringEnum, constant, cents, int32 } from '../../../http/common.js';
import { MAX_SETTLEMENT_DELAY_DAYS } from '../../accounts/settings.js';
import { MAX_AMOUNT_CENTS } from '../../payments/schemas.js';
import { ADMIN_LIVEMODE, optionalReason, reasonText, requiredReason } from '../shared/schemas.js';
import type { BankAccount as BankAccountBody } from '../../../domain/bank-account.js';

export const MethodFee = Type.Object(
  {
    percentBps: int32({ minimum: 0, maximum: 10_000, description: 'Percentage in basis points (99 = 0.99%), 0-10000.' }),
    fixedCents: cents({ minimum: 0, maximum: MAX_AMOUNT_CENTS, description: 'Fixed part in centavos.' }),
  },
  { $id: 'MethodFee', additionalProperties: false, description: 'The processing fee of one method: a percentage plus a fixed part.' },
);
const delayDays = int32({ minimum: 0, maximum: MAX_SETTLEMENT_DELAY_DAYS, description: `Calendar days from approval to availability, 0-${MAX_SETTLEMENT_DELAY_DAYS}.` });

export const FeeSettings = Type.Object(
  { pix: refTo(MethodFee), credit_card: refTo(MethodFee) },
  { $id: 'FeeSettings', additionalProperties: false, description: 'The processing fee of each method.' },
);
export const SettlementDelayDays = Type.Object(
  { pix: delayDays, credit_card: delayDays },
  { $id: 'SettlementDelayDays', additionalProperties: false, description: 'Days from approval until the receivables of each method are available.' },
);

export const AdminAccountSettings = Type.Object(
  {
    fees: refTo(FeeSettings),
    settlementDelayDays: refTo(SettlementDelayDays),
  },
  { $id: 'AdminAccountSettings', additionalProperties: false, description: 'Effective money settings (defaults filled in): processing fee per method and days until receivables are available.' },
);

export const AdminAccount = Type.Object(
  {
    id: Type.String({ description: 'Prefix `acct_`.' }),
    object: constant('account'),
    name: Type.String(),
    email: Type.Union([Type.String(), Type.Null()]),
    liveEnabled: Type.Boolean({ description: 'Whether the account\'s `sk_live_` keys work.' }),
    livemode: ADMIN_LIVEMODE,
    settings: ref('AdminAccountSettings'),
    payoutBankAccount: Type.Union([ref('BankAccount'), Type.Null()], { description: 'Where the merchant\'s settlements are paid. Null until set: meanwhile the merchant\'s settlements are `held`.' }),
    payoutPixKey: Type.Union([ref('PixKey'), Type.Null()], { description: 'The merchant\'s Pix key for payouts by Pix, preferred to the bank account (a payout by Pix to the bank account itself needs `payoutHolderDocument`). Null: none.' }),
    payoutHolderDocument: Type.Union([Type.String({ examples: ['11.***.***/0001-**'] }), Type.Null()], { description: 'Whose the payout bank account and Pix key are (a CPF or CNPJ), masked: never shown whole. A CPF or CNPJ Pix key must be it; a payout by Pix to the bank account sends it as the holder\'s. Null: not set.' }),
    embedOrigins: Type.Array(Type.String(), { description: 'Origins allowed to frame the hosted checkout (its CSP `frame-ancestors`). Until an admin sets them: `http://localhost:*` and `http://127.0.0.1:*` for sandbox sessions, none for live ones.' }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'AdminAccount', additionalProperties: false, description: 'A merchant account, as the back office sees it.' },
);
export type AdminAccount = Static<typeof AdminAccount>;

export const AdminAccountList = listOf('AdminAccount', 'AdminAccountList');

export const ActivateLiveModeRequest = Type.Object(
  { reason: requiredReason },
  { $id: 'ActivateLiveModeRequest', additionalProperties: false, examples: [{ reason: 'KYC approved, contract 2026-118' }] },
);

export const ListAccountsQuery = Type.Object(
  {
    ...ListQueryBase,
    liveEnabled: Type.Optional(Type.Boolean({ description: 'Only accounts with live mode activated (true) or not (false).' })),
    search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Accounts whose id is this, or whose name or email contains it (case-insensitive).' })),
  },
  { additionalProperties: false },
);
export type ListAccountsQuery = Static<typeof ListAccountsQuery>;

export const MethodFeeUpdate = Type.Object(
  {
    percentBps: Type.Optional(MethodFee.properties.percentBps),
    fixedCents: Type.Optional(MethodFee.properties.fixedCents),
  },
  { $id: 'MethodFeeUpdate', additionalProperties: false, description: 'The parts of one method\'s fee to change.' },
);

export const FeeSettingsUpdate = Type.Object(
  { pix: Type.Optional(refTo(MethodFeeUpdate)), credit_card: Type.Optional(refTo(MethodFeeUpdate)) },
  { $id: 'FeeSettingsUpdate', additionalProperties: false, description: 'The fees to change, per method.' },
);
export const SettlementDelayDaysUpdate = Type.Object(
  { pix: Type.Optional(delayDays), credit_card: Type.Optional(delayDays) },
  { $id: 'SettlementDelayDaysUpdate', additionalProperties: false, description: 'The delays to change, per method.' },
);

export const UpdateAccountSettingsRequest = Type.Object(
  {
    fees: Type.Optional(refTo(FeeSettingsUpdate)),
    settlementDelayDays: Type.Optional(refTo(SettlementDelayDaysUpdate)),
    reason: optionalReason,
  },
  {
    $id: 'UpdateAccountSettingsRequest',
    additionalProperties: false,
    minProperties: 1,
    description: 'Only the fields sent change; the rest keep their current value. Applies to payments approved from now on.',
    examples: [{ fees: { credit_card: { percentBps: 349, fixedCents: 39 } }, settlementDelayDays: { credit_card: 14 } }],
  },
);
export type UpdateAccountSettingsRequest = Static<typeof UpdateAccountSettingsRequest>;

export const UpdatePayoutBankAccountRequest = Type.Object(
  {
    bankAccount: Type.Unsafe<BankAccountBody>({ $ref: 'BankAccount' }),
    pixKey: Type.Optional(Type.Union([Type.Unsafe<{ type: string; key: string }>({ $ref: 'PixKey' }), Type.Null()], { description: 'The merchant\'s Pix key for payouts by Pix (validated as a recipient\'s); `null` removes it; absent: unchanged. A CPF or CNPJ key must be `holderDocument` when one is set (VALIDATION_ERROR, param `pixKey.key`).' })),
    holderDocument: Type.Optional(Type.Union([Type.String({ minLength: 11, maxLength: 18, description: 'CPF (11 digits) or CNPJ (14 characters); punctuation . / - is ignored.', examples: ['11.222.333/0001-81'] }), Type.Null()], { description: 'Whose bank account and Pix key these are: the merchant\'s CPF or CNPJ. A payout by Pix to the bank account sends it as the holder\'s (the PSP checks it), and a CPF or CNPJ Pix key must be it. `null` removes it; absent: unchanged. Never shown whole.' })),
    reason: requiredReason,
  },
  {
    $id: 'UpdatePayoutBankAccountRequest',
    additionalProperties: false,
    description: 'The merchant\'s payout bank account, replaced whole and validated as a recipient\'s, its Pix key for payouts by Pix, and why (money will be paid there).',
    examples: [{ bankAccount: { bankCode: '341', agency: '0001', account: '12345-6', accountType: 'checking' }, reason: 'Bank letter of 2026-11-20 (ticket 4411)' }],
  },
);
export type UpdatePayoutBankAccountRequest = Static<typeof UpdatePayoutBankAccountRequest>;

export const UpdateEmbedOriginsRequest = Type.Object(
  {
    origins: Type.Array(Type.String({ minLength: 1, maxLength: 300 }), {
      maxItems: 20,
      description: 'Exact origins, `scheme://host[:port]`, no path: https for any host; http only for `localhost` and `127.0.0.1`, which may take any port as `:*`. No other wildcard. Replaces the list; `[]` lets no site frame the checkout.',
    }),
    reason: reasonText('Why, for the audit log. Required: it decides which sites may show the payment page.'),
  },
  {
    $id: 'UpdateEmbedOriginsRequest',
    additionalProperties: false,
    description: 'The sites allowed to show the hosted checkout in a frame (a modal opened by /v1/checkout.js), and why.',
    examples: [{ origins: ['https://loja.example', 'http://localhost:*'], reason: 'Merchant site goes live (ticket 4412)' }],
  },
);
export type UpdateEmbedOriginsRequest = Static<typeof UpdateEmbedOriginsRequest>;


// Read-only views of a merchant account: its API keys and its recipients.
export const AdminApiKey = Type.Object(
  {
    id: Type.String({ description: 'Prefix `key_`.' }),
    object: constant('api_key'),
    livemode: Type.Boolean(),
    kind: stringEnum(['secret', 'publishable']),
    display: Type.String({ description: 'The key\'s prefix and last four characters (`sk_test_…a1b2`): enough to recognise it, never enough to use it.' }),
    createdAt: Type.String({ format: 'date-time' }),
    revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'AdminApiKey', additionalProperties: false, description: 'An API key of a merchant account, as the back office shows it.' },
);
export type AdminApiKey = Static<typeof AdminApiKey>;
export const AdminApiKeyList = listOf('AdminApiKey', 'AdminApiKeyList');

export const AdminRecipient = Type.Object(
  {
    id: Type.String({ description: 'Prefix `rcp_`.' }),
    object: constant('recipient'),
    livemode: Type.Boolean(),
    name: Type.String(),
    document: Type.String({ description: 'The CNPJ masked: its first two and last two digits kept, every other digit an asterisk, punctuation kept (11.222.333/0001-81 shows only 11 and 81).' }),
    bankAccount: refTo(BankAccount),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'AdminRecipient', additionalProperties: false, description: 'A recipient of a merchant account, as the back office shows it: read-only, document masked.' },
);
export type AdminRecipient = Static<typeof AdminRecipient>;
export const AdminRecipientList = listOf('AdminRecipient', 'AdminRecipientList');

export const AccountViewSchemas = [MethodFee, FeeSettings, SettlementDelayDays, MethodFeeUpdate, FeeSettingsUpdate, SettlementDelayDaysUpdate, AdminApiKey, AdminApiKeyList, AdminRecipient, AdminRecipientList];

export const ListKeysQuery = Type.Object(
  { limit: ListQueryBase.limit, startingAfter: ListQueryBase.startingAfter, endingBefore: ListQueryBase.endingBefore, livemode: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export const ListAccountRecipientsQuery = Type.Object(
  { ...ListQueryBase, livemode: Type.Optional(Type.Boolean({ description: 'Only live (true) or sandbox (false) recipients.' })) },
  { additionalProperties: false },
);
export type ListAccountRecipientsQuery = Static<typeof ListAccountRecipientsQuery>;


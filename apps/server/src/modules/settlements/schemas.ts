import { Type, type Static } from 'typebox';
import { ListQueryBase, listOf, ref, stringEnum, constant, always, cents, int64 } from '../../http/common.js';
import { SETTLEMENT_RUN_STATUSES, SETTLEMENT_STATUSES } from '../../domain/states.js';
import { PIX_KEY_TYPES } from '../../domain/pix-key.js';

export const SettlementPixKey = Type.Object(
  {
    type: stringEnum(PIX_KEY_TYPES),
    key: Type.String({ description: 'Masked: enough to recognise the key, not to use it.', examples: ['***.456.789-**'] }),
  },
  { $id: 'SettlementPixKey', additionalProperties: false, description: 'The payee\'s Pix key when the settlement was made, masked.' },
);

export const SettlementPayout = Type.Object(
  {
    method: constant('pix'),
    reference: Type.String({ description: 'The payout\'s id at the PSP (Efí\'s `idEnvio`): `po` and the settlement id\'s 26 characters. A retry is the same payout.' }),
    destination: Type.String({ description: 'Where it went, masked: `Pix cpf ***.456.789-**`, or the bank code, agency and the account\'s last digits.' }),
    endToEndId: Type.Union([Type.String(), Type.Null()], { description: 'The Pix end-to-end id (32 characters) once the PSP gives it: what the payee\'s bank statement shows.' }),
    sentAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'SettlementPayout', additionalProperties: false, description: 'The payout by Pix at a PSP (issue 26); null for a settlement paid by the sandbox or not sent yet.' },
);

export const HOLD_NO_PAYOUT_BANK_ACCOUNT = 'no_payout_bank_account';
// Issue 26: the platform's Pix balance at the PSP, read before the run's payouts, does not cover
// this one (or could not be read): it waits for the next run, which tries the held ones first.
export const HOLD_INSUFFICIENT_PSP_BALANCE = 'insufficient_psp_balance';
export const HOLD_PSP_BALANCE_UNAVAILABLE = 'psp_balance_unavailable';
export const HOLD_REASONS = [HOLD_NO_PAYOUT_BANK_ACCOUNT, HOLD_INSUFFICIENT_PSP_BALANCE, HOLD_PSP_BALANCE_UNAVAILABLE] as const;
export type HoldReason = (typeof HOLD_REASONS)[number];
export const BALANCE_HOLDS: readonly HoldReason[] = [HOLD_INSUFFICIENT_PSP_BALANCE, HOLD_PSP_BALANCE_UNAVAILABLE];

export const Settlement = Type.Object(
  {
    id: Type.String({ description: 'Prefix `stl_`.' }),
    object: constant('settlement'),
    payee: ref('Payee'),
    amount: cents({ description: 'Centavos: the sum of its receivables (refund adjustments included).' }),
    receivableCount: int64(),
    status: stringEnum(SETTLEMENT_STATUSES, { description: '`held` while it waits (see `holdReason`: no payout bank account, or not enough balance at the PSP); `pending` until its payout is sent; `processing` while a payout by Pix is at the PSP (see `payout`); `paid`; `failed` (see `failureReason`) puts its receivables back for the next run.' }),
    holdReason: Type.Union([stringEnum(HOLD_REASONS), Type.Null()], { description: 'Why a `held` settlement waits: `no_payout_bank_account`, the merchant account has no payout bank account yet (once an admin sets it, the settlement takes it and is paid out at once); `insufficient_psp_balance`, the platform\'s Pix balance at the PSP did not cover it when the run\'s payouts were about to be sent; `psp_balance_unavailable`, that balance could not be read. The balance holds are tried again first at the next run, oldest first. Null otherwise.' }),
    bankAccount: Type.Union([ref('BankAccount'), Type.Null()], { description: 'Snapshot of where it is paid: the recipient\'s bank account, or the merchant account\'s payout bank account, as it was when settled (or released). Null only while `held`.' }),
    pixKey: Type.Union([ref('SettlementPixKey'), Type.Null()], { description: 'The payee\'s Pix key when settled, masked: a payout by Pix goes there rather than to `bankAccount`.' }),
    settlementDate: Type.String({ format: 'date' }),
    paidAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the money arrived (a payout by Pix: the PSP\'s settlement time).' }),
    failureReason: Type.Union([Type.String(), Type.Null()], { description: 'Why the payout failed, in the PSP\'s words when it refused it.' }),
    failureCode: Type.Union([Type.String(), Type.Null()], { description: 'The PSP\'s code for a refusal (Efí\'s `nome`, e.g. `saldo_insuficiente`), or ours: `no_payout_destination`. docs/providers.md lists them.' }),
    payout: Type.Union([ref('SettlementPayout'), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    livemode: Type.Boolean(),
  },
  { $id: 'Settlement', additionalProperties: false, description: 'A payout to one payee of everything due to them on a settlement date.' },
);
export type Settlement = Static<typeof Settlement>;

export const SettlementList = listOf('Settlement', 'SettlementList');

export const ListSettlementsQuery = Type.Object(
  {
    ...ListQueryBase,
    recipientId: Type.Optional(Type.String({ maxLength: 64 })),
    payeeType: Type.Optional(stringEnum(['merchant', 'recipient'])),
    status: Type.Optional(stringEnum(SETTLEMENT_STATUSES)),
    settlementDateGte: Type.Optional(Type.String({ format: 'date' })),
    settlementDateLte: Type.Optional(Type.String({ format: 'date' })),
  },
  { additionalProperties: false },
);
export type ListSettlementsQuery = Static<typeof ListSettlementsQuery>;

export const SettlementRun = Type.Object(
  {
    id: Type.String({ description: 'Prefix `str_`.' }),
    object: constant('settlement_run'),
    runDate: Type.String({ format: 'date' }),
    status: stringEnum(SETTLEMENT_RUN_STATUSES, { description: '`pending` until a worker starts it (a run asked for through the admin API is carried out in the background), then `running`, then `completed`.' }),
    trigger: stringEnum(['schedule', 'admin']),
    settlementCount: int64(),
    receivableCount: int64(),
    totalAmount: cents(),
    startedAt: Type.String({ format: 'date-time', description: 'When it was asked for, then when a worker started it.' }),
    finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    livemode: always(false, 'A run settles both modes\' receivables (each settlement says its own mode): always `false`.'),
  },
  { $id: 'SettlementRun', additionalProperties: false, description: 'One run of the settlement: what it settled on its date.' },
);
export type SettlementRun = Static<typeof SettlementRun>;
export const SettlementRunList = listOf('SettlementRun', 'SettlementRunList');

// The daily statement of one payee (issue 26): what was paid to it on one São Paulo date.
export const DailyStatementItem = Type.Object(
  {
    settlementId: Type.String({ description: 'The settlement paid (`stl_`).' }),
    amount: cents({ description: 'Centavos paid.' }),
    endToEndId: Type.Union([Type.String(), Type.Null()], { description: 'The Pix end-to-end id (32 characters): what the payee\'s bank statement shows. Null for a payout made by the sandbox.' }),
    reference: Type.Union([Type.String(), Type.Null()], { description: 'The payout\'s id at the PSP (Efí\'s `idEnvio`); null for the sandbox.' }),
    paidAt: Type.String({ format: 'date-time', description: 'When the money arrived (the PSP\'s settlement time), inside the statement\'s day.' }),
    settlementDate: Type.String({ format: 'date', description: 'The settlement\'s own date (the run\'s): a payout can land a day after it.' }),
  },
  { $id: 'DailyStatementItem', additionalProperties: false, description: 'One settlement paid on the statement\'s day.' },
);

export const DailyStatement = Type.Object(
  {
    object: constant('daily_statement'),
    date: Type.String({ format: 'date', description: 'The São Paulo calendar date (YYYY-MM-DD).' }),
    timeZone: constant('America/Sao_Paulo', { description: 'Days are São Paulo days (UTC−03:00; Brazil has no daylight saving time since 2019).' }),
    from: Type.String({ format: 'date-time', description: 'The day\'s first instant, in UTC (inclusive).' }),
    to: Type.String({ format: 'date-time', description: 'The next day\'s first instant, in UTC (exclusive).' }),
    payee: ref('Payee'),
    count: int64({ description: 'How many settlements were paid that day.' }),
    total: cents({ description: 'Their sum in centavos: exactly the sum of `data[].amount`.' }),
    data: Type.Array(ref('DailyStatementItem'), { description: 'Oldest payment first.' }),
    livemode: Type.Boolean(),
  },
  {
    $id: 'DailyStatement', additionalProperties: false, description: 'The settlements paid to one payee on one São Paulo calendar date, with their end-to-end ids and the total.',
    examples: [{
      object: 'daily_statement', date: '2026-11-27', timeZone: 'America/Sao_Paulo', from: '2026-11-27T03:00:00.000Z', to: '2026-11-28T03:00:00.000Z',
      payee: { type: 'recipient', id: 'rcp_01JD0000000000000000000000' }, count: 1, total: 750,
      data: [{ settlementId: 'stl_01JD0000000000000000000000', amount: 750, endToEndId: 'E09089356202611271300abcdef01234', reference: 'po01JD0000000000000000000000', paidAt: '2026-11-27T13:00:05.000Z', settlementDate: '2026-11-27' }],
      livemode: false,
    }],
  },
);
export type DailyStatement = Static<typeof DailyStatement>;

export const DailyStatementQuery = Type.Object(
  {
    date: Type.Optional(Type.String({ format: 'date', description: 'The São Paulo calendar date (YYYY-MM-DD); default: today there.' })),
    recipientId: Type.Optional(Type.String({ maxLength: 64, description: 'The recipient (`rcp_`) whose statement this is; absent: the merchant\'s own settlements.' })),
  },
  { additionalProperties: false },
);
export type DailyStatementQuery = Static<typeof DailyStatementQuery>;

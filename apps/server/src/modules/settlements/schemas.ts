import { Type, type Static } from 'typebox';
import { ListQueryBase, listOf, ref, stringEnum, constant, always, cents, int64 } from '../../http/common.js';
import { SETTLEMENT_RUN_STATUSES, SETTLEMENT_STATUSES } from '../../domain/states.js';

export const HOLD_NO_PAYOUT_BANK_ACCOUNT = 'no_payout_bank_account';

export const Settlement = Type.Object(
  {
    id: Type.String({ description: 'Prefix `stl_`.' }),
    object: constant('settlement'),
    payee: ref('Payee'),
    amount: cents({ description: 'Centavos: the sum of its receivables (refund adjustments included).' }),
    receivableCount: int64(),
    status: stringEnum(SETTLEMENT_STATUSES, { description: '`held` while the merchant account has no payout bank account (see `holdReason`); `pending` until its payout is sent; `processing` while a payout by Pix is at the PSP (see `payout`); `paid`; `failed` (see `failureReason`) puts its receivables back for the next run.' }),
    holdReason: Type.Union([constant(HOLD_NO_PAYOUT_BANK_ACCOUNT), Type.Null()], { description: 'Why a `held` settlement waits: `no_payout_bank_account`, the merchant account has no payout bank account yet. Once an admin sets it, the settlement takes it and is paid out at once. Null otherwise.' }),
    bankAccount: Type.Union([ref('BankAccount'), Type.Null()], { description: 'Snapshot of where it is paid: the recipient\'s bank account, or the merchant account\'s payout bank account, as it was when settled (or released). Null only while `held`.' }),
    settlementDate: Type.String({ format: 'date' }),
    paidAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    failureReason: Type.Union([Type.String(), Type.Null()]),
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

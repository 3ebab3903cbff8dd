import { Type, type Static } from 'typebox';
import { ListQueryBase, listOf, ref } from '../../http/common.js';

export const Settlement = Type.Object(
  {
    id: Type.String({ description: 'Prefix `stl_`.' }),
    object: Type.Literal('settlement'),
    payee: ref('Payee'),
    amount: Type.Integer({ description: 'Centavos: the sum of its receivables (refund adjustments included).' }),
    receivableCount: Type.Integer(),
    status: Type.Enum(['pending', 'paid', 'failed'], { description: '`pending` while the payout is under way; `failed` puts its receivables back for the next run.' }),
    bankAccount: Type.Union([Type.Object({ bankCode: Type.String(), agency: Type.String(), account: Type.String(), accountType: Type.String() }), Type.Null()], { description: 'Snapshot of the recipient\'s bank account at settlement time (null for the merchant, paid to the account on file with the acquirer).' }),
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
    payeeType: Type.Optional(Type.Enum(['merchant', 'recipient'])),
    status: Type.Optional(Type.Enum(['pending', 'paid', 'failed'])),
    settlementDateGte: Type.Optional(Type.String({ format: 'date' })),
    settlementDateLte: Type.Optional(Type.String({ format: 'date' })),
  },
  { additionalProperties: false },
);
export type ListSettlementsQuery = Static<typeof ListSettlementsQuery>;

export const SettlementRun = Type.Object(
  {
    id: Type.String({ description: 'Prefix `str_`.' }),
    object: Type.Literal('settlement_run'),
    runDate: Type.String({ format: 'date' }),
    status: Type.Enum(['running', 'completed']),
    trigger: Type.Enum(['schedule', 'admin']),
    settlementCount: Type.Integer(),
    receivableCount: Type.Integer(),
    totalAmount: Type.Integer(),
    startedAt: Type.String({ format: 'date-time' }),
    finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'SettlementRun', additionalProperties: false, description: 'One run of the settlement: what it settled on its date.' },
);
export type SettlementRun = Static<typeof SettlementRun>;
export const SettlementRunList = listOf('SettlementRun', 'SettlementRunList');

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

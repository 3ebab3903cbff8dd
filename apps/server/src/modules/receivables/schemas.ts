import { Type, type Static } from 'typebox';
import { ListQueryBase, listOf, stringEnum, constant, cents } from '../../http/common.js';

export const Payee = Type.Object(
  {
    type: stringEnum(['merchant', 'recipient']),
    id: Type.String({ description: 'The merchant account id (`acct_`) or the recipient id (`rcp_`).' }),
  },
  { $id: 'Payee', additionalProperties: false, description: 'Who a receivable or settlement is owed to.' },
);

export const Receivable = Type.Object(
  {
    id: Type.String({ description: 'Prefix `rcv_`.' }),
    object: constant('receivable'),
    paymentId: Type.String(),
    payee: Type.Unsafe<{ type: 'merchant' | 'recipient'; id: string }>({ $ref: 'Payee' }),
    splitRuleId: Type.Union([Type.String(), Type.Null()], { description: 'The split rule applied to the sale, if any.' }),
    amount: cents({ description: 'Centavos. Negative for a refund of an already settled share, or a lost dispute\'s debit: deducted from the payee\'s next settlement.' }),
    status: stringEnum(['pending', 'settled', 'canceled']),
    availableOn: Type.String({ format: 'date', description: 'Date (São Paulo) from which it can be settled: Pix D+0, card D+30 by default.' }),
    settlementId: Type.Union([Type.String(), Type.Null()]),
    refundId: Type.Union([Type.String(), Type.Null()], { description: 'For a refund adjustment: the refund that made it.' }),
    disputeId: Type.Union([Type.String(), Type.Null()], { description: 'For a dispute\'s debit (negative, when it was lost) or give-back (positive, when it was won again): the dispute that made it.' }),
    createdAt: Type.String({ format: 'date-time' }),
    livemode: Type.Boolean(),
  },
  { $id: 'Receivable', additionalProperties: false, description: 'What one payee is owed from one sale (or a refund adjustment).' },
);
export type Receivable = Static<typeof Receivable>;

export const ReceivableList = listOf('Receivable', 'ReceivableList');

export const ListReceivablesQuery = Type.Object(
  {
    ...ListQueryBase,
    paymentId: Type.Optional(Type.String({ maxLength: 64 })),
    recipientId: Type.Optional(Type.String({ maxLength: 64, description: 'Only this recipient\'s receivables.' })),
    payeeType: Type.Optional(stringEnum(['merchant', 'recipient'])),
    status: Type.Optional(stringEnum(['pending', 'settled', 'canceled'])),
    settlementId: Type.Optional(Type.String({ maxLength: 64 })),
    availableOnGte: Type.Optional(Type.String({ format: 'date' })),
    availableOnLte: Type.Optional(Type.String({ format: 'date' })),
  },
  { additionalProperties: false },
);
export type ListReceivablesQuery = Static<typeof ListReceivablesQuery>;

import { Type, type Static } from 'typebox';
import { ListQueryBase, listOf, ref, stringEnum, constant, cents } from '../../http/common.js';
import { REFUND_STATUSES } from '../../domain/states.js';

export const CreateRefundBody = Type.Object(
  {
    paymentId: Type.String({ maxLength: 64, description: 'The approved payment to refund.' }),
    amount: Type.Optional(cents({ minimum: 1, maximum: 1_000_000_000, description: 'Centavos; default: everything not yet refunded.' })),
    reason: Type.Optional(stringEnum(['requested_by_customer', 'duplicate', 'fraudulent'])),
    metadata: Type.Optional(ref('Metadata')),
  },
  { $id: 'CreateRefundRequest', additionalProperties: false, examples: [{ paymentId: 'pay_01jc6v8x2a9m3yq0d7b4e5f6g8', amount: 500 }] },
);
export type CreateRefundBody = Static<typeof CreateRefundBody>;

export const Refund = Type.Object(
  {
    id: Type.String({ description: 'Prefix `ref_`.' }),
    object: constant('refund'),
    paymentId: Type.String(),
    amount: cents({ description: 'Centavos returned to the payer.' }),
    feeRefunded: cents({ description: 'The part of the processing fee given back, in proportion to the amount.' }),
    netAmount: cents({ description: 'amount - feeRefunded: what comes off the payees\' receivables, in proportion to their shares.' }),
    status: stringEnum(REFUND_STATUSES, { description: '`pending` until the provider confirms the money went back.' }),
    reason: Type.Union([Type.String(), Type.Null()]),
    metadata: ref('Metadata'),
    createdAt: Type.String({ format: 'date-time' }),
    livemode: Type.Boolean(),
  },
  { $id: 'Refund', additionalProperties: false, description: 'A full or partial refund of a payment.' },
);
export type Refund = Static<typeof Refund>;
export const RefundList = listOf('Refund', 'RefundList');

export const ListRefundsQuery = Type.Object(
  { ...ListQueryBase, paymentId: Type.Optional(Type.String({ maxLength: 64 })), status: Type.Optional(stringEnum(REFUND_STATUSES)) },
  { additionalProperties: false },
);
export type ListRefundsQuery = Static<typeof ListRefundsQuery>;

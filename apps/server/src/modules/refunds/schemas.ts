import { Type, type Static } from 'typebox';
import { ListQueryBase, listOf, ref, stringEnum, constant, cents, nullableRef } from '../../http/common.js';
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

// A live Pix refund is a devolução at the PSP (API Pix `PUT /pix/{e2eid}/devolucao/{id}`), or a
// return the payer's bank started (MED). Named (issue 28).
export const RefundPixReturn = Type.Object(
  {
    id: Type.String({ description: 'The devolução\'s id at the PSP: ours, derived from the refund id (`rf` + its 26 characters), or the PSP\'s for a return the payer\'s bank started.' }),
    rtrId: Type.Union([Type.String(), Type.Null()], { description: 'The return\'s id in the Pix system (RTR...), what the payer\'s bank shows; null until the PSP gives it.' }),
    nature: stringEnum(['ORIGINAL', 'MED_OPERACIONAL', 'MED_FRAUDE'], { description: '`ORIGINAL`: asked by us (POST /v1/refunds); `MED_FRAUDE` / `MED_OPERACIONAL`: started by the payer\'s bank (Mecanismo Especial de Devolução), debited from the merchant.' }),
    status: stringEnum(['EM_PROCESSAMENTO', 'DEVOLVIDO', 'NAO_REALIZADO'], { description: 'The devolução\'s status at the PSP, as the refund\'s: `EM_PROCESSAMENTO` (pending), `DEVOLVIDO` (succeeded), `NAO_REALIZADO` (failed).' }),
  },
  { $id: 'RefundPixReturn', additionalProperties: false, description: 'A live Pix refund as a devolução in the Pix system.' },
);

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
    kind: stringEnum(['requested', 'med_fraud', 'med_operational'], { description: '`requested`: asked through POST /v1/refunds; `med_fraud` / `med_operational`: a live Pix returned by the payer\'s bank (MED), recorded as a refund because it debits the merchant the same way.' }),
    pixReturn: nullableRef(RefundPixReturn, { description: 'A live Pix refund: its devolução at the PSP. Null for cards, in the sandbox, and for a moment after create, until the devolução is asked at the PSP.' }),
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

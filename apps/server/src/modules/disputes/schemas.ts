import { Type, type Static } from 'typebox';
import { ListQueryBase, listOf, stringEnum, constant, cents } from '../../http/common.js';
import { DISPUTE_STATUSES } from '../../domain/states.js';

export const DISPUTE_KINDS = ['card_chargeback', 'pix_med'] as const;

// Issue 27: a card chargeback (Adyen's dispute notifications) or a Pix returned by the payer's
// bank (MED). Read-only in the API: its source moves it (docs/providers.md, "Disputes").
export const Dispute = Type.Object(
  {
    id: Type.String({ description: 'Prefix `dp_`.' }),
    object: constant('dispute'),
    paymentId: Type.String({ description: 'The disputed payment.' }),
    kind: stringEnum(DISPUTE_KINDS, { description: '`card_chargeback`: the card holder\'s bank disputes a card payment (Adyen\'s dispute notifications); `pix_med`: the payer\'s bank returned a Pix through the MED (Mecanismo Especial de Devolução), recorded as a refund too (`refundId`).' }),
    status: stringEnum(DISPUTE_STATUSES, { description: '`needs_response`: the issuer asks for information or announced the chargeback (answer by `respondBy`, at the acquirer); `under_review`: the defence is with the issuer; `lost`: the payees are debited (`amountDebited`); `won`: nothing is (or the debit was given back). A reversed chargeback makes a lost dispute won; a second chargeback makes a won one lost.' }),
    amount: cents({ description: 'Centavos disputed.' }),
    currency: constant('BRL'),
    amountDebited: cents({ description: 'Centavos the merchant and the split\'s recipients give up for it now, in negative receivables (`disputeId`): the disputed amount while lost, 0 otherwise. For a Pix MED the refund took it (its `netAmount` from the payees), so 0 here.' }),
    reason: Type.Union([Type.String(), Type.Null()], { description: 'The reason as the source gave it (the scheme\'s wording, or the MED\'s nature).' }),
    reasonCode: Type.Union([Type.String(), Type.Null()], { description: 'The card scheme\'s reason code (`chargebackReasonCode`, or `rfiReasonCode` for a request for information); null for a Pix MED.' }),
    respondBy: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the defence period ends (Adyen\'s `defensePeriodEndsAt`), when the source gives one.' }),
    refundId: Type.Union([Type.String(), Type.Null()], { description: 'A Pix MED: the refund that recorded the return. Null for a card chargeback.' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    closedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When it last became `won` or `lost`; null while open.' }),
    livemode: Type.Boolean(),
  },
  { $id: 'Dispute', additionalProperties: false, description: 'A chargeback of a card payment, or a Pix returned by the payer\'s bank (MED).' },
);
export type Dispute = Static<typeof Dispute>;
export const DisputeList = listOf('Dispute', 'DisputeList');

export const ListDisputesQuery = Type.Object(
  {
    ...ListQueryBase,
    paymentId: Type.Optional(Type.String({ maxLength: 64, description: 'Only this payment\'s disputes.' })),
    status: Type.Optional(stringEnum(DISPUTE_STATUSES)),
    kind: Type.Optional(stringEnum(DISPUTE_KINDS)),
  },
  { additionalProperties: false },
);
export type ListDisputesQuery = Static<typeof ListDisputesQuery>;

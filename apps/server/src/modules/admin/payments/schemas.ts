import { Type, type Static } from 'typebox';
import { constant, ListQueryBase, listOf, ref, stringEnum, cents } from '../../../http/common.js';
import { PAYMENT_STATUSES } from '../../../domain/states.js';
import { Payment } from '../../payments/schemas.js';

// How many receivables, refunds and events the detail carries at most (a payment has a handful).
export const MAX_DETAIL_ITEMS = 100;

export const AdminPaymentSummary = Type.Object(
  {
    id: Type.String({ description: 'Prefix `pay_`.' }),
    object: constant('payment'),
    livemode: Type.Boolean(),
    accountId: Type.String(),
    accountName: Type.String({ description: 'The merchant account\'s name (issue 29: merchants are named, not only shown by id).' }),
    status: Payment.properties.status,
    amount: cents({ description: 'Centavos.' }),
    amountRefunded: cents({ description: 'Centavos.' }),
    method: Payment.properties.method,
    createdAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'AdminPaymentSummary', additionalProperties: false, description: 'A payment in the back office\'s search results.' },
);
export type AdminPaymentSummary = Static<typeof AdminPaymentSummary>;
export const AdminPaymentSummaryList = listOf('AdminPaymentSummary', 'AdminPaymentSummaryList');

export const AdminPaymentDetail = Type.Object(
  {
    ...Payment.properties,
    accountId: Type.String({ description: 'The merchant account (`acct_`).' }),
    accountName: Type.String({ description: 'The merchant account\'s name (issue 29: merchants are named, not only shown by id).' }),
    receivables: Type.Array(ref('Receivable'), { description: 'What each payee is owed from the sale, and the refund adjustments.' }),
    refunds: Type.Array(ref('Refund')),
    disputes: Type.Array(ref('Dispute'), { description: 'Its chargebacks and Pix MED returns (issue 27), oldest first.' }),
    events: Type.Array(ref('EventObject'), { description: `The events about this payment, its refunds and receivables, oldest first (within the event retention; at most ${MAX_DETAIL_ITEMS}).` }),
  },
  { $id: 'AdminPaymentDetail', additionalProperties: false, description: 'A payment with its receivables, refunds, disputes and events.' },
);
export type AdminPaymentDetail = Static<typeof AdminPaymentDetail>;

export const ListAdminPaymentsQuery = Type.Object(
  {
    ...ListQueryBase,
    id: Type.Optional(Type.String({ maxLength: 64, description: 'Only this payment (`pay_...`).' })),
    accountId: Type.Optional(Type.String({ maxLength: 64, description: 'Only this merchant account\'s payments.' })),
    livemode: Type.Optional(Type.Boolean()),
    status: Type.Optional(stringEnum([...PAYMENT_STATUSES])),
    method: Type.Optional(stringEnum(['pix', 'credit_card'])),
    amountGte: Type.Optional(cents({ minimum: 0, description: 'Only payments of at least this amount (centavos).' })),
    amountLte: Type.Optional(cents({ minimum: 0, description: 'Only payments of at most this amount (centavos).' })),
  },
  { additionalProperties: false },
);
export type ListAdminPaymentsQuery = Static<typeof ListAdminPaymentsQuery>;

// The same filters, for the CSV export (no page: every payment that matches).
const { limit: _limit, startingAfter: _after, endingBefore: _before, ...exportFilters } = ListAdminPaymentsQuery.properties;
export const ExportAdminPaymentsQuery = Type.Object(exportFilters, { additionalProperties: false });
export type ExportAdminPaymentsQuery = Static<typeof ExportAdminPaymentsQuery>;

export const adminPaymentSchemas = [AdminPaymentSummary, AdminPaymentSummaryList, AdminPaymentDetail];


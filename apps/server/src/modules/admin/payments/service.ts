import type { FastifyInstance } from 'fastify';
import type { Selectable } from 'kysely';
import { Type, type Static } from 'typebox';
import type { Store } from '../../../store/index.js';
import type { PaymentsTable } from '../../../store/schema.js';
import { notFound } from '../../../errors.js';
import { idFloor } from '../../../domain/ids.js';
import { constant, ListQueryBase, listOf, ref, stringEnum } from '../../../http/common.js';
import { paginate } from '../../../http/pagination.js';
import { PAYMENT_STATUSES } from '../../../domain/states.js';
import { toPayment } from '../../payments/repository.js';
import { Payment } from '../../payments/schemas.js';
import { toReceivable } from '../../receivables/service.js';
import { toRefund } from '../../refunds/service.js';
import { toEvent } from '../../events/service.js';

// Payments across every merchant account, for the back office: a search (by id, account, status,
// method, mode and creation date) and a detail with what the payment produced.

// How many receivables, refunds and events the detail carries at most (a payment has a handful).
const MAX_DETAIL_ITEMS = 100;

export const AdminPaymentSummary = Type.Object(
  {
    id: Type.String({ description: 'Prefix `pay_`.' }),
    object: constant('payment'),
    livemode: Type.Boolean(),
    accountId: Type.String(),
    status: Payment.properties.status,
    amount: Type.Integer({ description: 'Centavos.' }),
    amountRefunded: Type.Integer({ description: 'Centavos.' }),
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
    receivables: Type.Array(ref('Receivable'), { description: 'What each payee is owed from the sale, and the refund adjustments.' }),
    refunds: Type.Array(ref('Refund')),
    events: Type.Array(ref('Event'), { description: `The events about this payment, its refunds and receivables, oldest first (within the event retention; at most ${MAX_DETAIL_ITEMS}).` }),
  },
  { $id: 'AdminPaymentDetail', additionalProperties: false, description: 'A payment with its receivables, refunds and events.' },
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
  },
  { additionalProperties: false },
);
type ListAdminPaymentsQuery = Static<typeof ListAdminPaymentsQuery>;

export const adminPaymentSchemas = [AdminPaymentSummary, AdminPaymentSummaryList, AdminPaymentDetail];

const toSummary = (row: Selectable<PaymentsTable>): AdminPaymentSummary => ({
  id: row.id,
  object: 'payment',
  livemode: row.livemode === 1,
  accountId: row.account_id,
  status: row.status as AdminPaymentSummary['status'],
  amount: row.amount,
  amountRefunded: row.amount_refunded,
  method: row.method as AdminPaymentSummary['method'],
  createdAt: row.created_at,
});

export async function getAdminPayment(store: Store, id: string): Promise<AdminPaymentDetail> {
  const row = await store.db.selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('payment', 'id');
  const [receivables, refunds, events] = await Promise.all([
    store.db.selectFrom('receivables').selectAll().where('payment_id', '=', id).orderBy('id', 'asc').limit(MAX_DETAIL_ITEMS).execute(),
    store.db.selectFrom('refunds').selectAll().where('payment_id', '=', id).orderBy('id', 'asc').limit(MAX_DETAIL_ITEMS).execute(),
    // Events carry their object as JSON; the payment's id appears in every event about it, its
    // refunds and its receivables. Scanned from the payment's creation on, within its account.
    store.db.selectFrom('events').selectAll()
      .where('account_id', '=', row.account_id).where('livemode', '=', row.livemode)
      .where('id', '>=', idFloor('event', Date.parse(row.created_at)))
      .where('data', 'like', `%"${id}"%`)
      .orderBy('id', 'asc').limit(MAX_DETAIL_ITEMS).execute(),
  ]);
  return {
    ...toPayment(row),
    accountId: row.account_id,
    receivables: receivables.map(toReceivable),
    refunds: refunds.map(toRefund),
    events: events.map(toEvent) as AdminPaymentDetail['events'],
  };
}

const tags = ['Admin'];
const security = [{ adminSession: [] }];

export function adminPaymentRoutes(scope: FastifyInstance, store: Store): void {
  scope.get<{ Querystring: ListAdminPaymentsQuery }>('/admin/payments', {
    config: { auth: 'none', permission: 'payments:view' },
    schema: {
      operationId: 'adminListPayments', tags, security, summary: 'Search payments',
      description: 'Payments of every merchant account, newest first, with cursors. Filter by `id`, `accountId`, `livemode`, `status`, `method` and creation date (`createdGte`, `createdLte`).',
      querystring: ListAdminPaymentsQuery,
      response: { 200: ref('AdminPaymentSummaryList') },
    },
  }, (req) => {
    const q = req.query;
    const scope = store.db.selectFrom('payments').selectAll();
    let qb = scope;
    if (q.id !== undefined) qb = qb.where('id', '=', q.id);
    if (q.accountId !== undefined) qb = qb.where('account_id', '=', q.accountId);
    if (q.livemode !== undefined) qb = qb.where('livemode', '=', q.livemode ? 1 : 0);
    if (q.status !== undefined) qb = qb.where('status', '=', q.status);
    if (q.method !== undefined) qb = qb.where('method', '=', q.method);
    return paginate(qb, q, toSummary, scope);
  });

  scope.get<{ Params: { id: string } }>('/admin/payments/:id', {
    config: { auth: 'none', permission: 'payments:view' },
    schema: {
      operationId: 'adminGetPayment', tags, security, summary: 'Fetch a payment with its receivables, refunds and events',
      description: 'Any merchant\'s payment, with the receivables it produced (and refund adjustments), its refunds and the events about it.',
      params: Type.Object({ id: Type.String({ maxLength: 64, description: 'Payment id (`pay_...`).' }) }, { additionalProperties: false }),
      response: { 200: ref('AdminPaymentDetail') },
    },
  }, (req) => getAdminPayment(store, req.params.id));
}

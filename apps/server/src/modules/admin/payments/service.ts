import type { Selectable } from 'kysely';
import type { Store } from '../../../store/index.js';
import type { PaymentsTable } from '../../../store/schema.js';
import { notFound } from '../../../errors.js';
import { idFloor } from '../../../domain/ids.js';
import { paginate, type Page } from '../../../http/pagination.js';
import type { FastifyReply } from 'fastify';
import { MAX_DETAIL_ITEMS, type AdminPaymentDetail, type AdminPaymentSummary, type ExportAdminPaymentsQuery, type ListAdminPaymentsQuery } from './schemas.js';
import { CSV_PAGE_ROWS, reais, sendCsv } from '../shared/csv.js';
import { accountNames, namedPage } from '../shared/names.js';
import { readPayment, toPayment } from '../../payments/repository.js';
import { toReceivable } from '../../receivables/service.js';
import { toRefund } from '../../refunds/service.js';
import { toDispute } from '../../disputes/service.js';
import { toEvent } from '../../events/service.js';

// Payments across every merchant account, for the back office: a search (by id, account, status,
// method, mode and creation date) and a detail with what the payment produced.


const toSummary = (row: Selectable<PaymentsTable>): Omit<AdminPaymentSummary, 'accountName'> => ({
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
  // Any account's payment: the back office reads across accounts, so no owner to check.
  const row = await readPayment(store.db, id);
  if (!row) throw notFound('payment', 'id');
  const [receivables, refunds, disputes, events] = await Promise.all([
    store.db.selectFrom('receivables').selectAll().where('payment_id', '=', id).orderBy('id', 'asc').limit(MAX_DETAIL_ITEMS).execute(),
    store.db.selectFrom('refunds').selectAll().where('payment_id', '=', id).orderBy('id', 'asc').limit(MAX_DETAIL_ITEMS).execute(),
    store.db.selectFrom('disputes').selectAll().where('payment_id', '=', id).orderBy('id', 'asc').limit(MAX_DETAIL_ITEMS).execute(),
    // Events carry their object as JSON; the payment's id appears in every event about it, its
    // refunds and its receivables. Scanned from the payment's creation on, within its account.
    store.db.selectFrom('events').selectAll()
      .where('account_id', '=', row.account_id).where('livemode', '=', row.livemode)
      .where('id', '>=', idFloor('event', Date.parse(row.created_at)))
      .where('data', 'like', `%"${id}"%`)
      .orderBy('id', 'asc').limit(MAX_DETAIL_ITEMS).execute(),
  ]);
  const names = await accountNames(store.db, [row.account_id]);
  return {
    ...toPayment(row),
    accountId: row.account_id,
    accountName: names.get(row.account_id) ?? row.account_id,
    receivables: receivables.map(toReceivable),
    refunds: refunds.map(toRefund),
    disputes: disputes.map(toDispute),
    events: events.map(toEvent),
  };
}


function filtered(store: Store, q: ExportAdminPaymentsQuery) {
  let qb = store.db.selectFrom('payments').selectAll();
  if (q.id !== undefined) qb = qb.where('id', '=', q.id);
  if (q.accountId !== undefined) qb = qb.where('account_id', '=', q.accountId);
  if (q.livemode !== undefined) qb = qb.where('livemode', '=', q.livemode ? 1 : 0);
  if (q.status !== undefined) qb = qb.where('status', '=', q.status);
  if (q.method !== undefined) qb = qb.where('method', '=', q.method);
  if (q.amountGte !== undefined) qb = qb.where('amount', '>=', q.amountGte);
  if (q.amountLte !== undefined) qb = qb.where('amount', '<=', q.amountLte);
  return qb;
}

export async function listAdminPayments(store: Store, q: ListAdminPaymentsQuery): Promise<Page<AdminPaymentSummary>> {
  return namedPage(store.db, await paginate(filtered(store, q), q, toSummary, store.db.selectFrom('payments').selectAll()));
}

// GET /admin/payments.csv: every payment the filters match, newest first, streamed.
export function exportAdminPayments(store: Store, q: ExportAdminPaymentsQuery, reply: FastifyReply): FastifyReply {
  const header = ['id', 'created_at', 'account_id', 'livemode', 'method', 'status', 'amount_cents', 'amount_brl', 'amount_refunded_cents', 'amount_refunded_brl', 'fee_cents', 'net_cents', 'installments', 'card_brand', 'card_last4', 'failure_code'];
  return sendCsv(reply, 'pagamentos.csv', header, (before) => {
    let qb = filtered(store, q);
    if (q.createdGte) qb = qb.where('created_at', '>=', new Date(q.createdGte).toISOString());
    if (q.createdLte) qb = qb.where('created_at', '<=', new Date(q.createdLte).toISOString());
    if (before) qb = qb.where('id', '<', before);
    return qb.orderBy('id', 'desc').limit(CSV_PAGE_ROWS).execute();
  }, (p) => [p.id, p.created_at, p.account_id, p.livemode === 1, p.method, p.status, p.amount, reais(p.amount), p.amount_refunded, reais(p.amount_refunded), p.fee_amount, p.net_amount, p.installments, p.card_brand, p.card_last4, p.failure_code]);
}

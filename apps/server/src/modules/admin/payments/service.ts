import type { Selectable } from 'kysely';
import type { Store } from '../../../store/index.js';
import type { PaymentsTable } from '../../../store/schema.js';
import { notFound } from '../../../errors.js';
import { idFloor } from '../../../domain/ids.js';
import { paginate, type Page } from '../../../http/pagination.js';
import { MAX_DETAIL_ITEMS, type AdminPaymentDetail, type AdminPaymentSummary, type ListAdminPaymentsQuery } from './schemas.js';
import { readPayment, toPayment } from '../../payments/repository.js';
import { toReceivable } from '../../receivables/service.js';
import { toRefund } from '../../refunds/service.js';
import { toEvent } from '../../events/service.js';

// Payments across every merchant account, for the back office: a search (by id, account, status,
// method, mode and creation date) and a detail with what the payment produced.


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
  // Any account's payment: the back office reads across accounts, so no owner to check.
  const row = await readPayment(store.db, id);
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
    events: events.map(toEvent),
  };
}


export async function listAdminPayments(store: Store, q: ListAdminPaymentsQuery): Promise<Page<AdminPaymentSummary>> {
  const scope = store.db.selectFrom('payments').selectAll();
  let qb = scope;
  if (q.id !== undefined) qb = qb.where('id', '=', q.id);
  if (q.accountId !== undefined) qb = qb.where('account_id', '=', q.accountId);
  if (q.livemode !== undefined) qb = qb.where('livemode', '=', q.livemode ? 1 : 0);
  if (q.status !== undefined) qb = qb.where('status', '=', q.status);
  if (q.method !== undefined) qb = qb.where('method', '=', q.method);
  return paginate(qb, q, toSummary, scope);
}

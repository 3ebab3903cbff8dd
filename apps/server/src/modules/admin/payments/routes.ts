import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Store } from '../../../store/index.js';
import { ref } from '../../../http/common.js';
import { security, tags } from '../shared/schemas.js';
import { ExportAdminPaymentsQuery, ListAdminPaymentsQuery } from './schemas.js';
import { exportAdminPayments, getAdminPayment, listAdminPayments } from './service.js';
import { csvResponse } from '../shared/schemas.js';
import { typed } from '../../../http/typed.js';

export function adminPaymentRoutes(scopeInstance: FastifyInstance, store: Store): void {
  const scope = typed(scopeInstance);
  scope.get('/admin/payments', {
    config: { auth: 'none', permission: 'payments:view' },
    schema: {
      operationId: 'adminListPayments', tags, security, summary: 'Search payments',
      description: 'Payments of every merchant account, newest first, with cursors. Filter by `id`, `accountId`, `livemode`, `status`, `method`, amount (`amountGte`, `amountLte`, centavos) and creation date (`createdGte`, `createdLte`). GET /admin/payments.csv exports what the same filters match.',
      querystring: ListAdminPaymentsQuery,
      response: { 200: ref('AdminPaymentSummaryList') },
    },
  }, (req) => listAdminPayments(store, req.query));

  scope.get('/admin/payments.csv', {
    config: { auth: 'none', permission: 'payments:view' },
    schema: {
      operationId: 'adminExportPayments', tags, security, summary: 'Export payments as CSV',
      description: 'Every payment the filters match (the same filters as GET /admin/payments, without paging), newest first, as CSV streamed as it is read. Amounts in integer centavos (`amount_cents`) and as exact decimals in reais (`amount_brl`, `123.45`).',
      querystring: ExportAdminPaymentsQuery,
      response: csvResponse,
    },
  }, (req, reply) => {
    exportAdminPayments(store, req.query, reply);
  });

  scope.get('/admin/payments/:id', {
    config: { auth: 'none', permission: 'payments:view' },
    schema: {
      operationId: 'adminGetPayment', tags, security, summary: 'Fetch a payment with its receivables, refunds and events',
      description: 'Any merchant\'s payment, with the receivables it produced (and refund adjustments), its refunds and the events about it.',
      params: Type.Object({ id: Type.String({ maxLength: 64, description: 'Payment id (`pay_...`).' }) }, { additionalProperties: false }),
      response: { 200: ref('AdminPaymentDetail') },
    },
  }, (req) => getAdminPayment(store, req.params.id));
}

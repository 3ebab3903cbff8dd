import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Store } from '../../store/index.js';
import { IdempotencyHeaders, ref, refTo } from '../../http/common.js';
import { CreateRefundBody, ListRefundsQuery, Refund, RefundList, RefundPixReturn } from './schemas.js';
import { createRefund, getRefund, listRefunds } from './service.js';
import { typed } from '../../http/typed.js';

export const refundSchemas = [CreateRefundBody, RefundPixReturn, Refund, RefundList];
const tags = ['Refunds'];

export function refundRoutes(appInstance: FastifyInstance, store: Store, kickWorker: () => void): void {
  const app = typed(appInstance);
  app.post('/v1/refunds', {
    config: { throws: ['NOT_FOUND', 'INVALID_STATE', 'UNPROCESSABLE'] },
    schema: {
      operationId: 'createRefund', tags, summary: 'Refund a payment',
      description: 'Full by default, partial with `amount`; the total never exceeds the approved amount (422 UNPROCESSABLE). Only `approved` or `partially_refunded` payments (409 INVALID_STATE otherwise). The payment becomes `partially_refunded` or `refunded`, and the payees\' receivables are reduced in proportion.',
      headers: IdempotencyHeaders,
      body: refTo(CreateRefundBody),
      response: { 200: ref('Refund') },
    },
  }, (req) => createRefund(req.ctx, req.body, { engine: store.engine, kickWorker }));

  app.get('/v1/refunds', {
    schema: {
      operationId: 'listRefunds', tags, summary: 'List refunds',
      querystring: ListRefundsQuery,
      response: { 200: ref('RefundList') },
    },
  }, (req) => listRefunds(store, req.ctx, req.query));

  app.get('/v1/refunds/:id', {
    schema: {
      operationId: 'getRefund', tags, summary: 'Fetch a refund',
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
      response: { 200: ref('Refund') },
    },
  }, (req) => getRefund(store, req.ctx, req.params.id));
}

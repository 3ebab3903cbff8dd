import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Store } from '../../store/index.js';
import { IdempotencyHeaders, ref } from '../../http/common.js';
import { CreateRefundBody, ListRefundsQuery, Refund, RefundList, type CreateRefundBody as CreateBody, type ListRefundsQuery as ListQuery } from './schemas.js';
import { createRefund, getRefund, listRefunds } from './service.js';

export const refundSchemas = [CreateRefundBody, Refund, RefundList];
const tags = ['Refunds'];

export function refundRoutes(app: FastifyInstance, store: Store, kickWorker: () => void): void {
  app.post<{ Body: CreateBody }>('/v1/refunds', {
    config: { throws: ['NOT_FOUND', 'INVALID_STATE', 'UNPROCESSABLE'] },
    schema: {
      operationId: 'createRefund', tags, summary: 'Refund a payment',
      description: 'Full by default, partial with `amount`; the total never exceeds the approved amount (422 UNPROCESSABLE). Only `approved` or `partially_refunded` payments (409 INVALID_STATE otherwise). The payment becomes `partially_refunded` or `refunded`, and the payees\' receivables are reduced in proportion.',
      headers: IdempotencyHeaders,
      body: ref('CreateRefundRequest'),
      response: { 200: ref('Refund') },
    },
  }, (req) => createRefund(req.ctx, req.body, kickWorker));

  app.get<{ Querystring: ListQuery }>('/v1/refunds', {
    schema: {
      operationId: 'listRefunds', tags, summary: 'List refunds',
      querystring: ListRefundsQuery,
      response: { 200: ref('RefundList') },
    },
  }, (req) => listRefunds(store, req.ctx, req.query));

  app.get<{ Params: { id: string } }>('/v1/refunds/:id', {
    schema: {
      operationId: 'getRefund', tags, summary: 'Fetch a refund',
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
      response: { 200: ref('Refund') },
    },
  }, (req) => getRefund(store, req.ctx, req.params.id));
}

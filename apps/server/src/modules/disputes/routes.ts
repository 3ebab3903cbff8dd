import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Store } from '../../store/index.js';
import { ref } from '../../http/common.js';
import { typed } from '../../http/typed.js';
import { Dispute, DisputeList, ListDisputesQuery } from './schemas.js';
import { getDispute, listDisputes } from './service.js';

export const disputeSchemas = [Dispute, DisputeList];
const tags = ['Disputes'];

export function disputeRoutes(appInstance: FastifyInstance, store: Store): void {
  const app = typed(appInstance);
  app.get('/v1/disputes', {
    schema: {
      operationId: 'listDisputes', tags, summary: 'List disputes',
      description: 'Card chargebacks and Pix MED returns, newest first. Filter by `paymentId`, `status`, `kind` and creation date. Disputes are made and moved by their source (the acquirer\'s notifications, the PSP\'s returns); submitting evidence happens at the acquirer.',
      querystring: ListDisputesQuery,
      response: { 200: ref('DisputeList') },
    },
  }, (req) => listDisputes(store, req.ctx, req.query));

  app.get('/v1/disputes/:id', {
    schema: {
      operationId: 'getDispute', tags, summary: 'Fetch a dispute',
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
      response: { 200: ref('Dispute') },
    },
  }, (req) => getDispute(store, req.ctx, req.params.id));
}

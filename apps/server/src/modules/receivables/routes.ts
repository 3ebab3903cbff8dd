import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Store } from '../../store/index.js';
import { ref } from '../../http/common.js';
import { ListReceivablesQuery, Payee, Receivable, ReceivableList } from './schemas.js';
import { getReceivable, listReceivables } from './service.js';
import { typed } from '../../http/typed.js';

export const receivableSchemas = [Payee, Receivable, ReceivableList];
const tags = ['Receivables'];

export function receivableRoutes(appInstance: FastifyInstance, store: Store): void {
  const app = typed(appInstance);
  app.get('/v1/receivables', {
    schema: {
      operationId: 'listReceivables', tags, summary: 'List receivables',
      description: 'What each payee is owed from each approved sale: one for the merchant and one per recipient of the applied split rule. Newest first; filters by payment, recipient, payee type, status, settlement and availability date.',
      querystring: ListReceivablesQuery,
      response: { 200: ref('ReceivableList') },
    },
  }, (req) => listReceivables(store, req.ctx, req.query));

  app.get('/v1/receivables/:id', {
    schema: {
      operationId: 'getReceivable', tags, summary: 'Fetch a receivable',
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
      response: { 200: ref('Receivable') },
    },
  }, (req) => getReceivable(store, req.ctx, req.params.id));
}

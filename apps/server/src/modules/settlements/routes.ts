import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Store } from '../../store/index.js';
import { ListQueryBase, ref } from '../../http/common.js';
import { DailyStatement, DailyStatementItem, DailyStatementQuery, ListSettlementsQuery, Settlement, SettlementList, SettlementPayout, SettlementPixKey, SettlementRun, SettlementRunList } from './schemas.js';
import { dailyStatement, getSettlement, listSettlements } from './service.js';
import { listReceivables } from '../receivables/service.js';
import { typed } from '../../http/typed.js';

export const settlementSchemas = [SettlementPixKey, SettlementPayout, Settlement, SettlementList, SettlementRun, SettlementRunList, DailyStatementItem, DailyStatement];
const tags = ['Settlements'];
const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false });

export function settlementRoutes(appInstance: FastifyInstance, store: Store): void {
  const app = typed(appInstance);
  app.get('/v1/settlements', {
    schema: {
      operationId: 'listSettlements', tags, summary: 'List settlements',
      description: 'Payouts made by the settlement runs, one per payee per run. Newest first.',
      querystring: ListSettlementsQuery,
      response: { 200: ref('SettlementList') },
    },
  }, (req) => listSettlements(store, req.ctx, req.query));

  app.get('/v1/settlements/daily-statement', {
    schema: {
      operationId: 'getDailyStatement', tags, summary: 'Daily statement of a payee',
      description: 'The settlements paid to one payee on one São Paulo calendar date (by `paidAt`: when the PSP settled the Pix), oldest first, each with its end-to-end id and amount, and their total. `recipientId` names a recipient of yours (VALIDATION_ERROR naming it otherwise, as for a cursor); without it, the statement is the merchant\'s own. `date` defaults to today in São Paulo.',
      querystring: DailyStatementQuery,
      response: { 200: ref('DailyStatement') },
    },
  }, (req) => dailyStatement(store, req.ctx, req.query.recipientId, req.query.date));

  app.get('/v1/settlements/:id', {
    schema: {
      operationId: 'getSettlement', tags, summary: 'Fetch a settlement',
      params: IdParams,
      response: { 200: ref('Settlement') },
    },
  }, (req) => getSettlement(store, req.ctx, req.params.id));

  app.get('/v1/settlements/:id/receivables', {
    schema: {
      operationId: 'listSettlementReceivables', tags, summary: 'List the receivables of a settlement',
      params: IdParams,
      querystring: Type.Object({ limit: ListQueryBase.limit, startingAfter: ListQueryBase.startingAfter, endingBefore: ListQueryBase.endingBefore }, { additionalProperties: false }),
      response: { 200: ref('ReceivableList') },
    },
  }, async (req) => {
    await getSettlement(store, req.ctx, req.params.id);
    return listReceivables(store, req.ctx, { ...req.query, settlementId: req.params.id });
  });
}

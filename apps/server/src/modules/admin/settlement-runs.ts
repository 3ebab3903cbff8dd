import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errorResponses, ListQueryBase, ref } from '../../http/common.js';
import { AdminMutationHeaders } from './schemas.js';
import { getRun, listRuns, runSettlement, type SettlementDeps } from '../settlements/service.js';

const tags = ['Admin'];
const security = [{ adminSession: [] }];

// Registered inside the admin scope, behind its session and CSRF guard.
export function settlementRunRoutes(app: FastifyInstance, deps: SettlementDeps): void {
  app.post<{ Body: { date?: string } | undefined }>('/admin/settlement-runs', {
    schema: {
      operationId: 'adminRunSettlement', tags, security, summary: 'Run settlement now',
      description: 'Runs synchronously and answers with the finished run. Settles every pending receivable available on or before `date` (default: today in São Paulo): one settlement per payee. Safe to repeat: nothing is settled twice.',
      headers: AdminMutationHeaders,
      body: Type.Optional(Type.Object({ date: Type.Optional(Type.String({ format: 'date' })) }, { additionalProperties: false })),
      response: { 200: ref('SettlementRun'), ...errorResponses(409, 413, 415) },
    },
  }, (req) => runSettlement(deps, { date: req.body?.date, trigger: 'admin' }));

  app.get<{ Querystring: { limit?: number; startingAfter?: string; endingBefore?: string } }>('/admin/settlement-runs', {
    schema: {
      operationId: 'adminListSettlementRuns', tags, security, summary: 'List settlement runs', description: 'Every run, scheduled or triggered, newest first, with what it settled.',
      querystring: Type.Object({ limit: ListQueryBase.limit, startingAfter: ListQueryBase.startingAfter, endingBefore: ListQueryBase.endingBefore }, { additionalProperties: false }),
      response: { 200: ref('SettlementRunList'), ...errorResponses() },
    },
  }, (req) => listRuns(deps.store, req.query));

  app.get<{ Params: { id: string } }>('/admin/settlement-runs/:id', {
    schema: {
      operationId: 'adminGetSettlementRun', tags, security, summary: 'Fetch a settlement run', description: 'One run: its date, trigger and totals.',
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
      response: { 200: ref('SettlementRun'), ...errorResponses(404) },
    },
  }, (req) => getRun(deps.store, req.params.id));
}

import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ListQueryBase, ref, refTo } from '../../../http/common.js';
import { AdminMutationHeaders, security, tags } from '../shared/schemas.js';
import { ListRunSettlementsQuery, SettlementRunRequest } from './schemas.js';
import { listRunSettlements, runAudit, startRun } from './service.js';
import { getRun, listRuns } from '../../settlements/service.js';
import type { Store } from '../../../store/index.js';
import { typed } from '../../../http/typed.js';

// Registered inside the admin scope, behind its session and CSRF guard.
export function settlementRunRoutes(appInstance: FastifyInstance, deps: { store: Store; kickWorker: () => void }): void {
  const app = typed(appInstance);
  app.post('/admin/settlement-runs', {
    config: { permission: 'settlement_runs:create', audit: runAudit },
    schema: {
      operationId: 'adminRunSettlement', tags, security, summary: 'Run settlement now',
      description: 'Starts a run and answers with it, `pending`: a worker carries it out in the background (poll `GET /admin/settlement-runs/{id}` until `completed`). It settles every pending receivable available on or before `date` (default: today in São Paulo): one settlement per payee. Needs a `reason` (VALIDATION_ERROR without one), kept in the audit log with the run. With an `Idempotency-Key`, a retry answers the same run and starts nothing; without one, a second run finds nothing left to settle twice.',
      headers: AdminMutationHeaders,
      body: refTo(SettlementRunRequest),
      response: { 200: ref('SettlementRun') },
    },
  }, (req) => startRun(req.ctx, req.body, deps.kickWorker));

  app.get('/admin/settlement-runs', {
    config: { permission: 'settlement_runs:view' },
    schema: {
      operationId: 'adminListSettlementRuns', tags, security, summary: 'List settlement runs', description: 'Every run, scheduled or triggered, newest first, with what it settled.',
      querystring: Type.Object({ limit: ListQueryBase.limit, startingAfter: ListQueryBase.startingAfter, endingBefore: ListQueryBase.endingBefore }, { additionalProperties: false }),
      response: { 200: ref('SettlementRunList') },
    },
  }, (req) => listRuns(deps.store, req.query));

  app.get('/admin/settlement-runs/:id', {
    config: { permission: 'settlement_runs:view' },
    schema: {
      operationId: 'adminGetSettlementRun', tags, security, summary: 'Fetch a settlement run', description: 'One run: its date, trigger and totals.',
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
      response: { 200: ref('SettlementRun') },
    },
  }, (req) => getRun(deps.store, req.params.id));

  app.get('/admin/settlement-runs/:id/settlements', {
    config: { permission: 'settlement_runs:view' },
    schema: {
      operationId: 'adminListSettlementRunSettlements', tags, security, summary: 'List the settlements of a run',
      description: 'The settlements a run made, one per payee, across every account, newest first: amount, receivable count, status, the bank account snapshot and, for a failed payout, why. `status=failed` lists the failed payouts.',
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
      querystring: ListRunSettlementsQuery,
      response: { 200: ref('AdminSettlementList') },
    },
  }, (req) => listRunSettlements(deps.store, req.params.id, req.query));
}

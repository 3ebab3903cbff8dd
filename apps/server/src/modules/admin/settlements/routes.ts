import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Store } from '../../../store/index.js';
import { cents, ListQueryBase, ref, refTo, stringEnum } from '../../../http/common.js';
import { typed } from '../../../http/typed.js';
import { paginate } from '../../../http/pagination.js';
import { SETTLEMENT_STATUSES } from '../../../domain/states.js';
import { dailyStatement, retrySettlement, toSettlement, type SettlementRow } from '../../settlements/service.js';
import { validation } from '../../../errors.js';
import { AdminMutationHeaders, csvResponse, IdParams, security, tags } from '../shared/schemas.js';
import type { Tx } from '../../../store/index.js';
import type { AuditSpec } from '../shared/audit.js';
import { named } from '../shared/names.js';
import { CSV_PAGE_ROWS, reais, sendCsv } from '../shared/csv.js';
import { RetrySettlementRequest, type AdminSettlement } from '../settlement-runs/schemas.js';
import { namedPage } from '../shared/names.js';

// Settlements of every account and run, for the back office: a filtered list and its CSV.

const filters = {
  accountId: Type.Optional(Type.String({ maxLength: 64, description: 'Only this merchant account\'s settlements.' })),
  livemode: Type.Optional(Type.Boolean()),
  status: Type.Optional(stringEnum(SETTLEMENT_STATUSES)),
  payeeType: Type.Optional(stringEnum(['merchant', 'recipient'])),
  runId: Type.Optional(Type.String({ maxLength: 64, description: 'Only this run\'s settlements (`str_...`).' })),
  dateGte: Type.Optional(Type.String({ format: 'date', description: 'Settlement date on or after (YYYY-MM-DD).' })),
  dateLte: Type.Optional(Type.String({ format: 'date', description: 'Settlement date on or before (YYYY-MM-DD).' })),
  amountGte: Type.Optional(cents({ minimum: 0, description: 'At least this amount (centavos).' })),
  amountLte: Type.Optional(cents({ minimum: 0, description: 'At most this amount (centavos).' })),
};
const ExportAdminSettlementsQuery = Type.Object(filters, { additionalProperties: false });
const ListAdminSettlementsQuery = Type.Object({ limit: ListQueryBase.limit, startingAfter: ListQueryBase.startingAfter, endingBefore: ListQueryBase.endingBefore, ...filters }, { additionalProperties: false });
type Filters = Static<typeof ExportAdminSettlementsQuery>;

// GET /admin/settlements/daily-statement (issue 26): the merchant route's statement, for any
// account, through the same service function (the owner is built from accountId and livemode).
const AdminDailyStatementQuery = Type.Object({
  accountId: Type.String({ maxLength: 64, description: 'The merchant account (`acct_`) whose payee this is.' }),
  recipientId: Type.Optional(Type.String({ maxLength: 64, description: 'A recipient (`rcp_`) of that account and mode; absent: the merchant\'s own settlements.' })),
  date: Type.Optional(Type.String({ format: 'date', description: 'The São Paulo calendar date (YYYY-MM-DD); default: today there.' })),
  livemode: Type.Optional(Type.Boolean({ description: 'Live or test mode settlements (default false: test mode).' })),
}, { additionalProperties: false });

const toAdminSettlement = (row: SettlementRow): Omit<AdminSettlement, 'accountName'> => ({ ...toSettlement(row), accountId: row.account_id });

function filtered(store: Store, q: Filters) {
  let qb = store.db.selectFrom('settlements').selectAll();
  if (q.accountId !== undefined) qb = qb.where('account_id', '=', q.accountId);
  if (q.livemode !== undefined) qb = qb.where('livemode', '=', q.livemode ? 1 : 0);
  if (q.status !== undefined) qb = qb.where('status', '=', q.status);
  if (q.payeeType !== undefined) qb = qb.where('payee_type', '=', q.payeeType);
  if (q.runId !== undefined) qb = qb.where('run_id', '=', q.runId);
  if (q.dateGte !== undefined) qb = qb.where('settlement_date', '>=', q.dateGte);
  if (q.dateLte !== undefined) qb = qb.where('settlement_date', '<=', q.dateLte);
  if (q.amountGte !== undefined) qb = qb.where('amount', '>=', q.amountGte);
  if (q.amountLte !== undefined) qb = qb.where('amount', '<=', q.amountLte);
  return qb;
}

// POST /admin/settlements/{id}/retry: why is required (it sends money), and the audit row shows
// the settlement before and after, with the settlement that carries the retry.
async function retrySnapshot(tx: Tx, id: string) {
  const row = await tx.selectFrom('settlements').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) return null;
  const retry = await tx.selectFrom('settlements').select('id').where('retry_of', '=', id).executeTakeFirst();
  return { ...toAdminSettlement(row), retriedBy: retry?.id ?? null };
}
const idOf = (req: { params: unknown }): string | undefined => {
  const { params } = req;
  return typeof params === 'object' && params !== null && 'id' in params && typeof params.id === 'string' ? params.id : undefined;
};
export const retryAudit = {
  action: 'settlement.retry_payout', objectType: 'settlement', snapshot: retrySnapshot, objectId: idOf,
  reasonRequired: true, reasonHint: 'retrying a payout sends money',
} satisfies AuditSpec;

export function adminSettlementRoutes(scopeInstance: FastifyInstance, store: Store): void {
  const scope = typed(scopeInstance);
  scope.post('/admin/settlements/:id/retry', {
    config: { permission: 'settlements:retry', audit: retryAudit, throws: ['INVALID_STATE'] },
    schema: {
      operationId: 'adminRetrySettlementPayout', tags, security, summary: 'Retry a settlement\'s payout',
      description: 'A settlement `held` for the PSP balance (`insufficient_psp_balance`, `psp_balance_unavailable`) is released to payout now, without waiting for the next run: the operator answers for the balance (a PSP that refuses it fails it with its reason). A `failed` settlement is final, and its receivables went back to pending: the retry settles the payee\'s due receivables now, in a new settlement whose payout is sent at once; once per failed settlement. The answer is the settlement that will pay (the same one, or the new one). Anything else (a settlement held for the merchant\'s payout bank account, pending, processing, paid, a failed one retried already or with nothing left due) is INVALID_STATE. Needs a `reason`, kept in the audit log with the settlement before and after, in the same transaction. Role `admin` only.',
      headers: AdminMutationHeaders,
      params: IdParams('The settlement (`stl_`).'),
      body: refTo(RetrySettlementRequest),
      response: { 200: ref('AdminSettlement') },
    },
  }, (req) => req.ctx.write(async (tx) => {
    // The answer is made in the write: its bytes are stored with the Idempotency-Key.
    const [one] = await named(tx, [toAdminSettlement(await retrySettlement(tx, store, req.params.id))]);
    return one;
    // Its own transaction: it locks the payee's receivables in id order (WriteOptions).
  }, { ownTransaction: true }));

  scope.get('/admin/settlements', {
    config: { permission: 'settlement_runs:view' },
    schema: {
      operationId: 'adminListSettlements', tags, security, summary: 'Search settlements',
      description: 'Settlements of every account and run, newest first, with cursors. Filter by `accountId`, `livemode`, `status`, `payeeType`, `runId`, settlement date (`dateGte`, `dateLte`) and amount (`amountGte`, `amountLte`, centavos). GET /admin/settlements.csv exports what the same filters match.',
      querystring: ListAdminSettlementsQuery,
      response: { 200: ref('AdminSettlementList') },
    },
  }, async (req) => namedPage(store.db, await paginate(filtered(store, req.query), req.query, toAdminSettlement, store.db.selectFrom('settlements').selectAll())));

  scope.get('/admin/settlements/daily-statement', {
    config: { permission: 'settlement_runs:view' },
    schema: {
      operationId: 'adminGetDailyStatement', tags, security, summary: 'Daily statement of a payee',
      description: 'What GET /v1/settlements/daily-statement answers the merchant, for any account: the settlements paid to one payee on one São Paulo calendar date (by `paidAt`), oldest first, each with its end-to-end id and amount, and their total. `accountId` names the merchant account (VALIDATION_ERROR naming it otherwise: a query names no resource of its own, so no 404); `recipientId` a recipient of that account in that mode (VALIDATION_ERROR naming it otherwise); without it, the statement is the merchant\'s own. `livemode` defaults to false; `date` to today in São Paulo.',
      querystring: AdminDailyStatementQuery,
      response: { 200: ref('DailyStatement') },
    },
  }, async (req) => {
    const account = await store.db.selectFrom('accounts').select('id').where('id', '=', req.query.accountId).executeTakeFirst();
    if (!account) throw validation('No merchant account has this id.', 'accountId');
    return dailyStatement(store, { accountId: account.id, livemode: req.query.livemode ?? false }, req.query.recipientId, req.query.date);
  });

  scope.get('/admin/settlements.csv', {
    config: { permission: 'settlement_runs:view' },
    schema: {
      operationId: 'adminExportSettlements', tags, security, summary: 'Export settlements as CSV',
      description: 'Every settlement the filters match (those of GET /admin/settlements, without paging), newest first, streamed. Amounts in integer centavos (`amount_cents`) and as exact decimals in reais (`amount_brl`).',
      querystring: ExportAdminSettlementsQuery,
      response: csvResponse,
    },
  }, (req, reply) => {
    const header = ['id', 'created_at', 'settlement_date', 'account_id', 'livemode', 'run_id', 'payee_type', 'payee_id', 'status', 'amount_cents', 'amount_brl', 'receivable_count', 'hold_reason', 'failure_reason', 'paid_at'];
    sendCsv(reply, 'repasses.csv', header, (before) => {
      let qb = filtered(store, req.query);
      if (before) qb = qb.where('id', '<', before);
      return qb.orderBy('id', 'desc').limit(CSV_PAGE_ROWS).execute();
    }, (s) => [s.id, s.created_at, s.settlement_date, s.account_id, s.livemode === 1, s.run_id, s.payee_type, s.payee_id, s.status, s.amount, reais(s.amount), s.receivable_count, s.hold_reason, s.failure_reason, s.paid_at]);
  });
}

import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Store } from '../../../store/index.js';
import { ListQueryBase, listOf, ref, stringEnum } from '../../../http/common.js';
import { typed } from '../../../http/typed.js';
import { paginate } from '../../../http/pagination.js';
import { DISPUTE_STATUSES } from '../../../domain/states.js';
import { Dispute, DISPUTE_KINDS } from '../../disputes/schemas.js';
import { toDispute, type DisputeRow } from '../../disputes/service.js';
import { security, tags } from '../shared/schemas.js';
import { namedPage } from '../shared/names.js';

// Disputes of every account (issue 27), for the back office's list with deadlines. Read-only:
// a dispute is moved by its source, and evidence is submitted at the acquirer.

export const AdminDispute = Type.Object(
  { ...Dispute.properties, accountId: Type.String({ description: 'The merchant account (`acct_`).' }), accountName: Type.String({ description: 'The merchant account\'s name.' }) },
  { $id: 'AdminDispute', additionalProperties: false, description: 'A dispute, with its merchant account.' },
);
export const AdminDisputeList = listOf('AdminDispute', 'AdminDisputeList');
export const adminDisputeSchemas = [AdminDispute, AdminDisputeList];

const ListAdminDisputesQuery = Type.Object({
  limit: ListQueryBase.limit,
  startingAfter: ListQueryBase.startingAfter,
  endingBefore: ListQueryBase.endingBefore,
  accountId: Type.Optional(Type.String({ maxLength: 64, description: 'Only this merchant account\'s disputes.' })),
  livemode: Type.Optional(Type.Boolean()),
  paymentId: Type.Optional(Type.String({ maxLength: 64, description: 'Only this payment\'s disputes.' })),
  status: Type.Optional(stringEnum(DISPUTE_STATUSES)),
  kind: Type.Optional(stringEnum(DISPUTE_KINDS)),
}, { additionalProperties: false });
type ListAdminDisputesQuery = Static<typeof ListAdminDisputesQuery>;

function filtered(store: Store, q: ListAdminDisputesQuery) {
  let qb = store.db.selectFrom('disputes').selectAll();
  if (q.accountId !== undefined) qb = qb.where('account_id', '=', q.accountId);
  if (q.livemode !== undefined) qb = qb.where('livemode', '=', q.livemode ? 1 : 0);
  if (q.paymentId !== undefined) qb = qb.where('payment_id', '=', q.paymentId);
  if (q.status !== undefined) qb = qb.where('status', '=', q.status);
  if (q.kind !== undefined) qb = qb.where('kind', '=', q.kind);
  return qb;
}

const toAdminDispute = (row: DisputeRow) => ({ ...toDispute(row), accountId: row.account_id });

export function adminDisputeRoutes(scopeInstance: FastifyInstance, store: Store): void {
  const scope = typed(scopeInstance);
  scope.get('/admin/disputes', {
    config: { permission: 'payments:view' },
    schema: {
      operationId: 'adminListDisputes', tags, security, summary: 'Search disputes',
      description: 'Card chargebacks and Pix MED returns of every merchant account, newest first, with cursors, each with its deadline (`respondBy`). Filter by `accountId`, `livemode`, `paymentId`, `status` and `kind`.',
      querystring: ListAdminDisputesQuery,
      response: { 200: ref('AdminDisputeList') },
    },
  }, async (req) => namedPage(store.db, await paginate(filtered(store, req.query), req.query, toAdminDispute, store.db.selectFrom('disputes').selectAll())));
}

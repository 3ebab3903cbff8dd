import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Selectable } from 'kysely';
import { Type, type Static } from 'typebox';
import type { Store } from '../../../store/index.js';
import type { ApiKeysTable, Database, RecipientsTable } from '../../../store/schema.js';
import { notFound } from '../../../errors.js';
import { BankAccount, constant, ListQueryBase, listOf, ref, refTo, stringEnum } from '../../../http/common.js';
import { paginate } from '../../../http/pagination.js';
import { IdParams } from '../split-rules/schemas.js';

// Read-only views of a merchant account for the back office: its API keys (as their display
// prefix, never a secret) and its recipients (documents masked).

export const AdminApiKey = Type.Object(
  {
    id: Type.String({ description: 'Prefix `key_`.' }),
    object: constant('api_key'),
    livemode: Type.Boolean(),
    kind: stringEnum(['secret', 'publishable']),
    display: Type.String({ description: 'The key\'s prefix and last four characters (`sk_test_…a1b2`): enough to recognise it, never enough to use it.' }),
    createdAt: Type.String({ format: 'date-time' }),
    revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'AdminApiKey', additionalProperties: false, description: 'An API key of a merchant account, as the back office shows it.' },
);
export type AdminApiKey = Static<typeof AdminApiKey>;
export const AdminApiKeyList = listOf('AdminApiKey', 'AdminApiKeyList');

export const AdminRecipient = Type.Object(
  {
    id: Type.String({ description: 'Prefix `rcp_`.' }),
    object: constant('recipient'),
    livemode: Type.Boolean(),
    name: Type.String(),
    document: Type.String({ description: 'The CNPJ masked: its first two and last two characters (`11.***.***/****-81`).' }),
    bankAccount: refTo(BankAccount),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'AdminRecipient', additionalProperties: false, description: 'A recipient of a merchant account, as the back office shows it: read-only, document masked.' },
);
export type AdminRecipient = Static<typeof AdminRecipient>;
export const AdminRecipientList = listOf('AdminRecipient', 'AdminRecipientList');

export const accountViewSchemas = [AdminApiKey, AdminApiKeyList, AdminRecipient, AdminRecipientList];

// A CNPJ (14 characters) shown as `11.***.***/****-81`; anything else keeps only its last two.
export function maskDocument(document: string): string {
  if (document.length === 14) return `${document.slice(0, 2)}.***.***/****-${document.slice(12)}`;
  return `${'*'.repeat(Math.max(0, document.length - 2))}${document.slice(-2)}`;
}

const toAdminApiKey = (row: Selectable<ApiKeysTable>): AdminApiKey => ({
  id: row.id,
  object: 'api_key',
  livemode: row.livemode === 1,
  kind: row.kind,
  display: row.display,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
});

const toAdminRecipient = (row: Selectable<RecipientsTable>): AdminRecipient => ({
  id: row.id,
  object: 'recipient',
  livemode: row.livemode === 1,
  name: row.name,
  document: maskDocument(row.document),
  bankAccount: { bankCode: row.bank_code, agency: row.agency, account: row.account, accountType: row.account_type as AdminRecipient['bankAccount']['accountType'] },
  createdAt: row.created_at,
});

const ListKeysQuery = Type.Object(
  { limit: ListQueryBase.limit, startingAfter: ListQueryBase.startingAfter, endingBefore: ListQueryBase.endingBefore, livemode: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
const ListAccountRecipientsQuery = Type.Object(
  { ...ListQueryBase, livemode: Type.Optional(Type.Boolean({ description: 'Only live (true) or sandbox (false) recipients.' })) },
  { additionalProperties: false },
);
type ListQuery = Static<typeof ListAccountRecipientsQuery>;

async function requireAccount(store: Store, id: string): Promise<void> {
  const row = await store.db.selectFrom('accounts').select('id').where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('account', 'id');
}

const tags = ['Admin'];
const security = [{ adminSession: [] }];
const AccountIdParams = IdParams('Merchant account id (`acct_...`).');

// One of an account's lists: 404 for an unknown account, then its rows (optionally one mode),
// newest first, with cursors.
function accountList<T extends 'api_keys' | 'recipients', R>(store: Store, table: T, toResource: (row: Selectable<Database[T]>) => R) {
  return async (req: FastifyRequest<{ Params: { id: string }; Querystring: ListQuery }>) => {
    await requireAccount(store, req.params.id);
    // The account's objects of this kind: the scope a cursor must name one of.
    const scope = store.db.selectFrom(table as 'recipients').selectAll().where('account_id', '=', req.params.id);
    let qb = scope;
    if (req.query.livemode !== undefined) qb = qb.where('livemode', '=', req.query.livemode ? 1 : 0);
    // (The builder over a table chosen at run time loses its row type: the mapper is the table's own.)
    return paginate(qb, req.query, toResource as unknown as (row: Selectable<RecipientsTable>) => R, scope);
  };
}

export function accountViewRoutes(scope: FastifyInstance, store: Store): void {
  scope.get<{ Params: { id: string }; Querystring: ListQuery }>('/admin/accounts/:id/api-keys', {
    config: { auth: 'none', permission: 'accounts:view' },
    schema: {
      operationId: 'adminListAccountApiKeys', tags, security, summary: 'List an account\'s API keys',
      description: 'The account\'s keys, newest first, revoked ones included, as display prefixes (`sk_test_…a1b2`): the secrets themselves are stored hashed and never shown.',
      params: AccountIdParams,
      querystring: ListKeysQuery,
      response: { 200: ref('AdminApiKeyList') },
    },
  }, accountList(store, 'api_keys', toAdminApiKey));

  scope.get<{ Params: { id: string }; Querystring: ListQuery }>('/admin/accounts/:id/recipients', {
    config: { auth: 'none', permission: 'recipients:view' },
    schema: {
      operationId: 'adminListAccountRecipients', tags, security, summary: 'List an account\'s recipients',
      description: 'The account\'s recipients (both modes unless `livemode` is given), newest first, read-only, with their documents masked.',
      params: AccountIdParams,
      querystring: ListAccountRecipientsQuery,
      response: { 200: ref('AdminRecipientList') },
    },
  }, accountList(store, 'recipients', toAdminRecipient));
}

import type { Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { Store } from '../../../store/index.js';
import type { ApiKeysTable, Database, RecipientsTable } from '../../../store/schema.js';
import { notFound } from '../../../errors.js';
import { paginate } from '../../../http/pagination.js';
import type { IdParams } from '../shared/schemas.js';
import type { AdminApiKey, AdminRecipient, ListKeysQuery } from './schemas.js';

// Read-only views of a merchant account for the back office: its API keys (as their display
// prefix, never a secret) and its recipients (documents masked).

// A CNPJ (14 characters) shown as `11.***.***/****-81`; anything else keeps only its last two.
export function maskDocument(document: string): string {
  if (document.length === 14) return `${document.slice(0, 2)}.***.***/****-${document.slice(12)}`;
  return `${'*'.repeat(Math.max(0, document.length - 2))}${document.slice(-2)}`;
}

export const toAdminApiKey = (row: Selectable<ApiKeysTable>): AdminApiKey => ({
  id: row.id,
  object: 'api_key',
  livemode: row.livemode === 1,
  kind: row.kind,
  display: row.display,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
});

export const toAdminRecipient = (row: Selectable<RecipientsTable>): AdminRecipient => ({
  id: row.id,
  object: 'recipient',
  livemode: row.livemode === 1,
  name: row.name,
  document: maskDocument(row.document),
  bankAccount: { bankCode: row.bank_code, agency: row.agency, account: row.account, accountType: row.account_type as AdminRecipient['bankAccount']['accountType'] },
  createdAt: row.created_at,
});

async function requireAccount(store: Store, id: string): Promise<void> {
  const row = await store.db.selectFrom('accounts').select('id').where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('account', 'id');
}

// What an account list handler reads of its request: the account id in the path and the list
// query (cursors, mode), typed from the TypeBox schemas the list routes validate with (routes.ts),
// as the type provider types an inline handler. Each route's own request (the recipients' query
// adds date filters) is one of these, so one handler serves both.
interface AccountListRequest { params: Static<ReturnType<typeof IdParams>>; query: Static<typeof ListKeysQuery> }

// One of an account's lists: 404 for an unknown account, then its rows (optionally one mode),
// newest first, with cursors.
export function accountList<T extends 'api_keys' | 'recipients', R>(store: Store, table: T, toResource: (row: Selectable<Database[T]>) => R) {
  return async (req: AccountListRequest) => {
    await requireAccount(store, req.params.id);
    // The account's objects of this kind: the scope a cursor must name one of.
    const scope = store.db.selectFrom(table as 'recipients').selectAll().where('account_id', '=', req.params.id);
    let qb = scope;
    if (req.query.livemode !== undefined) qb = qb.where('livemode', '=', req.query.livemode ? 1 : 0);
    // (The builder over a table chosen at run time loses its row type: the mapper is the table's own.)
    return paginate(qb, req.query, toResource as unknown as (row: Selectable<RecipientsTable>) => R, scope);
  };
}


import type { Store, Tx } from '../../../store/index.js';
import type { Page } from '../../../http/pagination.js';

// Merchants are named, not only shown by id (issue 29): every admin list that shows an account
// id carries the account's name too. Resolved here, on the server, for the rows of one page: one
// query by primary key for the page's distinct accounts (a page holds at most 100 rows), so a
// list names its merchants at any number of accounts, where a client resolving names from the
// accounts list would have to read every account first.

export async function accountNames(db: Store['db'] | Tx, ids: Iterable<string>): Promise<Map<string, string>> {
  const distinct = [...new Set(ids)];
  if (distinct.length === 0) return new Map();
  const rows = await db.selectFrom('accounts').select(['id', 'name']).where('id', 'in', distinct).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

// Accounts are never deleted, so every id has its name; the id stands in should one be missing.
export async function named<T extends { accountId: string }>(db: Store['db'] | Tx, rows: T[]): Promise<Array<T & { accountName: string }>> {
  const names = await accountNames(db, rows.map((r) => r.accountId));
  return rows.map((r) => ({ ...r, accountName: names.get(r.accountId) ?? r.accountId }));
}

export async function namedPage<T extends { accountId: string }>(db: Store['db'] | Tx, page: Page<T>): Promise<Page<T & { accountName: string }>> {
  return { ...page, data: await named(db, page.data) };
}

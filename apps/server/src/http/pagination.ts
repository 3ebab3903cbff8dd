import type { SelectQueryBuilder } from 'kysely';
import { ApiError } from '../errors.js';

// The generic builder loses column types; the column names are ours, not the caller's.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any table, any columns: see above
type AnyRowsQuery<Row> = SelectQueryBuilder<any, any, Row>;

export interface ListQuery {
  limit?: number;
  startingAfter?: string;
  endingBefore?: string;
  createdGte?: string;
  createdLte?: string;
}

export interface Page<T> {
  object: 'list';
  data: T[];
  hasMore: boolean;
}

export const MAX_PAGE_SIZE = 100;

// Cursor pagination over time-sortable ids, newest first. One extra row tells whether another
// page follows; the cursor is an id, so pages never shift when new objects arrive.
//
// `scope` is the list before its filters: the objects of this kind the caller may see (its
// account and mode, the parent in the path). A cursor must name one of them, or the request is
// a VALIDATION_ERROR naming the cursor (an unknown cursor silently meant "from the start", and
// another account's id told its position). Filters on what can change (a status) are left out
// of the scope on purpose: an object that moved out of a filter between two pages still marks
// its place.
export async function paginate<DB, TB extends keyof DB, Row extends { id: string }, T>(
  base: SelectQueryBuilder<DB, TB, Row>,
  query: ListQuery,
  toResource: (row: Row) => T,
  scope: SelectQueryBuilder<DB, TB, Row>,
  columns: { id: string; created: string } = { id: 'id', created: 'created_at' },
): Promise<Page<T>> {
  if (query.startingAfter && query.endingBefore) {
    throw new ApiError('VALIDATION_ERROR', 'Send startingAfter or endingBefore, not both.', { param: 'endingBefore' });
  }
  const { id: idColumn, created: createdColumn } = columns;
  const cursorParam = query.startingAfter ? 'startingAfter' : query.endingBefore ? 'endingBefore' : null;
  if (cursorParam) {
    const inScope = await (scope as unknown as AnyRowsQuery<Row>).where(idColumn, '=', query[cursorParam]).limit(1).executeTakeFirst();
    if (!inScope) {
      throw new ApiError('VALIDATION_ERROR', `${cursorParam} must be the id of an object in this list (from a previous page).`, { param: cursorParam });
    }
  }
  const limit = Math.min(query.limit ?? 20, MAX_PAGE_SIZE);
  let qb = base as unknown as AnyRowsQuery<Row>;
  if (query.createdGte) qb = qb.where(createdColumn, '>=', new Date(query.createdGte).toISOString());
  if (query.createdLte) qb = qb.where(createdColumn, '<=', new Date(query.createdLte).toISOString());
  if (query.endingBefore) {
    const rows = await qb.where(idColumn, '>', query.endingBefore).orderBy(idColumn, 'asc').limit(limit + 1).execute();
    const hasMore = rows.length > limit;
    return { object: 'list', data: rows.slice(0, limit).reverse().map(toResource), hasMore };
  }
  if (query.startingAfter) qb = qb.where(idColumn, '<', query.startingAfter);
  const rows = await qb.orderBy(idColumn, 'desc').limit(limit + 1).execute();
  return { object: 'list', data: rows.slice(0, limit).map(toResource), hasMore: rows.length > limit };
}

import type { SelectQueryBuilder } from 'kysely';
import { ApiError } from '../errors.js';

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
export async function paginate<DB, TB extends keyof DB, Row extends { id: string }, T>(
  base: SelectQueryBuilder<DB, TB, Row>,
  query: ListQuery,
  toResource: (row: Row) => T,
  idColumn = 'id',
  createdColumn = 'created_at',
): Promise<Page<T>> {
  if (query.startingAfter && query.endingBefore) {
    throw new ApiError('VALIDATION_ERROR', 'Send startingAfter or endingBefore, not both.', { param: 'endingBefore' });
  }
  const limit = Math.min(query.limit ?? 20, MAX_PAGE_SIZE);
  // The generic builder loses column types; the column names are ours, not the caller's.
  let qb = base as unknown as SelectQueryBuilder<any, any, Row>;
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

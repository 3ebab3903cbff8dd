import { CompiledQuery, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { SqliteConnection } from './sqlite.js';
import type { Database } from './schema.js';
import { RAW, batchOf } from './index.js';

// Kysely builds and compiles a query on every call (~6-9 µs); better-sqlite3 runs a cached
// statement in ~2 µs (node:sqlite likewise). On the hot paths (payment create and approval, events, idempotency,
// jobs) the same shapes repeat, so we let Kysely compile each shape once (it stays the one
// writer of our SQL, dialect quoting and placeholders included) and reuse the text.
const cache = new Map<string, string>();
const MAX_SHAPES = 1000;

type Db = Kysely<Database>;

// What the shape compilers below use of Kysely's builders. The table is a type parameter there,
// so Kysely cannot type its columns; the column names are ours (the callers' object keys).
interface WhereBuilder { where(column: string, op: '=', value: null): WhereBuilder; compile(): CompiledQuery }
interface SelectFrom { selectAll(): WhereBuilder; select(columns: readonly string[]): WhereBuilder }
interface UpdateTable { set(values: Record<string, null>): WhereBuilder }

function raw(db: Db): SqliteConnection | undefined {
  return (db as unknown as Record<symbol, SqliteConnection | undefined>)[RAW];
}

async function run(db: Db, text: string, params: unknown[]): Promise<{ rows: unknown[]; changes: number }> {
  const statements = raw(db);
  if (statements) {
    const stmt = statements.prepare(text);
    // Kysely's own statements pass through the batch's hooks in its connection; these do not.
    const batch = batchOf(db);
    if (batch) {
      const wait = batch.before(text, !stmt.reader);
      if (wait) await wait;
    }
    try {
      if (stmt.reader) return { rows: stmt.all(params), changes: 0 };
      return { rows: [], changes: Number(stmt.run(params).changes) };
    } catch (error) {
      batch?.failed();
      throw error;
    }
  }
  const result = await db.executeQuery(CompiledQuery.raw(text, params));
  return { rows: result.rows, changes: Number(result.numAffectedRows ?? 0n) };
}

function dialectKey(db: Db): string {
  return (db.getExecutor().adapter as object).constructor.name;
}

function remember(key: string, build: () => string): string {
  let text = cache.get(key);
  if (text === undefined) {
    text = build();
    if (cache.size >= MAX_SHAPES) cache.clear();
    cache.set(key, text);
  }
  return text;
}

export async function insertRows<T extends keyof Database>(db: Db, table: T, rows: ReadonlyArray<Insertable<Database[T]>>): Promise<void> {
  if (rows.length === 0) return;
  // In a group-committed batch: buffered, written with the batch's other rows (store/batch.ts).
  const batch = batchOf(db);
  if (batch?.deferring) {
    batch.defer(table, rows);
    return;
  }
  const columns = Object.keys(rows[0]);
  const text = remember(`${dialectKey(db)}|insert|${table}|${columns.join(',')}|${rows.length}`, () =>
    db.insertInto(table).values(rows).compile().sql);
  const params: unknown[] = [];
  for (const row of rows) for (const c of columns) params.push((row as Record<string, unknown>)[c]);
  await run(db, text, params);
}

// `select <columns> from <table> where a = ? and b = ? ...` with the where keys in the order given.
// Rows come back typed as whole rows; only the selected columns are present.
export async function selectWhere<T extends keyof Database>(
  db: Db,
  table: T,
  columns: ReadonlyArray<keyof Database[T] & string> | '*',
  where: Partial<Record<keyof Database[T] & string, string | number>>,
): Promise<Array<Selectable<Database[T]>>> {
  const keys = Object.keys(where);
  const text = remember(`${dialectKey(db)}|select|${table}|${columns === '*' ? '*' : columns.join(',')}|${keys.join(',')}`, () => {
    const from = db.selectFrom(table as never) as unknown as SelectFrom;
    let qb = columns === '*' ? from.selectAll() : from.select(columns);
    for (const k of keys) qb = qb.where(k, '=', null);
    return qb.compile().sql;
  });
  const result = await run(db, text, keys.map((k) => (where as Record<string, unknown>)[k]));
  return result.rows as Array<Selectable<Database[T]>>;
}

export async function deleteWhere<T extends keyof Database>(db: Db, table: T, where: Partial<Record<keyof Database[T] & string, string | number>>): Promise<number> {
  const keys = Object.keys(where);
  const text = remember(`${dialectKey(db)}|delete|${table}|${keys.join(',')}`, () => {
    let qb = db.deleteFrom(table) as unknown as WhereBuilder;
    for (const k of keys) qb = qb.where(k, '=', null);
    return qb.compile().sql;
  });
  return (await run(db, text, keys.map((k) => (where as Record<string, unknown>)[k]))).changes;
}

// `update <table> set a = ?, b = ? ... where c = ? and d = ?`: the set columns in the order given,
// then the where keys. Returns the number of rows changed.
export async function updateWhere<T extends keyof Database>(
  db: Db,
  table: T,
  set: Partial<Record<keyof Database[T] & string, unknown>>,
  where: Partial<Record<keyof Database[T] & string, string | number>>,
): Promise<number> {
  const columns = Object.keys(set);
  const keys = Object.keys(where);
  const text = remember(`${dialectKey(db)}|update|${table}|${columns.join(',')}|${keys.join(',')}`, () => {
    let qb = (db.updateTable(table as never) as unknown as UpdateTable).set(Object.fromEntries(columns.map((c) => [c, null])));
    for (const k of keys) qb = qb.where(k, '=', null);
    return qb.compile().sql;
  });
  const params: unknown[] = [];
  for (const c of columns) params.push((set as Record<string, unknown>)[c]);
  for (const k of keys) params.push((where as Record<string, unknown>)[k]);
  return (await run(db, text, params)).changes;
}

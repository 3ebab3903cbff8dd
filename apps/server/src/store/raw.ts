import { CompiledQuery, sql, type DatabaseConnection, type Insertable, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { SqliteConnection, SqliteStatement } from './sqlite.js';
import type { Database } from './schema.js';
import type { RawExec } from './types.js';
import { batchOf } from './batch.js';
import { declareAccess } from './access.js';

// The one raw path per engine beside Kysely. Kysely writes every statement's text (dialect
// quoting and placeholders included); this file runs compiled text without rebuilding it:
// - SQLite: the driver's statements (store/sqlite.ts: node:sqlite or better-sqlite3), prepared
//   once per text (cachedStatements), stepped synchronously underneath;
// - PostgreSQL: the connection's executeQuery with the compiled text and its parameters.

// The SQLite statements a SQLite Kysely instance runs on (Kysely's SqliteDatabase).
export type SqliteStatements = SqliteConnection;

// SQLite compiles a statement per prepare(); Kysely prepares per query. Caching by SQL
// text makes the hot path a bind-and-step. Bounded so ad hoc SQL cannot grow it without limit.
const MAX_STATEMENTS = 500;
export function cachedStatements(conn: SqliteConnection): SqliteStatements {
  const cache = new Map<string, SqliteStatement>();
  return {
    prepare(sqlText: string) {
      let stmt = cache.get(sqlText);
      if (!stmt) {
        stmt = conn.prepare(sqlText);
        if (cache.size >= MAX_STATEMENTS) {
          const oldest = cache.keys().next();
          if (!oldest.done) cache.delete(oldest.value);
        }
        cache.set(sqlText, stmt);
      }
      return stmt;
    },
    exec(sqlText: string) {
      conn.exec(sqlText);
    },
    close() {
      conn.close();
    },
  };
}

// Which Kysely instances run on SQLite statements (the reader, and each batch's on the writer).
const statementsByDb = new WeakMap<Kysely<Database>, SqliteStatements>();
export function lendStatements(db: Kysely<Database>, statements: SqliteStatements): void {
  statementsByDb.set(db, statements);
}

// A statement on a connection, outside Kysely: SQLite through its cached statements,
// PostgreSQL through the connection.
export function rawExec(statements: SqliteStatements | null, connection: DatabaseConnection): RawExec {
  if (statements) {
    return async (text, params) => {
      const stmt = statements.prepare(text);
      return stmt.reader ? stmt.all(params) : stmt.run(params);
    };
  }
  return (text, params) => connection.executeQuery(CompiledQuery.raw(text, [...params]));
}

// Kysely builds and compiles a query on every call (~6-9 µs); better-sqlite3 runs a cached
// statement in ~2 µs. On the hot paths (payment create and approval, events, idempotency,
// jobs) the same shapes repeat, so we let Kysely compile each shape once (it stays the one
// writer of our SQL, dialect quoting and placeholders included) and reuse the text.
const cache = new Map<string, string>();
const MAX_SHAPES = 1000;

type Db = Kysely<Database>;

// The shape compilers below write with Kysely's sql template (sql.table, sql.ref: its quoting;
// each value its placeholder), not its query builders: the table is a type parameter there, and
// a builder over a table it cannot name types no column (it would take casts to call at all).
// The column names are the callers' object keys, typed against the table by the signatures.
// Each `column = ?` with a placeholder per column, joined by `separator`.
const compared = (columns: readonly string[], separator: string): RawBuilder<unknown> =>
  sql.join(columns.map((c) => sql`${sql.ref(c)} = ${null}`), sql.raw(separator));
const whereAll = (keys: readonly string[]): RawBuilder<unknown> => (keys.length === 0 ? sql`` : sql` where ${compared(keys, ' and ')}`);

// `table`: the one table the statement reads or writes (the batch's read-your-own-writes and
// savepoints go by it).
async function run(db: Db, text: string, params: unknown[], table: string, writes: boolean): Promise<{ rows: unknown[]; changes: number }> {
  const statements = statementsByDb.get(db);
  if (statements) {
    const stmt = statements.prepare(text);
    // Kysely's own statements pass through the batch's hooks in its connection; these do not.
    const batch = batchOf(db);
    if (batch) {
      const wait = batch.before({ tables: [table], writes });
      if (wait) await wait;
    }
    try {
      if (stmt.reader) return { rows: stmt.all(params), changes: 0 };
      return { rows: [], changes: Number(stmt.run(params).changes) };
    } catch (error) {
      batch?.failed(error);
      throw error;
    }
  }
  const result = await db.executeQuery(declareAccess(CompiledQuery.raw(text, params), { tables: [table], writes }));
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

export async function defer<T extends keyof Database>(db: Db, table: T, rows: ReadonlyArray<Insertable<Database[T]>>): Promise<void> {
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
  await run(db, text, params, table, true);
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
    const selected = columns === '*' ? sql`*` : sql.join(columns.map((c) => sql.ref(c)));
    return sql`select ${selected} from ${sql.table(table)}${whereAll(keys)}`.compile(db).sql;
  });
  const result = await run(db, text, keys.map((k) => (where as Record<string, unknown>)[k]), table, false);
  // A cast, honestly: the database answers untyped rows. These are rows of `table` (the statement
  // selects from it), typed by the schema as Kysely's own selects are (store/schema.ts is kept in
  // step with the migrations); only the selected columns are present, as said above.
  return result.rows as Array<Selectable<Database[T]>>;
}

export async function deleteWhere<T extends keyof Database>(db: Db, table: T, where: Partial<Record<keyof Database[T] & string, string | number>>): Promise<number> {
  const keys = Object.keys(where);
  const text = remember(`${dialectKey(db)}|delete|${table}|${keys.join(',')}`, () => {
    return sql`delete from ${sql.table(table)}${whereAll(keys)}`.compile(db).sql;
  });
  return (await run(db, text, keys.map((k) => (where as Record<string, unknown>)[k]), table, true)).changes;
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
    return sql`update ${sql.table(table)} set ${compared(columns, ', ')}${whereAll(keys)}`.compile(db).sql;
  });
  const params: unknown[] = [];
  for (const c of columns) params.push((set as Record<string, unknown>)[c]);
  for (const k of keys) params.push((where as Record<string, unknown>)[k]);
  return (await run(db, text, params, table, true)).changes;
}

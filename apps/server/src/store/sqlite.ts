import { createRequire } from 'node:module';

// The embedded store's SQLite driver, chosen by the Node version (README, "Node versions"):
//
// - Node >= 22.13: `node:sqlite`, built into Node (no native addon to build, nothing to load
//   that was compiled against another Node's headers).
// - Node 20: better-sqlite3 12.x (Node 20 has no unflagged `node:sqlite`).
//
// better-sqlite3 12.x aborts the process on Node 24 (`Assertion failed: (env) != nullptr` from
// `Statement::~Statement`, reproduced by .ci/load-smoke.mjs); 13.x fixes it but requires
// Node >= 22, so no single better-sqlite3 serves 20 and 24. `SQLITE_DRIVER` (`node:sqlite` or
// `better-sqlite3`) overrides the choice, for comparing the two on one Node.
//
// Both are wrapped to the one shape the store and Kysely's SqliteDialect use: prepare(sql) ->
// a statement with `reader`, and all/run/iterate taking the parameters as an array.

export type SqliteDriverName = 'node:sqlite' | 'better-sqlite3';

export interface SqliteStatement {
  // True when the statement returns rows (a select, or a write with `returning`).
  readonly reader: boolean;
  all(params: readonly unknown[]): unknown[];
  run(params: readonly unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(params: readonly unknown[]): IterableIterator<unknown>;
}

export interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): void;
  close(): void;
}

const require = createRequire(import.meta.url);
const NODE_SQLITE_SINCE: [number, number] = [22, 13]; // unflagged from 22.13.0

export function nodeHasSqlite(version = process.versions.node): boolean {
  const [major, minor] = version.split('.').map(Number);
  return major > NODE_SQLITE_SINCE[0] || (major === NODE_SQLITE_SINCE[0] && minor >= NODE_SQLITE_SINCE[1]);
}

export function sqliteDriverName(env: NodeJS.ProcessEnv = process.env): SqliteDriverName {
  const chosen = env.SQLITE_DRIVER;
  if (chosen === 'node:sqlite' || chosen === 'better-sqlite3') {
    if (chosen === 'node:sqlite' && !nodeHasSqlite()) throw new Error(`SQLITE_DRIVER=node:sqlite needs Node >= ${NODE_SQLITE_SINCE.join('.')}, this is ${process.version}`);
    return chosen;
  }
  if (chosen) throw new Error(`SQLITE_DRIVER must be node:sqlite or better-sqlite3, got "${chosen}"`);
  return nodeHasSqlite() ? 'node:sqlite' : 'better-sqlite3';
}

export function openSqlite(file: string, driver: SqliteDriverName = sqliteDriverName()): SqliteConnection {
  return driver === 'node:sqlite' ? openNodeSqlite(file) : openBetterSqlite3(file);
}

// --- better-sqlite3 (Node 20) -----------------------------------------------------------------

interface BetterStatement {
  readonly reader: boolean;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  iterate(...params: unknown[]): IterableIterator<unknown>;
}
interface BetterDatabase {
  prepare(sql: string): BetterStatement;
  exec(sql: string): void;
  close(): void;
}

function openBetterSqlite3(file: string): SqliteConnection {
  let Database: new (file: string) => BetterDatabase;
  try {
    Database = require('better-sqlite3') as new (file: string) => BetterDatabase;
  } catch (error) {
    // An optional dependency: its install (a prebuilt binary, else a compile) may have failed.
    throw new Error(`the embedded store needs better-sqlite3 on Node ${process.versions.node} and it did not load (${(error as Error).message.split('\n')[0]}); run \`npm rebuild better-sqlite3\`, or use Node >= ${NODE_SQLITE_SINCE.join('.')} (its built-in node:sqlite needs nothing)`, { cause: error });
  }
  // better-sqlite3 takes an array as the anonymous parameters, so its statements already have
  // the shape: handed out as they are, no wrapper on the hot path.
  return new Database(file);
}

// --- node:sqlite (Node >= 22.13) ----------------------------------------------------------------

interface NodeStatementSync {
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(...params: unknown[]): IterableIterator<unknown>;
  columns(): unknown[];
  // Node >= 22.16 / 24: rows as arrays of values.
  setReturnArrays?(enabled: boolean): void;
}
interface NodeDatabaseSync {
  prepare(sql: string): NodeStatementSync;
  exec(sql: string): void;
  close(): void;
}

let DatabaseSync: (new (file: string) => NodeDatabaseSync) | undefined;

function loadNodeSqlite(): new (file: string) => NodeDatabaseSync {
  if (DatabaseSync) return DatabaseSync;
  // Node 22 flags the module experimental with a warning on every start; we chose it knowingly
  // (README), so that one warning is not printed. Every other warning still is.
  // The function itself, put back as it was below; it is called with `process` as its this.
  // eslint-disable-next-line @typescript-eslint/unbound-method -- see above
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type ?? (warning as Error).name;
    if (type === 'ExperimentalWarning' && /SQLite/.test(text)) return;
    return (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  });
  try {
    DatabaseSync = (require('node:sqlite') as { DatabaseSync: new (file: string) => NodeDatabaseSync }).DatabaseSync;
  } finally {
    process.emitWarning = emitWarning;
  }
  return DatabaseSync;
}

// node:sqlite reports every failure as ERR_SQLITE_ERROR with SQLite's extended result code in
// `errcode`; the store (like better-sqlite3) speaks in SQLite's names for them.
const RESULT_CODES: Record<number, string> = {
  1: 'SQLITE_ERROR',
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  8: 'SQLITE_READONLY',
  10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  19: 'SQLITE_CONSTRAINT',
  261: 'SQLITE_BUSY_RECOVERY',
  517: 'SQLITE_BUSY_SNAPSHOT',
  275: 'SQLITE_CONSTRAINT_CHECK',
  787: 'SQLITE_CONSTRAINT_FOREIGNKEY',
  1299: 'SQLITE_CONSTRAINT_NOTNULL',
  1555: 'SQLITE_CONSTRAINT_PRIMARYKEY',
  2067: 'SQLITE_CONSTRAINT_UNIQUE',
};

function named(error: unknown): unknown {
  const e = error as { code?: string; errcode?: number };
  if (e && e.code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number') {
    e.code = RESULT_CODES[e.errcode] ?? RESULT_CODES[e.errcode & 0xff] ?? 'SQLITE_ERROR';
  }
  return error;
}

class NodeStatement implements SqliteStatement {
  readonly reader: boolean;
  // Column names when rows come back as arrays (see rows()); null on Nodes without that switch.
  private readonly names: string[] | null = null;

  constructor(private readonly stmt: NodeStatementSync) {
    const columns = stmt.columns() as Array<{ name: string }>;
    this.reader = columns.length > 0;
    if (this.reader && typeof stmt.setReturnArrays === 'function') {
      stmt.setReturnArrays(true);
      this.names = columns.map((c) => c.name);
    }
  }

  // node:sqlite's own row objects have a null prototype (deepEqual and callers expect plain
  // objects) and are slow to copy; built from arrays, a list of 10 rows costs ~7.5 µs of CPU
  // against ~11 µs as node:sqlite's objects and ~25 µs copied (Node 22 and 24, this machine).
  private row(raw: unknown): unknown {
    const names = this.names;
    if (names === null) return { ...(raw as object) };
    const values = raw as unknown[];
    const row: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) row[names[i]] = values[i];
    return row;
  }

  all(params: readonly unknown[]): unknown[] {
    let rows: unknown[];
    try {
      rows = this.stmt.all(...params);
    } catch (error) {
      throw named(error);
    }
    for (let i = 0; i < rows.length; i++) rows[i] = this.row(rows[i]);
    return rows;
  }

  run(params: readonly unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint } {
    try {
      return this.stmt.run(...params);
    } catch (error) {
      throw named(error);
    }
  }

  *iterate(params: readonly unknown[]): IterableIterator<unknown> {
    try {
      for (const raw of this.stmt.iterate(...params)) yield this.row(raw);
    } catch (error) {
      throw named(error);
    }
  }
}

function openNodeSqlite(file: string): SqliteConnection {
  const Database = loadNodeSqlite();
  const db = new Database(file);
  return {
    prepare(sql: string) {
      try {
        return new NodeStatement(db.prepare(sql));
      } catch (error) {
        throw named(error);
      }
    },
    exec(sql: string) {
      try {
        db.exec(sql);
      } catch (error) {
        throw named(error);
      }
    },
    close() {
      db.close();
    },
  };
}

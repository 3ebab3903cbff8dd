import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeHasSqlite, openSqlite, sqliteDriverName } from '../src/store/sqlite.js';
import { Store, isUniqueViolation } from '../src/store/index.js';

// The embedded store's SQLite driver follows the Node version (README, "Node versions"):
// node:sqlite from 22.13, better-sqlite3 12 on Node 20 (12.x aborts on Node 24). CI runs this
// file on Node 20 and Node 24, so both drivers go through the same checks.

describe('SQLite driver by Node version', () => {
  test('node:sqlite from Node 22.13 on, better-sqlite3 before', () => {
    for (const v of ['20.19.0', '20.20.2', '22.12.0', '21.7.3']) assert.equal(nodeHasSqlite(v), false, v);
    for (const v of ['22.13.0', '22.23.3', '23.0.0', '24.0.0', '24.21.0', '26.1.0']) assert.equal(nodeHasSqlite(v), true, v);
    assert.equal(sqliteDriverName({}), nodeHasSqlite() ? 'node:sqlite' : 'better-sqlite3');
  });

  test('SQLITE_DRIVER overrides the choice, and only with a driver this Node has', () => {
    assert.equal(sqliteDriverName({ SQLITE_DRIVER: 'better-sqlite3' }), 'better-sqlite3');
    assert.throws(() => sqliteDriverName({ SQLITE_DRIVER: 'sqlite3' }), /SQLITE_DRIVER must be node:sqlite or better-sqlite3/);
    if (nodeHasSqlite()) assert.equal(sqliteDriverName({ SQLITE_DRIVER: 'node:sqlite' }), 'node:sqlite');
    else assert.throws(() => sqliteDriverName({ SQLITE_DRIVER: 'node:sqlite' }), /needs Node >= 22\.13/);
  });

  test(`this Node's driver (${sqliteDriverName()}) behaves as the store expects`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlite-driver-'));
    const db = openSqlite(join(dir, 'x.db'));
    try {
      db.exec('create table t (id integer primary key, name text not null unique, n integer)');
      const insert = db.prepare('insert into t (name, n) values (?, ?)');
      assert.equal(insert.reader, false);
      assert.equal(Number(insert.run(['a', 1]).changes), 1);
      const returning = db.prepare('insert into t (name, n) values (?, ?) returning id');
      assert.equal(returning.reader, true);
      assert.deepEqual(returning.all(['b', 2]), [{ id: 2 }]);
      const select = db.prepare('select name, n from t order by id');
      assert.equal(select.reader, true);
      const rows = select.all([]);
      // Plain objects, as the store's callers and deepEqual expect (node:sqlite's have no prototype).
      assert.deepEqual(rows, [{ name: 'a', n: 1 }, { name: 'b', n: 2 }]);
      assert.equal(Object.getPrototypeOf(rows[0]), Object.prototype);
      assert.deepEqual([...select.iterate([])], rows);
      // A unique violation is recognised by the store, whatever the driver calls it.
      let violation: unknown;
      try {
        insert.run(['a', 3]);
      } catch (error) {
        violation = error;
      }
      assert.ok(violation, 'the duplicate was refused');
      assert.equal(isUniqueViolation(violation), true, String((violation as { code?: string }).code));
      assert.equal(db.prepare('update t set n = n + 1').run([]).changes, 2);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the store says which driver it opened', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlite-driver-'));
    const store = Store.open({ url: `sqlite:${join(dir, 'store.db')}` });
    try {
      await store.migrate();
      await store.ping();
      assert.equal(store.sqliteDriver, sqliteDriverName());
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { ENGINES, testDatabase, type TestDb } from './helpers.js';
import { Store, isUniqueViolation, type Tx } from '../src/store/index.js';
import { defer, selectWhere } from '../src/store/index.js';

// The group-committed write path itself (store/index.ts, store/batch.ts): writes that arrive
// together share one transaction; each keeps its own outcome.
for (const engine of ENGINES) {
  describe(`store write batches (${engine})`, () => {
    let db: TestDb;
    let store: Store;
    before(async () => {
      db = await testDatabase(engine);
      store = Store.open({ url: db.url });
      await store.migrate();
    });
    after(async () => {
      await store.close();
      await db.drop();
    });

    let seq = 0;
    const event = (tag: string) => ({
      id: `evt_test_${tag}_${seq++}`, account_id: 'acct_store', livemode: 0, type: 'test', data: '{}', created_at: new Date().toISOString(), created_at_ms: Date.now(),
    });
    const eventIds = async (prefix: string) => (await store.db.selectFrom('events').select('id').where('id', 'like', `${prefix}%`).orderBy('id').execute()).map((r) => r.id);
    const sameCommit = async <T>(writes: Array<(tx: Tx) => Promise<T>>) => {
      const commitsBefore = store.stats.commits;
      const results = await Promise.allSettled(writes.map((w) => store.write(w)));
      return { results, commits: store.stats.commits - commitsBefore };
    };

    test('a write that fails keeps none of its rows; the others of its batch commit', async () => {
      const { results, commits } = await sameCommit([
        async (tx) => defer(tx, 'events', [event('a1')]),
        async (tx) => {
          await defer(tx, 'events', [event('a2')]);
          await tx.updateTable('accounts').set({ name: 'x' }).where('id', '=', 'nobody').execute();
          throw new Error('refused after writing');
        },
        async (tx) => defer(tx, 'events', [event('a3')]),
      ]);
      assert.equal(commits, 1, 'one shared commit');
      assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
      const ids = await eventIds('evt_test_a');
      assert.equal(ids.length, 2);
      assert.ok(ids.every((id) => !id.startsWith('evt_test_a2')));
    });

    test('rows written at the end of a batch keep every character (PostgreSQL inlines them as literals)', async () => {
      const awkward = [
        "it's", 'back\\slash \\\'', "'); drop table events; --", "E'\\x00'", 'line\nbreak\ttab', 'acentuação ção 💸', '$1 $$ $tag$ ?', '',
      ];
      const rows = awkward.map((data, i) => ({ ...event('lit'), data, type: `t${i}` }));
      const { results, commits } = await sameCommit(rows.map((row) => async (tx: Tx) => defer(tx, 'events', [row])));
      assert.equal(commits, 1, 'one shared commit');
      assert.ok(results.every((r) => r.status === 'fulfilled'));
      const stored = await store.db.selectFrom('events').select(['id', 'data', 'livemode', 'created_at_ms']).where('id', 'like', 'evt_test_lit%').orderBy('id').execute();
      assert.deepEqual(stored.map((r) => r.data).sort(), awkward.slice().sort());
      for (const r of stored) {
        const row = rows.find((x) => x.id === r.id);
        assert.equal(r.created_at_ms, row?.created_at_ms);
        assert.equal(r.livemode, 0);
      }
      assert.ok(await store.db.selectFrom('events').select('id').limit(1).executeTakeFirst(), 'the events table is still there');
    });

    test('a write reads the rows it has just inserted', async () => {
      const row = event('b');
      const seen = await store.write(async (tx) => {
        await defer(tx, 'events', [row]);
        return selectWhere(tx, 'events', ['id'], { id: row.id });
      });
      assert.deepEqual(seen, [{ id: row.id }]);
    });

    test('two writes of one batch claiming one key: the batch runs again, one wins, the other sees the violation', async () => {
      const replaysBefore = store.stats.replays;
      const key = (body: string) => ({ account_id: 'acct_store', livemode: 0, key: 'same-key', fingerprint: 'f', status_code: 200, body, created_at: new Date().toISOString(), created_at_ms: Date.now() });
      const { results } = await sameCommit([
        async (tx) => { await defer(tx, 'events', [event('c1')]); await defer(tx, 'idempotency_keys', [key('first')]); },
        async (tx) => { await defer(tx, 'events', [event('c2')]); await defer(tx, 'idempotency_keys', [key('second')]); },
        async (tx) => defer(tx, 'events', [event('c3')]),
      ]);
      assert.equal(store.stats.replays, replaysBefore + 1, 'the optimistic pass was replayed');
      assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
      assert.ok(isUniqueViolation((results[1] as PromiseRejectedResult).reason));
      assert.equal((await eventIds('evt_test_c')).length, 2);
      const stored = await selectWhere(store.db, 'idempotency_keys', ['body'], { account_id: 'acct_store', livemode: 0, key: 'same-key' });
      assert.deepEqual(stored, [{ body: 'first' }]);
    });

    test('a write that catches a failed statement and goes on does not take its batch down', async () => {
      // On PostgreSQL a failed statement outside a savepoint aborts the whole transaction: the
      // batch must notice and run again with a savepoint around each write.
      const { results } = await sameCommit([
        async (tx) => defer(tx, 'events', [event('d1')]),
        async (tx) => {
          try {
            await sql`select * from no_such_table`.execute(tx);
          } catch { /* expected */ }
          await defer(tx, 'events', [event('d2')]);
        },
        async (tx) => defer(tx, 'events', [event('d3')]),
      ]);
      assert.equal(results[0].status, 'fulfilled');
      assert.equal(results[2].status, 'fulfilled');
      // SQLite carries on after a failed statement; PostgreSQL refuses the rest of that write
      // (its savepoint is aborted). Either way, what was answered is what was committed.
      const ids = await eventIds('evt_test_d');
      assert.equal(ids.some((id) => id.startsWith('evt_test_d2')), results[1].status === 'fulfilled');
      assert.equal(ids.length, results[1].status === 'fulfilled' ? 3 : 2);
      if (engine === 'sqlite') assert.equal(results[1].status, 'fulfilled');
    });

    test('alone, a failing write rolls back everything it did', async () => {
      await assert.rejects(store.write(async (tx) => {
        await defer(tx, 'events', [event('e1')]);
        await tx.insertInto('events').values(event('e2')).execute();
        throw new Error('no');
      }), /no/);
      assert.deepEqual(await eventIds('evt_test_e'), []);
    });
  });
}

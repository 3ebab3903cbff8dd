import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { sql } from 'kysely';
import { ENGINES, testDatabase, type TestDb } from './helpers.js';
import { Store, defer, deferWork, isUniqueViolation, type DeferredWork, type Tx } from '../src/store/index.js';

// Model-based property of the group commit (store/batcher.ts, store/batch.ts): any mix of
// writes run together through one batch leaves the same database and gets the same answers as
// the same writes run one by one, in order. The mixes hold succeeding writes, writes that fail
// after writing, writes whose SQL fails, two writes claiming one idempotency key, writes that
// read their own deferred rows, deferred work, and writes whose answer depends on the ones before.

type Op =
  | { kind: 'ok' }
  | { kind: 'fail' }
  | { kind: 'claim'; key: number }
  | { kind: 'bump' }
  | { kind: 'readOwn' }
  | { kind: 'rawReadOwn' }
  | { kind: 'work' }
  | { kind: 'sqlFail' }
  | { kind: 'catchSqlFail' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.constant<Op>({ kind: 'ok' }),
  fc.constant<Op>({ kind: 'fail' }),
  fc.integer({ min: 0, max: 3 }).map((key): Op => ({ kind: 'claim', key })),
  fc.constant<Op>({ kind: 'bump' }),
  fc.constant<Op>({ kind: 'readOwn' }),
  fc.constant<Op>({ kind: 'rawReadOwn' }),
  fc.constant<Op>({ kind: 'work' }),
  fc.constant<Op>({ kind: 'sqlFail' }),
  fc.constant<Op>({ kind: 'catchSqlFail' }),
);

type Answer = { ok: true; value: unknown } | { ok: false; error: string };

for (const engine of ENGINES) {
  describe(`group commit model: batched = one by one (${engine})`, () => {
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

    // Deferred work: one job row per item, written at the end of the batch.
    const work: DeferredWork<string> = {
      key: 'test.model.work',
      tables: ['jobs'],
      reads: [],
      async run(tx, items) {
        await defer(tx, 'jobs', items.map((id) => ({ id, type: 'model', payload: '{}', run_at_ms: 0, attempts: 0, locked_until_ms: null, locked_by: null, last_error: null, created_at: 'x' })));
      },
    };

    // The write each op stands for, its rows named under `p` so two runs never meet.
    const writeOf = (p: string, op: Op, i: number) => async (tx: Tx): Promise<unknown> => {
      const event = { id: `${p}e${i}`, account_id: `${p}acct`, livemode: 0, type: op.kind, data: `{"i":${i}}`, created_at: 'x', created_at_ms: i };
      const bump = async () => {
        await tx.updateTable('jobs').set((eb) => ({ attempts: eb('attempts', '+', 1) })).where('id', '=', `${p}seed`).execute();
        const row = await tx.selectFrom('jobs').select('attempts').where('id', '=', `${p}seed`).executeTakeFirstOrThrow();
        return Number(row.attempts);
      };
      switch (op.kind) {
        case 'ok':
          await defer(tx, 'events', [event]);
          return i;
        case 'fail':
          await defer(tx, 'events', [event]);
          await bump();
          throw new Error(`refused ${i}`);
        case 'claim':
          await defer(tx, 'events', [event]);
          try {
            await defer(tx, 'idempotency_keys', [{ account_id: `${p}acct`, livemode: 0, key: `k${op.key}`, fingerprint: `f${i}`, status_code: 200, body: `{"i":${i}}`, created_at: 'x', created_at_ms: i }]);
          } catch (error) {
            if (isUniqueViolation(error)) throw new Error(`key k${op.key} taken`, { cause: error });
            throw error;
          }
          return `claimed k${op.key}`;
        case 'bump':
          return bump();
        case 'readOwn': {
          await defer(tx, 'events', [event]);
          const rows = await tx.selectFrom('events').select('data').where('id', '=', event.id).execute();
          return rows.map((r) => r.data);
        }
        case 'rawReadOwn': {
          // Raw SQL declares no tables: the store writes the write's deferred rows before it.
          await defer(tx, 'events', [event]);
          const { rows } = await sql<{ data: string }>`select data from events where id = ${event.id}`.execute(tx);
          return rows.map((r) => r.data);
        }
        case 'work':
          await deferWork(tx, work, [`${p}j${i}`]);
          return 'work';
        case 'sqlFail':
          // The seed job exists: a duplicate primary key, a failing statement.
          await tx.insertInto('jobs').values({ id: `${p}seed`, type: 'model', payload: '{}', run_at_ms: 0, attempts: 0, created_at: 'x' }).execute();
          return 'unreachable';
        case 'catchSqlFail':
          // Catches the failed statement and goes on: SQLite carries on; PostgreSQL has aborted
          // the write's savepoint, so the write is refused with that statement's error.
          try {
            await tx.insertInto('jobs').values({ id: `${p}seed`, type: 'model', payload: '{}', run_at_ms: 0, attempts: 0, created_at: 'x' }).execute();
          } catch { /* went on */ }
          await defer(tx, 'events', [event]);
          return 'went on';
      }
    };

    const answer = (r: PromiseSettledResult<unknown>): Answer => {
      if (r.status === 'fulfilled') return { ok: true, value: r.value };
      const e = r.reason as Error;
      return { ok: false, error: isUniqueViolation(e) ? 'unique violation' : e.message };
    };

    // The rows of one run, their names without the run's prefix.
    const state = async (p: string) => {
      const strip = (s: string) => s.slice(p.length);
      const events = await store.db.selectFrom('events').selectAll().where('id', 'like', `${p}%`).orderBy('id').execute();
      const keys = await store.db.selectFrom('idempotency_keys').selectAll().where('account_id', '=', `${p}acct`).orderBy('key').execute();
      const jobs = await store.db.selectFrom('jobs').select(['id', 'attempts']).where('id', 'like', `${p}%`).orderBy('id').execute();
      return {
        events: events.map((e) => ({ ...e, id: strip(e.id), account_id: strip(e.account_id), created_at_ms: Number(e.created_at_ms) })),
        keys: keys.map((k) => ({ ...k, account_id: strip(k.account_id), created_at_ms: Number(k.created_at_ms) })),
        jobs: jobs.map((j) => ({ id: strip(j.id), attempts: Number(j.attempts) })),
      };
    };

    const seed = (p: string) => store.write(async (tx) => {
      await tx.insertInto('jobs').values({ id: `${p}seed`, type: 'model', payload: '{}', run_at_ms: 0, attempts: 0, created_at: 'x' }).execute();
    });

    let run = 0;
    test('random mixes of writes: the same answers and the same rows, batched or one by one', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 24 }), async (ops) => {
          run++;
          const batchedPrefix = `mb${run}_`;
          const alonePrefix = `ma${run}_`;
          await seed(batchedPrefix);
          await seed(alonePrefix);

          const commitsBefore = store.stats.commits;
          const batched = (await Promise.allSettled(ops.map((op, i) => store.write(writeOf(batchedPrefix, op, i))))).map(answer);
          assert.equal(store.stats.commits - commitsBefore, 1, 'the writes shared one commit');

          const alone: Answer[] = [];
          for (const [i, op] of ops.entries()) {
            const [settled] = await Promise.allSettled([store.write(writeOf(alonePrefix, op, i))]);
            alone.push(answer(settled));
          }
          assert.deepEqual(batched, alone, 'the same answers');
          assert.deepEqual(await state(batchedPrefix), await state(alonePrefix), 'the same rows');
        }),
        { numRuns: engine === 'sqlite' ? 40 : 30 },
      );
    });

    test('a claimed key is kept by the first write that claims it, in both ways', async () => {
      const p = 'mk_';
      await seed(p);
      const replaysBefore = store.stats.replays;
      const results = (await Promise.allSettled([0, 1, 2].map((i) => store.write(writeOf(p, { kind: 'claim', key: 9 }, i))))).map(answer);
      // The end-of-batch insert met the duplicate: the batch ran again the plain way.
      assert.equal(store.stats.replays - replaysBefore, 1, 'replayed once');
      assert.deepEqual(results, [
        { ok: true, value: 'claimed k9' },
        { ok: false, error: 'key k9 taken' },
        { ok: false, error: 'key k9 taken' },
      ]);
      const { keys, events } = await state(p);
      assert.deepEqual(keys.map((k) => k.fingerprint), ['f0']);
      assert.deepEqual(events.map((e) => e.id), ['e0']);
    });
  });
}

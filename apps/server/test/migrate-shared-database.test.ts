// Migrations in a PostgreSQL database that other deployments share (production may, and the
// tests do: one schema per test file, two files at a time). Kysely's own introspection reads every
// schema's tables and looks each schema up again by name (has_schema_privilege), so a schema that
// someone else dropped meanwhile failed our migration with `schema "..." does not exist` (seen in
// CI, from another test file's teardown). The store's migration reads its own schema only.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { ENGINES, testDatabase } from './helpers.js';
import { Store } from '../src/store/index.js';

describe('migrations in a shared PostgreSQL database', { skip: !ENGINES.includes('postgres') && 'PostgreSQL only (TEST_DATABASE_URL)' }, () => {
  test('other schemas created and dropped all the while: every migration succeeds', async () => {
    const churn = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await churn.connect();
    let stop = false;
    let churned = 0;
    const loop = (async () => {
      while (!stop) {
        const schema = 'churn_' + randomBytes(6).toString('hex');
        await churn.query(`create schema ${schema}; create table ${schema}.a (id serial primary key, note text); create table ${schema}.b (id int)`);
        await churn.query(`drop schema ${schema} cascade`);
        churned++;
      }
    })();
    try {
      for (let i = 0; i < 12; i++) {
        const db = await testDatabase('postgres');
        const store = Store.open({ url: db.url });
        try {
          const applied = await store.migrate();
          assert.ok(applied.length > 0, 'a fresh schema gets every migration');
          assert.deepEqual(await store.migrate(), [], 'and a second run has nothing to do');
        } finally {
          await store.close();
          await db.drop();
        }
      }
    } finally {
      stop = true;
      await loop;
      await churn.end();
    }
    assert.ok(churned > 0, 'the other schemas really came and went during the migrations');
  });
});

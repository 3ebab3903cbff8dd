import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { ENGINES, startApp, signup, auth, type TestApp, type Keys } from './helpers.js';
import { keyLookupQuery } from '../src/plugins/idempotency.js';

for (const engine of ENGINES) {
  describe(`idempotency (${engine})`, () => {
    let t: TestApp;
    let k: Keys;
    before(async () => {
      t = await startApp(engine, { workerInProcess: false });
      k = await signup(t);
    });
    after(() => t.teardown());

    const post = (url: string, body: unknown, key?: string, apiKey = k.secretKey) =>
      t.app.inject({ method: 'POST', url, headers: auth(apiKey, key ? { 'idempotency-key': key } : {}), payload: body as object });
    const countPayments = async () => Number((await t.store.db.selectFrom('payments').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', k.accountId).executeTakeFirstOrThrow()).n);

    test('a retry with the same key replays the stored response byte for byte', async () => {
      const before = await countPayments();
      const first = await post('/v1/payments', { amount: 1050, currency: 'BRL', method: 'pix' }, 'order-1');
      assert.equal(first.statusCode, 200);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      assert.equal(first.headers['content-type'], 'application/json; charset=utf-8');
      const second = await post('/v1/payments', { method: 'pix', currency: 'BRL', amount: 1050 }, 'order-1');
      assert.equal(second.statusCode, 200);
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.equal(second.body, first.body);
      assert.equal(second.headers['content-type'], first.headers['content-type']);
      assert.notEqual(second.headers['x-correlation-id'], first.headers['x-correlation-id']);
      assert.equal(await countPayments(), before + 1);
    });

    test('the same key with a different request is IDEMPOTENCY_KEY_REUSED and changes nothing', async () => {
      await post('/v1/payments', { amount: 100, method: 'pix' }, 'order-2');
      const before = await countPayments();
      const res = await post('/v1/payments', { amount: 101, method: 'pix' }, 'order-2');
      assert.equal(res.statusCode, 422);
      assert.equal(res.json().error.code, 'IDEMPOTENCY_KEY_REUSED');
      const otherRoute = await post('/v1/tokens', { card: { number: '4242424242424242', expMonth: 12, expYear: 2099, cvc: '123' } }, 'order-2');
      assert.equal(otherRoute.statusCode, 422);
      assert.equal(await countPayments(), before);
    });

    test('keys are scoped per account and mode', async () => {
      const other = await signup(t, 'Other');
      const a = await post('/v1/payments', { amount: 100, method: 'pix' }, 'shared-key');
      const b = await post('/v1/payments', { amount: 100, method: 'pix' }, 'shared-key', other.secretKey);
      assert.equal(b.statusCode, 200);
      assert.equal(b.headers['idempotent-replayed'], undefined);
      assert.notEqual(a.json().id, b.json().id);
    });

    test('refused before doing anything (400) is not stored: the corrected retry goes through', async () => {
      const bad = await post('/v1/payments', { amount: 0, method: 'pix' }, 'order-3');
      assert.equal(bad.statusCode, 400);
      const good = await post('/v1/payments', { amount: 500, method: 'pix' }, 'order-3');
      assert.equal(good.statusCode, 200);
      assert.equal(good.headers['idempotent-replayed'], undefined);
      const badInService = await post('/v1/payments', { amountInCents: 500, method: 'credit_card', cardToken: 'tok_unknown' }, 'order-4');
      assert.equal(badInService.statusCode, 400);
      const fixed = await post('/v1/payments', { amountInCents: 500, method: 'credit_card', cardToken: 'tok_visa' }, 'order-4');
      assert.equal(fixed.statusCode, 200);
      const unauthenticated = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: { 'idempotency-key': 'order-5' }, payload: { amount: 1, method: 'pix' } });
      assert.equal(unauthenticated.statusCode, 401);
      assert.equal((await post('/v1/payments', { amount: 1, method: 'pix' }, 'order-5')).statusCode, 200);
    });

    test('a business refusal is stored and replayed the same', async () => {
      const p = (await post('/v1/payments', { amount: 100, method: 'pix' })).json();
      assert.equal((await post(`/v1/payments/${p.id}/cancel`, undefined)).statusCode, 200);
      const refused = await post(`/v1/payments/${p.id}/cancel`, undefined, 'cancel-1');
      assert.equal(refused.statusCode, 409);
      const replay = await post(`/v1/payments/${p.id}/cancel`, undefined, 'cancel-1');
      assert.equal(replay.statusCode, 409);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body, refused.body);
    });

    test('malformed keys are VALIDATION_ERROR', async () => {
      for (const key of ['x'.repeat(256), 'tab\there', 'ção']) {
        const res = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: { authorization: `Bearer ${k.secretKey}`, 'idempotency-key': key }, payload: { amount: 1, method: 'pix' } });
        assert.equal(res.statusCode, 400, key);
        assert.equal(res.json().error.code, 'VALIDATION_ERROR');
      }
    });

    test('100 simultaneous requests with one key create exactly one payment', async () => {
      const before = await countPayments();
      const responses = await Promise.all(Array.from({ length: 100 }, () => post('/v1/payments', { amountInCents: 4242, method: 'credit_card', cardToken: 'tok_visa' }, 'burst-1')));
      const ok = responses.filter((r) => r.statusCode === 200);
      const inUse = responses.filter((r) => r.statusCode === 409);
      assert.equal(ok.length + inUse.length, 100);
      for (const r of inUse) {
        assert.equal(r.json().error.code, 'IDEMPOTENCY_KEY_IN_USE');
        assert.equal(r.headers['retry-after'], '1');
      }
      assert.ok(ok.length >= 1);
      assert.equal(new Set(ok.map((r) => r.json().id)).size, 1, 'every success is the same payment');
      assert.equal(await countPayments(), before + 1);
      const after = await post('/v1/payments', { amountInCents: 4242, method: 'credit_card', cardToken: 'tok_visa' }, 'burst-1');
      assert.equal(after.headers['idempotent-replayed'], 'true');
    });

    test('two processes sharing the store: one key, one payment', async () => {
      // A second app instance on the same database stands for a second API process: the
      // in-memory in-flight map cannot see across it, only the store's primary key can.
      const second = await startApp(engine, { workerInProcess: false }, { db: t.db });
      try {
        const before = await countPayments();
        const body = { amount: 999, method: 'pix' };
        const responses = await Promise.all(Array.from({ length: 40 }, (_, i) =>
          (i % 2 === 0 ? t : second).app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey, { 'idempotency-key': 'two-procs' }), payload: body })));
        const ok = responses.filter((r) => r.statusCode === 200);
        assert.ok(ok.length >= 2, 'both processes answered');
        assert.equal(new Set(ok.map((r) => r.json().id)).size, 1);
        for (const r of responses) assert.ok(r.statusCode === 200 || r.json().error.code === 'IDEMPOTENCY_KEY_IN_USE', r.body);
        assert.equal(await countPayments(), before + 1);
      } finally {
        await second.teardown();
      }
    });

    test('keys are purged after the retention', async () => {
      await post('/v1/payments', { amount: 100, method: 'pix' }, 'old-key');
      await t.store.write((tx) => tx.updateTable('idempotency_keys').set({ created_at_ms: Date.now() - 25 * 3600_000 }).where('key', '=', 'old-key').execute());
      const { createWorker } = await import('../src/app.js');
      const purgeJob = await t.store.db.selectFrom('jobs').selectAll().where('type', '=', 'maintenance.purge').executeTakeFirst();
      assert.equal(purgeJob, undefined, 'no worker started in this suite');
      const w = createWorker(t.store, t.config, { store: t.store, config: t.config, provider: null as never, kickWorker: () => {}, breaker: null as never, connectors: null as never, clock: null as never }, t.app.log);
      await t.store.write((tx) => tx.insertInto('jobs').values({ id: 'job_recurring_maintenance.purge', type: 'maintenance.purge', payload: '{}', run_at_ms: 0, attempts: 0, locked_until_ms: null, locked_by: null, last_error: null, created_at: new Date().toISOString() }).execute());
      await w.start();
      try {
        for (let i = 0; i < 500; i++) {
          const left = await t.store.db.selectFrom('idempotency_keys').select('key').where('key', '=', 'old-key').executeTakeFirst();
          if (!left) break;
          await new Promise((r) => setTimeout(r, 10));
        }
      } finally {
        await w.stop();
      }
      assert.equal(await t.store.db.selectFrom('idempotency_keys').select('key').where('key', '=', 'old-key').executeTakeFirst(), undefined);
      assert.ok(await t.store.db.selectFrom('idempotency_keys').select('key').where('key', '=', 'order-1').executeTakeFirst(), 'recent keys stay');
      const after = await post('/v1/payments', { amount: 100, method: 'pix' }, 'old-key');
      assert.equal(after.headers['idempotent-replayed'], undefined);
    });
  });
}

if (ENGINES.includes('postgres')) {
  describe('idempotency key lookups (postgres)', () => {
    let t: TestApp;
    before(async () => {
      t = await startApp('postgres', { workerInProcess: false });
    });
    after(() => t.teardown());

    // The lookup of a key must stay a primary-key probe however many keys the account holds
    // (the tables here have no statistics, as on a server whose autovacuum has not run yet).
    test('a batch of lookups probes the whole primary key, and answers each triple', async () => {
      await sql`insert into idempotency_keys (account_id, livemode, key, fingerprint, status_code, body, created_at, created_at_ms)
        select 'acct_many', 0, 'k-' || i, 'fp-' || i, 200, '{}', 'x', 0 from generate_series(1, 20000) as i`.execute(t.store.db);
      const items = [
        { accountId: 'acct_many', livemode: 0, key: 'k-7' },
        { accountId: 'acct_many', livemode: 1, key: 'k-7' },
        { accountId: 'acct_many', livemode: 0, key: 'missing' },
        { accountId: 'acct_many', livemode: 0, key: 'k-19999' },
      ];
      const { rows } = await keyLookupQuery(items).execute(t.store.db);
      assert.deepEqual(rows.map((r) => [Number(r.i), r.fingerprint]).sort(), [[1, 'fp-7'], [4, 'fp-19999']]);
      const plan = (await sql<{ 'QUERY PLAN': string }>`explain ${keyLookupQuery(items)}`.execute(t.store.db)).rows.map((r) => r['QUERY PLAN']).join('\n');
      assert.match(plan, /Index Cond: .*key = u\.key/, plan);
      assert.doesNotMatch(plan, /Filter: .*key/, plan);
    });
  });
}

// The bench's ceiling routes (ceiling-plugin.ts), on a server started as the bench starts it:
// `cli.ts serve --plugin bench/ceiling-plugin.ts`, as a process. On SQLite, and on PostgreSQL
// too when TEST_DATABASE_URL is set (TEST_ENGINES=postgres for that one only).
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, CEILING_PLUGIN, createBenchSchema, live, removeTempDir, startCli, stopCli, type Proc } from '../lib.ts';

// SQLite always; PostgreSQL too when TEST_DATABASE_URL is set; TEST_ENGINES narrows the run to
// the engines it names (CI's PostgreSQL pass), as the server's suites read them. The bench keeps
// its own copy: it imports nothing of the server's, its tests included.
const ENGINES = process.env.TEST_ENGINES ? process.env.TEST_ENGINES.split(',') : process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
if (ENGINES.includes('postgres') && !process.env.TEST_DATABASE_URL) throw new Error('TEST_ENGINES includes postgres but TEST_DATABASE_URL is not set');

const BODY = { amountInCents: 2500, method: 'credit_card', cardToken: 'tok_visa' };

async function start(engine: string, withPlugin: boolean): Promise<{ server: Proc; key: string; close: () => Promise<void> }> {
  const tmp = mkdtempSync(join(tmpdir(), 'bench-test-'));
  live.tempDirs.add(tmp);
  let databaseUrl = `sqlite:${join(tmp, 'test.db')}`;
  let drop = async () => {};
  if (engine === 'postgres') {
    const schema = await createBenchSchema(process.env.TEST_DATABASE_URL as string, 'benchtest');
    databaseUrl = schema.databaseUrl;
    drop = schema.drop;
  }
  const server = await startCli('serve', { env: { DATABASE_URL: databaseUrl, SETTLEMENT_SCHEDULE: 'false' }, logFile: join(tmp, 'server.log'), args: withPlugin ? ['--plugin', CEILING_PLUGIN] : [] });
  const signup = await api(server, 'POST', '/v1/sandbox/accounts', { body: { name: 'bench test' } });
  assert.equal(signup.status, 200, signup.text);
  return {
    server,
    key: signup.json.keys.secretKey.key as string,
    async close() {
      const stopped = await stopCli(server);
      assert.equal(stopped.code, 0, 'graceful shutdown');
      await drop();
      removeTempDir(tmp);
    },
  };
}

for (const engine of ENGINES) {
  describe(`bench ceiling routes (${engine})`, () => {
    const closers: Array<() => Promise<void>> = [];
    after(async () => { for (const c of closers) await c(); });

    test('the product has no ceiling routes: absent unless the bench loads its plugin', async () => {
      const t = await start(engine, false);
      closers.push(t.close);
      for (const path of ['/v1/_bench/noop', '/v1/_bench/durable']) {
        const res = await api(t.server, 'POST', path, { key: t.key, body: BODY, idempotencyKey: 'k1' });
        assert.equal(res.status, 404, path);
      }
      const doc = await api(t.server, 'GET', '/v1/openapi.json');
      assert.ok(!Object.keys(doc.json.paths).some((p) => p.includes('_bench')));
    });

    test('ceiling routes: the same auth and validation; the durable one commits the key, the plain one writes nothing', async () => {
      const t = await start(engine, true);
      closers.push(t.close);
      const s = t.server;

      // Same stack: no key, 401; a body the create would refuse, 400.
      assert.equal((await api(s, 'POST', '/v1/_bench/noop', { body: BODY })).status, 401);
      const bad = await api(s, 'POST', '/v1/_bench/durable', { key: t.key, body: { ...BODY, extra: 1 }, idempotencyKey: 'k-bad' });
      assert.equal(bad.status, 400, bad.text);

      // The plain ceiling answers a Payment and stores nothing, not even the key it was sent.
      const noop = await api(s, 'POST', '/v1/_bench/noop', { key: t.key, body: BODY, idempotencyKey: 'k1' });
      assert.equal(noop.status, 200, noop.text);
      assert.equal(noop.json.object, 'payment');
      const first = await api(s, 'POST', '/v1/_bench/durable', { key: t.key, body: BODY, idempotencyKey: 'k1' });
      assert.equal(first.status, 200, first.text);
      assert.equal(first.headers.get('idempotent-replayed'), null, 'k1 was not stored by the plain ceiling');

      // The durable ceiling committed its key and response: the same request replays them.
      const again = await api(s, 'POST', '/v1/_bench/durable', { key: t.key, body: BODY, idempotencyKey: 'k1' });
      assert.equal(again.status, 200);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(again.text, first.text);
      // The refused body stored nothing either: its key is still free.
      const afterBad = await api(s, 'POST', '/v1/_bench/durable', { key: t.key, body: BODY, idempotencyKey: 'k-bad' });
      assert.equal(afterBad.headers.get('idempotent-replayed'), null);

      // It needs a key (without one it would measure nothing durable).
      assert.equal((await api(s, 'POST', '/v1/_bench/durable', { key: t.key, body: BODY })).status, 400);
      const get = await api(s, 'GET', '/v1/_bench/noop/pay_x', { key: t.key });
      assert.equal(get.status, 200);
      assert.equal(get.json.object, 'payment');
    });
  });
}

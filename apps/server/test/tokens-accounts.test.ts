import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ENGINES, startApp, startManualApp, signup, auth, adminSession, type ManualApp, type TestApp, type Keys } from './helpers.js';
import { CLI } from './cli.js';

const run = promisify(execFile);

for (const engine of ENGINES) {
  describe(`card tokens (${engine})`, () => {
    // A ManualClock: the card confirmation runs when the test says (t.runDue()), not on a poll.
    let t: ManualApp;
    let k: Keys;
    before(async () => {
      t = await startManualApp(engine);
      k = await signup(t);
    });
    after(() => t.teardown());

    const tokenize = (card: Record<string, unknown>, key = k.publishableKey) =>
      t.app.inject({ method: 'POST', url: '/v1/tokens', headers: auth(key), payload: { card } });
    const card = { number: '4242 4242 4242 4242', expMonth: 12, expYear: 2099, cvc: '123' };

    test('a publishable key tokenizes a card: brand and last4 only, nothing else kept', async () => {
      const res = await tokenize(card);
      assert.equal(res.statusCode, 200);
      const tok = res.json();
      assert.match(tok.id, /^tok_/);
      assert.deepEqual(tok.card, { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2099 });
      assert.ok(!res.body.includes('4242424242424242'));
      const row = await t.store.db.selectFrom('card_tokens').selectAll().where('id', '=', tok.id).executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(row).includes('42424242'), 'the number is not stored');
      const idem = await t.store.db.selectFrom('idempotency_keys').selectAll().execute();
      assert.ok(!JSON.stringify(idem).includes('42424242'));
    });

    test('the token drives the sandbox outcome and is single use', async () => {
      const declined = (await tokenize({ ...card, number: '4000000000000002' })).json();
      const p = (await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amountInCents: 100, method: 'credit_card', cardToken: declined.id } })).json();
      assert.equal((await t.runDue()).jobs, 1, 'the confirmation ran');
      assert.equal((await t.app.inject({ method: 'GET', url: `/v1/payments/${p.id}`, headers: auth(k.secretKey) })).json().status, 'declined');
      const again = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amountInCents: 100, method: 'credit_card', cardToken: declined.id } });
      assert.equal(again.statusCode, 422);
      const mc = (await tokenize({ ...card, number: '5555555555554444' })).json();
      assert.equal(mc.card.brand, 'mastercard');
      const other = await signup(t, 'Other');
      const foreign = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(other.secretKey), payload: { amountInCents: 100, method: 'credit_card', cardToken: mc.id } });
      assert.equal(foreign.statusCode, 400, 'another account cannot use the token');
    });

    test('Luhn, expiry and CVC are checked, without echoing the number', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ ...card, number: '4242424242424241' }, 'card.number'],
        [{ ...card, number: 'abcd' }, 'card.number'],
        [{ ...card, expYear: 2020 }, 'card.expYear'],
        [{ ...card, expMonth: 13 }, 'card.expMonth'],
        [{ ...card, cvc: '12' }, 'card.cvc'],
        [{ ...card, cvc: '12a' }, 'card.cvc'],
        [{ ...card, extra: 1 }, 'card.extra'],
      ];
      for (const [c, param] of cases) {
        const res = await tokenize(c);
        assert.equal(res.statusCode, 400, JSON.stringify(c));
        assert.equal(res.json().error.param, param);
        assert.ok(!res.body.includes('424242424242'), 'number never echoed');
      }
    });

    test('browsers may call it from any origin (CORS), errors included', async () => {
      const pre = await t.app.inject({ method: 'OPTIONS', url: '/v1/tokens', headers: { origin: 'https://loja.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' } });
      assert.equal(pre.statusCode, 204);
      assert.equal(pre.headers['access-control-allow-origin'], '*');
      assert.match(pre.headers['access-control-allow-headers'] as string, /authorization/);
      const ok = await tokenize(card);
      assert.equal(ok.headers['access-control-allow-origin'], '*');
      const bad = await tokenize({ ...card, cvc: '1' });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.headers['access-control-allow-origin'], '*');
      const other = await t.app.inject({ method: 'GET', url: '/v1/payments', headers: auth(k.secretKey) });
      assert.equal(other.headers['access-control-allow-origin'], undefined, 'secret-key routes are not for browsers');
    });

    test("an open checkout session's client secret tokenizes (the hosted page): the token is the session's account's, in its mode", async () => {
      const session = async (keys = k) => (await t.app.inject({ method: 'POST', url: '/v1/checkout/sessions', headers: auth(keys.secretKey), payload: { amount: 990, methods: ['credit_card'] } })).json();
      const s = await session();
      const res = await tokenize(card, s.clientSecret);
      assert.equal(res.statusCode, 200, res.body);
      const tok = res.json();
      assert.equal(tok.livemode, false);
      const row = await t.store.db.selectFrom('card_tokens').select(['account_id', 'livemode']).where('id', '=', tok.id).executeTakeFirstOrThrow();
      assert.deepEqual(row, { account_id: k.accountId, livemode: 0 });
      // The merchant's own key may use it; another account may not.
      const other = await signup(t, 'Outra');
      const foreign = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(other.secretKey), payload: { amountInCents: 100, method: 'credit_card', cardToken: tok.id } });
      assert.equal(foreign.statusCode, 400, foreign.body);
      // Pays its session.
      const paid = await t.app.inject({ method: 'POST', url: `/v1/checkout/sessions/${s.id}/client/pay`, headers: auth(s.clientSecret, { 'idempotency-key': 'pay-1' }), payload: { method: 'credit_card', cardToken: tok.id } });
      assert.equal(paid.statusCode, 200, paid.body);

      // Refused: a made-up secret of a real session, a secret of no session (401); the secret of
      // a session that is no longer open (403); and the secret anywhere a key is needed.
      for (const [secret, status, code] of [
        [`${s.id}_secret_${'x'.repeat(40)}`, 401, 'INVALID_API_KEY'],
        [`cs_${'0'.repeat(26)}_secret_${'x'.repeat(40)}`, 401, 'INVALID_API_KEY'],
      ] as const) {
        const r = await tokenize(card, secret);
        assert.equal(r.statusCode, status, r.body);
        assert.equal(r.json().error.code, code);
      }
      const expired = await session();
      assert.equal((await t.app.inject({ method: 'POST', url: `/v1/checkout/sessions/${expired.id}/expire`, headers: auth(k.secretKey) })).statusCode, 200);
      const closed = await tokenize(card, expired.clientSecret);
      assert.equal(closed.statusCode, 403, closed.body);
      assert.equal(closed.json().error.code, 'PERMISSION_DENIED');
      assert.doesNotMatch(closed.body, /_secret_/);
      const fresh = await session();
      const elsewhere = await t.app.inject({ method: 'GET', url: '/v1/payments', headers: auth(fresh.clientSecret) });
      assert.equal(elsewhere.statusCode, 401, 'not an API key');
    });

    test('a secret key also tokenizes (server side); no key is 401', async () => {
      assert.equal((await tokenize(card, k.secretKey)).statusCode, 200);
      assert.equal((await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { card } })).statusCode, 401);
    });
  });

  describe(`accounts and keys (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(engine, { sandboxSignupPerHour: 3, workerInProcess: false });
    });
    after(() => t.teardown());

    test('sandbox signup returns an account and working test keys, shown once', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/v1/sandbox/accounts', payload: { name: 'Loja', email: 'dono@loja.com.br' } });
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.match(body.account.id, /^acct_/);
      assert.equal(body.account.liveEnabled, false);
      assert.match(body.keys.secretKey.key, /^sk_test_[0-9A-Za-z]{32}$/);
      assert.match(body.keys.publishableKey.key, /^pk_test_[0-9A-Za-z]{32}$/);
      const stored = await t.store.db.selectFrom('api_keys').selectAll().where('account_id', '=', body.account.id).execute();
      assert.equal(stored.length, 2);
      assert.ok(!JSON.stringify(stored).includes(body.keys.secretKey.key), 'only hashes are stored');
      assert.ok(!JSON.stringify(stored).includes(body.keys.publishableKey.key), 'publishable keys are stored hashed too');
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/payments', headers: auth(body.keys.secretKey.key) })).statusCode, 200);
    });

    test('signup is rate limited per client address', async () => {
      let limited;
      for (let i = 0; i < 5 && !limited; i++) {
        const res = await t.app.inject({ method: 'POST', url: '/v1/sandbox/accounts', payload: {} });
        if (res.statusCode === 429) limited = res;
      }
      assert.ok(limited);
      assert.equal(limited.json().error.code, 'RATE_LIMITED');
      assert.ok(Number(limited.headers['retry-after']) > 0);
      const elsewhere = await t.app.inject({ method: 'POST', url: '/v1/sandbox/accounts', payload: {}, remoteAddress: '10.1.2.3' });
      assert.equal(elsewhere.statusCode, 200);
    });

    test('signup can be turned off', async () => {
      const off = await startApp(engine, { sandboxSignupEnabled: false, workerInProcess: false });
      try {
        const res = await off.app.inject({ method: 'POST', url: '/v1/sandbox/accounts', payload: {} });
        assert.equal(res.statusCode, 404);
        assert.equal(res.json().error.code, 'NOT_FOUND');
      } finally {
        await off.teardown();
      }
    });

    test('CLI: accounts:create, keys:create, accounts:activate-live, keys:revoke, migrate', async () => {
      const env = { ...process.env, DATABASE_URL: t.db.url };
      const cli = (...args: string[]) => run(process.execPath, [...CLI, ...args], { env, cwd: new URL('..', import.meta.url).pathname });
      assert.match((await cli('migrate')).stdout, /migrations up to date/);
      const created = JSON.parse((await cli('accounts:create', '--name', 'CLI merchant')).stdout);
      assert.match(created.account.id, /^acct_/);
      const live = JSON.parse((await cli('keys:create', created.account.id, '--live')).stdout);
      assert.match(live.key, /^sk_live_/);
      const denied = await t.app.inject({ method: 'GET', url: '/v1/payments', headers: auth(live.key) });
      assert.equal(denied.statusCode, 403);
      assert.equal(denied.json().error.code, 'PERMISSION_DENIED');
      // As through the admin API: a reason and an admin who may do it, or nothing changes.
      const admin = `cli-${engine}-${process.pid}@example.com`;
      await cli('admin:create', '--email', admin, '--password', 'a long enough passphrase');
      await cli('admin:create', '--email', `viewer-${admin}`, '--password', 'a long enough passphrase', '--role', 'viewer');
      // Each refused alike and changing nothing, so they run side by side (each a process).
      await Promise.all([
        assert.rejects(cli('accounts:activate-live', created.account.id), /usage: accounts:activate-live <acct_id> --reason R --admin E/),
        assert.rejects(cli('accounts:activate-live', created.account.id, '--admin', admin), /usage/),
        assert.rejects(cli('accounts:activate-live', created.account.id, '--reason', 'KYC ok'), /usage/),
        assert.rejects(cli('accounts:activate-live', created.account.id, '--reason', '  ', '--admin', admin), /reason is required: live mode lets the account take real money\./),
        assert.rejects(cli('accounts:activate-live', created.account.id, '--reason', 'KYC ok', '--admin', 'nobody@example.com'), /admin must be the email of an existing admin user/),
        assert.rejects(cli('accounts:activate-live', created.account.id, '--reason', 'KYC ok', '--admin', `viewer-${admin}`), /does not allow this: it needs the accounts:activate_live permission/),
      ]);
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/payments', headers: auth(live.key) })).statusCode, 403);
      const session = await adminSession(t);
      const auditOf = async (objectId: string) => (await t.app.inject({ method: 'GET', url: `/admin/audit-log?objectId=${objectId}`, headers: { cookie: session.cookie } })).json().data;
      assert.deepEqual(await auditOf(created.account.id), []);

      const activated = await cli('accounts:activate-live', created.account.id, '--reason', ' KYC approved, contract 118 ', '--admin', admin.toUpperCase());
      assert.match(activated.stdout, /^live mode activated for acct_\S+ \(audit log entry aud_\S+\)$/m);
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/payments', headers: auth(live.key) })).statusCode, 200);
      // The row the API's activation writes, with the command line where the API has an address.
      const [entry] = await auditOf(created.account.id);
      assert.equal(entry.id, /aud_\w+/.exec(activated.stdout)?.[0]);
      assert.deepEqual(
        { actor: entry.actor, action: entry.action, objectType: entry.objectType, reason: entry.reason, ip: entry.ip, before: entry.before.liveEnabled, after: entry.after.liveEnabled },
        { actor: { email: admin, role: 'admin' }, action: 'account.activate_live', objectType: 'account', reason: 'KYC approved, contract 118', ip: 'command line', before: false, after: true },
      );
      assert.match(entry.userAgent, /^npm run cli -- accounts:activate-live \(.+@.+\)$/);
      const viaApi = JSON.parse((await cli('accounts:create', '--name', 'API merchant')).stdout).account.id;
      const apiActivation = await t.app.inject({ method: 'POST', url: `/admin/accounts/${viaApi}/activate-live`, headers: { cookie: session.cookie, 'x-csrf-token': session.csrf }, payload: { reason: 'KYC ok' } });
      assert.equal(apiActivation.statusCode, 200, apiActivation.body);
      const [apiEntry] = await auditOf(viaApi);
      assert.deepEqual(Object.keys(apiEntry).sort(), Object.keys(entry).sort());
      assert.deepEqual(Object.keys(apiEntry.after).sort(), Object.keys(entry.after).sort());
      const livePk = JSON.parse((await cli('keys:create', created.account.id, '--live', '--publishable')).stdout);
      assert.match(livePk.key, /^pk_live_/);
      assert.match((await cli('keys:revoke', live.id)).stdout, /revoked/);
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/payments', headers: auth(live.key) })).statusCode, 401);
      await Promise.all([
        assert.rejects(cli('accounts:activate-live', 'acct_nope', '--reason', 'KYC ok', '--admin', admin), /No such account/),
        cli('help').then((help) => assert.match(help.stdout, /accounts:activate-live <acct_id> --reason R --admin E/)),
        assert.rejects(cli('nonsense'), /unknown command/),
      ]);
    });
  });
}

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { ENGINES, startApp, signup, auth, type TestApp, type Keys } from './helpers.js';
import Fastify from 'fastify';
import { adminSchemas, createAdminUser, registerAdmin } from '../src/modules/admin/index.js';
import { sharedSchemas } from '../src/http/common.js';
import { Payment, paymentPartSchemas } from '../src/modules/payments/schemas.js';
import { receivableSchemas } from '../src/modules/receivables/routes.js';
import { refundSchemas } from '../src/modules/refunds/routes.js';
import { disputeSchemas } from '../src/modules/disputes/routes.js';
import { settlementSchemas } from '../src/modules/settlements/routes.js';
import { webhookSchemas } from '../src/modules/webhooks/schemas.js';
import { registerErrorHandling } from '../src/plugins/errors.js';
import { registerIdempotency } from '../src/plugins/idempotency.js';
import { LOGIN_FAILED_MESSAGE } from '../src/modules/admin/sessions/routes.js';
import { createKey } from '../src/modules/accounts/service.js';
import { newId } from '../src/domain/ids.js';

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

interface Session {
  cookie: string; // "admin_session=..."
  csrf: string;
  setCookie: string;
}

const PASSWORD = 'a long enough passphrase';
let emailSeq = 0;
const freshEmail = (what = 'admin') => `${what}-${process.pid}-${++emailSeq}@example.com`;
// Distinct client addresses, so the per-address sign-in throttle of one test never spills into another.
let ipSeq = 0;
const freshIp = () => `10.0.${Math.floor(++ipSeq / 250)}.${(ipSeq % 250) + 1}`;

for (const engine of ENGINES) {
  describe(`admin API (${engine})`, () => {
    let t: TestApp;
    let k: Keys;
    let s: Session;
    let adminEmail: string;

    const login = (email: string, password: string, remoteAddress = freshIp(), headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'POST', url: '/admin/session', payload: { email, password }, remoteAddress, headers });

    const signIn = async (email = adminEmail): Promise<Session> => {
      const res = await login(email, PASSWORD);
      assert.equal(res.statusCode, 200, res.body);
      const setCookie = res.headers['set-cookie'] as string;
      return { cookie: setCookie.split(';')[0], csrf: res.json().csrfToken, setCookie };
    };

    // An admin request with the session cookie and, on mutating methods, its CSRF token.
    const call = (method: Method, url: string, body?: unknown, session: Session | null = s, headers: Record<string, string> = {}) => {
      const h: Record<string, string> = {};
      if (session) {
        h.cookie = session.cookie;
        if (method !== 'GET') h['x-csrf-token'] = session.csrf;
      }
      return t.app.inject({ method, url, headers: { ...h, ...headers }, ...(body === undefined ? {} : { payload: body as object }) });
    };

    const insertRecipient = async (accountId: string, livemode = false): Promise<string> => {
      const id = newId('recipient', Date.now());
      const now = new Date().toISOString();
      await t.store.write((tx) => tx.insertInto('recipients').values({
        id,
        account_id: accountId,
        livemode: livemode ? 1 : 0,
        name: 'Loja Parceira Ltda',
        document: '11222333000181',
        bank_code: '341',
        agency: '0001',
        account: '12345-6',
        account_type: 'checking',
        metadata: null,
        created_at: now,
        updated_at: now,
      }).execute());
      return id;
    };

    const countRules = async () => Number((await t.store.db.selectFrom('split_rules').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

    before(async () => {
      t = await startApp(engine);
      k = await signup(t);
      adminEmail = freshEmail();
      await createAdminUser(t.store, adminEmail, PASSWORD);
      s = await signIn();
    });
    after(() => t.teardown());

    // ----------------------------------------------------------------------------------------
    // Admin users

    test('createAdminUser: scrypt hash with salt, lower-cased email, no duplicates, checked inputs', async () => {
      const email = freshEmail('Mixed').replace('mixed', 'MiXeD');
      const created = await createAdminUser(t.store, `  ${email.toUpperCase()} `, 'twelve chars');
      assert.match(created.id, /^adm_[0-9a-z]{26}$/);
      assert.equal(created.email, email.toLowerCase());
      const row = await t.store.db.selectFrom('admin_users').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
      assert.match(row.password_hash, /^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{86}$/);
      assert.ok(!row.password_hash.includes('twelve'));
      // Same password, different salt: different hashes.
      const other = await createAdminUser(t.store, freshEmail(), 'twelve chars');
      const otherRow = await t.store.db.selectFrom('admin_users').selectAll().where('id', '=', other.id).executeTakeFirstOrThrow();
      assert.notEqual(otherRow.password_hash, row.password_hash);

      await assert.rejects(createAdminUser(t.store, email, 'another password'), { code: 'VALIDATION_ERROR', param: 'email', message: /already exists/ });
      await assert.rejects(createAdminUser(t.store, freshEmail(), 'eleven char'), { code: 'VALIDATION_ERROR', param: 'password' });
      await assert.rejects(createAdminUser(t.store, 'not-an-email', PASSWORD), { code: 'VALIDATION_ERROR', param: 'email' });
      await assert.rejects(createAdminUser(t.store, '', PASSWORD), { code: 'VALIDATION_ERROR', param: 'email' });
    });

    // ----------------------------------------------------------------------------------------
    // Sessions

    test('sign-in sets an HttpOnly, SameSite=Strict cookie on /admin and stores only its hash', async () => {
      const res = await login(adminEmail.toUpperCase(), PASSWORD);
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.object, 'admin_session');
      assert.equal(body.admin.email, adminEmail);
      assert.match(body.csrfToken, /^[A-Za-z0-9_-]{43}$/);
      const ttl = Date.parse(body.expiresAt) - Date.now();
      assert.ok(ttl > 8 * 3600_000 - 60_000 && ttl <= 8 * 3600_000, `8 h session, got ${ttl} ms`);

      const setCookie = res.headers['set-cookie'] as string;
      const attrs = setCookie.split(';').map((p) => p.trim());
      const [name, value] = attrs[0].split('=');
      assert.equal(name, 'admin_session');
      assert.match(value, /^[A-Za-z0-9_-]{43}$/); // 32 random bytes, base64url
      assert.ok(attrs.includes('HttpOnly'));
      assert.ok(attrs.includes('SameSite=Strict'));
      assert.ok(attrs.includes('Path=/admin'));
      assert.ok(attrs.includes('Max-Age=28800'));
      assert.ok(!attrs.includes('Secure'), 'no Secure over plain http');

      const rows = await t.store.db.selectFrom('admin_sessions').selectAll().execute();
      assert.ok(rows.some((r) => r.id_hash === createHash('sha256').update(value).digest('hex')));
      assert.ok(rows.every((r) => r.id_hash !== value), 'the session id itself is never stored');
    });

    test('GET /admin/session answers who is signed in and the CSRF token', async () => {
      const res = await call('GET', '/admin/session');
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().admin.email, adminEmail);
      assert.equal(res.json().csrfToken, s.csrf);
    });

    test('no session cookie: 401 AUTHENTICATION_REQUIRED on every admin route', async () => {
      for (const [method, url] of [['GET', '/admin/split-rules'], ['GET', '/admin/accounts'], ['GET', '/admin/session'], ['POST', '/admin/split-rules'], ['DELETE', '/admin/session']] as const) {
        const res = await call(method, url, method === 'POST' ? {} : undefined, null);
        assert.equal(res.statusCode, 401, `${method} ${url}`);
        assert.equal(res.json().error.code, 'AUTHENTICATION_REQUIRED');
        assert.ok(res.json().error.correlationId);
      }
    });

    test('unknown or malformed session cookie: 401', async () => {
      for (const cookie of ['admin_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'admin_session=nope', 'other=1']) {
        const res = await t.app.inject({ method: 'GET', url: '/admin/accounts', headers: { cookie } });
        assert.equal(res.statusCode, 401, cookie);
        assert.equal(res.json().error.code, 'AUTHENTICATION_REQUIRED');
      }
    });

    test('the cookie is found among other cookies', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/admin/accounts', headers: { cookie: `theme=dark; ${s.cookie}; lang=pt-BR` } });
      assert.equal(res.statusCode, 200);
    });

    test('expired session: 401', async () => {
      const mine = await signIn();
      assert.equal((await call('GET', '/admin/accounts', undefined, mine)).statusCode, 200);
      const idHash = createHash('sha256').update(mine.cookie.split('=')[1]).digest('hex');
      await t.store.write((tx) => tx.updateTable('admin_sessions').set({ expires_at_ms: Date.now() - 1 }).where('id_hash', '=', idHash).execute());
      const res = await call('GET', '/admin/accounts', undefined, mine);
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().error.code, 'AUTHENTICATION_REQUIRED');
      assert.match(res.json().error.message, /expired/);
    });

    test('an API key is refused with 403 PERMISSION_DENIED, even with a valid session and on sign-in', async () => {
      const withKey = await call('GET', '/admin/accounts', undefined, s, auth(k.secretKey));
      assert.equal(withKey.statusCode, 403);
      assert.equal(withKey.json().error.code, 'PERMISSION_DENIED');
      assert.match(withKey.json().error.message, /do not take API keys/);
      const keyOnly = await call('GET', '/admin/split-rules', undefined, null, auth(k.secretKey));
      assert.equal(keyOnly.statusCode, 403);
      const signInWithKey = await login(adminEmail, PASSWORD, freshIp(), auth(k.secretKey));
      assert.equal(signInWithKey.statusCode, 403);
      assert.equal(signInWithKey.headers['set-cookie'], undefined);
    });

    test('mutating call without X-CSRF-Token: 403, nothing stored', async () => {
      const recipientId = await insertRecipient(k.accountId);
      const before = await countRules();
      const res = await t.app.inject({
        method: 'POST', url: '/admin/split-rules', headers: { cookie: s.cookie },
        payload: { accountId: k.accountId, priority: 1, splits: [{ recipientId, percentage: 10 }] },
      });
      assert.equal(res.statusCode, 403);
      assert.equal(res.json().error.code, 'PERMISSION_DENIED');
      assert.match(res.json().error.message, /X-CSRF-Token/);
      assert.equal(await countRules(), before);
      // Reads need no CSRF token.
      assert.equal((await t.app.inject({ method: 'GET', url: '/admin/split-rules', headers: { cookie: s.cookie } })).statusCode, 200);
    });

    test('mutating call with a wrong X-CSRF-Token (or another session\'s): 403, nothing stored', async () => {
      const recipientId = await insertRecipient(k.accountId);
      const other = await signIn();
      const before = await countRules();
      for (const token of ['wrong', s.csrf.slice(0, -1), other.csrf]) {
        const res = await t.app.inject({
          method: 'POST', url: '/admin/split-rules', headers: { cookie: s.cookie, 'x-csrf-token': token },
          payload: { accountId: k.accountId, priority: 1, splits: [{ recipientId, percentage: 10 }] },
        });
        assert.equal(res.statusCode, 403);
        assert.equal(res.json().error.code, 'PERMISSION_DENIED');
      }
      const patch = await t.app.inject({ method: 'PATCH', url: `/admin/accounts/${k.accountId}/settings`, headers: { cookie: s.cookie, 'x-csrf-token': 'wrong' }, payload: {} });
      assert.equal(patch.statusCode, 403);
      assert.equal(await countRules(), before);
    });

    test('sign-out ends the session: the same cookie then gets 401', async () => {
      const mine = await signIn();
      const noCsrf = await t.app.inject({ method: 'DELETE', url: '/admin/session', headers: { cookie: mine.cookie } });
      assert.equal(noCsrf.statusCode, 403);
      const out = await call('DELETE', '/admin/session', undefined, mine);
      assert.equal(out.statusCode, 200);
      assert.deepEqual(out.json(), { object: 'admin_session', deleted: true, livemode: false });
      const cleared = (out.headers['set-cookie'] as string).split(';').map((p) => p.trim());
      assert.equal(cleared[0], 'admin_session=');
      assert.ok(cleared.includes('Max-Age=0'));
      assert.ok(cleared.includes('Path=/admin'));
      const again = await call('GET', '/admin/accounts', undefined, mine);
      assert.equal(again.statusCode, 401);
      assert.equal(again.json().error.code, 'AUTHENTICATION_REQUIRED');
      // Other sessions are untouched.
      assert.equal((await call('GET', '/admin/accounts')).statusCode, 200);
    });

    test('a wrong password and an unknown email get the very same answer', async () => {
      const wrong = await login(adminEmail, 'not the password at all');
      const unknown = await login(freshEmail('nobody'), 'not the password at all');
      assert.equal(wrong.statusCode, 401);
      assert.equal(unknown.statusCode, 401);
      const a = wrong.json().error;
      const b = unknown.json().error;
      assert.equal(a.code, 'AUTHENTICATION_REQUIRED');
      assert.equal(a.code, b.code);
      assert.equal(a.message, b.message);
      assert.equal(a.message, LOGIN_FAILED_MESSAGE);
      assert.equal(a.param, undefined);
      assert.equal(b.param, undefined);
      assert.equal(wrong.headers['set-cookie'], undefined);
    });

    test('sign-in body is validated', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/admin/session', payload: { email: adminEmail } });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error.param, 'password');
    });

    test('failed sign-ins are throttled per email: 429 with Retry-After, even for the right password', async () => {
      const email = freshEmail();
      await createAdminUser(t.store, email, PASSWORD);
      for (let i = 0; i < 5; i++) assert.equal((await login(email, 'wrong password!!', freshIp())).statusCode, 401);
      const blocked = await login(email, PASSWORD, freshIp());
      assert.equal(blocked.statusCode, 429);
      assert.equal(blocked.json().error.code, 'RATE_LIMITED');
      const retryAfter = Number(blocked.headers['retry-after']);
      assert.ok(retryAfter > 0 && retryAfter <= 15 * 60, `Retry-After ${retryAfter}`);
      // Like every 429: the RateLimit-* of the limit hit (5 failures per email per window).
      assert.deepEqual([blocked.headers['ratelimit-limit'], blocked.headers['ratelimit-remaining'], blocked.headers['ratelimit-reset']], ['5', '0', String(retryAfter)]);
      assert.equal(blocked.headers['set-cookie'], undefined);
      // Other emails are not affected.
      assert.equal((await login(adminEmail, PASSWORD)).statusCode, 200);
    });

    test('failed sign-ins for an unknown email are throttled the same way', async () => {
      const email = freshEmail('ghost');
      for (let i = 0; i < 5; i++) assert.equal((await login(email, 'whatever password', freshIp())).statusCode, 401);
      const blocked = await login(email, 'whatever password', freshIp());
      assert.equal(blocked.statusCode, 429);
      assert.equal(blocked.json().error.code, 'RATE_LIMITED');
      assert.ok(Number(blocked.headers['retry-after']) > 0);
    });

    test('failed sign-ins are throttled per client address, across emails', async () => {
      const ip = freshIp();
      for (let i = 0; i < 20; i++) assert.equal((await login(freshEmail('spray'), 'whatever password', ip)).statusCode, 401);
      const blocked = await login(adminEmail, PASSWORD, ip);
      assert.equal(blocked.statusCode, 429);
      assert.equal(blocked.json().error.code, 'RATE_LIMITED');
      assert.ok(Number(blocked.headers['retry-after']) > 0);
      assert.equal(blocked.headers['ratelimit-limit'], '20', 'the address limit is the one hit');
      // Another address still signs in.
      assert.equal((await login(adminEmail, PASSWORD, freshIp())).statusCode, 200);
    });

    test('a successful sign-in clears the email\'s failures', async () => {
      const email = freshEmail();
      await createAdminUser(t.store, email, PASSWORD);
      for (let i = 0; i < 4; i++) assert.equal((await login(email, 'wrong password!!')).statusCode, 401);
      assert.equal((await login(email, PASSWORD)).statusCode, 200);
      for (let i = 0; i < 4; i++) assert.equal((await login(email, 'wrong password!!')).statusCode, 401);
      assert.equal((await login(email, PASSWORD)).statusCode, 200);
    });

    // ----------------------------------------------------------------------------------------
    // Split rules

    describe('split rules', () => {
      let recipientA: string;
      let recipientB: string;

      before(async () => {
        recipientA = await insertRecipient(k.accountId);
        recipientB = await insertRecipient(k.accountId);
      });

      // Creating an active rule (the default) needs a reason: these tests give one unless they set their own.
      const withReason = (body: unknown) => (body && typeof body === 'object' && !('reason' in body) ? { ...body, reason: 'test rule' } : body);
      const create = (body: unknown, session: Session | null = s, headers: Record<string, string> = {}) => call('POST', '/admin/split-rules', withReason(body), session, headers);
      // So does any change to an active rule.
      const update = (id: string, body: unknown) => call('PATCH', `/admin/split-rules/${id}`, withReason(body));

      const validationCases: Array<{ name: string; body: () => Promise<Record<string, unknown>>; param: string }> = [
        { name: 'unknown recipient', param: 'splits[0].recipientId', body: async () => ({ accountId: k.accountId, priority: 1, splits: [{ recipientId: 'rcp_doesnotexist', percentage: 10 }] }) },
        { name: 'recipient of another account', param: 'splits[1].recipientId', body: async () => {
          const other = await signup(t, 'Other merchant');
          return { accountId: k.accountId, priority: 1, splits: [{ recipientId: recipientA, percentage: 10 }, { recipientId: await insertRecipient(other.accountId), percentage: 10 }] };
        } },
        { name: 'recipient in the other mode', param: 'splits[0].recipientId', body: async () => ({ accountId: k.accountId, priority: 1, splits: [{ recipientId: await insertRecipient(k.accountId, true), percentage: 10 }] }) },
        { name: 'sandbox recipient in a live rule', param: 'splits[0].recipientId', body: async () => ({ accountId: k.accountId, livemode: true, priority: 1, splits: [{ recipientId: recipientA, percentage: 10 }] }) },
        { name: 'percentage over 100', param: 'splits[0].percentage', body: async () => ({ accountId: k.accountId, priority: 1, splits: [{ recipientId: recipientA, percentage: 100.01 }] }) },
        { name: 'percentage 0', param: 'splits[0].percentage', body: async () => ({ accountId: k.accountId, priority: 1, splits: [{ recipientId: recipientA, percentage: 0 }] }) },
        { name: 'percentages summing over 100', param: 'splits', body: async () => ({ accountId: k.accountId, priority: 1, splits: [{ recipientId: recipientA, percentage: 60 }, { recipientId: recipientB, percentage: 40.01 }] }) },
        { name: 'percentage with 3 decimals', param: 'splits[0].percentage', body: async () => ({ accountId: k.accountId, priority: 1, splits: [{ recipientId: recipientA, percentage: 12.345 }] }) },
        { name: 'both percentage and amount', param: 'splits[0]', body: async () => ({ accountId: k.accountId, priority: 1, splits: [{ recipientId: recipientA, percentage: 10, amount: 100 }] }) },
        { name: 'neither percentage nor amount', param: 'splits[0]', body: async () => ({ accountId: k.accountId, priority: 1, splits: [{ recipientId: recipientA }] }) },
        { name: 'amount 0', param: 'splits[0].amount', body: async () => ({ accountId: k.accountId, priority: 1, splits: [{ recipientId: recipientA, amount: 0 }] }) },
        { name: 'negative amount', param: 'splits[0].amount', body: async () => ({ accountId: k.accountId, priority: 1, splits: [{ recipientId: recipientA, amount: -5 }] }) },
        { name: 'fractional amount', param: 'splits[0].amount', body: async () => ({ accountId: k.accountId, priority: 1, splits: [{ recipientId: recipientA, amount: 10.5 }] }) },
        { name: 'amount as a string', param: 'splits[0].amount', body: async () => ({ accountId: k.accountId, priority: 1, splits: [{ recipientId: recipientA, amount: '100' }] }) },
        { name: 'minAmount above maxAmount', param: 'conditions.minAmount', body: async () => ({ accountId: k.accountId, priority: 1, conditions: { minAmount: 5000, maxAmount: 1000 }, splits: [{ recipientId: recipientA, percentage: 10 }] }) },
        { name: 'unknown method', param: 'conditions.method', body: async () => ({ accountId: k.accountId, priority: 1, conditions: { method: 'boleto' }, splits: [{ recipientId: recipientA, percentage: 10 }] }) },
        { name: 'empty splits', param: 'splits', body: async () => ({ accountId: k.accountId, priority: 1, splits: [] }) },
        { name: 'more than 20 splits', param: 'splits', body: async () => ({ accountId: k.accountId, priority: 1, splits: Array.from({ length: 21 }, (_, i) => ({ recipientId: `rcp_${i}`, amount: 1 })) }) },
        { name: 'priority below 0', param: 'priority', body: async () => ({ accountId: k.accountId, priority: -1, splits: [{ recipientId: recipientA, percentage: 10 }] }) },
        { name: 'priority above 1000000', param: 'priority', body: async () => ({ accountId: k.accountId, priority: 1_000_001, splits: [{ recipientId: recipientA, percentage: 10 }] }) },
        { name: 'fractional priority', param: 'priority', body: async () => ({ accountId: k.accountId, priority: 1.5, splits: [{ recipientId: recipientA, percentage: 10 }] }) },
        { name: 'missing priority', param: 'priority', body: async () => ({ accountId: k.accountId, splits: [{ recipientId: recipientA, percentage: 10 }] }) },
        { name: 'unknown field', param: 'splitMode', body: async () => ({ accountId: k.accountId, priority: 1, splitMode: 'x', splits: [{ recipientId: recipientA, percentage: 10 }] }) },
        { name: 'unknown field in a share', param: 'splits[0].amountCents', body: async () => ({ accountId: k.accountId, priority: 1, splits: [{ recipientId: recipientA, amountCents: 100 }] }) },
        { name: 'the same recipient twice', param: 'splits[1].recipientId', body: async () => ({ accountId: k.accountId, priority: 1, splits: [{ recipientId: recipientA, percentage: 10 }, { recipientId: recipientA, amount: 100 }] }) },
        { name: 'unknown account', param: 'accountId', body: async () => ({ accountId: 'acct_doesnotexist', priority: 1, splits: [{ recipientId: recipientA, percentage: 10 }] }) },
      ];

      for (const c of validationCases) {
        test(`refused: ${c.name} (400, param ${c.param}, nothing stored)`, async () => {
          const body = await c.body();
          const before = await countRules();
          const res = await create(body);
          assert.equal(res.statusCode, 400, res.body);
          const error = res.json().error;
          assert.equal(error.code, 'VALIDATION_ERROR');
          assert.equal(error.param, c.param);
          assert.ok(error.message.length > 0);
          assert.equal(await countRules(), before);
        });
      }

      test('create, fetch: a SplitRule with API field names, stored as the receivables code reads it', async () => {
        const res = await create({
          accountId: k.accountId,
          priority: 10,
          conditions: { method: 'credit_card', minAmount: 1000 },
          splits: [{ recipientId: recipientA, percentage: 33.33 }, { recipientId: recipientB, amount: 250 }],
          description: 'Marketplace fee',
        });
        assert.equal(res.statusCode, 200, res.body);
        const rule = res.json();
        assert.match(rule.id, /^spr_[0-9a-z]{26}$/);
        assert.equal(rule.object, 'split_rule');
        assert.equal(rule.accountId, k.accountId);
        assert.equal(rule.livemode, false);
        assert.equal(rule.priority, 10);
        assert.deepEqual(rule.conditions, { method: 'credit_card', minAmount: 1000 });
        assert.deepEqual(rule.splits, [{ type: 'percentage', recipientId: recipientA, percentage: 33.33 }, { type: 'amount', recipientId: recipientB, amount: 250 }]);
        assert.equal(rule.active, true);
        assert.equal(rule.description, 'Marketplace fee');
        assert.equal(rule.createdAt, rule.updatedAt);

        const fetched = await call('GET', `/admin/split-rules/${rule.id}`);
        assert.equal(fetched.statusCode, 200);
        assert.deepEqual(fetched.json(), rule);

        const row = await t.store.db.selectFrom('split_rules').selectAll().where('id', '=', rule.id).executeTakeFirstOrThrow();
        assert.deepEqual(JSON.parse(row.splits), [{ recipientId: recipientA, percentage: 33.33 }, { recipientId: recipientB, amount: 250 }]);
        assert.deepEqual(JSON.parse(row.conditions as string), { method: 'credit_card', minAmount: 1000 });
        assert.equal(row.livemode, 0);
        assert.equal(row.active, 1);
      });

      test('defaults: sandbox, active, no conditions, no description; a live rule takes live recipients', async () => {
        const res = await create({ accountId: k.accountId, priority: 0, splits: [{ recipientId: recipientA, percentage: 100 }] });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().livemode, false);
        assert.equal(res.json().active, true);
        assert.deepEqual(res.json().conditions, {});
        assert.equal(res.json().description, null);
        const liveRecipient = await insertRecipient(k.accountId, true);
        const live = await create({ accountId: k.accountId, livemode: true, priority: 0, active: false, splits: [{ recipientId: liveRecipient, amount: 1 }] });
        assert.equal(live.statusCode, 200, live.body);
        assert.equal(live.json().livemode, true);
        assert.equal(live.json().active, false);
      });

      test('create with an Idempotency-Key: the retry replays, one rule stored', async () => {
        const before = await countRules();
        const body = { accountId: k.accountId, priority: 5, splits: [{ recipientId: recipientA, amount: 100 }] };
        const first = await create(body, s, { 'idempotency-key': 'admin-rule-1' });
        const second = await create(body, s, { 'idempotency-key': 'admin-rule-1' });
        assert.equal(first.statusCode, 200);
        assert.equal(second.statusCode, 200);
        assert.equal(second.headers['idempotent-replayed'], 'true');
        assert.equal(second.body, first.body);
        assert.equal(await countRules(), before + 1);
      });

      test('list: newest first, filters, cursors', async () => {
        const other = await signup(t, 'Listing merchant');
        const r = await insertRecipient(other.accountId);
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) {
          const res = await create({ accountId: other.accountId, priority: i, splits: [{ recipientId: r, percentage: 5 }], active: i !== 1 });
          assert.equal(res.statusCode, 200, res.body);
          ids.push(res.json().id);
        }
        const all = await call('GET', `/admin/split-rules?accountId=${other.accountId}`);
        assert.equal(all.statusCode, 200);
        assert.equal(all.json().object, 'list');
        assert.deepEqual(all.json().data.map((x: { id: string }) => x.id), [...ids].reverse());
        assert.equal(all.json().hasMore, false);

        const page1 = (await call('GET', `/admin/split-rules?accountId=${other.accountId}&limit=2`)).json();
        assert.deepEqual(page1.data.map((x: { id: string }) => x.id), [ids[2], ids[1]]);
        assert.equal(page1.hasMore, true);
        const page2 = (await call('GET', `/admin/split-rules?accountId=${other.accountId}&limit=2&startingAfter=${ids[1]}`)).json();
        assert.deepEqual(page2.data.map((x: { id: string }) => x.id), [ids[0]]);
        assert.equal(page2.hasMore, false);

        const inactive = (await call('GET', `/admin/split-rules?accountId=${other.accountId}&active=false`)).json();
        assert.deepEqual(inactive.data.map((x: { id: string }) => x.id), [ids[1]]);
        const live = (await call('GET', `/admin/split-rules?accountId=${other.accountId}&livemode=true`)).json();
        assert.deepEqual(live.data, []);

        const everyone = (await call('GET', '/admin/split-rules?limit=100')).json();
        assert.ok(everyone.data.some((x: { accountId: string }) => x.accountId === k.accountId));
        assert.ok(everyone.data.some((x: { accountId: string }) => x.accountId === other.accountId));

        const bad = await call('GET', '/admin/split-rules?limit=0');
        assert.equal(bad.statusCode, 400);
        assert.equal(bad.json().error.param, 'limit');
      });

      test('update: changes fields, re-validates the whole rule, keeps account and mode', async () => {
        const created = (await create({ accountId: k.accountId, priority: 3, conditions: { method: 'pix' }, splits: [{ recipientId: recipientA, percentage: 50 }], description: 'v1' })).json();

        // The rule is active: a change without a reason is refused and changes nothing.
        const unexplained = await call('PATCH', `/admin/split-rules/${created.id}`, { priority: 7 });
        assert.equal(unexplained.statusCode, 400);
        assert.equal(unexplained.json().error.param, 'reason');
        assert.equal((await call('GET', `/admin/split-rules/${created.id}`)).json().priority, 3);

        const res = await update(created.id, { priority: 7, splits: [{ recipientId: recipientA, percentage: 40 }, { recipientId: recipientB, percentage: 60 }], description: null });
        assert.equal(res.statusCode, 200, res.body);
        const updated = res.json();
        assert.equal(updated.priority, 7);
        assert.deepEqual(updated.conditions, { method: 'pix' });
        assert.deepEqual(updated.splits, [{ type: 'percentage', recipientId: recipientA, percentage: 40 }, { type: 'percentage', recipientId: recipientB, percentage: 60 }]);
        assert.equal(updated.description, null);
        assert.equal(updated.createdAt, created.createdAt);
        assert.ok(updated.updatedAt >= created.updatedAt);
        assert.deepEqual((await call('GET', `/admin/split-rules/${created.id}`)).json(), updated);

        // conditions: null removes them.
        const cleared = await update(created.id, { conditions: null });
        assert.deepEqual(cleared.json().conditions, {});
        const row = await t.store.db.selectFrom('split_rules').select('conditions').where('id', '=', created.id).executeTakeFirstOrThrow();
        assert.equal(row.conditions, null);

        // The merged rule is checked: a new minAmount above the stored maxAmount is refused...
        await update(created.id, { conditions: { maxAmount: 1000 } });
        const bad = await update(created.id, { conditions: { minAmount: 5000, maxAmount: 1000 } });
        assert.equal(bad.statusCode, 400);
        assert.equal(bad.json().error.param, 'conditions.minAmount');
        // ... and so is a share that pushes the sum over 100, or a recipient of another mode.
        const over = await update(created.id, { splits: [{ recipientId: recipientA, percentage: 70 }, { recipientId: recipientB, percentage: 31 }] });
        assert.equal(over.statusCode, 400);
        assert.equal(over.json().error.param, 'splits');
        const both = await update(created.id, { splits: [{ recipientId: recipientA, percentage: 10, amount: 100 }] });
        assert.equal(both.statusCode, 400);
        assert.equal(both.json().error.param, 'splits[0]');
        const liveRecipient = await insertRecipient(k.accountId, true);
        const wrongMode = await update(created.id, { splits: [{ recipientId: liveRecipient, amount: 10 }] });
        assert.equal(wrongMode.statusCode, 400);
        assert.equal(wrongMode.json().error.param, 'splits[0].recipientId');
        const moveAccount = await update(created.id, { accountId: 'acct_other' });
        assert.equal(moveAccount.statusCode, 400);
        assert.equal(moveAccount.json().error.param, 'accountId');
        const now = (await call('GET', `/admin/split-rules/${created.id}`)).json();
        assert.deepEqual(now.splits, updated.splits, 'refused updates changed nothing');
        assert.deepEqual(now.conditions, { maxAmount: 1000 });

        const missing = await call('PATCH', '/admin/split-rules/spr_doesnotexist', { priority: 1 });
        assert.equal(missing.statusCode, 404);
        assert.equal(missing.json().error.code, 'NOT_FOUND');
      });

      test('deactivate: inactive at once, again is a no-op, PATCH active (with a reason) reactivates', async () => {
        const created = (await create({ accountId: k.accountId, priority: 2, splits: [{ recipientId: recipientA, amount: 100 }] })).json();
        const res = await call('POST', `/admin/split-rules/${created.id}/deactivate`);
        assert.equal(res.statusCode, 200);
        assert.equal(res.json().active, false);
        const row = await t.store.db.selectFrom('split_rules').select('active').where('id', '=', created.id).executeTakeFirstOrThrow();
        assert.equal(row.active, 0);
        const again = await call('POST', `/admin/split-rules/${created.id}/deactivate`);
        assert.equal(again.statusCode, 200);
        assert.deepEqual(again.json(), res.json());
        const back = await call('PATCH', `/admin/split-rules/${created.id}`, { active: true, reason: 'back on' });
        assert.equal(back.json().active, true);
        const missing = await call('POST', '/admin/split-rules/spr_doesnotexist/deactivate');
        assert.equal(missing.statusCode, 404);
      });

      test('unknown split rule id: 404', async () => {
        const res = await call('GET', '/admin/split-rules/spr_doesnotexist');
        assert.equal(res.statusCode, 404);
        assert.equal(res.json().error.code, 'NOT_FOUND');
      });

      test('split rules are not reachable under /v1', async () => {
        for (const method of ['GET', 'POST'] as const) {
          const res = await t.app.inject({
            method, url: '/v1/split-rules', headers: auth(k.secretKey),
            ...(method === 'POST' ? { payload: { accountId: k.accountId, priority: 1, splits: [{ recipientId: recipientA, percentage: 10 }] } } : {}),
          });
          assert.equal(res.statusCode, 404, `${method} /v1/split-rules`);
          assert.equal(res.json().error.code, 'NOT_FOUND');
        }
      });
    });

    // ----------------------------------------------------------------------------------------
    // Accounts

    describe('accounts', () => {
      test('list and fetch, with the default settings', async () => {
        const other = await signup(t, 'Second merchant');
        const list = await call('GET', '/admin/accounts?limit=100');
        assert.equal(list.statusCode, 200);
        const ids = list.json().data.map((a: { id: string }) => a.id);
        assert.ok(ids.includes(k.accountId) && ids.includes(other.accountId));
        assert.ok(ids.indexOf(other.accountId) < ids.indexOf(k.accountId), 'newest first');

        const page = (await call('GET', `/admin/accounts?limit=1&startingAfter=${other.accountId}`)).json();
        assert.equal(page.data.length, 1);
        assert.ok(page.data[0].id < other.accountId);

        const res = await call('GET', `/admin/accounts/${other.accountId}`);
        assert.equal(res.statusCode, 200);
        assert.deepEqual(res.json(), {
          id: other.accountId,
          object: 'account',
          name: 'Second merchant',
          email: null,
          liveEnabled: false,
          livemode: false,
          settings: {
            fees: { pix: { percentBps: 99, fixedCents: 0 }, credit_card: { percentBps: 399, fixedCents: 39 } },
            settlementDelayDays: { pix: 0, credit_card: 30 },
          },
          payoutBankAccount: null,
          payoutPixKey: null,
          payoutHolderDocument: null,
          embedOrigins: ['http://localhost:*', 'http://127.0.0.1:*'],
          createdAt: res.json().createdAt,
        });
        const missing = await call('GET', '/admin/accounts/acct_doesnotexist');
        assert.equal(missing.statusCode, 404);
        assert.equal(missing.json().error.code, 'NOT_FOUND');
      });

      const badSettings: Array<{ name: string; body: unknown; param: string }> = [
        { name: 'percentBps above 10000', body: { fees: { pix: { percentBps: 10_001 } } }, param: 'fees.pix.percentBps' },
        { name: 'negative percentBps', body: { fees: { credit_card: { percentBps: -1 } } }, param: 'fees.credit_card.percentBps' },
        { name: 'fractional percentBps', body: { fees: { pix: { percentBps: 1.5 } } }, param: 'fees.pix.percentBps' },
        { name: 'negative fixedCents', body: { fees: { pix: { fixedCents: -1 } } }, param: 'fees.pix.fixedCents' },
        { name: 'delay above 365', body: { settlementDelayDays: { credit_card: 366 } }, param: 'settlementDelayDays.credit_card' },
        { name: 'negative delay', body: { settlementDelayDays: { pix: -1 } }, param: 'settlementDelayDays.pix' },
        { name: 'unknown method', body: { fees: { boleto: { percentBps: 1 } } }, param: 'fees.boleto' },
        { name: 'unknown field', body: { liveEnabled: true }, param: 'liveEnabled' },
      ];
      for (const c of badSettings) {
        test(`settings refused: ${c.name} (400, param ${c.param}, nothing changed)`, async () => {
          const before = await t.store.db.selectFrom('accounts').select('settings').where('id', '=', k.accountId).executeTakeFirstOrThrow();
          const res = await call('PATCH', `/admin/accounts/${k.accountId}/settings`, c.body);
          assert.equal(res.statusCode, 400, res.body);
          assert.equal(res.json().error.code, 'VALIDATION_ERROR');
          assert.equal(res.json().error.param, c.param);
          const after = await t.store.db.selectFrom('accounts').select('settings').where('id', '=', k.accountId).executeTakeFirstOrThrow();
          assert.equal(after.settings, before.settings);
        });
      }

      test('settings update: only the fields sent change, and new payments use them', async () => {
        const m = await signup(t, 'Fee merchant');
        const res = await call('PATCH', `/admin/accounts/${m.accountId}/settings`, { fees: { pix: { percentBps: 200, fixedCents: 10 }, credit_card: { percentBps: 349 } }, settlementDelayDays: { credit_card: 14 } });
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(res.json().settings, {
          fees: { pix: { percentBps: 200, fixedCents: 10 }, credit_card: { percentBps: 349, fixedCents: 39 } },
          settlementDelayDays: { pix: 0, credit_card: 14 },
        });
        const again = await call('PATCH', `/admin/accounts/${m.accountId}/settings`, { settlementDelayDays: { pix: 1 } });
        assert.deepEqual(again.json().settings.settlementDelayDays, { pix: 1, credit_card: 14 });
        assert.deepEqual(again.json().settings.fees.pix, { percentBps: 200, fixedCents: 10 });
        assert.deepEqual((await call('GET', `/admin/accounts/${m.accountId}`)).json().settings, again.json().settings);

        // The money code reads the same JSON: 2% + 10 centavos on a R$ 100,00 Pix.
        const p = (await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(m.secretKey), payload: { amount: 10_000, method: 'pix' } })).json();
        const paid = await t.app.inject({ method: 'POST', url: `/v1/sandbox/payments/${p.id}/pay`, headers: auth(m.secretKey) });
        assert.equal(paid.statusCode, 200, paid.body);
        assert.equal(paid.json().feeAmount, 210);

        const missing = await call('PATCH', '/admin/accounts/acct_doesnotexist/settings', { settlementDelayDays: { pix: 1 } });
        assert.equal(missing.statusCode, 404);
      });

      test('activate-live: the account\'s sk_live_ key works afterwards', async () => {
        const m = await signup(t, 'Going live');
        const live = await createKey(t.store, m.accountId, 'secret', true);
        const before = await t.app.inject({ method: 'GET', url: '/v1/payments', headers: auth(live.key) });
        assert.equal(before.statusCode, 403);
        assert.equal(before.json().error.code, 'PERMISSION_DENIED');

        const noCsrf = await t.app.inject({ method: 'POST', url: `/admin/accounts/${m.accountId}/activate-live`, headers: { cookie: s.cookie } });
        assert.equal(noCsrf.statusCode, 403);

        const res = await call('POST', `/admin/accounts/${m.accountId}/activate-live`, { reason: 'contract signed' });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().liveEnabled, true);
        const after = await t.app.inject({ method: 'GET', url: '/v1/payments', headers: auth(live.key) });
        assert.equal(after.statusCode, 200, after.body);
        assert.deepEqual(after.json().data, []);
        // Live data stays apart from sandbox data.
        const again = await call('POST', `/admin/accounts/${m.accountId}/activate-live`, { reason: 'again' });
        assert.equal(again.statusCode, 200);
        assert.equal(again.json().liveEnabled, true);
        const listed = (await call('GET', '/admin/accounts?liveEnabled=true&limit=100')).json();
        assert.ok(listed.data.some((a: { id: string }) => a.id === m.accountId));
        assert.ok(listed.data.every((a: { liveEnabled: boolean }) => a.liveEnabled));

        const missing = await call('POST', '/admin/accounts/acct_doesnotexist/activate-live', { reason: 'nobody' });
        assert.equal(missing.statusCode, 404);
      });
    });

    test('routes mounted through deps.routes sit behind the same guard', async () => {
      const bare = Fastify();
      // The admin API's schemas, and the public ones they refer to (payee, receivable, refund, event, ...).
      for (const schema of [...sharedSchemas, ...paymentPartSchemas, Payment, ...receivableSchemas, ...refundSchemas, ...disputeSchemas, ...settlementSchemas, ...webhookSchemas, ...adminSchemas]) bare.addSchema(schema);
      registerErrorHandling(bare);
      registerIdempotency(bare, t.store);
      await registerAdmin(bare, {
        store: t.store,
        config: t.config,
        // A mutating route makes its one idempotent write, even when it changes nothing.
        routes: [(scope) => scope.post('/admin/ping', { config: { permission: 'signed_in', audit: { exempt: 'test route: writes nothing' } } }, async (req) => req.ctx.write(async () => ({ admin: req.admin?.email ?? null })))],
      });
      await bare.ready();
      try {
        const anonymous = await bare.inject({ method: 'POST', url: '/admin/ping' });
        assert.equal(anonymous.statusCode, 401);
        assert.equal(anonymous.json().error.code, 'AUTHENTICATION_REQUIRED');
        const noCsrf = await bare.inject({ method: 'POST', url: '/admin/ping', headers: { cookie: s.cookie } });
        assert.equal(noCsrf.statusCode, 403);
        const ok = await bare.inject({ method: 'POST', url: '/admin/ping', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
        assert.equal(ok.statusCode, 200);
        assert.deepEqual(ok.json(), { admin: adminEmail });
      } finally {
        await bare.close();
      }
    });

    // ----------------------------------------------------------------------------------------
    // OpenAPI

    test('every admin operation is documented: operationId, Admin tag, admin session security, CSRF header', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
      const ops: Array<{ path: string; method: string; op: Record<string, any> }> = [];
      for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
        if (!path.startsWith('/admin')) continue;
        for (const [method, op] of Object.entries(item)) ops.push({ path, method, op });
      }
      assert.ok(ops.length >= 12, `admin operations: ${ops.length}`);
      for (const { path, method, op } of ops) {
        const where = `${method.toUpperCase()} ${path}`;
        assert.match(op.operationId, /^admin[A-Z]/, where);
        assert.deepEqual(op.tags, ['Admin'], where);
        assert.ok(op.summary && op.description, where);
        const isLogin = method === 'post' && path === '/admin/session';
        // The one exception: GET /admin/session/status is how a page asks whether anyone is
        // signed in, so it answers 200 `{signedIn: false}` without a session (never 401): its
        // session is optional (`[{adminSession: []}, {}]`), read when the cookie is sent.
        const isStatus = method === 'get' && path === '/admin/session/status';
        assert.ok((isStatus || op.responses['401']) && op.responses['403'], where);
        if (isStatus) assert.equal(op.responses['401'], undefined, `${where} never answers 401`);
        // Sign-in is throttled; any other admin request refused without a valid session counts
        // against its address's anonymous limit (plugins/rate-limit.ts).
        assert.ok(op.responses['429'], `${where}: 429 declared`);
        assert.deepEqual(op.security, isLogin ? [] : isStatus ? [{ adminSession: [] }, {}] : [{ adminSession: [] }], where);
        const csrf = (op.parameters ?? []).find((p: { in: string; name: string }) => p.in === 'header' && p.name === 'x-csrf-token');
        if (method !== 'get' && !isLogin) assert.ok(csrf?.required, `${where} documents X-CSRF-Token`);
      }
    });
  });

  describe(`admin API over https (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(engine, { publicUrl: 'https://pay.example.com' }, { worker: false });
    });
    after(() => t.teardown());

    test('the session cookie is Secure when the public URL is https', async () => {
      const email = freshEmail();
      await createAdminUser(t.store, email, PASSWORD);
      const res = await t.app.inject({ method: 'POST', url: '/admin/session', payload: { email, password: PASSWORD } });
      assert.equal(res.statusCode, 200);
      const attrs = (res.headers['set-cookie'] as string).split(';').map((p) => p.trim());
      assert.ok(attrs.includes('Secure'));
      assert.ok(attrs.includes('HttpOnly'));
      assert.ok(attrs.includes('SameSite=Strict'));
    });
  });
}

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { selfSignedCert, webhookOnlyPsp } from './connector-certs.js';
import { newMasterKey, parseKeyring } from '../src/providers/secrets/envelope.js';
import { ENGINES, startApp, signup, auth, adminSession, heldForBalance, type TestApp, type Keys } from './helpers.js';
import Fastify from 'fastify';
import { isMutatingRoute, registerIdempotency } from '../src/plugins/idempotency.js';
import { registerErrorHandling } from '../src/plugins/errors.js';
import { adminSchemas, registerAdmin } from '../src/modules/admin/index.js';
import { sharedSchemas } from '../src/http/common.js';
import { Payment, paymentPartSchemas } from '../src/modules/payments/schemas.js';
import { receivableSchemas } from '../src/modules/receivables/routes.js';
import { refundSchemas } from '../src/modules/refunds/routes.js';
import { disputeSchemas } from '../src/modules/disputes/routes.js';
import { settlementSchemas } from '../src/modules/settlements/routes.js';
import { webhookSchemas } from '../src/modules/webhooks/schemas.js';
import type { Tx } from '../src/store/index.js';

// Idempotency by construction, proven route by route. The walk goes over Fastify's route table
// (every route as registered), so a mutating route added later is in it: it needs a request
// below, and then its replay is checked like every other's. For each mutating route: a first
// request succeeds; the same request with the same Idempotency-Key answers the same status and
// bytes with `Idempotent-Replayed: true`, and leaves every table of the store exactly as it was.

interface Request {
  url: string;
  payload?: unknown;
  headers: Record<string, string>;
  // How the replay is answered when it cannot be the stored bytes, with the reason (docs/idempotency.md).
  replay?: { status: number; code: string; why: string };
}

// The routes that take no Idempotency-Key, and why (docs/idempotency.md). Exactly these.
const NOT_IDEMPOTENT: Record<string, string> = {
  'POST /v1/sandbox/accounts': 'no account yet to scope a key to; its answer holds secret keys, which are never stored in clear',
  'POST /admin/session': 'a sign-in hands out a session cookie: a replay would give someone else the session',
  'POST /admin/split-rules/preview': 'a preview computes and writes nothing: a POST only because its input is a body',
  'POST /admin/connector-accounts/:id/test': 'a test connection only reads at the PSP and writes nothing here',
  'POST /v1/provider-callbacks/:token': 'a PSP sends no key; the notification is stored once by its body hash and only triggers a read-back of the charge (docs/providers.md)',
  'POST /v1/provider-callbacks/:token/pix': 'the same PSP notification, at the path the API Pix appends (/pix)',
  'POST /v1/provider-callbacks/:token/adyen': "Adyen's notification webhook: Adyen sends no key; each item is stored once (its PSP reference and event code) and only triggers a read-back (docs/providers.md)",
};

for (const engine of ENGINES) {
  describe(`idempotency of every mutating route (${engine})`, () => {
    let t: TestApp;
    let k: Keys;
    let admin: { cookie: string; csrf: string };

    // Connector accounts (issue 25) need a master key, a client certificate and a PSP to reach.
    let psp: Awaited<ReturnType<typeof webhookOnlyPsp>>;
    const cert = selfSignedCert();
    before(async () => {
      // No worker: nothing changes the store between a request and its replay but the requests.
      t = await startApp(engine, { workerInProcess: false, masterKeys: parseKeyring(newMasterKey('idem')), publicUrl: 'https://pay.example.com' });
      k = await signup(t);
      admin = await adminSession(t);
      psp = await webhookOnlyPsp();
    });
    after(async () => { await psp.close(); await t.teardown(); });

    const v1 = (extra: Record<string, string> = {}) => auth(k.secretKey, extra);
    const adminHeaders = (session = admin) => ({ cookie: session.cookie, 'x-csrf-token': session.csrf });
    const ok = async (method: 'POST' | 'PATCH', url: string, payload?: unknown, headers: Record<string, string> = v1()) => {
      const res = await t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
      assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
      return res.json();
    };
    const pendingPix = () => ok('POST', '/v1/payments', { amount: 1000, method: 'pix' });
    const approvedPix = async () => {
      const p = await pendingPix();
      return ok('POST', `/v1/sandbox/payments/${p.id}/pay`);
    };
    const recipient = () => ok('POST', '/v1/recipients', { name: 'Loja Parceira Ltda', document: '11.222.333/0001-81', bankAccount: { bankCode: '341', agency: '0001', account: '12345-6', accountType: 'checking' } });
    const endpoint = () => ok('POST', '/v1/webhook-endpoints', { url: 'https://example.com/hooks', events: ['*'] });
    const checkoutSession = () => ok('POST', '/v1/checkout/sessions', { amount: 990 });
    // A merchant's own production connector account each time (the sandbox stays the other suites').
    const connectorBody = () => ({ name: 'Idem PSP', ownerAccountId: k.accountId, connector: 'pix_api', dialect: 'standard', method: 'pix', environment: 'production', baseUrl: psp.url, pixKey: 'idem@loja.example', clientId: 'idem', clientSecret: 'idem-secret', ...cert, caPem: psp.caPem });
    const connector = async () => ok('POST', '/admin/connector-accounts', { ...connectorBody(), reason: 'setup' }, adminHeaders());
    const splitRule = async () => ok('POST', '/admin/split-rules', { accountId: k.accountId, priority: 50, splits: [{ recipientId: (await recipient()).id, percentage: 10 }], reason: 'walking the routes' }, adminHeaders());

    // One successful request per mutating route, made fresh for each use (a cancel needs a
    // pending payment of its own, ...). Keyed by the route as registered.
    const requests: Record<string, () => Promise<Request>> = {
      'POST /v1/tokens': async () => ({ url: '/v1/tokens', headers: auth(k.publishableKey), payload: { card: { number: '4242424242424242', expMonth: 12, expYear: 2099, cvc: '123' } } }),
      'POST /v1/payments': async () => ({ url: '/v1/payments', headers: v1(), payload: { amount: 1050, currency: 'BRL', method: 'pix' } }),
      'POST /v1/payments/:id/cancel': async () => ({ url: `/v1/payments/${(await pendingPix()).id}/cancel`, headers: v1() }),
      // A requires_capture payment, as a manual-capture acquirer account leaves one (written
      // here: no acquirer in this suite; its capture job is not run, there is no worker).
      'POST /v1/payments/:id/capture': async () => {
        const p = await ok('POST', '/v1/payments', { amountInCents: 1000, method: 'credit_card', cardToken: 'tok_visa' });
        await t.store.write((tx) => tx.updateTable('payments').set({ status: 'requires_capture', capture_method: 'manual', provider_charge_id: 'PSPREF0000000001' }).where('id', '=', p.id).execute());
        return { url: `/v1/payments/${p.id}/capture`, headers: v1() };
      },
      'POST /v1/sandbox/payments/:id/pay': async () => ({ url: `/v1/sandbox/payments/${(await pendingPix()).id}/pay`, headers: v1() }),
      'POST /v1/recipients': async () => ({ url: '/v1/recipients', headers: v1(), payload: { name: 'Outra Loja Ltda', document: '11222333000181', bankAccount: { bankCode: '001', agency: '1234', account: '5678-9', accountType: 'savings' } } }),
      'PATCH /v1/recipients/:id': async () => ({ url: `/v1/recipients/${(await recipient()).id}`, headers: v1(), payload: { name: 'Nome Novo Ltda' } }),
      'POST /v1/refunds': async () => ({ url: '/v1/refunds', headers: v1(), payload: { paymentId: (await approvedPix()).id, amount: 100 } }),
      'POST /v1/webhook-endpoints': async () => ({ url: '/v1/webhook-endpoints', headers: v1(), payload: { url: 'https://example.com/other', events: ['payment.approved'] } }),
      'PATCH /v1/webhook-endpoints/:id': async () => ({ url: `/v1/webhook-endpoints/${(await endpoint()).id}`, headers: v1(), payload: { description: 'orders' } }),
      'DELETE /v1/webhook-endpoints/:id': async () => ({ url: `/v1/webhook-endpoints/${(await endpoint()).id}`, headers: v1() }),
      'POST /v1/webhook-endpoints/:id/rotate-secret': async () => ({ url: `/v1/webhook-endpoints/${(await endpoint()).id}/rotate-secret`, headers: v1() }),
      'POST /v1/webhook-endpoints/:id/test': async () => ({ url: `/v1/webhook-endpoints/${(await endpoint()).id}/test`, headers: v1() }),
      'POST /v1/events/:id/redeliver': async () => {
        await endpoint();
        const p = await pendingPix();
        const events = await t.app.inject({ method: 'GET', url: '/v1/events?type=payment.created&limit=1', headers: v1() });
        assert.equal(events.json().data[0].data.object.id, p.id);
        // No body: the body is optional.
        return { url: `/v1/events/${events.json().data[0].id}/redeliver`, headers: v1() };
      },
      'POST /v1/checkout/sessions': async () => ({ url: '/v1/checkout/sessions', headers: v1(), payload: { amount: 1050, methods: ['pix'], description: 'Pedido 1' } }),
      'POST /v1/checkout/sessions/:id/expire': async () => ({ url: `/v1/checkout/sessions/${(await checkoutSession()).id}/expire`, headers: v1() }),
      'POST /v1/checkout/sessions/:id/client/pay': async () => {
        const s = await checkoutSession();
        return { url: `/v1/checkout/sessions/${s.id}/client/pay`, headers: { authorization: `Bearer ${s.clientSecret}` }, payload: { method: 'pix' } };
      },
      'POST /admin/connector-accounts': async () => ({ url: '/admin/connector-accounts', headers: adminHeaders(), payload: { ...connectorBody(), reason: 'new PSP' } }),
      'POST /admin/connector-accounts/adyen': async () => ({ url: '/admin/connector-accounts/adyen', headers: adminHeaders(), payload: { name: 'Adyen teste', connector: 'adyen', method: 'card', environment: 'homologation', baseUrl: 'http://127.0.0.1:9/v71', merchantAccount: 'WalkMerchant', apiKey: 'walk-api-key', hmacKey: '00112233445566778899aabbccddeeff', reason: 'new acquirer' } }),
      'PATCH /admin/connector-accounts/:id': async () => ({ url: `/admin/connector-accounts/${(await connector()).id}`, headers: adminHeaders(), payload: { timeoutMs: 2000, reason: 'slower PSP' } }),
      'POST /admin/connector-accounts/:id/rotate': async () => ({ url: `/admin/connector-accounts/${(await connector()).id}/rotate`, headers: adminHeaders(), payload: { clientSecret: 'rotated-secret', reason: 'rotation' } }),
      'POST /admin/connector-accounts/:id/register-webhook': async () => ({ url: `/admin/connector-accounts/${(await connector()).id}/register-webhook`, headers: adminHeaders(), payload: { reason: 'webhook' } }),
      'POST /admin/connector-accounts/:id/disable': async () => ({ url: `/admin/connector-accounts/${(await connector()).id}/disable`, headers: adminHeaders(), payload: { reason: 'off' } }),
      'PATCH /admin/accounts/:id/checkout-branding': async () => ({ url: `/admin/accounts/${(await signup(t, 'Marca')).accountId}/checkout-branding`, headers: adminHeaders(), payload: { displayName: 'Loja Marca', accentColor: '#1d4ed8', reason: 'merchant brand' } }),
      'PUT /admin/accounts/:id/embed-origins': async () => ({ url: `/admin/accounts/${(await signup(t, 'Embeds')).accountId}/embed-origins`, headers: adminHeaders(), payload: { origins: ['https://loja.example'], reason: 'merchant site' } }),
      'DELETE /admin/session': async () => {
        const other = await adminSession(t);
        return { url: '/admin/session', headers: adminHeaders(other), replay: { status: 401, code: 'AUTHENTICATION_REQUIRED', why: 'the session the request ended is gone, and with it the scope of its key' } };
      },
      'POST /admin/split-rules': async () => ({ url: '/admin/split-rules', headers: adminHeaders(), payload: { accountId: k.accountId, priority: 40, splits: [{ recipientId: (await recipient()).id, percentage: 5 }], reason: 'walking the routes' } }),
      'PATCH /admin/split-rules/:id': async () => ({ url: `/admin/split-rules/${(await splitRule()).id}`, headers: adminHeaders(), payload: { priority: 7, reason: 'walking the routes' } }),
      'POST /admin/split-rules/:id/deactivate': async () => ({ url: `/admin/split-rules/${(await splitRule()).id}/deactivate`, headers: adminHeaders() }),
      'POST /admin/split-rules/:id/activate': async () => {
        const rule = await splitRule();
        await ok('POST', `/admin/split-rules/${rule.id}/deactivate`, undefined, adminHeaders());
        return { url: `/admin/split-rules/${rule.id}/activate`, headers: adminHeaders(), payload: { reason: 'contract signed' } };
      },
      'POST /admin/split-rules/reorder': async () => {
        // An account of its own: a reorder names every rule of the account and mode.
        const other = await signup(t, 'Reordered');
        const ids: string[] = [];
        for (const priority of [1, 2]) {
          const r = await ok('POST', '/v1/recipients', { name: `Loja ${priority} Ltda`, document: '11222333000181', bankAccount: { bankCode: '341', agency: '0001', account: '12345-6', accountType: 'checking' } }, auth(other.secretKey));
          ids.push((await ok('POST', '/admin/split-rules', { accountId: other.accountId, priority, splits: [{ recipientId: r.id, percentage: 10 }], active: false }, adminHeaders())).id);
        }
        return { url: '/admin/split-rules/reorder', headers: adminHeaders(), payload: { accountId: other.accountId, ruleIds: ids.reverse(), reason: 'walking the routes' } };
      },
      'POST /admin/accounts/:id/activate-live': async () => ({ url: `/admin/accounts/${(await signup(t, 'Going live')).accountId}/activate-live`, headers: adminHeaders(), payload: { reason: 'documents checked' } }),
      'PATCH /admin/accounts/:id/payout-bank-account': async () => ({ url: `/admin/accounts/${(await signup(t, 'Payout')).accountId}/payout-bank-account`, headers: adminHeaders(), payload: { bankAccount: { bankCode: '341', agency: '0001', account: '12345-6', accountType: 'checking' }, reason: 'bank letter on file' } }),
      'PATCH /admin/accounts/:id/settings': async () => ({ url: `/admin/accounts/${(await signup(t, 'Settings')).accountId}/settings`, headers: adminHeaders(), payload: { settlementDelayDays: { pix: 1 } } }),
      'POST /admin/settlements/:id/retry': async () => ({ url: `/admin/settlements/${await heldForBalance(t, k.accountId)}/retry`, headers: adminHeaders(), payload: { reason: 'walking the routes' } }),
      'POST /admin/settlement-runs': async () => {
        await approvedPix();
        return { url: '/admin/settlement-runs', headers: adminHeaders(), payload: { reason: 'walking the routes' } };
      },
    };

    // Every table's rows, digested: a replay must leave all of them as they were.
    const snapshot = async (): Promise<Record<string, string>> => {
      // This store's tables only (on PostgreSQL other suites' schemas share the database).
      const { rows: names } = t.store.engine === 'postgres'
        ? await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(t.store.db)
        : await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(t.store.db);
      const tables = names.map((x) => x.name).sort();
      assert.ok(tables.includes('payments') && tables.includes('idempotency_keys'), `tables: ${tables.join(', ')}`);
      const out: Record<string, string> = {};
      for (const table of tables) {
        const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(t.store.db);
        const lines = rows.map((r) => JSON.stringify(r)).sort();
        out[table] = `${rows.length} ${createHash('sha256').update(lines.join('\n')).digest('hex')}`;
      }
      return out;
    };

    test('the routes that take no Idempotency-Key are exactly the documented ones', () => {
      const optedOut = t.routes.filter((r) => isMutatingRoute(r) && (r.config as { idempotent?: boolean })?.idempotent === false).map((r) => `${String(r.method)} ${r.url}`);
      assert.deepEqual(optedOut.sort(), Object.keys(NOT_IDEMPOTENT).sort());
    });

    test('every mutating route: a repeat with the same key changes nothing and answers the same bytes', async () => {
      const walked: string[] = [];
      for (const route of t.routes) {
        if (!isMutatingRoute(route)) continue;
        const name = `${String(route.method)} ${route.url}`;
        if (NOT_IDEMPOTENT[name]) continue;
        const prepare = requests[name];
        assert.ok(prepare, `${name} has no request in ${import.meta.url.split('/').pop()}: add one, so that its replay is proven like every other route's`);
        const req = await prepare();
        const method = route.method as 'POST' | 'PUT' | 'PATCH' | 'DELETE';
        const headers = { ...req.headers, 'idempotency-key': `walk-${randomUUID()}` };
        const send = () => t.app.inject({ method, url: req.url, headers, ...(req.payload === undefined ? {} : { payload: req.payload as object }) });

        const first = await send();
        assert.ok(first.statusCode >= 200 && first.statusCode < 300, `${name}: ${first.statusCode} ${first.body}`);
        assert.equal(first.headers['idempotent-replayed'], undefined, name);
        const after = await snapshot();

        const again = await send();
        if (req.replay) {
          assert.equal(again.statusCode, req.replay.status, `${name} (${req.replay.why}): ${again.body}`);
          assert.equal(again.json().error.code, req.replay.code, name);
        } else {
          assert.equal(again.statusCode, first.statusCode, `${name}: ${again.body}`);
          assert.equal(again.headers['idempotent-replayed'], 'true', name);
          assert.equal(again.body, first.body, `${name}: the same bytes`);
          assert.equal(again.headers['content-type'], first.headers['content-type'], name);
        }
        assert.deepEqual(await snapshot(), after, `${name}: the replay changed the store`);
        walked.push(name);
      }
      assert.ok(walked.length >= Object.keys(requests).length, `walked ${walked.length}: ${walked.join(', ')}`);
      assert.deepEqual(Object.keys(requests).filter((r) => !walked.includes(r)), [], 'a request above for a route that no longer exists');
    });

    test('the routes without keys ignore one: a repeat is a new account, a new session', async () => {
      const countKeys = async () => Number((await t.store.db.selectFrom('idempotency_keys').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      const keys = await countKeys();
      const signups = await Promise.all([1, 2].map(() => t.app.inject({ method: 'POST', url: '/v1/sandbox/accounts', headers: { 'idempotency-key': 'same-signup' } })));
      assert.deepEqual(signups.map((r) => r.statusCode), [200, 200]);
      assert.notEqual(signups[0].json().account.id, signups[1].json().account.id);
      assert.ok(signups.every((r) => r.headers['idempotent-replayed'] === undefined));
      const { createAdminUser } = await import('../src/modules/admin/index.js');
      await createAdminUser(t.store, `walk-${engine}@example.com`, 'a long enough passphrase');
      const login = () => t.app.inject({ method: 'POST', url: '/admin/session', headers: { 'idempotency-key': 'same-login' }, payload: { email: `walk-${engine}@example.com`, password: 'a long enough passphrase' } });
      const [a, b] = [await login(), await login()];
      assert.deepEqual([a.statusCode, b.statusCode], [200, 200]);
      assert.notEqual(a.headers['set-cookie'], b.headers['set-cookie'], 'each sign-in its own session');
      assert.notEqual(a.json().csrfToken, b.json().csrfToken);
      assert.equal(b.headers['idempotent-replayed'], undefined);
      assert.equal(await countKeys(), keys, 'no key stored');
    });

    test('the wrong thing fails: writing around req.ctx.write, not writing, writing twice', async () => {
      const bare = Fastify();
      // The admin API's schemas, and the public ones they refer to (Payment refers to its named
      // parts since issue 28: Customer, PaymentCard, PaymentPix, PaymentFailure; a payment's detail
      // lists its disputes since issue 27).
      for (const schema of [...sharedSchemas, ...paymentPartSchemas, Payment, ...receivableSchemas, ...refundSchemas, ...disputeSchemas, ...settlementSchemas, ...webhookSchemas, ...adminSchemas]) bare.addSchema(schema);
      registerErrorHandling(bare);
      registerIdempotency(bare, t.store, { writeGuard: true });
      const bareConfig = { config: { permission: 'signed_in' as const, audit: { exempt: 'test route' } } };
      const touch = (tx: Tx) => tx.updateTable('accounts').set({ name: 'Touched' }).where('id', '=', 'acct_none').execute();
      await registerAdmin(bare, {
        store: t.store,
        config: t.config,
        routes: [(scope) => {
          scope.post('/admin/around', bareConfig, async () => {
            await t.store.write(touch);
            return { ok: true };
          });
          scope.post('/admin/around-too', bareConfig, async (req) => {
            await req.ctx.write(touch);
            await t.store.write(touch);
            return { ok: true };
          });
          scope.post('/admin/nothing', bareConfig, async () => ({ ok: true }));
          scope.post('/admin/twice', bareConfig, async (req) => {
            await req.ctx.write(touch);
            return req.ctx.write(async () => ({ ok: true }));
          });
          scope.post('/admin/right', bareConfig, async (req) => req.ctx.write(async (tx) => {
            await touch(tx);
            return { ok: true };
          }));
        }],
      });
      await bare.ready();
      try {
        const call = (url: string) => bare.inject({ method: 'POST', url, headers: adminHeaders() });
        for (const url of ['/admin/around', '/admin/around-too', '/admin/nothing', '/admin/twice']) {
          const res = await call(url);
          assert.equal(res.statusCode, 500, `${url}: ${res.body}`);
          assert.equal(res.json().error.code, 'INTERNAL_ERROR');
        }
        assert.equal((await call('/admin/right')).statusCode, 200);
      } finally {
        await bare.close();
      }
    });

    test('POST /admin/settlement-runs twice with one key starts one run', async () => {
      const runs = async () => Number((await t.store.db.selectFrom('settlement_runs').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      const before = await runs();
      const headers = { ...adminHeaders(), 'idempotency-key': 'one-run' };
      const a = await t.app.inject({ method: 'POST', url: '/admin/settlement-runs', headers, payload: { reason: 'one run' } });
      const b = await t.app.inject({ method: 'POST', url: '/admin/settlement-runs', headers, payload: { reason: 'one run' } });
      assert.equal(a.statusCode, 200, a.body);
      assert.equal(b.body, a.body);
      assert.equal(b.headers['idempotent-replayed'], 'true');
      assert.equal(await runs(), before + 1);
    });
  });
}

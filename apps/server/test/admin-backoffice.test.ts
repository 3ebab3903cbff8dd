import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { heldForBalance, ENGINES, startApp, signup, auth, drain, type TestApp, type Keys } from './helpers.js';
import { selfSignedCert, webhookOnlyPsp } from './connector-certs.js';
import { newMasterKey, parseKeyring } from '../src/providers/secrets/envelope.js';
import { createAdminUser } from '../src/modules/admin/index.js';
import { PERMISSION_NAMES, permissionsOf } from '../src/modules/admin/shared/permissions.js';
import { SANDBOX_FAILING_ACCOUNT } from '../src/providers/sandbox.js';
import { localDate } from '../src/modules/accounts/settings.js';
import Fastify from 'fastify';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerAdmin } from '../src/modules/admin/index.js';
import { registerErrorHandling } from '../src/plugins/errors.js';
import { registerIdempotency } from '../src/plugins/idempotency.js';
import { backofficeRoutes } from '../src/modules/backoffice.js';
import { CLI } from './cli.js';

// The back office's server side: roles and permissions, the audit log written with every admin
// change (checked by walking every mutating admin route), required reasons, the split preview
// against real sales, rule activation and reordering, and the read views.

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
interface Session { cookie: string; csrf: string }

const PASSWORD = 'a long enough passphrase';
const USER_AGENT = 'backoffice-test/1.0';
let seq = 0;
const fresh = (what: string) => `${what}-${process.pid}-${++seq}@example.com`;
const bank = (account = '12345-6') => ({ bankCode: '341', agency: '1234', account, accountType: 'checking' });

for (const engine of ENGINES) {
  describe(`admin back office API (${engine})`, () => {
    let t: TestApp;
    let k: Keys;
    let admin: Session;
    let viewer: Session;
    let adminEmail: string;
    let viewerEmail: string;
    let seller: string;
    let platform: string;

    const signIn = async (email: string): Promise<Session> => {
      const res = await t.app.inject({ method: 'POST', url: '/admin/session', payload: { email, password: PASSWORD }, remoteAddress: `10.9.${seq % 250}.${++seq % 250}` });
      assert.equal(res.statusCode, 200, res.body);
      return { cookie: (res.headers['set-cookie'] as string).split(';')[0], csrf: res.json().csrfToken };
    };
    const call = async (method: Method, url: string, body?: unknown, session: Session = admin, headers: Record<string, string> = {}) => {
      const h: Record<string, string> = { cookie: session.cookie, 'user-agent': USER_AGENT };
      if (method !== 'GET') h['x-csrf-token'] = session.csrf;
      const res = await t.app.inject({ method, url, headers: { ...h, ...headers }, remoteAddress: '203.0.113.7', ...(body === undefined ? {} : { payload: body as object }) });
      return { status: res.statusCode, body: res.body ? res.json() : undefined, headers: res.headers };
    };
    const api = async (method: 'GET' | 'POST', url: string, payload?: unknown, key = k.secretKey) => {
      const res = await t.app.inject({ method, url, headers: auth(key), ...(payload === undefined ? {} : { payload: payload as object }) });
      return { status: res.statusCode, body: res.json() };
    };
    const recipient = async (name: string, account?: string, key = k.secretKey) => {
      const r = await api('POST', '/v1/recipients', { name, document: '11.222.333/0001-81', bankAccount: bank(account) }, key);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.id as string;
    };
    const auditRows = async () => Number((await t.store.db.selectFrom('admin_audit_log').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const lastAudit = async () => (await call('GET', '/admin/audit-log?limit=1')).body.data[0];
    const newRule = async (body: Record<string, unknown>) => {
      const res = await call('POST', '/admin/split-rules', { accountId: k.accountId, reason: 'test', ...body });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body as { id: string; priority: number; active: boolean };
    };
    const cardSale = async (amountInCents: number, key: string) => {
      const p = await api('POST', '/v1/payments', { amountInCents, method: 'credit_card', cardToken: 'tok_visa' }, key);
      assert.equal(p.status, 200, JSON.stringify(p.body));
      // The suite runs no background worker: it runs what is due when it needs the outcome.
      await drain(t);
      const got = await api('GET', `/v1/payments/${p.body.id}`, undefined, key);
      assert.equal(got.body.status, 'approved');
      return got.body;
    };
    const receivablesOf = async (paymentId: string, key: string) => (await api('GET', `/v1/receivables?paymentId=${paymentId}&limit=100`, undefined, key)).body.data as Array<{ payee: { type: string; id: string }; amount: number; splitRuleId: string | null }>;
    const asSet = (lines: Array<{ payee: { type: string; id: string }; amount: number }>) => lines.map((l) => `${l.payee.type}:${l.payee.id}:${l.amount}`).sort();

    let psp: Awaited<ReturnType<typeof webhookOnlyPsp>>;
    before(async () => {
      psp = await webhookOnlyPsp();
      t = await startApp(engine, { masterKeys: parseKeyring(newMasterKey('walk')), publicUrl: 'https://pay.example.com' }, { worker: false });
      k = await signup(t, 'Loja Backoffice');
      adminEmail = fresh('ops');
      viewerEmail = fresh('viewer');
      await createAdminUser(t.store, adminEmail, PASSWORD);
      await createAdminUser(t.store, viewerEmail, PASSWORD, 'viewer');
      admin = await signIn(adminEmail);
      viewer = await signIn(viewerEmail);
      seller = await recipient('Loja do Zé LTDA');
      platform = await recipient('Plataforma SA');
    });
    after(async () => { await t.teardown(); await psp.close(); });

    // ------------------------------------------------------------------------------------------
    // Roles

    test('the session says the role and its permissions; admin holds all, viewer only views', async () => {
      const a = (await call('GET', '/admin/session')).body;
      assert.equal(a.admin.role, 'admin');
      assert.deepEqual(a.permissions, PERMISSION_NAMES);
      const v = (await call('GET', '/admin/session', undefined, viewer)).body;
      assert.equal(v.admin.role, 'viewer');
      assert.deepEqual(v.permissions, permissionsOf('viewer'));
      assert.ok(v.permissions.every((p: string) => p.endsWith(':view') || p === 'split_rules:preview'), v.permissions.join());
    });

    test('createAdminUser refuses an unknown role', async () => {
      await assert.rejects(createAdminUser(t.store, fresh('x'), PASSWORD, 'owner' as 'admin'), { code: 'VALIDATION_ERROR', param: 'role' });
    });

    test('a role changed in the store applies to the next request of an open session', async () => {
      const email = fresh('demoted');
      await createAdminUser(t.store, email, PASSWORD);
      const s = await signIn(email);
      const reorder = { accountId: k.accountId, ruleIds: ['spr_x'], reason: 'role test' };
      assert.equal((await call('POST', '/admin/split-rules/reorder', reorder, s)).body.error.param, 'ruleIds[0]');
      await t.store.write((tx) => tx.updateTable('admin_users').set({ role: 'viewer' }).where('email', '=', email).execute());
      const denied = await call('POST', '/admin/split-rules/reorder', reorder, s);
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error.code, 'PERMISSION_DENIED');
    });

    test('cli admin:create --role viewer', async () => {
      const { execFile } = await import('node:child_process');
      const { promisify } = await import('node:util');
      const email = fresh('cli-viewer');
      const out = await promisify(execFile)(process.execPath, [...CLI, 'admin:create', '--email', email, '--password', PASSWORD, '--role', 'viewer'], { env: { ...process.env, DATABASE_URL: t.db.url }, cwd: new URL('..', import.meta.url).pathname });
      assert.match(out.stdout, /^viewer .* created/);
      const row = await t.store.db.selectFrom('admin_users').select('role').where('email', '=', email).executeTakeFirstOrThrow();
      assert.equal(row.role, 'viewer');
      await assert.rejects(promisify(execFile)(process.execPath, [...CLI, 'admin:create', '--email', fresh('cli-owner'), '--password', PASSWORD, '--role', 'owner'], { env: { ...process.env, DATABASE_URL: t.db.url }, cwd: new URL('..', import.meta.url).pathname }), /role must be one of admin, viewer/);
    });

    test('cli admin:create reads the password from standard input or a prompt that does not echo it; --password still works, with a warning', async () => {
      const { execFile, spawn } = await import('node:child_process');
      const { promisify } = await import('node:util');
      const cwd = new URL('..', import.meta.url).pathname;
      const env = { ...process.env, DATABASE_URL: t.db.url };
      const signsIn = async (email: string, password: string) => (await t.app.inject({ method: 'POST', url: '/admin/session', payload: { email, password }, remoteAddress: `10.98.0.${Math.floor(Math.random() * 250) + 1}` })).statusCode === 200;
      // Piped in (one trailing newline is not part of it).
      const piped = fresh('cli-stdin');
      const child = spawn(process.execPath, [...CLI, 'admin:create', '--email', piped], { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      child.stdin.end(`${PASSWORD}\n`);
      assert.equal(await new Promise((r) => child.on('close', r)), 0, err);
      assert.match(out, /^admin .* created/);
      assert.ok(!out.includes(PASSWORD) && !err.includes(PASSWORD), 'the password is not printed');
      assert.ok(await signsIn(piped, PASSWORD), 'signs in with the piped password');
      // --password: works, and warns.
      const flagged = fresh('cli-flag');
      const viaFlag = await promisify(execFile)(process.execPath, [...CLI, 'admin:create', '--email', flagged, '--password', PASSWORD], { env, cwd });
      assert.match(viaFlag.stderr, /warning: --password leaves the password in your shell history/);
      assert.ok(await signsIn(flagged, PASSWORD));
      // At a terminal (a real pseudo-terminal, through script(1)): asked twice, never echoed.
      const { existsSync } = await import('node:fs');
      if (!existsSync('/usr/bin/script')) return;
      const prompted = fresh('cli-tty');
      const cmd = [process.execPath, '--import', 'tsx', 'src/cli.ts', 'admin:create', '--email', prompted].map((a) => `'${a}'`).join(' ');
      const tty = spawn('/usr/bin/script', ['-qec', cmd, '/dev/null'], { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
      let screen = '';
      const seen = (text: string) => new Promise<void>((resolve) => {
        const check = () => {
          if (screen.includes(text)) {
            tty.stdout.off('data', onData);
            resolve();
          }
        };
        const onData = (c: Buffer) => {
          screen += c.toString();
          check();
        };
        tty.stdout.on('data', onData);
        check();
      });
      await seen('Password (not shown): ');
      tty.stdin.write(`${PASSWORD}\r`);
      await seen('Again: ');
      tty.stdin.write(`${PASSWORD}\r`);
      await seen('created');
      tty.stdin.end();
      await new Promise((r) => tty.on('close', r));
      assert.ok(!screen.includes(PASSWORD), `the password is not echoed: ${JSON.stringify(screen)}`);
      assert.ok(await signsIn(prompted, PASSWORD), 'signs in with the typed password');
    });

    test('an admin route that does not say its permission, or what it changes, cannot be registered', async () => {
      const build = async (route: (scope: import('fastify').FastifyInstance) => void) => {
        const bare = Fastify();
        registerErrorHandling(bare);
        registerIdempotency(bare, t.store);
        try {
          await registerAdmin(bare, { store: t.store, config: t.config, routes: [route] });
          await bare.ready();
        } finally {
          await bare.close();
        }
      };
      await assert.rejects(build((scope) => scope.get('/admin/things', async () => ({}))), /must declare config.permission/);
      await assert.rejects(build((scope) => scope.post('/admin/things', { config: { permission: 'accounts:update' } }, async () => ({}))), /must declare config.audit/);
      await assert.rejects(build((scope) => scope.post('/admin/things', { config: { permission: 'nope' as 'accounts:update', audit: { exempt: 'x' } } }, async () => ({}))), /must declare config.permission/);
    });

    // ------------------------------------------------------------------------------------------
    // Every mutating admin route: the viewer is refused (nothing written), the admin's change
    // writes exactly one audit entry with who/when/where/before/after/reason.

    test('walking every mutating admin route: viewer 403 with nothing written; admin change with its audit entry', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
      const documented: string[] = [];
      for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
        if (!path.startsWith('/admin')) continue;
        for (const method of Object.keys(item)) if (method !== 'get') documented.push(`${method.toUpperCase()} ${path}`);
      }

      const account = (await signup(t, 'Walk merchant')).accountId;
      const ruleId = (await newRule({ priority: 900, splits: [{ recipientId: seller, percentage: 1 }], active: false })).id;
      // For each route: a request that succeeds, and the audit entry it must produce (null: exempt).
      const cases: Record<string, { url: string; body?: unknown; audit: null | { action: string; objectType: string; objectId?: string; reason?: string } }> = {
        'POST /admin/session': { url: '/admin/session', audit: null },
        'DELETE /admin/session': { url: '/admin/session', audit: null },
        'POST /admin/split-rules': { url: '/admin/split-rules', body: { accountId: k.accountId, priority: 901, splits: [{ recipientId: platform, amount: 1 }], active: false }, audit: { action: 'split_rule.create', objectType: 'split_rule' } },
        'PATCH /admin/split-rules/{id}': { url: `/admin/split-rules/${ruleId}`, body: { description: 'walked', reason: 'naming it' }, audit: { action: 'split_rule.update', objectType: 'split_rule', objectId: ruleId, reason: 'naming it' } },
        'POST /admin/split-rules/{id}/activate': { url: `/admin/split-rules/${ruleId}/activate`, body: { reason: 'walk: on' }, audit: { action: 'split_rule.activate', objectType: 'split_rule', objectId: ruleId, reason: 'walk: on' } },
        'POST /admin/split-rules/{id}/deactivate': { url: `/admin/split-rules/${ruleId}/deactivate`, audit: { action: 'split_rule.deactivate', objectType: 'split_rule', objectId: ruleId } },
        'POST /admin/split-rules/reorder': { url: '/admin/split-rules/reorder', body: { accountId: account, ruleIds: [], reason: 'walk: order' }, audit: { action: 'split_rule.reorder', objectType: 'account', objectId: account, reason: 'walk: order' } },
        'POST /admin/split-rules/preview': { url: '/admin/split-rules/preview', body: { accountId: k.accountId, amount: 1000, method: 'pix' }, audit: null },
        'POST /admin/accounts/{id}/activate-live': { url: `/admin/accounts/${account}/activate-live`, body: { reason: 'walk: KYC done' }, audit: { action: 'account.activate_live', objectType: 'account', objectId: account, reason: 'walk: KYC done' } },
        'PATCH /admin/accounts/{id}/settings': { url: `/admin/accounts/${account}/settings`, body: { settlementDelayDays: { pix: 1 } }, audit: { action: 'account.update_settings', objectType: 'account', objectId: account } },
        'PUT /admin/accounts/{id}/embed-origins': { url: `/admin/accounts/${account}/embed-origins`, body: { origins: ['https://loja.example'], reason: 'walk: merchant site' }, audit: { action: 'account.set_embed_origins', objectType: 'account', objectId: account, reason: 'walk: merchant site' } },
        'PATCH /admin/accounts/{id}/checkout-branding': { url: `/admin/accounts/${account}/checkout-branding`, body: { displayName: 'Loja do passeio', accentColor: '#1d4ed8', reason: 'walk: brand' }, audit: { action: 'account.update_checkout_branding', objectType: 'account', objectId: account, reason: 'walk: brand' } },
        'PATCH /admin/accounts/{id}/payout-bank-account': { url: `/admin/accounts/${account}/payout-bank-account`, body: { bankAccount: bank(), reason: 'walk: bank letter' }, audit: { action: 'account.set_payout_bank_account', objectType: 'account', objectId: account, reason: 'walk: bank letter' } },
        'POST /admin/settlement-runs': { url: '/admin/settlement-runs', body: { reason: 'walk: run' }, audit: { action: 'settlement_run.create', objectType: 'settlement_run', reason: 'walk: run' } },
      };
      // Payouts by Pix (issue 26): a settlement held for the PSP balance, retried.
      const heldId = await heldForBalance(t, account);
      cases['POST /admin/settlements/{id}/retry'] = { url: `/admin/settlements/${heldId}/retry`, body: { reason: 'walk: balance topped up' }, audit: { action: 'settlement.retry_payout', objectType: 'settlement', objectId: heldId, reason: 'walk: balance topped up' } };
      // Connector accounts (issue 25): one made for the walk, against a loopback PSP.
      const cert = selfSignedCert();
      // A merchant's own production account: test payments of the other suites stay on the sandbox.
      const connectorBody = { name: 'Walk PSP', ownerAccountId: account, connector: 'pix_api', dialect: 'standard', method: 'pix', environment: 'production', baseUrl: psp.url, pixKey: 'walk@loja.example', clientId: 'walk', clientSecret: 'walk-secret', ...cert, caPem: psp.caPem };
      const walkConnector = (await call('POST', '/admin/connector-accounts', { ...connectorBody, reason: 'walk: setup' })).body.id as string;
      Object.assign(cases, {
        'POST /admin/connector-accounts': { url: '/admin/connector-accounts', body: { ...connectorBody, reason: 'walk: new PSP' }, audit: { action: 'connector_account.create', objectType: 'connector_account', reason: 'walk: new PSP' } },
        // Cards (issue 27): a merchant's Adyen test account (no call to Adyen on create).
        'POST /admin/connector-accounts/adyen': { url: '/admin/connector-accounts/adyen', body: { name: 'Walk Adyen', ownerAccountId: account, connector: 'adyen', method: 'card', environment: 'homologation', baseUrl: 'http://127.0.0.1:9/v71', merchantAccount: 'WalkMerchant', apiKey: 'walk-api-key', hmacKey: '00112233445566778899aabbccddeeff', reason: 'walk: new acquirer' }, audit: { action: 'connector_account.create', objectType: 'connector_account', reason: 'walk: new acquirer' } },
        'PATCH /admin/connector-accounts/{id}': { url: `/admin/connector-accounts/${walkConnector}`, body: { timeoutMs: 2000, reason: 'walk: slower' }, audit: { action: 'connector_account.update', objectType: 'connector_account', objectId: walkConnector, reason: 'walk: slower' } },
        'POST /admin/connector-accounts/{id}/rotate': { url: `/admin/connector-accounts/${walkConnector}/rotate`, body: { clientSecret: 'walk-secret-2', reason: 'walk: rotate' }, audit: { action: 'connector_account.rotate', objectType: 'connector_account', objectId: walkConnector, reason: 'walk: rotate' } },
        'POST /admin/connector-accounts/{id}/register-webhook': { url: `/admin/connector-accounts/${walkConnector}/register-webhook`, body: { reason: 'walk: webhook' }, audit: { action: 'connector_account.register_webhook', objectType: 'connector_account', objectId: walkConnector, reason: 'walk: webhook' } },
        'POST /admin/connector-accounts/{id}/test': { url: `/admin/connector-accounts/${walkConnector}/test`, audit: null },
        'POST /admin/connector-accounts/{id}/disable': { url: `/admin/connector-accounts/${walkConnector}/disable`, body: { reason: 'walk: off' }, audit: { action: 'connector_account.disable', objectType: 'connector_account', objectId: walkConnector, reason: 'walk: off' } },
      });
      // A reorder needs the account to have a rule; give the walk account one.
      const walkRule = await t.store.write(async (tx) => {
        const id = `spr_walk${engine}${Date.now()}`;
        const now = new Date().toISOString();
        await tx.insertInto('split_rules').values({ id, account_id: account, livemode: 0, priority: 5, conditions: null, splits: '[]', active: 0, description: null, created_at: now, updated_at: now }).execute();
        return id;
      });
      (cases['POST /admin/split-rules/reorder'].body as { ruleIds: string[] }).ruleIds = [walkRule];

      assert.deepEqual(documented.sort(), Object.keys(cases).sort(), 'every mutating admin route has a case here (add one for a new route)');
      const exempt = Object.entries(cases).filter(([, c]) => c.audit === null).map(([name]) => name).sort();
      assert.deepEqual(exempt, ['DELETE /admin/session', 'POST /admin/connector-accounts/{id}/test', 'POST /admin/session', 'POST /admin/split-rules/preview'], 'only these change nothing an operator manages');

      for (const [name, c] of Object.entries(cases)) {
        const method = name.split(' ')[0] as Method;
        if (name.endsWith('/admin/session')) continue;
        // The viewer: refused before anything runs, nothing written.
        const rowsBefore = await auditRows();
        const denied = await call(method, c.url, c.body, viewer);
        if (c.audit === null) {
          assert.equal(denied.status, 200, `${name} (viewer may preview): ${JSON.stringify(denied.body)}`);
        } else {
          assert.equal(denied.status, 403, `${name} as viewer`);
          assert.equal(denied.body.error.code, 'PERMISSION_DENIED', name);
        }
        assert.equal(await auditRows(), rowsBefore, `${name} as viewer wrote no audit entry`);

        // The admin: the change and exactly one audit entry.
        const res = await call(method, c.url, c.body);
        assert.equal(res.status, 200, `${name}: ${JSON.stringify(res.body)}`);
        if (c.audit === null) {
          assert.equal(await auditRows(), rowsBefore, `${name} writes no audit entry`);
          continue;
        }
        assert.equal(await auditRows(), rowsBefore + 1, `${name} wrote one audit entry`);
        const entry = await lastAudit();
        assert.equal(entry.object, 'audit_entry');
        assert.equal(entry.action, c.audit.action, name);
        assert.equal(entry.objectType, c.audit.objectType, name);
        assert.equal(entry.objectId, c.audit.objectId ?? res.body.id, name);
        assert.deepEqual(entry.actor, { email: adminEmail, role: 'admin' }, name);
        assert.equal(entry.ip, '203.0.113.7', name);
        assert.equal(entry.userAgent, USER_AGENT, name);
        assert.equal(entry.reason, c.audit.reason ?? null, name);
        assert.ok(entry.after !== null, `${name}: after`);
        assert.match(entry.correlationId, /^req_/);
      }

      // Sign-in and sign-out work for both roles and are not audited.
      const before = await auditRows();
      const s = await signIn(viewerEmail);
      assert.equal((await call('DELETE', '/admin/session', undefined, s)).status, 200);
      assert.equal(await auditRows(), before);
    });

    test('audit entries carry before and after: an update shows the old and the new values', async () => {
      const rule = await newRule({ priority: 300, splits: [{ recipientId: seller, percentage: 10 }], active: false });
      const res = await call('PATCH', `/admin/split-rules/${rule.id}`, { priority: 301, splits: [{ recipientId: seller, percentage: 12.5 }] });
      assert.equal(res.status, 200);
      const entry = (await call('GET', `/admin/audit-log?objectId=${rule.id}&action=split_rule.update`)).body.data[0];
      assert.equal(entry.before.priority, 300);
      assert.deepEqual(entry.before.splits, [{ type: 'percentage', recipientId: seller, percentage: 10 }]);
      assert.equal(entry.after.priority, 301);
      assert.deepEqual(entry.after.splits, [{ type: 'percentage', recipientId: seller, percentage: 12.5 }]);
      const created = (await call('GET', `/admin/audit-log?objectId=${rule.id}&action=split_rule.create`)).body.data[0];
      assert.equal(created.before, null);
      assert.equal(created.after.id, rule.id);
      assert.equal(created.livemode, false);
    });

    test('a refused change writes neither the change nor an audit entry', async () => {
      const rows = await auditRows();
      const bad = await call('POST', '/admin/split-rules', { accountId: k.accountId, priority: 1, splits: [{ recipientId: 'rcp_nope', percentage: 10 }], reason: 'x' });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error.param, 'splits[0].recipientId');
      const missing = await call('PATCH', '/admin/split-rules/spr_nope', { priority: 1 });
      assert.equal(missing.status, 404);
      assert.equal(await auditRows(), rows);
    });

    test('audit log: filters by action, object, actor; cursors; unknown parameters refused', async () => {
      const rule = await newRule({ priority: 400, splits: [{ recipientId: seller, amount: 10 }], active: false });
      await call('POST', `/admin/split-rules/${rule.id}/activate`, { reason: 'on' });
      await call('POST', `/admin/split-rules/${rule.id}/deactivate`, { reason: 'off' });
      const all = (await call('GET', `/admin/audit-log?objectId=${rule.id}`)).body;
      assert.deepEqual(all.data.map((e: { action: string }) => e.action), ['split_rule.deactivate', 'split_rule.activate', 'split_rule.create']);
      assert.deepEqual(all.data.map((e: { reason: string }) => e.reason), ['off', 'on', 'test']);
      const page1 = (await call('GET', `/admin/audit-log?objectId=${rule.id}&limit=2`)).body;
      assert.equal(page1.hasMore, true);
      const page2 = (await call('GET', `/admin/audit-log?objectId=${rule.id}&limit=2&startingAfter=${page1.data[1].id}`)).body;
      assert.deepEqual(page2.data.map((e: { action: string }) => e.action), ['split_rule.create']);
      const byActor = (await call('GET', `/admin/audit-log?actorEmail=${encodeURIComponent(adminEmail.toUpperCase())}&objectType=split_rule&limit=100`)).body;
      assert.ok(byActor.data.length >= 3 && byActor.data.every((e: { actor: { email: string }; objectType: string }) => e.actor.email === adminEmail && e.objectType === 'split_rule'));
      assert.deepEqual((await call('GET', '/admin/audit-log?actorEmail=nobody@example.com')).body.data, []);
      const unknown = await call('GET', '/admin/audit-log?who=me');
      assert.equal(unknown.status, 400);
      assert.equal(unknown.body.error.code, 'VALIDATION_ERROR');
      // Viewers read it too.
      assert.equal((await call('GET', '/admin/audit-log', undefined, viewer)).status, 200);
    });

    // ------------------------------------------------------------------------------------------
    // Reasons on money-moving actions

    test('a settlement run needs a reason: VALIDATION_ERROR (param reason) without one, blank or missing', async () => {
      const runs = async () => Number((await t.store.db.selectFrom('settlement_runs').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      const before = await runs();
      // No body at all too: told the same as `{}`, not that the body must be an object. Whoever
      // finds the reason missing (the schema, or the audit hook for a blank one), the same words.
      const missing = 'reason is required: a settlement run pays money out.';
      for (const [body, message] of [[{}, missing], [{ reason: '' }, 'reason must not be empty.'], [{ reason: '   ' }, missing], [{ date: localDate(Date.now()) }, missing], [undefined, missing]] as const) {
        const res = await call('POST', '/admin/settlement-runs', body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.deepEqual(res.body.error, { ...res.body.error, code: 'VALIDATION_ERROR', param: 'reason', message }, JSON.stringify(body));
      }
      assert.equal(await runs(), before);
    });

    test('live activation needs a reason', async () => {
      const m = await signup(t, 'Live needs a reason');
      for (const body of [undefined, {}, { reason: ' ' }]) {
        const res = await call('POST', `/admin/accounts/${m.accountId}/activate-live`, body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(res.body.error.code, 'VALIDATION_ERROR');
      }
      assert.equal((await call('GET', `/admin/accounts/${m.accountId}`)).body.liveEnabled, false);
      const ok = await call('POST', `/admin/accounts/${m.accountId}/activate-live`, { reason: 'KYC approved' });
      assert.equal(ok.status, 200);
      const entry = await lastAudit();
      assert.equal(entry.before.liveEnabled, false);
      assert.equal(entry.after.liveEnabled, true);
      assert.equal(entry.reason, 'KYC approved');
    });

    test('activating a split rule needs a reason: create active, PATCH active, POST activate; saving inactive does not', async () => {
      const count = async () => Number((await t.store.db.selectFrom('split_rules').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      const before = await count();
      const noReason = await call('POST', '/admin/split-rules', { accountId: k.accountId, priority: 500, splits: [{ recipientId: seller, percentage: 5 }] });
      assert.equal(noReason.status, 400);
      assert.equal(noReason.body.error.param, 'reason');
      assert.equal(await count(), before);
      const saved = await call('POST', '/admin/split-rules', { accountId: k.accountId, priority: 500, active: false, splits: [{ recipientId: seller, percentage: 5 }] });
      assert.equal(saved.status, 200);
      const id = saved.body.id;
      const patch = await call('PATCH', `/admin/split-rules/${id}`, { active: true });
      assert.equal(patch.status, 400);
      assert.equal(patch.body.error.param, 'reason');
      const activate = await call('POST', `/admin/split-rules/${id}/activate`, {});
      assert.equal(activate.status, 400);
      assert.equal(activate.body.error.param, 'reason');
      assert.equal((await call('GET', `/admin/split-rules/${id}`)).body.active, false);
      // Editing an inactive rule needs none.
      assert.equal((await call('PATCH', `/admin/split-rules/${id}`, { priority: 501 })).status, 200);
      const on = await call('PATCH', `/admin/split-rules/${id}`, { active: true, reason: 'approved by finance' });
      assert.equal(on.status, 200);
      assert.equal(on.body.active, true);
      await call('POST', `/admin/split-rules/${id}/deactivate`);
    });

    test('any change to an active split rule needs a reason, written to its audit entry; a blank one is refused and changes nothing', async () => {
      const rule = await newRule({ priority: 510, splits: [{ recipientId: seller, percentage: 5 }], conditions: { minAmount: 1000 } });
      assert.equal(rule.active, true);
      const rows = await auditRows();
      // Shares, conditions, priority, the description, and `active: true` again: each goes live on the next sale.
      for (const body of [
        { splits: [{ recipientId: seller, percentage: 50 }] },
        { conditions: { minAmount: 1 } },
        { priority: 1 },
        { description: 'renamed' },
        { active: true },
        { splits: [{ recipientId: seller, amount: 100_000 }], reason: '   ' },
      ]) {
        const res = await call('PATCH', `/admin/split-rules/${rule.id}`, body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(res.body.error.code, 'VALIDATION_ERROR');
        assert.equal(res.body.error.param, 'reason', JSON.stringify(res.body));
        assert.match(res.body.error.message, /active split rule/);
      }
      assert.equal(await auditRows(), rows, 'nothing audited');
      const unchanged = (await call('GET', `/admin/split-rules/${rule.id}`)).body;
      assert.deepEqual([unchanged.priority, unchanged.splits, unchanged.conditions, unchanged.description], [510, [{ type: 'percentage', recipientId: seller, percentage: 5 }], { minAmount: 1000 }, null]);

      const res = await call('PATCH', `/admin/split-rules/${rule.id}`, { splits: [{ recipientId: seller, percentage: 7.5 }], reason: 'seller renegotiated' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const entry = await lastAudit();
      assert.equal(entry.action, 'split_rule.update');
      assert.equal(entry.reason, 'seller renegotiated');
      assert.deepEqual(entry.before.splits, [{ type: 'percentage', recipientId: seller, percentage: 5 }]);
      assert.deepEqual(entry.after.splits, [{ type: 'percentage', recipientId: seller, percentage: 7.5 }]);
      await call('POST', `/admin/split-rules/${rule.id}/deactivate`);
    });

    test('reordering split rules needs a reason, written to its audit entry; without one nothing changes', async () => {
      const other = await signup(t, 'Reorder needs a reason');
      const r = await recipient('Seller', undefined, other.secretKey);
      const ids: string[] = [];
      for (const priority of [10, 20]) ids.push((await call('POST', '/admin/split-rules', { accountId: other.accountId, priority, active: false, splits: [{ recipientId: r, amount: priority }] })).body.id);
      const order = async () => (await call('GET', `/admin/split-rules?accountId=${other.accountId}&limit=100`)).body.data.map((x: { id: string; priority: number }) => [x.id, x.priority]);
      const before = await order();
      const rows = await auditRows();
      for (const extra of [{}, { reason: '' }, { reason: '  ' }]) {
        const res = await call('POST', '/admin/split-rules/reorder', { accountId: other.accountId, ruleIds: [...ids].reverse(), ...extra });
        assert.equal(res.status, 400, JSON.stringify(extra));
        assert.equal(res.body.error.code, 'VALIDATION_ERROR');
        assert.equal(res.body.error.param, 'reason', JSON.stringify(res.body));
      }
      assert.deepEqual(await order(), before);
      assert.equal(await auditRows(), rows);
      const ok = await call('POST', '/admin/split-rules/reorder', { accountId: other.accountId, ruleIds: [...ids].reverse(), reason: 'campaign first' });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      const entry = await lastAudit();
      assert.equal(entry.action, 'split_rule.reorder');
      assert.equal(entry.reason, 'campaign first');
    });

    // ------------------------------------------------------------------------------------------
    // Split rules: activate, reorder, preview against real sales

    test('preview answers the rule and the receivables a real sale gets afterwards, to the centavo', async () => {
      const other = await signup(t, 'Preview merchant');
      const s1 = await recipient('Seller', undefined, other.secretKey);
      const s2 = await recipient('Platform', undefined, other.secretKey);
      const preview = async (amount: number, method = 'credit_card') => {
        const res = await call('POST', '/admin/split-rules/preview', { accountId: other.accountId, amount, method });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        return res.body;
      };
      const none = await preview(10_000);
      assert.equal(none.object, 'split_preview');
      assert.equal(none.rule, null);
      assert.equal(none.fee, 438); // 3.99% of R$ 100,00 plus R$ 0,39
      assert.deepEqual(none.receivables, [{ payee: { type: 'merchant', id: other.accountId }, amount: 9562 }]);

      const percentAndFixed = (await call('POST', '/admin/split-rules', {
        accountId: other.accountId, priority: 10, reason: 'deal', conditions: { method: 'credit_card', minAmount: 1000 },
        splits: [{ recipientId: s1, percentage: 33.33 }, { recipientId: s2, amount: 250 }],
      })).body;
      const fixedOnly = (await call('POST', '/admin/split-rules', {
        accountId: other.accountId, priority: 20, reason: 'fallback', splits: [{ recipientId: s2, amount: 100 }],
      })).body;

      const p = await preview(12_345);
      assert.equal(p.rule.id, percentAndFixed.id);
      assert.equal(p.net, 12_345 - p.fee);
      assert.equal(p.receivables.reduce((s: number, r: { amount: number }) => s + r.amount, 0), p.net);
      assert.equal(p.receivables[0].payee.type, 'merchant');
      const sale = await cardSale(12_345, other.secretKey);
      assert.equal(sale.feeAmount, p.fee);
      const got = await receivablesOf(sale.id, other.secretKey);
      assert.deepEqual(asSet(got), asSet(p.receivables), 'preview receivables = the sale\'s');
      assert.ok(got.every((r) => r.splitRuleId === percentAndFixed.id));

      // Conditions: a Pix sale skips the card-only rule.
      assert.equal((await preview(12_345, 'pix')).rule.id, fixedOnly.id);
      // Previewing writes nothing.
      const counts = async () => Promise.all(['payments', 'receivables', 'admin_audit_log', 'idempotency_keys'].map(async (table) => Number((await t.store.db.selectFrom(table as 'payments').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)));
      const before = await counts();
      await preview(5_000);
      assert.deepEqual(await counts(), before);

      // Reorder: the fixed-only rule first, so it applies to the next card sale.
      const reordered = await call('POST', '/admin/split-rules/reorder', { accountId: other.accountId, ruleIds: [fixedOnly.id, percentAndFixed.id], reason: 'fallback first' });
      assert.equal(reordered.status, 200, JSON.stringify(reordered.body));
      assert.deepEqual(reordered.body.data.map((r: { id: string; priority: number }) => [r.id, r.priority]), [[fixedOnly.id, 10], [percentAndFixed.id, 20]]);
      const entry = await lastAudit();
      assert.equal(entry.action, 'split_rule.reorder');
      assert.deepEqual(entry.before.splitRules.map((r: { id: string }) => r.id), [percentAndFixed.id, fixedOnly.id]);
      assert.deepEqual(entry.after.splitRules.map((r: { id: string }) => r.id), [fixedOnly.id, percentAndFixed.id]);
      const p2 = await preview(12_345);
      assert.equal(p2.rule.id, fixedOnly.id);
      const sale2 = await cardSale(12_345, other.secretKey);
      assert.deepEqual(asSet(await receivablesOf(sale2.id, other.secretKey)), asSet(p2.receivables));

      // Deactivate the rule that applies: the other applies again.
      await call('POST', `/admin/split-rules/${fixedOnly.id}/deactivate`, { reason: 'paused' });
      assert.equal((await preview(12_345)).rule.id, percentAndFixed.id);
      // Below the rule's minAmount: no rule.
      assert.equal((await preview(999)).rule, null);
    });

    test('preview before a change: an inactive rule, an edit and a draft, now and after, each equal to a real sale made after the change', async () => {
      const other = await signup(t, 'Preview-after merchant');
      const s1 = await recipient('Seller', undefined, other.secretKey);
      const s2 = await recipient('Platform', undefined, other.secretKey);
      type Line = { payee: { type: string; id: string }; amount: number };
      type Outcome = { rule: { id: string; active: boolean; splits: unknown[] } | null; previewedRuleApplies: boolean; receivables: Line[] };
      const preview = async (extra: Record<string, unknown>, amount = 12_345) => {
        const res = await call('POST', '/admin/split-rules/preview', { accountId: other.accountId, amount, method: 'credit_card', ...extra });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const p = res.body as { net: number; rule: Outcome['rule']; receivables: Line[]; now: Outcome; after: Outcome | null };
        // The old fields are `now`; every outcome adds up to the net value.
        assert.deepEqual({ rule: p.rule, receivables: p.receivables }, { rule: p.now.rule, receivables: p.now.receivables });
        for (const o of [p.now, p.after]) if (o) assert.equal(o.receivables.reduce((sum, r) => sum + r.amount, 0), p.net);
        return p;
      };
      const saleLines = async () => asSet(await receivablesOf((await cardSale(12_345, other.secretKey)).id, other.secretKey));
      const ruleA = (await call('POST', '/admin/split-rules', { accountId: other.accountId, priority: 20, reason: 'base', splits: [{ recipientId: s1, percentage: 10 }] })).body;
      const ruleB = (await call('POST', '/admin/split-rules', { accountId: other.accountId, priority: 10, active: false, conditions: { method: 'credit_card' }, splits: [{ recipientId: s2, amount: 300 }] })).body;
      assert.equal(ruleB.active, false);

      // Nothing to preview: no `after`.
      assert.equal((await preview({})).after, null);

      // An inactive rule, before activating it.
      const counts = async () => Promise.all(['split_rules', 'payments', 'receivables', 'admin_audit_log', 'idempotency_keys'].map(async (table) => Number((await t.store.db.selectFrom(table as 'payments').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)));
      const before = await counts();
      const inactive = await preview({ ruleId: ruleB.id });
      assert.deepEqual(await counts(), before, 'a preview writes nothing');
      assert.equal(inactive.now.rule?.id, ruleA.id);
      assert.equal(inactive.now.previewedRuleApplies, false);
      assert.equal(inactive.after?.rule?.id, ruleB.id);
      assert.equal(inactive.after?.rule?.active, true, 'shown as it would be: active');
      assert.equal(inactive.after?.previewedRuleApplies, true);
      assert.deepEqual((await call('GET', `/admin/split-rules/${ruleB.id}`)).body, ruleB, 'the rule is unchanged');
      assert.deepEqual(await saleLines(), asSet(inactive.now.receivables), 'now = a sale before the change');
      assert.equal((await call('POST', `/admin/split-rules/${ruleB.id}/activate`, { reason: 'go' })).status, 200);
      assert.deepEqual(await saleLines(), asSet(inactive.after.receivables), 'after = a sale after activating');

      // An edit of the active rule, before saving it: its new share applies...
      const edit = { splits: [{ recipientId: s2, percentage: 12.34 }], description: 'renegotiated' };
      const edited = await preview({ ruleId: ruleB.id, rule: edit });
      assert.equal(edited.now.rule?.id, ruleB.id);
      assert.equal(edited.now.previewedRuleApplies, true);
      assert.equal(edited.after?.rule?.id, ruleB.id);
      assert.deepEqual(edited.after?.rule?.splits, [{ type: 'percentage', recipientId: s2, percentage: 12.34 }]);
      assert.notDeepEqual(asSet(edited.after.receivables), asSet(edited.now.receivables));
      // ...and an edit whose conditions no longer match hands the sale to the next rule.
      const narrowed = await preview({ ruleId: ruleB.id, rule: { conditions: { minAmount: 20_000 } } });
      assert.equal(narrowed.after?.rule?.id, ruleA.id);
      assert.equal(narrowed.after?.previewedRuleApplies, false);
      assert.equal((await call('PATCH', `/admin/split-rules/${ruleB.id}`, { ...edit, reason: 'new deal' })).status, 200);
      assert.deepEqual(await saleLines(), asSet(edited.after.receivables), 'after = a sale after saving the edit');

      // A draft, before creating it: first by priority, it applies.
      const draft = { priority: 5, conditions: null, splits: [{ recipientId: s1, amount: 777 }, { recipientId: s2, percentage: 1.5 }] };
      const drafted = await preview({ rule: draft });
      assert.equal(drafted.now.rule?.id, ruleB.id);
      assert.equal(drafted.after?.rule, null, 'a draft has no id yet');
      assert.equal(drafted.after?.previewedRuleApplies, true);
      const created = await call('POST', '/admin/split-rules', { accountId: other.accountId, ...draft, conditions: undefined, reason: 'draft saved' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.deepEqual(await saleLines(), asSet(drafted.after.receivables), 'after = a sale after creating the draft');
      // A second draft of the same priority comes after the rule created first, as a save would.
      const tie = await preview({ rule: { priority: 5, splits: [{ recipientId: s2, amount: 1 }] } });
      assert.equal(tie.after?.rule?.id, created.body.id);
      assert.equal(tie.after?.previewedRuleApplies, false);
      // The viewer may preview a change too.
      assert.equal((await call('POST', '/admin/split-rules/preview', { accountId: other.accountId, amount: 100, method: 'pix', rule: draft }, viewer)).status, 200);

      // The previewed rule is checked as a save checks it; the error names the field.
      for (const [extra, param] of [
        [{ ruleId: 'spr_nope' }, 'ruleId'],
        [{ ruleId: ruleA.id, livemode: true }, 'livemode'],
        [{ rule: { splits: [{ recipientId: s1, amount: 1 }] } }, 'rule.priority'],
        [{ rule: { priority: 1 } }, 'rule.splits'],
        [{ rule: { priority: 1, splits: [{ recipientId: s1, amount: 1, percentage: 1 }] } }, 'rule.splits[0]'],
        [{ rule: { priority: 1, splits: [{ recipientId: seller, amount: 1 }] } }, 'rule.splits[0].recipientId'],
        [{ rule: { priority: 1, splits: [{ recipientId: s1, amount: 1 }, { recipientId: s1, amount: 2 }] } }, 'rule.splits[1].recipientId'],
        [{ ruleId: ruleA.id, rule: { splits: [{ recipientId: s1, percentage: 60 }, { recipientId: s2, percentage: 50 }] } }, 'rule.splits'],
        [{ rule: { priority: 1, splits: [{ recipientId: s1, amount: 1 }], colour: 'red' } }, 'rule.colour'],
      ] as const) {
        const res = await call('POST', '/admin/split-rules/preview', { accountId: other.accountId, amount: 100, method: 'pix', ...extra });
        assert.equal(res.status, 400, `${JSON.stringify(extra)}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.error.param, param, `${JSON.stringify(extra)}: ${JSON.stringify(res.body)}`);
      }
      // A rule of another account is not this account's.
      assert.equal((await call('POST', '/admin/split-rules/preview', { accountId: k.accountId, amount: 100, method: 'pix', ruleId: ruleA.id })).body.error.param, 'ruleId');
    });

    test('reorder refuses a partial, duplicated or foreign list, and changes nothing', async () => {
      const a = await newRule({ priority: 600, splits: [{ recipientId: seller, amount: 1 }], active: false });
      const all = (await call('GET', `/admin/split-rules?accountId=${k.accountId}&livemode=false&limit=100`)).body.data.map((r: { id: string }) => r.id);
      const cases: Array<[unknown, string]> = [
        [{ accountId: k.accountId, ruleIds: [a.id] }, 'ruleIds'],
        [{ accountId: k.accountId, ruleIds: [...all, all[0]] }, 'ruleIds'],
        [{ accountId: k.accountId, ruleIds: [...all.slice(1), 'spr_foreign'] }, `ruleIds[${all.length - 1}]`],
        [{ accountId: 'acct_nope', ruleIds: all }, 'accountId'],
      ];
      const before = (await call('GET', `/admin/split-rules?accountId=${k.accountId}&limit=100`)).body.data;
      for (const [body, param] of cases) {
        const res = await call('POST', '/admin/split-rules/reorder', { ...(body as object), reason: 'refused anyway' });
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.equal(res.body.error.param, param);
      }
      assert.deepEqual((await call('GET', `/admin/split-rules?accountId=${k.accountId}&limit=100`)).body.data, before);
    });

    test('preview refuses an unknown account and bad amounts', async () => {
      for (const [body, param] of [
        [{ accountId: 'acct_nope', amount: 100, method: 'pix' }, 'accountId'],
        [{ accountId: k.accountId, amount: 0, method: 'pix' }, 'amount'],
        [{ accountId: k.accountId, amount: 10.5, method: 'pix' }, 'amount'],
        [{ accountId: k.accountId, amount: 100, method: 'boleto' }, 'method'],
      ] as const) {
        const res = await call('POST', '/admin/split-rules/preview', body);
        assert.equal(res.status, 400);
        assert.equal(res.body.error.param, param);
      }
      const noCsrf = await t.app.inject({ method: 'POST', url: '/admin/split-rules/preview', headers: { cookie: admin.cookie }, payload: { accountId: k.accountId, amount: 100, method: 'pix' } });
      assert.equal(noCsrf.statusCode, 403);
    });

    test('GET /admin from a browser goes to the back office; an API client keeps the JSON 404', async () => {
      const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
      for (const url of ['/admin', '/admin/']) {
        const res = await t.app.inject({ method: 'GET', url, headers: { accept: browserAccept } });
        assert.equal(res.statusCode, 303, url);
        assert.equal(res.headers.location, '/backoffice/', url);
      }
      for (const accept of [undefined, '*/*', 'application/json', 'application/json, text/html;q=0.5', 'text/html;q=0']) {
        const res = await t.app.inject({ method: 'GET', url: '/admin', headers: accept === undefined ? {} : { accept } });
        assert.equal(res.statusCode, 404, String(accept));
        assert.match(String(res.headers['content-type']), /^application\/json/);
        assert.equal(res.json().error.code, 'NOT_FOUND', String(accept));
        assert.equal(res.json().error.correlationId, res.headers['x-correlation-id']);
      }
      // Only /admin itself: an unknown admin path stays a 404 for a browser too.
      assert.equal((await t.app.inject({ method: 'GET', url: '/admin/nothing-here', headers: { accept: browserAccept } })).statusCode, 404);
    });

    // ------------------------------------------------------------------------------------------
    // Read views

    test('accounts: search by id, name part or email part, case-insensitive; wildcards are literal', async () => {
      const name = `Padaria Pão_Quente ${engine} ${Date.now()}`;
      const m = await signup(t, name);
      const search = async (q: string) => (await call('GET', `/admin/accounts?limit=100&search=${encodeURIComponent(q)}`)).body.data.map((a: { id: string }) => a.id);
      assert.deepEqual(await search(m.accountId), [m.accountId]);
      assert.ok((await search('pão_quente')).includes(m.accountId));
      assert.ok((await search('PADARIA PÃO')).includes(m.accountId));
      assert.ok(!(await search('pão%quente')).includes(m.accountId), '% is not a wildcard');
      assert.ok(!(await search('Pão_Qu_nte')).includes(m.accountId), '_ is not a wildcard');
    });

    test('account API keys: display prefixes only, never the secret', async () => {
      const res = await call('GET', `/admin/accounts/${k.accountId}/api-keys`);
      assert.equal(res.status, 200);
      const text = JSON.stringify(res.body);
      assert.ok(!text.includes(k.secretKey) && !text.includes(k.publishableKey), 'no key in the answer');
      assert.deepEqual(res.body.data.map((key: { kind: string }) => key.kind).sort(), ['publishable', 'secret']);
      for (const key of res.body.data) assert.match(key.display, /^(sk|pk)_test_…[A-Za-z0-9]{4}$/);
      assert.equal((await call('GET', '/admin/accounts/acct_nope/api-keys')).status, 404);
    });

    test('account recipients: read-only, documents masked', async () => {
      const res = await call('GET', `/admin/accounts/${k.accountId}/recipients`, undefined, viewer);
      assert.equal(res.status, 200);
      assert.ok(res.body.data.length >= 2);
      for (const r of res.body.data) {
        assert.equal(r.document, '11.***.***/****-81');
        assert.equal(r.object, 'recipient');
      }
      assert.ok(!JSON.stringify(res.body).includes('11222333000181'));
      assert.equal((await call('GET', '/admin/accounts/acct_nope/recipients')).status, 404);
    });

    test('payments: search by id, account, status, date; detail with receivables, refunds and events', async () => {
      const m = await signup(t, 'Payments merchant');
      const pix = await api('POST', '/v1/payments', { amount: 2000, method: 'pix' }, m.secretKey);
      await api('POST', `/v1/sandbox/payments/${pix.body.id}/pay`, undefined, m.secretKey);
      const refund = await api('POST', '/v1/refunds', { paymentId: pix.body.id, amount: 500 }, m.secretKey);
      assert.equal(refund.status, 200, JSON.stringify(refund.body));
      const pending = await api('POST', '/v1/payments', { amount: 3000, method: 'pix' }, m.secretKey);

      const search = async (q: string) => (await call('GET', `/admin/payments?${q}`, undefined, viewer)).body.data.map((p: { id: string }) => p.id);
      assert.deepEqual(await search(`accountId=${m.accountId}`), [pending.body.id, pix.body.id]);
      assert.deepEqual(await search(`id=${pix.body.id}`), [pix.body.id]);
      assert.deepEqual(await search(`accountId=${m.accountId}&status=pending`), [pending.body.id]);
      assert.deepEqual(await search(`accountId=${m.accountId}&createdGte=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`), []);
      assert.equal((await call('GET', '/admin/payments?status=paid')).status, 400);

      const detail = (await call('GET', `/admin/payments/${pix.body.id}`, undefined, viewer)).body;
      assert.equal(detail.object, 'payment');
      assert.equal(detail.accountId, m.accountId);
      // Merchants are named, not only shown by id (issue 29).
      assert.equal(detail.accountName, 'Payments merchant');
      const listed = (await call('GET', `/admin/payments?accountId=${m.accountId}`, undefined, viewer)).body.data;
      assert.deepEqual(listed.map((p: { accountName: string }) => p.accountName), ['Payments merchant', 'Payments merchant']);
      assert.ok(detail.receivables.length >= 1);
      assert.equal(detail.receivables[0].paymentId, pix.body.id);
      await drain(t);
      assert.equal((await call('GET', `/admin/payments/${pix.body.id}`)).body.refunds.length, 1, 'refund listed');
      const types = (await call('GET', `/admin/payments/${pix.body.id}`)).body.events.map((e: { type: string }) => e.type);
      for (const type of ['payment.created', 'payment.approved', 'receivable.created', 'refund.created']) assert.ok(types.includes(type), `${type} in ${types.join()}`);
      assert.equal((await call('GET', '/admin/payments/pay_nope')).status, 404);
    });

    test('disputes: a viewer reads the list; unknown filters and values are refused (the list with real chargebacks: card-disputes.test.ts)', async () => {
      const m = await signup(t, 'Disputes merchant');
      const listed = await call('GET', `/admin/disputes?accountId=${m.accountId}&status=needs_response&kind=card_chargeback&livemode=true`, undefined, viewer);
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      assert.deepEqual(listed.body, { object: 'list', data: [], hasMore: false });
      assert.equal((await call('GET', '/admin/disputes?status=open')).status, 400);
      assert.equal((await call('GET', '/admin/disputes?kind=boleto')).status, 400);
      assert.equal((await call('GET', '/admin/disputes?who=me')).status, 400);
      assert.equal((await call('GET', '/admin/disputes?startingAfter=dp_nope')).status, 400);
    });

    test('settlement runs: the run\'s settlements per payee, failed payouts listed; a repeated key starts no second run', async () => {
      const m = await signup(t, 'Settlement merchant');
      const closed = await recipient('Closed account LTDA', SANDBOX_FAILING_ACCOUNT, m.secretKey);
      const fine = await recipient('Open account LTDA', undefined, m.secretKey);
      const rule = await call('POST', '/admin/split-rules', { accountId: m.accountId, priority: 1, reason: 'split', splits: [{ recipientId: closed, percentage: 10 }, { recipientId: fine, percentage: 20 }] });
      assert.equal(rule.status, 200);
      const pix = await api('POST', '/v1/payments', { amount: 10_000, method: 'pix' }, m.secretKey);
      await api('POST', `/v1/sandbox/payments/${pix.body.id}/pay`, undefined, m.secretKey);

      const key = { 'idempotency-key': `run-${engine}-${Date.now()}` };
      const run = await call('POST', '/admin/settlement-runs', { reason: 'end of day' }, admin, key);
      assert.equal(run.status, 200, JSON.stringify(run.body));
      const runs = async () => Number((await t.store.db.selectFrom('settlement_runs').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      const before = await runs();
      const replay = await call('POST', '/admin/settlement-runs', { reason: 'end of day' }, admin, key);
      assert.equal(replay.status, 200);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body.id, run.body.id);
      assert.equal(await runs(), before, 'the replay started no run');

      const entry = (await call('GET', `/admin/audit-log?objectId=${run.body.id}`)).body.data;
      assert.equal(entry.length, 1);
      assert.equal(entry[0].reason, 'end of day');

      // A worker carries the run out.
      await drain(t);
      assert.equal((await call('GET', `/admin/settlement-runs/${run.body.id}`)).body.status, 'completed', 'the run completed');
      const settlements = (await call('GET', `/admin/settlement-runs/${run.body.id}/settlements?limit=100`, undefined, viewer)).body.data
        .filter((x: { accountId: string }) => x.accountId === m.accountId);
      assert.deepEqual(settlements.map((x: { payee: { id: string } }) => x.payee.id).sort(), [closed, fine, m.accountId].sort());
      assert.ok(settlements.every((x: { accountName: string }) => x.accountName === 'Settlement merchant'));
      const searched = (await call('GET', `/admin/settlements?accountId=${m.accountId}`, undefined, viewer)).body.data;
      assert.ok(searched.length === 3 && searched.every((x: { accountName: string }) => x.accountName === 'Settlement merchant'), JSON.stringify(searched));
      // The audit log names the merchant of a rule; a run belongs to no account.
      const ruleEntry = (await call('GET', `/admin/audit-log?objectId=${rule.body.id}`)).body.data[0];
      assert.deepEqual([ruleEntry.accountId, ruleEntry.accountName], [m.accountId, 'Settlement merchant']);
      assert.deepEqual([entry[0].accountId, entry[0].accountName], [null, null]);
      const failed = (await call('GET', `/admin/settlement-runs/${run.body.id}/settlements?status=failed`)).body.data;
      assert.ok(failed.some((x: { payee: { id: string }; failureReason: string | null }) => x.payee.id === closed && x.failureReason), 'the closed account\'s payout failed');
      // The merchant has no payout bank account yet: its own settlement is held.
      const held = (await call('GET', `/admin/settlement-runs/${run.body.id}/settlements?status=held&limit=100`)).body.data;
      assert.deepEqual(held.filter((x: { accountId: string }) => x.accountId === m.accountId).map((x: { payee: { id: string }; holdReason: string }) => `${x.payee.id}:${x.holdReason}`), [`${m.accountId}:no_payout_bank_account`]);
      assert.equal((await call('GET', '/admin/settlement-runs/str_nope/settlements')).status, 404);

      // The daily statement (issue 26), for an operator: a second sale and run pay the open
      // account's recipient again, so its statement holds two settlements paid today.
      const pix2 = await api('POST', '/v1/payments', { amount: 5_000, method: 'pix' }, m.secretKey);
      await api('POST', `/v1/sandbox/payments/${pix2.body.id}/pay`, undefined, m.secretKey);
      assert.equal((await call('POST', '/admin/settlement-runs', { reason: 'second run' })).status, 200);
      await drain(t);
      const paid = (await call('GET', `/admin/settlements?accountId=${m.accountId}&status=paid&payeeType=recipient&limit=100`)).body.data
        .filter((x: { payee: { id: string } }) => x.payee.id === fine) as Array<{ id: string; amount: number; paidAt: string }>;
      assert.equal(paid.length, 2, JSON.stringify(paid));
      // The sandbox pays without a Pix end-to-end id; record the one a PSP reports (the real
      // path, through the fake Efí, is pix-payouts.test.ts) so the statement has one to show.
      const e2e = paid.map((x, i) => `E09089356${x.paidAt.slice(0, 10).replaceAll('-', '')}1300walk${engine.slice(0, 2)}${i}`.padEnd(32, '0'));
      await t.store.write(async (tx) => {
        for (const [i, x] of paid.entries()) await tx.updateTable('settlements').set({ payout_e2eid: e2e[i] }).where('id', '=', x.id).execute();
      });
      const day = localDate(Date.parse(paid[0].paidAt));
      const statement = await call('GET', `/admin/settlements/daily-statement?accountId=${m.accountId}&recipientId=${fine}&date=${day}`, undefined, viewer);
      assert.equal(statement.status, 200, JSON.stringify(statement.body));
      assert.equal(statement.body.object, 'daily_statement');
      assert.deepEqual([statement.body.date, statement.body.payee, statement.body.livemode], [day, { type: 'recipient', id: fine }, false]);
      const byId = new Map(paid.map((x, i) => [x.id, { amount: x.amount, endToEndId: e2e[i] }]));
      assert.deepEqual(
        statement.body.data.map((i: { settlementId: string; amount: number; endToEndId: string }) => [i.settlementId, i.amount, i.endToEndId]).sort(),
        [...byId].map(([id, x]) => [id, x.amount, x.endToEndId]).sort(),
      );
      assert.equal(statement.body.count, 2);
      assert.equal(statement.body.total, paid[0].amount + paid[1].amount, 'the total is the sum of the settlements paid');
      // The same answer the merchant gets from its own API.
      const merchant = await api('GET', `/v1/settlements/daily-statement?recipientId=${fine}&date=${day}`, undefined, m.secretKey);
      assert.deepEqual(statement.body, merchant.body);
      // The failed payout is not in its payee's statement; the merchant's own (held) is empty; live mode too.
      assert.equal((await call('GET', `/admin/settlements/daily-statement?accountId=${m.accountId}&recipientId=${closed}&date=${day}`)).body.count, 0);
      const own = (await call('GET', `/admin/settlements/daily-statement?accountId=${m.accountId}&date=${day}`)).body;
      assert.deepEqual([own.payee, own.count, own.total], [{ type: 'merchant', id: m.accountId }, 0, 0]);
      assert.equal((await call('GET', `/admin/settlements/daily-statement?accountId=${m.accountId}&recipientId=${fine}&date=${day}&livemode=true`)).status, 400, 'the recipient is a test-mode one');
      // Bad input: an unknown account, another account's recipient, a bad date and a missing account are VALIDATION_ERROR naming the parameter (a query names no resource: no 404).
      const nobody = await call('GET', '/admin/settlements/daily-statement?accountId=acct_nope');
      assert.deepEqual([nobody.status, nobody.body.error.code, nobody.body.error.param], [400, 'VALIDATION_ERROR', 'accountId']);
      const stranger = await call('GET', `/admin/settlements/daily-statement?accountId=${m.accountId}&recipientId=${seller}`);
      assert.deepEqual([stranger.status, stranger.body.error.code, stranger.body.error.param], [400, 'VALIDATION_ERROR', 'recipientId']);
      assert.equal((await call('GET', `/admin/settlements/daily-statement?accountId=${m.accountId}&date=2026-13-40`)).body.error.param, 'date');
      assert.equal((await call('GET', '/admin/settlements/daily-statement')).status, 400);
    });
  });
}

describe('back office files', () => {
  test('served from the build with their types; a missing build is a 503 that says how to build it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'backoffice-dist-'));
    const serve = async (folder: string) => {
      const app = Fastify();
      registerErrorHandling(app);
      backofficeRoutes(app, { dir: folder });
      await app.ready();
      return app;
    };
    try {
      const missing = await serve(join(dir, 'none'));
      const res = await missing.inject({ method: 'GET', url: '/backoffice/accounts' });
      assert.equal(res.statusCode, 503);
      assert.equal(res.json().error.code, 'SERVICE_UNAVAILABLE');
      assert.match(res.json().error.message, /npm run build -w apps\/backoffice/);
      await missing.close();

      mkdirSync(join(dir, 'assets'));
      writeFileSync(join(dir, 'index.html'), '<!doctype html><title>x</title>');
      writeFileSync(join(dir, 'assets', 'app-1.js'), 'export {}');
      const app = await serve(dir);
      const page = await app.inject({ method: 'GET', url: '/backoffice/payments/pay_1?x=1' });
      assert.equal(page.statusCode, 200);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.match(String(page.headers['content-security-policy']), /script-src 'self';/);
      assert.equal(page.headers['cache-control'], 'no-cache');
      const js = await app.inject({ method: 'GET', url: '/backoffice/assets/app-1.js' });
      assert.match(String(js.headers['content-type']), /^text\/javascript/);
      assert.match(String(js.headers['cache-control']), /immutable/);
      const again = await app.inject({ method: 'GET', url: '/backoffice/assets/app-1.js', headers: { 'if-none-match': String(js.headers.etag) } });
      assert.equal(again.statusCode, 304);
      assert.equal((await app.inject({ method: 'GET', url: '/backoffice/assets/other.js' })).statusCode, 404);
      const badUrl = (await app.inject({ method: 'GET', url: '/backoffice/%E0%A4%A.js' })).statusCode;
      assert.ok(badUrl >= 400 && badUrl < 500, `malformed path: ${badUrl}`);
      const bare = await app.inject({ method: 'GET', url: '/backoffice' });
      assert.equal(bare.statusCode, 302);
      assert.equal(bare.headers.location, '/backoffice/');
      await app.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

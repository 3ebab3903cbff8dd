import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, startApp, signup, auth, adminSession, type TestApp, type Keys } from './helpers.js';
import { selfSignedCert, toPkcs12, type TestCert } from './connector-certs.js';
import { createKey } from '../src/modules/accounts/service.js';
import { newMasterKey, open, parseKeyring, seal } from '../src/providers/secrets/envelope.js';
import { rewrapAll } from '../src/providers/secrets/rewrap.js';

// Connector accounts (issue 25, the seam): the admin API, secrets sealed at rest and never
// returned, master key rotation, and live mode refusing without a production connector.

const K1 = newMasterKey('k1');
const K2 = newMasterKey('k2');
const SECRET = 'client-secret-' + 'x'.repeat(24);

describe('envelope encryption', () => {
  test('seals, opens, is bound to its owner, and rewraps under a new key', () => {
    const ring1 = parseKeyring(K1)!;
    const blob = seal(ring1, 'cna_a', { clientSecret: SECRET });
    assert.ok(!blob.includes(SECRET));
    assert.deepEqual(open(ring1, 'cna_a', blob), { clientSecret: SECRET });
    assert.throws(() => open(ring1, 'cna_b', blob), /does not decrypt/);
    assert.throws(() => open(parseKeyring(K2)!, 'cna_a', blob), /k1 .* not in MASTER_KEYS/);
    assert.throws(() => parseKeyring('k1:short'), /32 random bytes/);
  });
});

for (const engine of ENGINES) {
  describe(`connector accounts (${engine})`, () => {
    let t: TestApp;
    let k: Keys;
    let admin: { cookie: string; csrf: string };
    let viewer: { cookie: string; csrf: string };
    let cert: TestCert;

    before(async () => {
      t = await startApp(engine, { masterKeys: parseKeyring(K1), publicUrl: 'https://pay.example.com' });
      k = await signup(t);
      admin = await adminSession(t);
      viewer = await adminSession(t, 'viewer');
      cert = selfSignedCert();
    });
    after(() => t.teardown());

    const call = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: object, s = admin) =>
      t.app.inject({ method, url, headers: { cookie: s.cookie, ...(method === 'GET' ? {} : { 'x-csrf-token': s.csrf }) }, ...(body ? { payload: body } : {}) });

    const base = () => ({
      name: 'Efí produção', connector: 'pix_api', dialect: 'efi', method: 'pix', environment: 'production',
      baseUrl: 'https://127.0.0.1:9/psp', pixKey: 'pix@loja.example', clientId: 'Client_Id_abc', clientSecret: SECRET,
      certificatePem: cert.certificatePem, privateKeyPem: cert.privateKeyPem, timeoutMs: 500, reason: 'going live (ticket 7)',
    });

    test('create, read masked, update, rotate, disable: each with a reason and an audit row, no secret anywhere', async () => {
      const noReason = await call('POST', '/admin/connector-accounts', { ...base(), reason: undefined });
      assert.equal(noReason.statusCode, 400, noReason.body);
      const denied = await call('POST', '/admin/connector-accounts', base(), viewer);
      assert.equal(denied.statusCode, 403);
      assert.equal(denied.json().error.code, 'PERMISSION_DENIED');

      const created = await call('POST', '/admin/connector-accounts', base());
      assert.equal(created.statusCode, 200, created.body);
      const ca = created.json();
      assert.match(ca.id, /^cna_/);
      assert.equal(ca.secrets.clientSecret, 'set');
      assert.equal(ca.secrets.masterKeyId, 'k1');
      assert.equal(ca.certificate.subject, 'CN=pagamentos-test-client');
      assert.equal(ca.certificate.expiresSoon, true, 'a 2-day certificate expires within 30 days');
      const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
      assert.match(metrics.body, new RegExp(`^connector_certificate_expires_in_days\\{connector_account="${ca.id}"\\} [01]$`, 'm'), 'the expiry on /metrics');
      for (const body of [created.body, (await call('GET', `/admin/connector-accounts/${ca.id}`, undefined, viewer)).body, (await call('GET', '/admin/connector-accounts', undefined, viewer)).body]) {
        assert.ok(!body.includes(SECRET) && !body.includes('PRIVATE KEY') && !body.includes('BEGIN CERTIFICATE'), 'no secret in an answer');
      }
      const row = await t.store.db.selectFrom('connector_accounts').selectAll().where('id', '=', ca.id).executeTakeFirstOrThrow();
      assert.ok(!row.secrets.includes(SECRET) && !row.secrets.includes('PRIVATE KEY'), 'sealed at rest');

      const updated = await call('PATCH', `/admin/connector-accounts/${ca.id}`, { timeoutMs: 800, reason: 'slower PSP' });
      assert.equal(updated.statusCode, 200, updated.body);
      assert.equal(updated.json().timeoutMs, 800);

      const cert2 = selfSignedCert('second');
      const rotated = await call('POST', `/admin/connector-accounts/${ca.id}/rotate`, { clientSecret: SECRET + '2', certificatePem: cert2.certificatePem, privateKeyPem: cert2.privateKeyPem, reason: 'yearly rotation' });
      assert.equal(rotated.statusCode, 200, rotated.body);
      assert.equal(rotated.json().certificate.subject, 'CN=second');
      const wrongKey = await call('POST', `/admin/connector-accounts/${ca.id}/rotate`, { certificatePem: cert2.certificatePem, privateKeyPem: cert.privateKeyPem, reason: 'oops' });
      assert.equal(wrongKey.statusCode, 400);
      assert.equal(wrongKey.json().error.param, 'privateKeyPem');

      const disabled = await call('POST', `/admin/connector-accounts/${ca.id}/disable`, { reason: 'moving PSP' });
      assert.equal(disabled.statusCode, 200);
      assert.equal(disabled.json().status, 'disabled');
      assert.equal((await call('PATCH', `/admin/connector-accounts/${ca.id}`, { name: 'x', reason: 'r' })).statusCode, 409);

      const audit = await t.store.db.selectFrom('admin_audit_log').selectAll().where('object_id', '=', ca.id).orderBy('created_at').execute();
      assert.deepEqual(audit.map((a) => a.action), ['connector_account.create', 'connector_account.update', 'connector_account.rotate', 'connector_account.disable']);
      for (const a of audit) assert.ok(!`${a.before}${a.after}`.includes(SECRET) && !`${a.before}${a.after}`.includes('PRIVATE KEY'));
    });

    test('a PKCS#12 file (legacy algorithms too) is converted to PEM on upload', async () => {
      const p12 = toPkcs12(cert, 'senha', true);
      const created = await call('POST', '/admin/connector-accounts', { ...base(), environment: 'homologation', certificatePem: undefined, privateKeyPem: undefined, pkcs12Base64: p12, pkcs12Password: 'senha' });
      assert.equal(created.statusCode, 200, created.body);
      assert.equal(created.json().certificate.subject, 'CN=pagamentos-test-client');
      const wrong = await call('POST', '/admin/connector-accounts', { ...base(), certificatePem: undefined, privateKeyPem: undefined, pkcs12Base64: p12, pkcs12Password: 'errada' });
      assert.equal(wrong.statusCode, 400);
      assert.equal(wrong.json().error.param, 'pkcs12Base64');
      await call('POST', `/admin/connector-accounts/${created.json().id}/disable`, { reason: 'test done' });
    });

    test('a new master key first, the old one kept: rewrap moves every account to it', async () => {
      const created = (await call('POST', '/admin/connector-accounts', { ...base(), environment: 'homologation' })).json();
      const ring = parseKeyring(`${K2},${K1}`)!;
      const { rewrapped } = await rewrapAll(t.store, ring);
      assert.ok(rewrapped >= 1);
      const row = await t.store.db.selectFrom('connector_accounts').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
      assert.equal(row.secrets_key_id, 'k2');
      assert.equal(open(parseKeyring(K2)!, row.id, row.secrets).clientSecret, SECRET, 'readable with the new key alone');
      assert.equal((await rewrapAll(t.store, ring)).rewrapped, 0, 'a second run has nothing to do');
      await call('POST', `/admin/connector-accounts/${created.id}/disable`, { reason: 'test done' });
    });

    test('listed per merchant: its own and the platform\'s; `platform` lists only the platform\'s', async () => {
      const other = await signup(t, 'Outra loja');
      const mine = (await call('POST', '/admin/connector-accounts', { ...base(), environment: 'homologation', name: 'Do lojista', ownerAccountId: k.accountId })).json();
      const theirs = (await call('POST', '/admin/connector-accounts', { ...base(), environment: 'homologation', name: 'Do outro', ownerAccountId: other.accountId })).json();
      const platform = (await call('POST', '/admin/connector-accounts', { ...base(), environment: 'homologation', name: 'Da plataforma' })).json();
      const ids = async (query: string) => ((await call('GET', `/admin/connector-accounts?limit=100&${query}`, undefined, viewer)).json().data as Array<{ id: string }>).map((c) => c.id);
      const forMerchant = await ids(`ownerAccountId=${k.accountId}`);
      assert.ok(forMerchant.includes(mine.id) && forMerchant.includes(platform.id) && !forMerchant.includes(theirs.id));
      const platformOnly = await ids('ownerAccountId=platform');
      assert.ok(platformOnly.includes(platform.id) && !platformOnly.includes(mine.id) && !platformOnly.includes(theirs.id));
      assert.equal((await call('GET', '/admin/connector-accounts?ownerAccountId=x%27%20or%201=1', undefined, viewer)).statusCode, 400);
      for (const c of [mine, theirs, platform]) await call('POST', `/admin/connector-accounts/${c.id}/disable`, { reason: 'test done' });
    });

    test('live mode without a production connector refuses, and writes nothing; never the sandbox', async () => {
      await t.store.write((tx) => tx.updateTable('accounts').set({ live_enabled: 1 }).where('id', '=', k.accountId).execute());
      const live = await createKey(t.store, k.accountId, 'secret', true);
      const count = async () => Number((await t.store.db.selectFrom('payments').select((eb) => eb.fn.countAll().as('n')).where('livemode', '=', 1).executeTakeFirstOrThrow()).n);
      const pix = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(live.key, { 'idempotency-key': 'live-pix-1' }), payload: { amount: 1050, method: 'pix' } });
      assert.equal(pix.statusCode, 422, pix.body);
      assert.equal(pix.json().error.code, 'UNPROCESSABLE');
      assert.match(pix.json().error.message, /production Pix connector/);
      const card = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(live.key), payload: { amount: 1050, method: 'credit_card', cardToken: 'tok_declined' } });
      assert.equal(card.statusCode, 400, 'sandbox tokens are refused in live mode');
      assert.equal(card.json().error.param, 'cardToken');
      const realCard = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(live.key), payload: { amount: 1050, method: 'credit_card', cardToken: 'tok_' + 'a'.repeat(26) } });
      assert.equal(realCard.statusCode, 422, 'no card connector yet: live cards are refused');
      assert.match(realCard.json().error.message, /card connector/);
      assert.equal(await count(), 0);

      // A production connector whose PSP does not answer: 503 with Retry-After, nothing stored,
      // and the key is free for the retry.
      const ca = (await call('POST', '/admin/connector-accounts', { ...base(), ownerAccountId: k.accountId })).json();
      const down = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(live.key, { 'idempotency-key': 'live-pix-2' }), payload: { amount: 1050, method: 'pix' } });
      assert.equal(down.statusCode, 503, down.body);
      assert.equal(down.json().error.code, 'PROVIDER_UNAVAILABLE');
      assert.ok(Number(down.headers['retry-after']) > 0);
      assert.equal(await count(), 0);
      assert.equal(Number((await t.store.db.selectFrom('idempotency_keys').select((eb) => eb.fn.countAll().as('n')).where('key', '=', 'live-pix-2').executeTakeFirstOrThrow()).n), 0);
      await call('POST', `/admin/connector-accounts/${ca.id}/disable`, { reason: 'test done' });
    });
  });

  describe(`connector accounts without MASTER_KEYS (${engine})`, () => {
    test('cannot be created: the envelope says why', async () => {
      const t = await startApp(engine, { masterKeys: null });
      try {
        const s = await adminSession(t);
        const cert = selfSignedCert();
        const res = await t.app.inject({ method: 'POST', url: '/admin/connector-accounts', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf }, payload: {
          name: 'x', connector: 'pix_api', dialect: 'standard', method: 'pix', environment: 'production', baseUrl: 'https://127.0.0.1:9', pixKey: 'k', clientId: 'c', clientSecret: 's', ...cert, reason: 'r',
        } });
        assert.equal(res.statusCode, 422, res.body);
        assert.match(res.json().error.message, /MASTER_KEYS/);
        assert.equal((await t.store.db.selectFrom('connector_accounts').selectAll().execute()).length, 0);
      } finally {
        await t.teardown();
      }
    });
  });
}

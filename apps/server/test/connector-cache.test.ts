import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, startManualApp, signup, auth, adminSession, type ManualApp, type Keys } from './helpers.js';
import { selfSignedCert } from './connector-certs.js';
import { createKey } from '../src/modules/accounts/service.js';
import { newMasterKey, parseKeyring } from '../src/providers/secrets/envelope.js';

// Which connector account serves a payment is cached for CONNECTOR_CACHE_TTL_MS (issue 30: the
// lookup was a round trip on every POST /v1/payments). Seen through the API: a live Pix payment
// with no production Pix account is refused (422); with one whose PSP does not answer, 503.
// A change through this process's back office is seen at once; one made elsewhere (here: the
// store written directly, as another instance or the CLI would) only once the TTL has passed.

const TTL_MS = 1000;

for (const engine of ENGINES) {
  describe(`connector account cache (${engine})`, () => {
    let t: ManualApp;
    let k: Keys;
    let live: string;
    let admin: { cookie: string; csrf: string };
    let n = 0;

    before(async () => {
      t = await startManualApp(engine, { masterKeys: parseKeyring(newMasterKey('cache')), connectorCacheTtlMs: TTL_MS });
      k = await signup(t);
      admin = await adminSession(t);
      await t.store.write((tx) => tx.updateTable('accounts').set({ live_enabled: 1 }).where('id', '=', k.accountId).execute());
      live = (await createKey(t.store, k.accountId, 'secret', true)).key;
    });
    after(() => t.teardown());

    const livePix = async () => (await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(live, { 'idempotency-key': `cache-${n++}` }), payload: { amount: 1050, method: 'pix' } })).statusCode;
    const call = (method: 'POST', url: string, body: object) =>
      t.app.inject({ method, url, headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf }, payload: body });

    test('a back-office change is seen at once; a change made elsewhere within the TTL, not before', async () => {
      assert.equal(await livePix(), 422, 'no production Pix account: refused (and "none" is now cached)');

      const cert = selfSignedCert();
      const created = await call('POST', '/admin/connector-accounts', {
        name: 'Efí produção', connector: 'pix_api', dialect: 'efi', method: 'pix', environment: 'production',
        baseUrl: 'https://127.0.0.1:9/psp', pixKey: 'pix@loja.example', clientId: 'Client_Id_abc', clientSecret: 'client-secret-' + 'x'.repeat(24),
        certificatePem: cert.certificatePem, privateKeyPem: cert.privateKeyPem, timeoutMs: 200, reason: 'going live',
      });
      assert.equal(created.statusCode, 200, created.body);
      assert.equal(await livePix(), 503, 'the new account serves at once (its PSP does not answer)');

      // Disabled behind this process's back: the cached account still serves until the TTL ends.
      await t.store.write((tx) => tx.updateTable('connector_accounts').set({ status: 'disabled' }).where('id', '=', created.json().id).execute());
      assert.equal(await livePix(), 503, 'within the TTL: the cached account');
      t.clock.advance(TTL_MS - 1);
      assert.equal(await livePix(), 503, 'one millisecond before the TTL ends: still cached');
      t.clock.advance(1);
      assert.equal(await livePix(), 422, 'at the TTL: read again, none serves');

      // Enabled again elsewhere, then disabled through the back office: seen at once.
      await t.store.write((tx) => tx.updateTable('connector_accounts').set({ status: 'active' }).where('id', '=', created.json().id).execute());
      t.clock.advance(TTL_MS);
      assert.equal(await livePix(), 503);
      const disabled = await call('POST', `/admin/connector-accounts/${created.json().id}/disable`, { reason: 'moving PSP' });
      assert.equal(disabled.statusCode, 200, disabled.body);
      assert.equal(await livePix(), 422, 'disabled in the back office: refused at once');
    });
  });
}

// Checkout branding over HTTP (a listening server, fetch), on both engines: the admin API sets a
// display name, an accent color (WCAG AA against white, else a clear VALIDATION_ERROR) and a logo
// (type- and size-checked), the instance serves the logo under a strict policy, and the hosted
// page's view carries them with the platform's name.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { ENGINES, startApp, signup, adminSession, type TestApp, type Keys } from './helpers.js';
import { contrastRatio, formatRatio } from '../src/domain/contrast.js';

type Json = Record<string, any>;
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const JPEG_HEAD = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1]).toString('base64');

describe('WCAG contrast', () => {
  test('known ratios', () => {
    assert.equal(formatRatio(contrastRatio('#000000', '#ffffff')), '21.00:1');
    assert.equal(formatRatio(contrastRatio('#ffffff', '#ffffff')), '1.00:1');
    assert.equal(formatRatio(contrastRatio('#0f766e', '#ffffff')), '5.47:1');
    assert.equal(formatRatio(contrastRatio('#767676', '#ffffff')), '4.54:1', 'the lightest grey that passes AA');
    assert.ok(contrastRatio('#777777', '#ffffff') < 4.5);
  });
});

for (const engine of ENGINES) {
  describe(`checkout branding over HTTP (${engine})`, () => {
    let t: TestApp;
    let base: string;
    let k: Keys;
    let admin: { cookie: string; csrf: string };
    before(async () => {
      t = await startApp(engine);
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      k = await signup(t, 'Loja Marca');
      admin = await adminSession(t);
    });
    after(() => t.teardown());

    const http = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${base}${path}`, { method, headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = Buffer.from(await res.arrayBuffer());
      let json: Json | null = null;
      try {
        json = JSON.parse(text.toString('utf8'));
      } catch { /* not JSON (a logo) */ }
      return { status: res.status, headers: res.headers, json: json as Json, raw: text };
    };
    const adminHeaders = () => ({ cookie: admin.cookie, 'x-csrf-token': admin.csrf, 'idempotency-key': randomUUID() });
    const setBranding = (body: object, accountId = k.accountId) => http('PATCH', `/admin/accounts/${accountId}/checkout-branding`, body, adminHeaders());
    const session = async () => {
      const s = await http('POST', '/v1/checkout/sessions', { amount: 15990, installments: 4 }, { authorization: `Bearer ${k.secretKey}`, 'idempotency-key': randomUUID() });
      assert.equal(s.status, 200, s.raw.toString());
      return (await http('GET', `/v1/checkout/sessions/${s.json.id as string}/client`, undefined, { authorization: `Bearer ${s.json.clientSecret as string}` })).json;
    };

    test('defaults: the account name, no logo, no accent, the platform name', async () => {
      const got = await http('GET', `/admin/accounts/${k.accountId}/checkout-branding`, undefined, { cookie: admin.cookie });
      assert.equal(got.status, 200, got.raw.toString());
      assert.deepEqual(got.json, { object: 'checkout_branding', accountId: k.accountId, displayName: null, accentColor: null, logo: null, updatedAt: null, livemode: false });
      const v = await session();
      assert.equal(v.merchantName, 'Loja Marca');
      assert.equal(v.logoUrl, null);
      assert.equal(v.accentColor, null);
      assert.equal(v.platformName, 'Pagamentos');
    });

    test('a display name, an accent color and a logo: stored, audited, shown by the page, the logo served under a strict policy', async () => {
      const res = await setBranding({ displayName: '  Café do Ponto  ', accentColor: '#1D4ED8', logo: { contentType: 'image/png', dataBase64: PNG_1X1 }, reason: 'merchant request' });
      assert.equal(res.status, 200, res.raw.toString());
      assert.equal(res.json.displayName, 'Café do Ponto');
      assert.equal(res.json.accentColor, '#1d4ed8');
      assert.equal(res.json.logo.contentType, 'image/png');
      assert.equal(res.json.logo.bytes, Buffer.from(PNG_1X1, 'base64').length);
      assert.match(res.json.logo.url, /^\/checkout\/logos\/[0-9a-f]{64}$/);
      const v = await session();
      assert.equal(v.merchantName, 'Café do Ponto');
      assert.equal(v.accentColor, '#1d4ed8');
      assert.equal(v.logoUrl, res.json.logo.url);
      const logo = await http('GET', v.logoUrl as string);
      assert.equal(logo.status, 200);
      assert.equal(logo.headers.get('content-type'), 'image/png');
      assert.equal(logo.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(logo.headers.get('content-security-policy'), "default-src 'none'; sandbox");
      assert.equal(logo.headers.get('cross-origin-resource-policy'), 'same-origin');
      assert.match(logo.headers.get('cache-control')!, /immutable/);
      assert.deepEqual(logo.raw, Buffer.from(PNG_1X1, 'base64'));
      const audit = await http('GET', '/admin/audit-log?limit=100', undefined, { cookie: admin.cookie });
      const entry = (audit.json.data as Json[]).find((e) => e.action === 'account.update_checkout_branding' && e.objectId === k.accountId);
      assert.ok(entry, 'audited');
      assert.equal(entry.after.accentColor, '#1d4ed8');
      // Only what is sent changes; null clears.
      const partial = await setBranding({ accentColor: null });
      assert.equal(partial.json.accentColor, null);
      assert.equal(partial.json.displayName, 'Café do Ponto');
      assert.ok(partial.json.logo);
      const cleared = await setBranding({ logo: null });
      assert.equal(cleared.json.logo, null);
      assert.equal((await http('GET', v.logoUrl as string)).status, 404, 'the old logo is no longer served');
      assert.equal((await http('GET', '/checkout/logos/not-a-hash')).status, 400);
    });

    test('bad input: a clear error in the envelope, naming the field, and nothing changes', async () => {
      const before = await setBranding({ displayName: 'Antes', accentColor: '#0f766e' });
      assert.equal(before.status, 200);
      const cases: Array<[object, string, RegExp]> = [
        [{ accentColor: '#ffcc00' }, 'accentColor', /contrast of 1\.\d\d:1 against white; WCAG AA needs at least 4\.5:1/],
        [{ accentColor: '#777777', displayName: 'Depois' }, 'accentColor', /4\.4\d:1/],
        [{ accentColor: 'red' }, 'accentColor', /must be a #rrggbb color, like #1d4ed8; got "red"/],
        [{ displayName: '' }, 'displayName', /must not be blank/],
        [{ displayName: '   ' }, 'displayName', /blank/],
        [{ logo: { contentType: 'image/svg+xml', dataBase64: PNG_1X1 } }, 'logo.contentType', /image\/svg\+xml is not taken \(an SVG can carry scripts\)/],
        [{ logo: { contentType: 'image/jpeg', dataBase64: PNG_1X1 } }, 'logo.contentType', /declared image\/jpeg but the file is image\/png/],
        [{ logo: { contentType: 'image/png', dataBase64: JPEG_HEAD } }, 'logo.contentType', /image\/jpeg/],
        [{ logo: { contentType: 'image/png', dataBase64: Buffer.from('<svg onload=alert(1)>').toString('base64') } }, 'logo.contentType', /not a PNG, JPEG or WebP file/],
        [{ logo: { contentType: 'image/png', dataBase64: 'not base64!' } }, 'logo.dataBase64', /base64/],
        [{ logo: { contentType: 'image/png', dataBase64: Buffer.concat([Buffer.from(PNG_1X1, 'base64'), Buffer.alloc(70 * 1024)]).toString('base64') } }, 'logo.dataBase64', /is 7\d{4} bytes; at most 65536 bytes \(64 KiB\)/],
        [{ extra: 1 }, 'extra', /./],
      ];
      for (const [body, param, message] of cases) {
        const res = await setBranding(body);
        assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${res.raw.toString().slice(0, 300)}`);
        assert.equal(res.json.error.code, 'VALIDATION_ERROR');
        assert.equal(res.json.error.param, param, res.raw.toString().slice(0, 300));
        assert.match(res.json.error.message, message);
        assert.ok(res.json.error.correlationId);
      }
      const after = await http('GET', `/admin/accounts/${k.accountId}/checkout-branding`, undefined, { cookie: admin.cookie });
      assert.equal(after.json.displayName, 'Antes');
      assert.equal(after.json.accentColor, '#0f766e');
      // Unknown account; no session; a body over the route's limit.
      assert.equal((await setBranding({ displayName: 'x' }, 'acct_nope')).status, 404);
      assert.equal((await http('PATCH', `/admin/accounts/${k.accountId}/checkout-branding`, { displayName: 'x' })).status, 401);
      const huge = await setBranding({ logo: { contentType: 'image/png', dataBase64: 'A'.repeat(120 * 1024) } });
      assert.equal(huge.status, 413, huge.raw.toString().slice(0, 200));
      assert.ok(huge.json.error.correlationId);
    });
  });
}

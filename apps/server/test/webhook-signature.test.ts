import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { generateSecret, sign, signatureHeader, verify, WebhookVerificationError } from '../src/domain/webhook-signature.js';

// An independent Standard Webhooks implementation (the `standardwebhooks` npm package) checks
// our signatures and produces signatures that ours must accept.
describe('webhook signatures (Standard Webhooks)', () => {
  const secret = generateSecret();
  const body = '{"id":"evt_01","object":"event","type":"payment.approved","createdAt":"2026-01-01T00:00:00.000Z","livemode":false,"data":{"object":{"id":"pay_1","amount":1050,"description":"café"}}}';
  const id = 'evt_01hzzzzzzzzzzzzzzzzzzzzzzz';
  const now = () => Math.floor(Date.now() / 1000);
  const headersFor = (signature: string, ts = now(), msgId = id) => ({ 'webhook-id': msgId, 'webhook-timestamp': String(ts), 'webhook-signature': signature });

  test('secrets are whsec_ followed by base64 of random bytes', () => {
    assert.match(secret, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
    assert.ok(Buffer.from(secret.slice(6), 'base64').length >= 24);
    assert.notEqual(generateSecret(), secret);
  });

  test('sign then verify round trip, with a string or a Buffer body and any header case', () => {
    const ts = now();
    const signature = sign(secret, id, ts, body);
    assert.match(signature, /^v1,[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(verify(body, headersFor(signature, ts), secret), { id, timestamp: ts });
    assert.deepEqual(verify(Buffer.from(body, 'utf8'), headersFor(signature, ts), secret), { id, timestamp: ts });
    assert.deepEqual(verify(new TextEncoder().encode(body), headersFor(signature, ts), secret), { id, timestamp: ts });
    const upper = { 'Webhook-Id': id, 'Webhook-Timestamp': String(ts), 'Webhook-Signature': signature };
    assert.deepEqual(verify(body, upper, secret), { id, timestamp: ts });
    assert.deepEqual(verify(body, new Headers(headersFor(signature, ts)), secret), { id, timestamp: ts });
    // The spec's construction, computed independently: HMAC-SHA256 over "id.timestamp.body".
    assert.equal(sign(secret, id, ts, Buffer.from(body)), signature);
  });

  test('our signature verifies with the standardwebhooks package', () => {
    const ts = now();
    const headers = headersFor(signatureHeader([secret], id, ts, body), ts);
    const parsed = new Webhook(secret).verify(body, headers) as { id: string; data: { object: { description: string } } };
    assert.equal(parsed.id, 'evt_01');
    assert.equal(parsed.data.object.description, 'café');
    assert.throws(() => new Webhook(generateSecret()).verify(body, headers), /No matching signature/);
  });

  test('a standardwebhooks signature verifies with ours', () => {
    const when = new Date();
    const theirs = new Webhook(secret).sign(id, when, body);
    const ts = Math.floor(when.getTime() / 1000);
    assert.equal(theirs, sign(secret, id, ts, body), 'the same bytes both ways');
    assert.deepEqual(verify(body, headersFor(theirs, ts), secret), { id, timestamp: ts });
    assert.throws(() => verify(body, headersFor(theirs, ts), generateSecret()), WebhookVerificationError);
  });

  test('a tampered body, timestamp or id fails', () => {
    const ts = now();
    const signature = sign(secret, id, ts, body);
    assert.throws(() => verify(body.replace('1050', '1051'), headersFor(signature, ts), secret), /No signature matches/);
    assert.throws(() => verify(body + ' ', headersFor(signature, ts), secret), /No signature matches/);
    assert.throws(() => verify(body, headersFor(signature, ts - 1), secret), /No signature matches/);
    assert.throws(() => verify(body, headersFor(signature, ts, 'evt_other'), secret), /No signature matches/);
    assert.throws(() => verify(body, headersFor(signature.replace('v1,', 'v2,'), ts), secret), /No signature matches/);
    assert.throws(() => verify(body, headersFor('v1,' + Buffer.alloc(32).toString('base64'), ts), secret), /No signature matches/);
    assert.throws(() => verify(body, headersFor('v1,short', ts), secret), /No signature matches/);
    // standardwebhooks agrees on the tampered cases.
    assert.throws(() => new Webhook(secret).verify(body.replace('1050', '1051'), headersFor(signature, ts)), /No matching signature/);
  });

  test('missing headers or a malformed timestamp fail', () => {
    const ts = now();
    const signature = sign(secret, id, ts, body);
    assert.throws(() => verify(body, { 'webhook-id': id, 'webhook-timestamp': String(ts) }, secret), /Missing/);
    assert.throws(() => verify(body, { 'webhook-signature': signature, 'webhook-timestamp': String(ts) }, secret), /Missing/);
    assert.throws(() => verify(body, { 'webhook-id': id, 'webhook-signature': signature }, secret), /Missing/);
    assert.throws(() => verify(body, { ...headersFor(signature, ts), 'webhook-timestamp': '12.5' }, secret), /Invalid webhook-timestamp/);
    assert.throws(() => verify(body, { ...headersFor(signature, ts), 'webhook-timestamp': 'soon' }, secret), /Invalid webhook-timestamp/);
  });

  test('a timestamp outside the tolerance fails, in the past or the future', () => {
    const old = now() - 330;
    assert.throws(() => verify(body, headersFor(sign(secret, id, old, body), old), secret), /tolerance/);
    const future = now() + 330;
    assert.throws(() => verify(body, headersFor(sign(secret, id, future, body), future), secret), /tolerance/);
    // Within the tolerance, and a custom tolerance.
    const recent = now() - 250;
    assert.deepEqual(verify(body, headersFor(sign(secret, id, recent, body), recent), secret).timestamp, recent);
    assert.throws(() => verify(body, headersFor(sign(secret, id, recent, body), recent), secret, 60), /tolerance/);
    // An explicit clock: a stale delivery replayed later is refused.
    const ts = now();
    const signature = sign(secret, id, ts, body);
    assert.throws(() => verify(body, headersFor(signature, ts), secret, 300, ts + 3600), /tolerance/);
    assert.throws(() => new Webhook(secret).verify(body, headersFor(sign(secret, id, old, body), old)), /too old/);
  });

  test('several signatures (secret rotation) verify with either secret', () => {
    const next = generateSecret();
    const ts = now();
    const header = signatureHeader([next, secret], id, ts, body);
    const parts = header.split(' ');
    assert.equal(parts.length, 2);
    assert.equal(parts[0], sign(next, id, ts, body));
    assert.equal(parts[1], sign(secret, id, ts, body));
    const headers = headersFor(header, ts);
    assert.equal(verify(body, headers, secret).id, id);
    assert.equal(verify(body, headers, next).id, id);
    assert.equal(verify(body, headers, [generateSecret(), next]).id, id, 'a list of accepted secrets');
    assert.throws(() => verify(body, headers, generateSecret()), /No signature matches/);
    new Webhook(secret).verify(body, headers);
    new Webhook(next).verify(body, headers);
  });

  test('a parsed object instead of the raw body throws, saying to pass the raw body', () => {
    const ts = now();
    const headers = headersFor(sign(secret, id, ts, body), ts);
    assert.throws(() => verify(JSON.parse(body) as never, headers, secret), (error: Error) => {
      assert.ok(error instanceof WebhookVerificationError);
      assert.match(error.message, /raw request body/);
      return true;
    });
    // Re-serializing the parsed object does not give the bytes that were signed.
    const reserialized = JSON.stringify(JSON.parse(body), null, 1);
    assert.throws(() => verify(reserialized, headers, secret), /No signature matches/);
  });

  test('a secret without the whsec_ prefix is refused', () => {
    assert.throws(() => sign('not-a-secret', id, now(), body), /whsec_/);
  });
});

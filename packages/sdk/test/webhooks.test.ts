// Webhook verification: every accepted input form and every refusal, real deliveries from a
// running server (also after a secret rotation), cross-checked with the standardwebhooks package,
// and the README's Express, Fastify and Web Request handlers run as written.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { Pagamentos, signWebhook, verifyWebhook, WebhookVerificationError, type WebhookEvent } from '../src/index.js';
import { timingSafeEqual } from '../src/webhooks.js';
import { webhookApp as expressApp } from '../examples/webhooks-express.js';
import { webhookApp as fastifyApp } from '../examples/webhooks-fastify.js';
import { webhookHandler } from '../examples/webhooks-web.js';
import { ENGINES, eventually, merchant, startReceiver, startServer, type Delivery, type Running } from './harness.js';

const SECRET = 'whsec_' + Buffer.from('a test secret of 24 bytes').toString('base64');
const OTHER = 'whsec_' + Buffer.from('another secret, 24 bytes').toString('base64');
const body = JSON.stringify({ id: 'evt_1', object: 'event', type: 'payment.approved', createdAt: '2026-01-01T00:00:00.000Z', livemode: false, data: { object: { id: 'pay_1', amount: 1050 } } });

const rejects = (promise: Promise<unknown>, code: string, message?: RegExp) =>
  assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof WebhookVerificationError, String(e));
    assert.equal(e.code, code);
    if (message) assert.match(e.message, message);
    return true;
  });

describe('verifyWebhook', () => {
  test('accepts the raw body as string, Buffer, Uint8Array, ArrayBuffer or a Web Request', async () => {
    const headers = await signWebhook(body, SECRET);
    assert.match(headers['webhook-id'], /^msg_[0-9a-f]{32}$/);
    assert.ok(Math.abs(Number(headers['webhook-timestamp']) - Date.now() / 1000) < 60);
    const bytes = new TextEncoder().encode(body);
    for (const payload of [body, Buffer.from(body), bytes, bytes.slice().buffer]) {
      const event = await verifyWebhook(payload, headers, SECRET);
      assert.equal(event.id, 'evt_1');
    }
    const request = new Request('https://merchant.example/webhooks', { method: 'POST', headers, body });
    assert.equal((await verifyWebhook(request, SECRET)).type, 'payment.approved');
    assert.equal(request.bodyUsed, false, 'the Request stays readable');
    const used = new Request('https://merchant.example/webhooks', { method: 'POST', headers, body });
    await used.text();
    await rejects(verifyWebhook(used, SECRET), 'WEBHOOK_RAW_BODY_REQUIRED', /already read/);
  });

  test('headers as Headers, a Node header object or any record, in any case', async () => {
    const signed = await signWebhook(body, SECRET);
    const shouting = Object.fromEntries(Object.entries(signed).map(([k, v]) => [k.toUpperCase(), v]));
    const mixed = { 'Webhook-Id': signed['webhook-id'], 'Webhook-Timestamp': signed['webhook-timestamp'], 'Webhook-Signature': [signed['webhook-signature']] };
    for (const headers of [new Headers(signed), signed, shouting, mixed]) {
      assert.equal((await verifyWebhook(body, headers, SECRET)).id, 'evt_1');
    }
  });

  test('several signatures (rotation) and several secrets', async () => {
    const both = await signWebhook(body, [OTHER, SECRET]);
    assert.equal(both['webhook-signature'].split(' ').length, 2);
    await verifyWebhook(body, both, SECRET);
    await verifyWebhook(body, both, OTHER);
    const one = await signWebhook(body, SECRET);
    await verifyWebhook(body, one, [OTHER, SECRET]);
    await rejects(verifyWebhook(body, one, [OTHER]), 'WEBHOOK_SIGNATURE_MISMATCH');
    // Unknown versions are ignored; a header with no v1 signature says so.
    await verifyWebhook(body, { ...one, 'webhook-signature': `v1a,AAAA ${one['webhook-signature']}` }, SECRET);
    await rejects(verifyWebhook(body, { ...one, 'webhook-signature': 'v1a,AAAA' }, SECRET), 'WEBHOOK_SIGNATURE_MISMATCH', /no v1 signature/);
  });

  test('a changed body, id or timestamp does not verify', async () => {
    const headers = await signWebhook(body, SECRET, { timestampSeconds: 1_700_000_000, id: 'msg_1' });
    const at = { nowSeconds: 1_700_000_000 };
    await verifyWebhook(body, headers, SECRET, at);
    await rejects(verifyWebhook(body.replace('1050', '1051'), headers, SECRET, at), 'WEBHOOK_SIGNATURE_MISMATCH');
    await rejects(verifyWebhook(body, { ...headers, 'webhook-id': 'msg_2' }, SECRET, at), 'WEBHOOK_SIGNATURE_MISMATCH');
    await rejects(verifyWebhook(body, { ...headers, 'webhook-timestamp': '1700000001' }, SECRET, at), 'WEBHOOK_SIGNATURE_MISMATCH');
    // Re-serialized JSON is other bytes.
    await rejects(verifyWebhook(JSON.stringify(JSON.parse(body), null, 1), headers, SECRET, at), 'WEBHOOK_SIGNATURE_MISMATCH', /re-serialized/);
  });

  test('explicit refusals: parsed object, secret not whsec_, missing header, stale or future timestamp', async () => {
    const headers = await signWebhook(body, SECRET, { timestampSeconds: 1_700_000_000 });
    await rejects(verifyWebhook(JSON.parse(body), headers, SECRET), 'WEBHOOK_RAW_BODY_REQUIRED', /parsed object.*express\.raw/s);
    await rejects(verifyWebhook(undefined as never, headers, SECRET), 'WEBHOOK_RAW_BODY_REQUIRED');
    await rejects(verifyWebhook(body, headers, 'sk_test_123', { nowSeconds: 1_700_000_000 }), 'WEBHOOK_INVALID_SECRET', /whsec_/);
    await rejects(verifyWebhook(body, headers, 'whsec_!!!', { nowSeconds: 1_700_000_000 }), 'WEBHOOK_INVALID_SECRET', /base64/);
    await rejects(verifyWebhook(body, headers, [], { nowSeconds: 1_700_000_000 }), 'WEBHOOK_INVALID_SECRET');
    const { 'webhook-signature': _, ...noSignature } = headers;
    await rejects(verifyWebhook(body, noSignature, SECRET), 'WEBHOOK_MISSING_HEADER', /webhook-signature/);
    await rejects(verifyWebhook(body, {}, SECRET), 'WEBHOOK_MISSING_HEADER', /webhook-id, webhook-timestamp, webhook-signature/);
    await rejects(verifyWebhook(body, undefined, SECRET), 'WEBHOOK_MISSING_HEADER');
    await rejects(verifyWebhook(body, { ...headers, 'webhook-timestamp': '17e8' }, SECRET), 'WEBHOOK_INVALID_TIMESTAMP');

    // Tolerance, both ways (300 s by default, configurable).
    await verifyWebhook(body, headers, SECRET, { nowSeconds: 1_700_000_300 });
    await verifyWebhook(body, headers, SECRET, { nowSeconds: 1_699_999_700 });
    await rejects(verifyWebhook(body, headers, SECRET, { nowSeconds: 1_700_000_301 }), 'WEBHOOK_TIMESTAMP_TOO_OLD', /301 s old/);
    await rejects(verifyWebhook(body, headers, SECRET, { nowSeconds: 1_699_999_699 }), 'WEBHOOK_TIMESTAMP_TOO_NEW', /301 s in the future/);
    await verifyWebhook(body, headers, SECRET, { nowSeconds: 1_700_000_900, toleranceSeconds: 900 });
    await rejects(verifyWebhook(body, headers, SECRET), 'WEBHOOK_TIMESTAMP_TOO_OLD');
  });

  test('an empty body says the raw body is required (consumed already?), not that the signature does not match', async () => {
    const headers = await signWebhook(body, SECRET);
    const empty = [
      '', Buffer.alloc(0), new Uint8Array(0), new ArrayBuffer(0),
      new Request('https://merchant.example/webhooks', { method: 'POST', headers }),
      new Request('https://merchant.example/webhooks', { method: 'POST', headers, body: '' }),
    ];
    for (const payload of empty) {
      await rejects(verifyWebhook(payload, headers, SECRET), 'WEBHOOK_RAW_BODY_REQUIRED', /body is empty.*already consumed/);
    }
    // Even when the headers sign an empty body: no delivery has one.
    await rejects(verifyWebhook('', await signWebhook('', SECRET), SECRET), 'WEBHOOK_RAW_BODY_REQUIRED', /body is empty/);
  });

  test('a signed body that is not JSON is refused after the signature', async () => {
    const headers = await signWebhook('not json', SECRET);
    await rejects(verifyWebhook('not json', headers, SECRET), 'WEBHOOK_INVALID_PAYLOAD');
  });

  test('timingSafeEqual compares whole arrays', () => {
    assert.equal(timingSafeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3])), true);
    assert.equal(timingSafeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4])), false);
    assert.equal(timingSafeEqual(new Uint8Array([9, 2, 3]), new Uint8Array([1, 2, 3])), false);
    assert.equal(timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2, 3])), false);
  });

  test('agrees with the standardwebhooks package both ways', async () => {
    const ours = await signWebhook(body, SECRET, { id: 'msg_x', timestampSeconds: Math.floor(Date.now() / 1000) });
    assert.deepEqual(new Webhook(SECRET).verify(body, { ...ours }), JSON.parse(body));
    const id = 'msg_y';
    const at = new Date();
    const theirs = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(SECRET).sign(id, at, body) };
    assert.equal(theirs['webhook-signature'], (await signWebhook(body, SECRET, { id, timestampSeconds: Math.floor(at.getTime() / 1000) }))['webhook-signature']);
    assert.equal((await verifyWebhook(body, theirs, SECRET)).id, 'evt_1');
  });

  test('client.webhooks is the same verify and sign, usable without a request', async () => {
    const client = new Pagamentos('sk_test_x');
    const headers = await client.webhooks.sign(body, SECRET);
    const event = await client.webhooks.verify(body, headers, SECRET, { toleranceSeconds: 300 });
    // The union narrows on `type` (a compile-time check as much as a runtime one).
    if (event.type === 'payment.approved') assert.equal(event.data.object.amount, 1050);
    else assert.fail(`unexpected ${event.type}`);
  });
});

for (const engine of ENGINES) {
  describe(`real deliveries (${engine})`, () => {
    let server: Running;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let client: Pagamentos;
    let endpoint: { id: string; secret: string };

    const deliveryOf = (predicate: (event: { type: string; data: { object: { id?: string } } }) => boolean, what: string) =>
      // Waits for I/O: the delivery crossing a loopback socket to the receiver.
      eventually(async () => receiver.deliveries.find((d) => predicate(JSON.parse(d.rawBody.toString('utf8')))), what);

    before(async () => {
      server = await startServer(engine);
      receiver = await startReceiver();
      ({ client } = await merchant(server.baseUrl));
      endpoint = await client.webhookEndpoints.create({ url: receiver.url, events: ['*'] });
    });
    after(async () => {
      await receiver.close();
      await server.close();
    });

    const checkEverywhere = async (d: Delivery, secret: string | string[]): Promise<WebhookEvent> => {
      const event = await client.webhooks.verify(d.rawBody, d.headers, secret);
      assert.deepEqual(await verifyWebhook(d.rawBody.toString('utf8'), new Headers(d.headers as Record<string, string>), secret), event);
      for (const s of Array.isArray(secret) ? secret : [secret]) {
        assert.deepEqual(new Webhook(s).verify(d.rawBody.toString('utf8'), d.headers as Record<string, string>), event, 'standardwebhooks agrees');
      }
      return event;
    };

    test('deliveries of a card payment verify, typed by event type', async () => {
      const payment = await client.payments.create({ amountInCents: 2590, method: 'credit_card', cardToken: 'tok_visa' });
      const created = await deliveryOf((e) => e.type === 'payment.created' && e.data.object.id === payment.id, 'payment.created delivered');
      const approved = await deliveryOf((e) => e.type === 'payment.approved' && e.data.object.id === payment.id, 'payment.approved delivered');
      assert.equal((await checkEverywhere(created, endpoint.secret)).type, 'payment.created');
      const event = await checkEverywhere(approved, endpoint.secret);
      assert.equal(event.type, 'payment.approved');
      if (event.type !== 'payment.approved') return;
      assert.equal(event.data.object.status, 'approved');
      assert.equal(event.data.object.amount, 2590);
      assert.equal(event.id, approved.headers['webhook-id']);
      // The wrong secret, and the body parsed by a framework, are refused.
      await assert.rejects(verifyWebhook(approved.rawBody, approved.headers, 'whsec_' + Buffer.from('nope').toString('base64')), WebhookVerificationError);
      await assert.rejects(verifyWebhook(JSON.parse(approved.rawBody.toString()), approved.headers, endpoint.secret), /parsed object/);
    });

    test('after a secret rotation deliveries carry both signatures: the new secret, the old, or both verify', async () => {
      const rotated = await client.webhookEndpoints.rotateSecret(endpoint.id);
      const recipient = await client.recipients.create({ name: 'Rotação LTDA', document: '11222333000181', bankAccount: { bankCode: '341', agency: '1', account: '1-1', accountType: 'checking' } });
      const d = await deliveryOf((e) => e.type === 'recipient.created' && e.data.object.id === recipient.id, 'recipient.created delivered');
      assert.equal(String(d.headers['webhook-signature']).split(' ').length, 2);
      assert.equal((await checkEverywhere(d, rotated.secret)).type, 'recipient.created');
      await checkEverywhere(d, endpoint.secret);
      await checkEverywhere(d, [rotated.secret, endpoint.secret]);
      // The test event, sent after the rotation, verifies with the new secret too.
      const test = await client.webhookEndpoints.test(endpoint.id);
      const testDelivery = await deliveryOf((e) => e.type === 'webhook.test' && (e.data.object as { endpointId?: string }).endpointId === endpoint.id, 'webhook.test delivered');
      assert.ok(test.id);
      assert.equal((await checkEverywhere(testDelivery, rotated.secret)).type, 'webhook.test');
      endpoint = { id: endpoint.id, secret: rotated.secret };
    });

    test("the README's Express, Fastify and Web Request handlers accept a real delivery and refuse a forged one", async () => {
      const p = await client.payments.create({ amountInCents: 1717, method: 'pix' });
      const d = await deliveryOf((e) => e.type === 'payment.created' && e.data.object.id === p.id, 'payment.created delivered');
      const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(d.headers[h])]));
      const forged = Buffer.from(d.rawBody.toString('utf8').replace('1717', '1'));
      const handled: string[] = [];
      const onEvent = async (e: WebhookEvent) => void handled.push(`${e.type}:${e.id}`);

      const ex = expressApp(endpoint.secret, onEvent).listen(0, '127.0.0.1');
      await new Promise((resolve) => ex.once('listening', resolve));
      const fy = fastifyApp(endpoint.secret, onEvent);
      await fy.listen({ port: 0, host: '127.0.0.1' });
      const web = webhookHandler(endpoint.secret, onEvent);
      try {
        for (const url of [`http://127.0.0.1:${(ex.address() as AddressInfo).port}/webhooks`, `http://127.0.0.1:${(fy.server.address() as AddressInfo).port}/webhooks`]) {
          const ok = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: new Uint8Array(d.rawBody) });
          assert.equal(ok.status, 200, url);
          const bad = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: forged });
          assert.equal(bad.status, 400, url);
          assert.match(await bad.text(), /No signature matches/);
        }
        const ok = await web(new Request('https://merchant.example/webhooks', { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: new Uint8Array(d.rawBody) }));
        assert.equal(ok.status, 200);
        const bad = await web(new Request('https://merchant.example/webhooks', { method: 'POST', headers, body: forged }));
        assert.equal(bad.status, 400);
        const eventId = headers['webhook-id'];
        assert.deepEqual(handled, [`payment.created:${eventId}`, `payment.created:${eventId}`, `payment.created:${eventId}`]);
      } finally {
        ex.closeAllConnections();
        await new Promise((resolve) => ex.close(resolve));
        await fy.close();
      }
    });
  });
}

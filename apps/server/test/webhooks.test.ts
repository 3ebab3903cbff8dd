import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { verify } from '../src/domain/webhook-signature.js';
import { activateLive, createKey } from '../src/modules/accounts/service.js';
import { newDeliveryRow } from '../src/modules/events/service.js';
import { ENGINES, startApp, signup, auth, eventually, type TestApp } from './helpers.js';
import { CLI } from './cli.js';

// Webhooks end to end: the API writes events and deliveries, the dispatcher sends them to REAL
// local HTTP receivers, and the receivers check what arrived (signatures with our verifier and
// with the independent `standardwebhooks` package).

const SERVER_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');

interface Hit {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  receivedAt: number;
  answered: number | null; // the status we answered, null while unanswered
  aborted: boolean; // the sender gave up (timeout) or died before we answered
}

// 'hold': keep the request open until release(); 'hang': never answer.
type Answer = number | 'hold' | 'hang';

class Receiver {
  readonly hits: Hit[] = [];
  private readonly held: Array<{ hit: Hit; res: http.ServerResponse }> = [];
  answer: (hit: Hit, index: number) => Answer;
  url = '';
  private readonly server: http.Server;

  private constructor(answer: (hit: Hit, index: number) => Answer) {
    this.answer = answer;
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const hit: Hit = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAt: Date.now(), answered: null, aborted: false };
        res.on('close', () => {
          if (hit.answered === null) hit.aborted = true;
        });
        const index = this.hits.length;
        this.hits.push(hit);
        const a = this.answer(hit, index);
        if (a === 'hold') this.held.push({ hit, res });
        else if (a !== 'hang') this.reply(hit, res, a);
      });
    });
    // Longer than any test, so the dispatcher's kept-alive sockets are never closed under it.
    this.server.keepAliveTimeout = 120_000;
  }

  static async start(answer: (hit: Hit, index: number) => Answer = () => 200): Promise<Receiver> {
    const r = new Receiver(answer);
    await new Promise<void>((ok) => r.server.listen(0, '127.0.0.1', ok));
    r.url = `http://127.0.0.1:${(r.server.address() as AddressInfo).port}/hook`;
    return r;
  }

  private reply(hit: Hit, res: http.ServerResponse, status: number): void {
    hit.answered = status;
    res.writeHead(status, { 'content-type': 'text/plain' }).end(status >= 200 && status < 300 ? 'ok' : 'no');
  }

  // Answers every held request.
  release(status = 200): number {
    const held = this.held.splice(0);
    for (const { hit, res } of held) if (!hit.aborted) this.reply(hit, res, status);
    return held.length;
  }

  get openHeld(): number {
    return this.held.filter((h) => !h.hit.aborted).length;
  }

  get answeredCount(): number {
    return this.hits.filter((h) => h.answered !== null).length;
  }

  events(): Array<{ id: string; type: string; data: { object: Record<string, unknown> } }> {
    return this.hits.map((h) => JSON.parse(h.body));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((ok) => this.server.close(() => ok()));
  }
}

type Json = Record<string, any>;

// Verifies one delivery with our verifier and with the standardwebhooks package.
function verifyBoth(hit: Hit, secret: string): void {
  const id = verify(hit.body, hit.headers, secret).id;
  assert.equal(id, hit.headers['webhook-id']);
  new Webhook(secret).verify(hit.body, hit.headers as Record<string, string>);
}

function signatures(hit: Hit): string[] {
  return String(hit.headers['webhook-signature']).split(' ');
}

function onlySignature(hit: Hit, signature: string): Record<string, string> {
  return { ...(hit.headers as Record<string, string>), 'webhook-signature': signature };
}

function suiteHelpers(get: () => TestApp) {
  const api = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, key: string, payload?: object) =>
    get().app.inject({ method, url, headers: auth(key), ...(payload !== undefined ? { payload } : {}) });
  const ok = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, key: string, payload?: object): Promise<Json> => {
    const res = await api(method, url, key, payload);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  };
  const createEndpoint = (key: string, url: string, events: string[]) => ok('POST', '/v1/webhook-endpoints', key, { url, events });
  const createPix = (key: string, amount = 1000) => ok('POST', '/v1/payments', key, { amount, currency: 'BRL', method: 'pix' });
  // payment.created, payment.approved and receivable.created.
  const payPix = async (key: string, amount = 1050) => {
    const p = await createPix(key, amount);
    await ok('POST', `/v1/sandbox/payments/${p.id}/pay`, key);
    return p;
  };
  const deliveries = async (key: string, endpointId: string, query = ''): Promise<Json[]> =>
    (await ok('GET', `/v1/webhook-endpoints/${endpointId}/deliveries?limit=100${query}`, key)).data;
  const eventOf = async (key: string, type: string, objectId: string): Promise<Json> => {
    const list = (await ok('GET', `/v1/events?type=${type}&limit=100`, key)).data as Json[];
    const found = list.find((e) => e.data.object.id === objectId || e.data.object.paymentId === objectId);
    assert.ok(found, `event ${type} for ${objectId}`);
    return found;
  };
  // Waits until every delivery of the endpoint is settled (succeeded or failed) and returns them.
  const settled = (key: string, endpointId: string, count: number, what = 'deliveries settled') =>
    // Waits for I/O: the delivery crossing a loopback socket to the receiver.
    eventually(async () => {
      const d = await deliveries(key, endpointId);
      return d.length === count && d.every((x) => x.status !== 'pending') && d;
    }, what);
  return { api, ok, createEndpoint, createPix, payPix, deliveries, eventOf, settled };
}

for (const engine of ENGINES) {
  describe(`webhooks (${engine})`, () => {
    let t: TestApp;
    const receivers: Receiver[] = [];
    const receiver = async (answer?: (hit: Hit, index: number) => Answer) => {
      const r = await Receiver.start(answer);
      receivers.push(r);
      return r;
    };
    before(async () => {
      // Short retry schedule; a timeout long enough that held requests stay open while a test looks.
      // Few sending slots, so that a slow endpoint taking them all would show.
      t = await startApp(engine, {
        webhookScheduleMs: [0, 50, 50, 50], webhookTimeoutMs: 10_000, webhookLeaseMs: 20_000, webhookMaxInFlight: 6, webhookPerEndpointMaxInFlight: 2,
      });
    });
    after(async () => {
      await Promise.all(receivers.map((r) => r.close()));
      await t?.teardown();
    });
    const h = suiteHelpers(() => t);

    test('payment events arrive signed, and each body is the event as GET /v1/events/{id} returns it', async () => {
      const k = await signup(t);
      const r = await receiver();
      const ep = await h.createEndpoint(k.secretKey, r.url, ['*']);
      assert.match(ep.id, /^whe_/);
      assert.match(ep.secret, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
      const p = await h.payPix(k.secretKey);
      const log = await h.settled(k.secretKey, ep.id, 3);
      assert.equal(r.hits.length, 3);
      assert.deepEqual(r.events().map((e) => e.type).sort(), ['payment.approved', 'payment.created', 'receivable.created']);
      for (const hit of r.hits) {
        assert.equal(hit.method, 'POST');
        assert.equal(hit.url, '/hook');
        assert.equal(hit.headers['content-type'], 'application/json');
        assert.equal(signatures(hit).length, 1);
        assert.match(signatures(hit)[0], /^v1,[A-Za-z0-9+/]{43}=$/);
        assert.match(String(hit.headers['webhook-timestamp']), /^\d+$/);
        assert.ok(Math.abs(Number(hit.headers['webhook-timestamp']) - hit.receivedAt / 1000) < 60);
        verifyBoth(hit, ep.secret);
        assert.throws(() => verify(hit.body, hit.headers, ep.secret.slice(0, -4) + 'AAA='), /No signature matches/);
        const body = JSON.parse(hit.body);
        assert.equal(hit.headers['webhook-id'], body.id);
        assert.deepEqual(Object.keys(body), ['id', 'object', 'type', 'createdAt', 'livemode', 'data']);
        assert.deepEqual(Object.keys(body.data), ['object']);
        const fetched = await h.ok('GET', `/v1/events/${body.id}`, k.secretKey);
        assert.deepEqual(body, fetched);
        assert.equal(body.object, 'event');
        assert.equal(body.livemode, false);
        if (body.type === 'receivable.created') assert.equal(body.data.object.paymentId, p.id);
        else assert.equal(body.data.object.id, p.id);
        if (body.type === 'payment.approved') assert.equal(body.data.object.status, 'approved');
      }
      for (const d of log) {
        assert.equal(d.object, 'webhook_delivery');
        assert.match(d.id, /^whd_/);
        assert.equal(d.endpointId, ep.id);
        assert.equal(d.status, 'succeeded');
        assert.equal(d.attempts, 1);
        assert.equal(d.lastResponseCode, 200);
        assert.equal(d.lastError, null);
        assert.equal(d.nextAttemptAt, null);
        assert.ok(d.lastAttemptAt && !Number.isNaN(Date.parse(d.lastAttemptAt)));
      }
      assert.deepEqual(log.map((d) => d.eventId).sort(), r.hits.map((x) => x.headers['webhook-id']).sort());
    });

    test('filtering by event type: a payment.approved endpoint gets only those, ["*"] gets all', async () => {
      const k = await signup(t);
      const approvedOnly = await receiver();
      const all = await receiver();
      const epApproved = await h.createEndpoint(k.secretKey, approvedOnly.url, ['payment.approved']);
      const epAll = await h.createEndpoint(k.secretKey, all.url, ['*']);
      const paid = await h.payPix(k.secretKey);
      const declined = await h.ok('POST', '/v1/payments', k.secretKey, { amountInCents: 500, method: 'credit_card', cardToken: 'tok_declined' });
      // Waits for I/O: the delivery crossing a loopback socket to the receiver.
      await eventually(async () => all.events().some((e) => e.type === 'payment.declined' && e.data.object.id === declined.id), 'the decline at the catch-all endpoint');
      await h.settled(k.secretKey, epAll.id, 5);
      // Deliveries are written with their events: a missing row means it was never going to be sent.
      const approvedLog = await h.settled(k.secretKey, epApproved.id, 1);
      assert.equal(approvedLog[0].status, 'succeeded');
      assert.equal(approvedOnly.hits.length, 1);
      const [only] = approvedOnly.events();
      assert.equal(only.type, 'payment.approved');
      assert.equal(only.data.object.id, paid.id);
      verifyBoth(approvedOnly.hits[0], epApproved.secret);
      assert.deepEqual(all.events().map((e) => e.type).sort(), ['payment.approved', 'payment.created', 'payment.created', 'payment.declined', 'receivable.created']);
    });

    test('a 500 is retried on the schedule until a 2xx; every attempt carries the same id, body and a valid signature', async () => {
      const k = await signup(t);
      const r = await receiver((_hit, i) => (i < 2 ? 500 : 200));
      const ep = await h.createEndpoint(k.secretKey, r.url, ['payment.created']);
      const p = await h.createPix(k.secretKey);
      const [d] = await h.settled(k.secretKey, ep.id, 1);
      assert.equal(d.status, 'succeeded');
      assert.equal(d.attempts, 3);
      assert.equal(d.lastResponseCode, 200);
      assert.equal(r.hits.length, 3);
      assert.deepEqual(r.hits.map((x) => x.answered), [500, 500, 200]);
      const event = await h.eventOf(k.secretKey, 'payment.created', p.id);
      for (const hit of r.hits) {
        assert.equal(hit.headers['webhook-id'], event.id);
        assert.equal(hit.body, r.hits[0].body);
        verifyBoth(hit, ep.secret);
      }
    });

    test('the delivery log shows a failed attempt, the response code and the next attempt while retrying', async () => {
      const k = await signup(t);
      const r = await receiver((_hit, i) => (i === 0 ? 500 : 'hold'));
      const ep = await h.createEndpoint(k.secretKey, r.url, ['payment.created']);
      await h.createPix(k.secretKey);
      // Waits for I/O: the delivery crossing a loopback socket to the receiver.
      await eventually(async () => r.openHeld === 1, 'the second attempt');
      const [retrying] = await h.deliveries(k.secretKey, ep.id);
      assert.equal(retrying.status, 'pending');
      assert.equal(retrying.attempts, 1);
      assert.equal(retrying.lastResponseCode, 500);
      assert.ok(retrying.lastAttemptAt);
      assert.ok(retrying.nextAttemptAt && !Number.isNaN(Date.parse(retrying.nextAttemptAt)), 'nextAttemptAt while pending');
      assert.ok(Date.parse(retrying.nextAttemptAt) >= Date.parse(retrying.lastAttemptAt), 'the retry comes after the failure');
      assert.deepEqual((await h.deliveries(k.secretKey, ep.id, '&status=pending')).map((x) => x.id), [retrying.id]);
      r.release(204);
      const [done] = await h.settled(k.secretKey, ep.id, 1);
      assert.equal(done.status, 'succeeded');
      assert.equal(done.attempts, 2);
      assert.equal(done.lastResponseCode, 204);
      assert.equal(done.nextAttemptAt, null);
      assert.deepEqual(await h.deliveries(k.secretKey, ep.id, '&status=pending'), []);
    });

    test('when every attempt fails the delivery ends failed; a later success clears the failure record', async () => {
      const k = await signup(t);
      let status = 500;
      const r = await receiver(() => status);
      const ep = await h.createEndpoint(k.secretKey, r.url, ['payment.created']);
      await h.createPix(k.secretKey);
      const [d] = await h.settled(k.secretKey, ep.id, 1);
      assert.equal(d.status, 'failed');
      assert.equal(d.attempts, t.config.webhookScheduleMs.length);
      assert.equal(d.lastResponseCode, 500);
      assert.equal(d.nextAttemptAt, null);
      assert.equal(r.hits.length, t.config.webhookScheduleMs.length);
      const endpoint = await h.ok('GET', `/v1/webhook-endpoints/${ep.id}`, k.secretKey);
      assert.equal(endpoint.enabled, true, 'one failed delivery does not disable the endpoint');
      const row = await t.store.db.selectFrom('webhook_endpoints').select('failing_since_ms').where('id', '=', ep.id).executeTakeFirstOrThrow();
      assert.ok(row.failing_since_ms !== null && row.failing_since_ms <= Date.now());

      status = 200;
      await h.createPix(k.secretKey);
      const log = await h.settled(k.secretKey, ep.id, 2);
      assert.deepEqual(log.map((x) => x.status), ['succeeded', 'failed']);
      const after = await t.store.db.selectFrom('webhook_endpoints').select('failing_since_ms').where('id', '=', ep.id).executeTakeFirstOrThrow();
      assert.equal(after.failing_since_ms, null);
    });

    test('a 410 Gone disables the endpoint at once and stops its deliveries', async () => {
      const k = await signup(t);
      const gone = await receiver(() => 410);
      const control = await receiver();
      const epGone = await h.createEndpoint(k.secretKey, gone.url, ['*']);
      const epControl = await h.createEndpoint(k.secretKey, control.url, ['*']);
      await h.createPix(k.secretKey);
      // Waits for I/O: the delivery crossing a loopback socket to the receiver.
      const disabled = await eventually(async () => {
        const e = await h.ok('GET', `/v1/webhook-endpoints/${epGone.id}`, k.secretKey);
        return e.enabled === false && e;
      }, 'the endpoint disabled');
      assert.match(disabled.disabledReason, /410/);
      const [d] = await h.settled(k.secretKey, epGone.id, 1);
      assert.equal(d.status, 'failed');
      assert.equal(d.attempts, 1, 'no retry after a 410');
      assert.equal(d.lastResponseCode, 410);
      // The disabling is itself an event, delivered to the endpoints still enabled.
      // Waits for I/O: the delivery crossing a loopback socket to the receiver.
      await eventually(async () => control.events().some((e) => e.type === 'webhook_endpoint.disabled' && e.data.object.id === epGone.id), 'the webhook_endpoint.disabled event');
      const p2 = await h.createPix(k.secretKey);
      // Waits for I/O: the delivery crossing a loopback socket to the receiver.
      await eventually(async () => control.events().some((e) => e.type === 'payment.created' && e.data.object.id === p2.id), 'the next event at the control endpoint');
      await h.settled(k.secretKey, epControl.id, 3);
      assert.equal((await h.deliveries(k.secretKey, epGone.id)).length, 1, 'no new delivery to a disabled endpoint');
      assert.equal(gone.hits.length, 1);
    });

    test('an endpoint failing every attempt for 5 days is disabled, and a webhook_endpoint.disabled event says so', async () => {
      const k = await signup(t);
      const failing = await receiver(() => 503);
      const watcher = await receiver();
      const ep = await h.createEndpoint(k.secretKey, failing.url, ['payment.created']);
      const epWatcher = await h.createEndpoint(k.secretKey, watcher.url, ['webhook_endpoint.disabled']);
      const failingSinceMs = Date.now() - t.config.webhookDisableAfterMs - 60_000;
      await t.store.write((tx) => tx.updateTable('webhook_endpoints').set({ failing_since_ms: failingSinceMs }).where('id', '=', ep.id).execute());
      await h.createPix(k.secretKey);
      // Waits for I/O: the delivery crossing a loopback socket to the receiver.
      const disabled = await eventually(async () => {
        const e = await h.ok('GET', `/v1/webhook-endpoints/${ep.id}`, k.secretKey);
        return e.enabled === false && e;
      }, 'the endpoint disabled');
      assert.match(disabled.disabledReason, /failed for 5 days/);
      const [d] = await h.settled(k.secretKey, ep.id, 1);
      assert.equal(d.status, 'failed');
      assert.equal(d.attempts, 1);
      assert.equal(d.lastResponseCode, 503);
      assert.equal(failing.hits.length, 1);
      const events = (await h.ok('GET', '/v1/events?type=webhook_endpoint.disabled', k.secretKey)).data as Json[];
      assert.equal(events.length, 1);
      assert.equal(events[0].data.object.id, ep.id);
      assert.equal(events[0].data.object.enabled, false);
      assert.equal(events[0].data.object.disabledReason, disabled.disabledReason);
      assert.equal(events[0].data.object.secret, undefined, 'events never carry the secret');
      await h.settled(k.secretKey, epWatcher.id, 1);
      assert.equal(watcher.hits.length, 1);
      assert.equal(watcher.events()[0].id, events[0].id);
      verifyBoth(watcher.hits[0], epWatcher.secret);
      // No second disabling event for the same endpoint.
      await h.createPix(k.secretKey);
      assert.equal((await h.ok('GET', '/v1/events?type=webhook_endpoint.disabled', k.secretKey)).data.length, 1);
    });

    test('secret rotation: two signatures (old and new) during the overlap, then only the new one', async () => {
      const k = await signup(t);
      const r = await receiver();
      const ep = await h.createEndpoint(k.secretKey, r.url, ['payment.created']);
      const oldSecret = ep.secret as string;
      const rotated = await h.ok('POST', `/v1/webhook-endpoints/${ep.id}/rotate-secret`, k.secretKey);
      const newSecret = rotated.secret as string;
      assert.match(newSecret, /^whsec_/);
      assert.notEqual(newSecret, oldSecret);
      const fetched = await h.ok('GET', `/v1/webhook-endpoints/${ep.id}`, k.secretKey);
      assert.equal(fetched.secret, undefined, 'the secret is shown on create and rotate only');
      assert.equal((await h.ok('GET', '/v1/webhook-endpoints', k.secretKey)).data[0].secret, undefined);
      const expiresAt = await t.store.db.selectFrom('webhook_endpoints').select('previous_secret_expires_at_ms').where('id', '=', ep.id).executeTakeFirstOrThrow();
      const overlapMs = Number(expiresAt.previous_secret_expires_at_ms) - Date.now();
      assert.ok(overlapMs > 23.9 * 3600_000 && overlapMs <= 24 * 3600_000, 'the old secret signs for 24 hours');

      await h.createPix(k.secretKey);
      // Waits for I/O: the delivery crossing a loopback socket to the receiver.
      await eventually(async () => r.hits.length === 1, 'the delivery after rotation');
      const both = r.hits[0];
      const sigs = signatures(both);
      assert.equal(sigs.length, 2);
      verifyBoth(both, oldSecret);
      verifyBoth(both, newSecret);
      const withNew = sigs.filter((s) => { try { verify(both.body, onlySignature(both, s), newSecret); return true; } catch { return false; } });
      const withOld = sigs.filter((s) => { try { verify(both.body, onlySignature(both, s), oldSecret); return true; } catch { return false; } });
      assert.equal(withNew.length, 1);
      assert.equal(withOld.length, 1);
      assert.notEqual(withNew[0], withOld[0]);

      // The overlap is over: only the new secret signs.
      await t.store.write((tx) => tx.updateTable('webhook_endpoints').set({ previous_secret_expires_at_ms: Date.now() - 1 }).where('id', '=', ep.id).execute());
      await h.createPix(k.secretKey);
      // Waits for I/O: the delivery crossing a loopback socket to the receiver.
      await eventually(async () => r.hits.length === 2, 'the delivery after the overlap');
      const single = r.hits[1];
      assert.equal(signatures(single).length, 1);
      verifyBoth(single, newSecret);
      assert.throws(() => verify(single.body, single.headers, oldSecret), /No signature matches/);
      assert.throws(() => new Webhook(oldSecret).verify(single.body, single.headers as Record<string, string>), /No matching signature/);
    });

    test('redelivery: to every matching endpoint, or to one endpoint whatever its filter', async () => {
      const k = await signup(t);
      const rA = await receiver();
      const rB = await receiver();
      const rC = await receiver();
      const epA = await h.createEndpoint(k.secretKey, rA.url, ['payment.created']);
      const epB = await h.createEndpoint(k.secretKey, rB.url, ['*']);
      const epC = await h.createEndpoint(k.secretKey, rC.url, ['payment.approved']);
      const p = await h.createPix(k.secretKey);
      const event = await h.eventOf(k.secretKey, 'payment.created', p.id);
      const [firstA] = await h.settled(k.secretKey, epA.id, 1);
      await h.settled(k.secretKey, epB.id, 1);

      const again = await h.ok('POST', `/v1/events/${event.id}/redeliver`, k.secretKey, {});
      assert.equal(again.object, 'list');
      assert.deepEqual(again.data.map((d: Json) => d.endpointId).sort(), [epA.id, epB.id].sort());
      for (const d of again.data) {
        assert.equal(d.eventId, event.id);
        assert.equal(d.status, 'pending');
        assert.notEqual(d.id, firstA.id);
      }
      await h.settled(k.secretKey, epA.id, 2);
      await h.settled(k.secretKey, epB.id, 2);
      for (const [r, secret] of [[rA, epA.secret], [rB, epB.secret]] as Array<[Receiver, string]>) {
        assert.equal(r.hits.length, 2);
        assert.equal(r.hits[1].headers['webhook-id'], event.id, 'the same webhook-id: receivers deduplicate on it');
        assert.equal(r.hits[1].body, r.hits[0].body);
        verifyBoth(r.hits[1], secret);
      }
      assert.equal(rC.hits.length, 0);
      assert.equal((await h.deliveries(k.secretKey, epA.id, `&eventId=${event.id}`)).length, 2);

      const toC = await h.ok('POST', `/v1/events/${event.id}/redeliver`, k.secretKey, { endpointId: epC.id });
      assert.deepEqual(toC.data.map((d: Json) => d.endpointId), [epC.id]);
      await h.settled(k.secretKey, epC.id, 1);
      assert.equal(rC.hits.length, 1);
      assert.equal(rC.events()[0].id, event.id);
      verifyBoth(rC.hits[0], epC.secret);
      assert.equal(rA.hits.length, 2, 'only the named endpoint');

      const unknown = await h.api('POST', `/v1/events/${event.id}/redeliver`, k.secretKey, { endpointId: 'whe_nope' });
      assert.equal(unknown.statusCode, 404);
      assert.equal(unknown.json().error.param, 'endpointId');
      await h.ok('PATCH', `/v1/webhook-endpoints/${epC.id}`, k.secretKey, { enabled: false });
      const toDisabled = await h.api('POST', `/v1/events/${event.id}/redeliver`, k.secretKey, { endpointId: epC.id });
      assert.equal(toDisabled.statusCode, 409);
      assert.equal(toDisabled.json().error.code, 'INVALID_STATE');
      const other = await signup(t, 'Other merchant');
      assert.equal((await h.api('POST', `/v1/events/${event.id}/redeliver`, other.secretKey, {})).statusCode, 404);
      assert.equal((await h.api('POST', '/v1/events/evt_nope/redeliver', k.secretKey, {})).statusCode, 404);

      // The body is optional: a bare POST redelivers to every enabled matching endpoint.
      const bare = await h.api('POST', `/v1/events/${event.id}/redeliver`, k.secretKey);
      assert.equal(bare.statusCode, 200, bare.body);
      assert.deepEqual(bare.json().data.map((d: Json) => d.endpointId).sort(), [epA.id, epB.id].sort());
      await h.settled(k.secretKey, epA.id, 3);
      assert.equal(rA.hits.length, 3);
    });

    test('POST /v1/webhook-endpoints/{id}/test sends a webhook.test event to that endpoint only', async () => {
      const k = await signup(t);
      const r = await receiver();
      const bystander = await receiver();
      const ep = await h.createEndpoint(k.secretKey, r.url, ['payment.approved']);
      const epBystander = await h.createEndpoint(k.secretKey, bystander.url, ['*']);
      const d = await h.ok('POST', `/v1/webhook-endpoints/${ep.id}/test`, k.secretKey);
      assert.equal(d.object, 'webhook_delivery');
      assert.equal(d.endpointId, ep.id);
      assert.equal(d.status, 'pending');
      assert.match(d.eventId, /^evt_/);
      const [done] = await h.settled(k.secretKey, ep.id, 1);
      assert.equal(done.id, d.id);
      assert.equal(done.status, 'succeeded');
      assert.equal(r.hits.length, 1);
      const body = r.events()[0];
      assert.equal(body.type, 'webhook.test');
      assert.equal(body.id, d.eventId);
      assert.equal(body.data.object.endpointId, ep.id);
      verifyBoth(r.hits[0], ep.secret);
      assert.deepEqual(await h.ok('GET', `/v1/events/${d.eventId}`, k.secretKey), JSON.parse(r.hits[0].body));
      assert.deepEqual(await h.deliveries(k.secretKey, epBystander.id), [], 'other endpoints do not get the test event');
      assert.equal(bystander.hits.length, 0);
      await h.ok('PATCH', `/v1/webhook-endpoints/${ep.id}`, k.secretKey, { enabled: false });
      const disabled = await h.api('POST', `/v1/webhook-endpoints/${ep.id}/test`, k.secretKey);
      assert.equal(disabled.statusCode, 409);
      assert.equal(disabled.json().error.code, 'INVALID_STATE');
    });

    test('endpoint CRUD: validation of the url and events, PATCH, disable stops deliveries, DELETE', async () => {
      const k = await signup(t);
      const r = await receiver();
      const control = await receiver();
      const epControl = await h.createEndpoint(k.secretKey, control.url, ['payment.created']);
      const badUrls = ['ftp://example.com/hook', 'javascript:alert(1)', 'not a url', '/relative/path', 'file:///etc/passwd', `http://user:pass@127.0.0.1:${new URL(r.url).port}/hook`, 'https://token@example.com/hook'];
      for (const url of badUrls) {
        const res = await h.api('POST', '/v1/webhook-endpoints', k.secretKey, { url, events: ['*'] });
        assert.equal(res.statusCode, 400, url);
        assert.equal(res.json().error.code, 'VALIDATION_ERROR', url);
        assert.equal(res.json().error.param, 'url', url);
      }
      const badBodies: Array<[object, string]> = [
        [{ events: ['*'] }, 'url'],
        [{ url: r.url }, 'events'],
        [{ url: r.url, events: [] }, 'events'],
        [{ url: r.url, events: ['Payment Approved'] }, 'events.0'],
        [{ url: r.url, events: ['*'], extra: 1 }, 'extra'],
      ];
      for (const [body, param] of badBodies) {
        const res = await h.api('POST', '/v1/webhook-endpoints', k.secretKey, body);
        assert.equal(res.statusCode, 400, JSON.stringify(body));
        assert.equal(res.json().error.param, param, JSON.stringify(body));
      }

      const ep = await h.ok('POST', '/v1/webhook-endpoints', k.secretKey, { url: r.url, events: ['payment.created', 'payment.created'], description: 'orders' });
      assert.deepEqual({ ...ep, secret: undefined, id: undefined, createdAt: undefined, updatedAt: undefined }, {
        object: 'webhook_endpoint', url: r.url, events: ['payment.created'], description: 'orders', enabled: true, disabledReason: null, livemode: false,
        secret: undefined, id: undefined, createdAt: undefined, updatedAt: undefined,
      });
      const { secret: _secret, ...shown } = ep;
      assert.deepEqual(await h.ok('GET', `/v1/webhook-endpoints/${ep.id}`, k.secretKey), shown);
      const list = await h.ok('GET', '/v1/webhook-endpoints', k.secretKey);
      assert.deepEqual(list.data.map((e: Json) => e.id).sort(), [ep.id, epControl.id].sort());
      assert.ok(list.data.every((e: Json) => e.secret === undefined));

      for (const [body, param] of [[{ url: 'ftp://example.com' }, 'url'], [{ url: 'http://a:b@example.com/' }, 'url'], [{ events: [] }, 'events'], [{ enabled: 'no' }, 'enabled']] as Array<[object, string]>) {
        const res = await h.api('PATCH', `/v1/webhook-endpoints/${ep.id}`, k.secretKey, body);
        assert.equal(res.statusCode, 400, JSON.stringify(body));
        assert.equal(res.json().error.param, param, JSON.stringify(body));
      }
      assert.equal((await h.api('PATCH', `/v1/webhook-endpoints/${ep.id}`, k.secretKey, {})).statusCode, 400);
      const patched = await h.ok('PATCH', `/v1/webhook-endpoints/${ep.id}`, k.secretKey, { events: ['payment.created', 'refund.created'], description: null });
      assert.deepEqual(patched.events, ['payment.created', 'refund.created']);
      assert.equal(patched.description, null);

      // Disabled: the next event is not sent to it (the control endpoint shows it happened).
      const off = await h.ok('PATCH', `/v1/webhook-endpoints/${ep.id}`, k.secretKey, { enabled: false });
      assert.equal(off.enabled, false);
      assert.equal(off.disabledReason, 'disabled by you');
      const p1 = await h.createPix(k.secretKey);
      // Waits for I/O: the delivery crossing a loopback socket to the receiver.
      await eventually(async () => control.events().some((e) => e.data.object.id === p1.id), 'the control delivery');
      assert.deepEqual(await h.deliveries(k.secretKey, ep.id), []);
      assert.equal(r.hits.length, 0);
      const on = await h.ok('PATCH', `/v1/webhook-endpoints/${ep.id}`, k.secretKey, { enabled: true });
      assert.equal(on.enabled, true);
      assert.equal(on.disabledReason, null);
      const p2 = await h.createPix(k.secretKey);
      await h.settled(k.secretKey, ep.id, 1);
      assert.equal(r.events()[0].data.object.id, p2.id);

      const deleted = await h.ok('DELETE', `/v1/webhook-endpoints/${ep.id}`, k.secretKey);
      assert.deepEqual(deleted, { id: ep.id, object: 'webhook_endpoint', deleted: true, livemode: false });
      for (const [method, url] of [['GET', `/v1/webhook-endpoints/${ep.id}`], ['DELETE', `/v1/webhook-endpoints/${ep.id}`], ['GET', `/v1/webhook-endpoints/${ep.id}/deliveries`], ['POST', `/v1/webhook-endpoints/${ep.id}/test`]] as const) {
        const res = await h.api(method, url, k.secretKey);
        assert.equal(res.statusCode, 404, `${method} ${url}`);
        assert.equal(res.json().error.code, 'NOT_FOUND');
      }
      const p3 = await h.createPix(k.secretKey);
      // Waits for I/O: the delivery crossing a loopback socket to the receiver.
      await eventually(async () => control.events().some((e) => e.data.object.id === p3.id), 'the control delivery');
      assert.equal(r.hits.length, 1, 'nothing reaches a deleted endpoint');
    });

    test('SSRF: live mode refuses loopback and private urls (the sandbox allows them); test and live never mix', async () => {
      const k = await signup(t);
      const live = await createKey(t.store, k.accountId, 'secret', true);
      await activateLive(t.store, k.accountId);
      t.keyCache.clear();
      const refused = [
        'http://127.0.0.1/hook', 'http://10.0.0.1/hook', 'http://localhost/hook', 'http://[::1]/hook', 'http://[::ffff:127.0.0.1]/hook',
        'http://169.254.169.254/latest/meta-data', 'http://192.168.0.10/', 'http://172.16.5.4/', 'http://0.0.0.0/', 'http://2130706433/', 'http://api.localhost/',
        'http://[fd00::1]/', 'http://[fe80::1]/',
      ];
      for (const url of refused) {
        const res = await h.api('POST', '/v1/webhook-endpoints', live.key, { url, events: ['*'] });
        assert.equal(res.statusCode, 400, url);
        assert.equal(res.json().error.code, 'VALIDATION_ERROR', url);
        assert.equal(res.json().error.param, 'url', url);
      }
      const rTest = await receiver();
      const rLive = await receiver();
      const epTest = await h.createEndpoint(k.secretKey, rTest.url, ['*']);
      assert.equal(epTest.livemode, false);
      // A public address literal is accepted (no DNS needed)...
      const epLive = await h.createEndpoint(live.key, 'http://93.184.216.34/hook', ['*']);
      assert.equal(epLive.livemode, true);
      const patch = await h.api('PATCH', `/v1/webhook-endpoints/${epLive.id}`, live.key, { url: 'http://127.0.0.1:9/hook' });
      assert.equal(patch.statusCode, 400);
      assert.equal(patch.json().error.param, 'url');
      // ...and checked again when sending: even if the stored url points at loopback (DNS
      // rebinding, or a url stored before a rule changed), the live dispatcher refuses to connect.
      await t.store.write((tx) => tx.updateTable('webhook_endpoints').set({ url: rLive.url }).where('id', '=', epLive.id).execute());

      const testPayment = await h.createPix(k.secretKey);
      // A live object (live payments need a PSP since issue 25): a live recipient.
      const liveRecipient = await h.ok('POST', '/v1/recipients', live.key, { name: 'Parceiro LTDA', document: '11.222.333/0001-81', bankAccount: { bankCode: '341', agency: '1234', account: '12345-6', accountType: 'checking' } });
      assert.equal(liveRecipient.livemode, true);
      const liveEvent = await h.eventOf(live.key, 'recipient.created', liveRecipient.id);
      const testEvent = await h.eventOf(k.secretKey, 'payment.created', testPayment.id);
      assert.equal(liveEvent.livemode, true);
      const [liveDelivery] = await h.settled(live.key, epLive.id, 1);
      assert.equal(liveDelivery.eventId, liveEvent.id, 'the live endpoint gets only live events');
      assert.equal(liveDelivery.status, 'failed');
      assert.equal(liveDelivery.lastResponseCode, null);
      assert.match(liveDelivery.lastError, /private address/);
      assert.equal(rLive.hits.length, 0, 'the dispatcher never connected to loopback in live mode');
      const testLog = await h.settled(k.secretKey, epTest.id, 1);
      assert.equal(testLog[0].eventId, testEvent.id, 'the sandbox endpoint gets only sandbox events');
      assert.deepEqual(await h.deliveries(k.secretKey, epTest.id, `&eventId=${liveEvent.id}`), []);
      assert.deepEqual(rTest.events().map((e) => e.id), [testEvent.id]);

      // Each mode sees only its own endpoints and events.
      for (const [key, id] of [[live.key, epTest.id], [k.secretKey, epLive.id]]) {
        const res = await h.api('GET', `/v1/webhook-endpoints/${id}`, key);
        assert.equal(res.statusCode, 404);
      }
      assert.deepEqual((await h.ok('GET', '/v1/webhook-endpoints', live.key)).data.map((e: Json) => e.id), [epLive.id]);
      assert.equal((await h.api('GET', `/v1/events/${liveEvent.id}`, k.secretKey)).statusCode, 404);
      assert.equal((await h.api('GET', `/v1/events/${testEvent.id}`, live.key)).statusCode, 404);
      assert.equal((await h.api('POST', `/v1/events/${testEvent.id}/redeliver`, k.secretKey, { endpointId: epLive.id })).statusCode, 404);

      // Another account sees none of it.
      const other = await signup(t, 'Other merchant');
      const calls: Array<['GET' | 'POST' | 'PATCH' | 'DELETE', string, object?]> = [
        ['GET', `/v1/webhook-endpoints/${epTest.id}`], ['PATCH', `/v1/webhook-endpoints/${epTest.id}`, { enabled: false }], ['DELETE', `/v1/webhook-endpoints/${epTest.id}`],
        ['POST', `/v1/webhook-endpoints/${epTest.id}/rotate-secret`], ['POST', `/v1/webhook-endpoints/${epTest.id}/test`], ['GET', `/v1/webhook-endpoints/${epTest.id}/deliveries`],
        ['GET', `/v1/events/${testEvent.id}`], ['POST', `/v1/events/${testEvent.id}/redeliver`, {}],
      ];
      for (const [method, url, body] of calls) {
        const res = await h.api(method, url, other.secretKey, body);
        assert.equal(res.statusCode, 404, `${method} ${url}`);
        assert.equal(res.json().error.code, 'NOT_FOUND', `${method} ${url}`);
      }
      assert.deepEqual((await h.ok('GET', '/v1/webhook-endpoints', other.secretKey)).data, []);
      const otherEndpoint = await h.createEndpoint(other.secretKey, rTest.url, ['*']);
      assert.equal((await h.api('POST', `/v1/events/${testEvent.id}/redeliver`, k.secretKey, { endpointId: otherEndpoint.id })).statusCode, 404);
      assert.equal((await h.ok('GET', `/v1/webhook-endpoints/${epTest.id}`, k.secretKey)).enabled, true, 'untouched by the other account');
    });

    test('GET /v1/events: newest first, filters by type and creation time, cursors; other accounts get 404', async () => {
      const k = await signup(t);
      const p1 = await h.createPix(k.secretKey);
      const first = await h.eventOf(k.secretKey, 'payment.created', p1.id);
      // Waits for the system clock this suite's app runs on to pass one millisecond (two events with distinct createdAt).
      await eventually(async () => Date.now() > Date.parse(first.createdAt) + 1, 'the clock to move on');
      const mark = new Date().toISOString();
      const p2 = await h.payPix(k.secretKey);
      const all = (await h.ok('GET', '/v1/events?limit=100', k.secretKey)).data as Json[];
      const mine = all.filter((e) => [p1.id, p2.id].includes(e.data.object.id) || [p1.id, p2.id].includes(e.data.object.paymentId));
      assert.equal(mine.length, 4);
      const ids = all.map((e) => e.id);
      assert.deepEqual(ids, [...ids].sort().reverse(), 'newest first');
      assert.equal(mine[mine.length - 1].id, first.id);

      const created = (await h.ok('GET', '/v1/events?type=payment.created', k.secretKey)).data as Json[];
      assert.deepEqual(created.map((e) => e.data.object.id), [p2.id, p1.id]);
      assert.ok(created.every((e) => e.type === 'payment.created'));
      const since = (await h.ok('GET', `/v1/events?createdGte=${encodeURIComponent(mark)}`, k.secretKey)).data as Json[];
      assert.deepEqual(since.map((e) => e.type).sort(), ['payment.approved', 'payment.created', 'receivable.created']);
      assert.ok(since.every((e) => e.createdAt >= mark));
      const sinceCreated = (await h.ok('GET', `/v1/events?type=payment.created&createdGte=${encodeURIComponent(mark)}`, k.secretKey)).data as Json[];
      assert.deepEqual(sinceCreated.map((e) => e.data.object.id), [p2.id]);
      const before = (await h.ok('GET', `/v1/events?createdLte=${encodeURIComponent(mark)}`, k.secretKey)).data as Json[];
      assert.ok(before.some((e) => e.id === first.id));
      assert.ok(before.every((e) => e.createdAt <= mark));

      const page1 = await h.ok('GET', '/v1/events?limit=2', k.secretKey);
      assert.equal(page1.data.length, 2);
      assert.equal(page1.hasMore, true);
      const page2 = await h.ok('GET', `/v1/events?limit=2&startingAfter=${page1.data[1].id}`, k.secretKey);
      assert.deepEqual([...page1.data, ...page2.data].map((e: Json) => e.id), ids.slice(0, 4));
      const back = await h.ok('GET', `/v1/events?limit=2&endingBefore=${page2.data[0].id}`, k.secretKey);
      assert.deepEqual(back.data.map((e: Json) => e.id), ids.slice(0, 2));

      for (const bad of ['?limit=0', '?createdGte=yesterday', '?unknown=1']) {
        const res = await h.api('GET', `/v1/events${bad}`, k.secretKey);
        assert.equal(res.statusCode, 400, bad);
        assert.equal(res.json().error.code, 'VALIDATION_ERROR', bad);
      }
      assert.deepEqual((await h.ok('GET', `/v1/events/${first.id}`, k.secretKey)).id, first.id);
      const other = await signup(t, 'Other merchant');
      const res = await h.api('GET', `/v1/events/${first.id}`, other.secretKey);
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().error.code, 'NOT_FOUND');
      assert.equal((await h.api('GET', '/v1/events/evt_nope', k.secretKey)).statusCode, 404);
      const otherList = (await h.ok('GET', '/v1/events?limit=100', other.secretKey)).data as Json[];
      assert.ok(otherList.every((e) => !ids.includes(e.id)));
    });

    test('a slow endpoint does not delay deliveries to a fast one', async () => {
      const k = await signup(t);
      const slow = await receiver(() => 'hold');
      const fast = await receiver();
      const epSlow = await h.createEndpoint(k.secretKey, slow.url, ['payment.created']);
      const epFast = await h.createEndpoint(k.secretKey, fast.url, ['payment.created']);
      await h.createPix(k.secretKey);
      // Waits for I/O: the delivery crossing a loopback socket to the receiver.
      await eventually(async () => slow.openHeld >= 1, 'the slow endpoint holding the first delivery');
      // Four more events while the slow endpoint still holds the first one.
      for (let i = 0; i < 4; i++) await h.createPix(k.secretKey);
      await h.settled(k.secretKey, epFast.id, 5, 'every fast delivery');
      assert.equal(fast.hits.length, 5);
      assert.equal(slow.answeredCount, 0, 'the slow endpoint has answered nothing yet');
      assert.ok(slow.openHeld >= 1, 'and still holds its first request');
      // The slow endpoint gets its deliveries too once it answers.
      // Waits for I/O: the delivery crossing a loopback socket to the receiver.
      await eventually(async () => {
        slow.release(200);
        const d = await h.deliveries(k.secretKey, epSlow.id);
        return d.length === 5 && d.every((x) => x.status === 'succeeded');
      }, 'every slow delivery');
      assert.deepEqual(slow.events().map((e) => e.id).sort(), fast.events().map((e) => e.id).sort());
    });

    test('a slow endpoint with a backlog takes at most its share of the sending slots', async () => {
      const k = await signup(t);
      const events: Json[] = [];
      for (let i = 0; i < 3; i++) events.push(await h.eventOf(k.secretKey, 'payment.created', (await h.createPix(k.secretKey)).id));
      const slow = await receiver(() => 'hold');
      const fast = await receiver();
      const epSlow = await h.createEndpoint(k.secretKey, slow.url, ['payment.created']);
      const epFast = await h.createEndpoint(k.secretKey, fast.url, ['payment.created']);
      // A backlog, as after an outage: more due deliveries to the slow endpoint than there are
      // sending slots, all due before the fast endpoint's.
      const nowMs = Date.now();
      const owner = (e: Json) => ({ id: e.id as string, account_id: k.accountId, livemode: 0 });
      const backlog = Array.from({ length: t.config.webhookMaxInFlight }, (_, i) => newDeliveryRow(epSlow.id, owner(events[i % 3]), nowMs - 1000 + i));
      await t.store.write((tx) => tx.insertInto('webhook_deliveries').values([...backlog, ...events.map((e) => newDeliveryRow(epFast.id, owner(e), nowMs))]).execute());
      await h.settled(k.secretKey, epFast.id, 3, 'the fast endpoint served while the slow one holds its requests');
      assert.equal(fast.hits.length, 3);
      assert.equal(slow.answeredCount, 0);
      assert.ok(slow.openHeld >= 1, 'the slow endpoint is holding requests');
      assert.ok(slow.hits.length <= t.config.webhookPerEndpointMaxInFlight, `at most ${t.config.webhookPerEndpointMaxInFlight} at once to one endpoint, got ${slow.hits.length}`);
      // Waits for I/O: the delivery crossing a loopback socket to the receiver.
      await eventually(async () => {
        slow.release(200);
        const d = await h.deliveries(k.secretKey, epSlow.id);
        return d.length === backlog.length && d.every((x) => x.status === 'succeeded');
      }, 'the backlog delivered');
      assert.equal(slow.hits.length, backlog.length);
    });
  });

  describe(`webhook timeouts (${engine})`, () => {
    let t: TestApp;
    const receivers: Receiver[] = [];
    before(async () => {
      t = await startApp(engine, { webhookScheduleMs: [0, 50, 50, 50], webhookTimeoutMs: 300, webhookLeaseMs: 2000 });
    });
    after(async () => {
      await Promise.all(receivers.map((r) => r.close()));
      await t?.teardown();
    });
    const h = suiteHelpers(() => t);

    test('an endpoint that does not answer in time is retried; the attempt is logged with a null response code', async () => {
      const k = await signup(t);
      const r = await Receiver.start(() => 'hang');
      receivers.push(r);
      const ep = await h.createEndpoint(k.secretKey, r.url, ['payment.created']);
      await h.createPix(k.secretKey);
      const [d] = await h.settled(k.secretKey, ep.id, 1);
      assert.equal(d.status, 'failed');
      assert.equal(d.attempts, t.config.webhookScheduleMs.length);
      assert.equal(d.lastResponseCode, null);
      assert.match(d.lastError, /no answer within 300 ms/);
      // Every attempt that reached the receiver was given up by the sender, none answered.
      // Waits for I/O: the delivery crossing a loopback socket to the receiver.
      await eventually(async () => r.hits.length >= 1 && r.hits.every((x) => x.aborted), 'the attempts given up');
      assert.ok(r.hits.length <= d.attempts);
      assert.ok(r.hits.every((x) => x.answered === null && x.headers['webhook-id'] === r.hits[0].headers['webhook-id']));
    });

    test('a timeout then a quick answer: the retry succeeds', async () => {
      const k = await signup(t);
      const r = await Receiver.start((_hit, i) => (i === 0 ? 'hang' : 200));
      receivers.push(r);
      const ep = await h.createEndpoint(k.secretKey, r.url, ['payment.created']);
      await h.createPix(k.secretKey);
      const [d] = await h.settled(k.secretKey, ep.id, 1);
      assert.equal(d.status, 'succeeded');
      assert.equal(d.lastResponseCode, 200);
      assert.ok(d.attempts >= 2, 'retried after the timeout');
      assert.equal(r.hits[0].answered, null);
      // Waits for I/O: the delivery crossing a loopback socket to the receiver.
      await eventually(async () => r.hits[0].aborted, 'the first attempt given up');
      verifyBoth(r.hits[r.hits.length - 1], ep.secret);
    });
  });

  describe(`webhook worker killed mid-delivery (${engine})`, () => {
    let t: TestApp;
    let r: Receiver;
    const h = suiteHelpers(() => t);
    const children: ChildProcess[] = [];
    const output: string[] = [];
    const LEASE_MS = 3000;

    const spawnWorker = (): ChildProcess => {
      const child = spawn(process.execPath, [...CLI, 'worker'], {
        cwd: SERVER_DIR,
        env: {
          ...process.env,
          DATABASE_URL: t.db.url,
          WEBHOOK_LEASE_MS: String(LEASE_MS),
          WEBHOOK_TIMEOUT_MS: '2500',
          WEBHOOK_SCHEDULE_MS: '0,50,50,50',
          WORKER_POLL_MS: '50',
          SETTLEMENT_SCHEDULE: 'false',
          LOG_LEVEL: 'warn',
          LOG_FILE: '',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const keep = (chunk: Buffer) => {
        output.push(chunk.toString());
        if (output.length > 200) output.shift();
      };
      child.stdout?.on('data', keep);
      child.stderr?.on('data', keep);
      children.push(child);
      return child;
    };
    const exited = (child: ChildProcess) => new Promise<void>((ok) => {
      if (child.exitCode !== null || child.signalCode !== null) return ok();
      child.once('exit', () => ok());
    });

    before(async () => {
      // The API alone: webhooks are sent only by the separate worker processes.
      t = await startApp(engine, { workerInProcess: false });
      r = await Receiver.start((_hit, i) => (i === 0 ? 'hang' : 200));
    });
    after(async () => {
      for (const child of children) {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await exited(child);
      }
      await r?.close();
      await t?.teardown();
    });

    test('a delivery in flight when its worker is killed is sent again, with the same webhook-id, after the lease expires', async () => {
      const k = await signup(t);
      const ep = await h.createEndpoint(k.secretKey, r.url, ['payment.created']);
      const first = spawnWorker();
      const p = await h.createPix(k.secretKey);
      const event = await h.eventOf(k.secretKey, 'payment.created', p.id);
      // Waits for I/O: the worker child process.
      await eventually(async () => r.hits.length === 1, `the first worker sending (output: ${output.join('').slice(-2000)})`, 30_000);
      const claimed = await t.store.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', ep.id).executeTakeFirstOrThrow();
      assert.equal(claimed.status, 'pending');
      assert.equal(claimed.attempts, 0, 'the attempt is in flight, not yet recorded');
      assert.match(String(claimed.locked_by), /^whk_/);
      assert.ok(claimed.locked_until_ms !== null && claimed.locked_until_ms > Date.now(), 'leased');
      first.kill('SIGKILL');
      await exited(first);
      assert.equal(first.signalCode, 'SIGKILL');

      spawnWorker();
      // Waits for I/O: the worker child process.
      const done = await eventually(async () => {
        const row = await t.store.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', ep.id).executeTakeFirstOrThrow();
        return row.status !== 'pending' && row;
      }, `the second worker delivering (output: ${output.join('').slice(-2000)})`, 30_000);
      assert.equal(done.status, 'succeeded');
      assert.equal(done.last_response_code, 200);
      assert.equal(done.attempts, 1, 'the killed attempt left nothing but its lease');
      assert.equal(done.locked_by, null);
      assert.equal(r.hits.length, 2);
      assert.equal(r.hits[0].headers['webhook-id'], event.id);
      assert.equal(r.hits[1].headers['webhook-id'], event.id, 'the same webhook-id, so the receiver can deduplicate');
      assert.equal(r.hits[1].body, r.hits[0].body);
      assert.ok(r.hits[1].receivedAt >= Number(claimed.locked_until_ms), 'sent again only after the lease ran out');
      verifyBoth(r.hits[0], ep.secret);
      verifyBoth(r.hits[1], ep.secret);
    });
  });
}

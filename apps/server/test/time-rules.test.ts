import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Type } from 'typebox';
import { ENGINES, auth, signup, startManualApp, testDatabase, type Keys, type ManualApp, type TestDb } from './helpers.js';
import { ManualClock } from '../src/clock.js';
import { Store } from '../src/store/index.js';
import { Worker, JOB_RETRY_BASE_MS } from '../src/jobs/worker.js';
import { claim, complete, enqueue } from '../src/jobs/queue.js';
import { purgeExpired } from '../src/app.js';
import { createAdminUser, DEFAULT_SESSION_TTL_MS } from '../src/modules/admin/index.js';
import { addDays, localDate } from '../src/modules/accounts/settings.js';
import { DEFAULT_SCHEDULE_MS } from '../src/modules/webhooks/dispatcher.js';

// Every time-based rule, tested by moving a ManualClock across its edge (clock.ts): one
// millisecond before, nothing happens; at (or one millisecond after) the edge, it does. No test
// here waits on the wall clock: after advance(), the app's worker and dispatcher run what is due
// (helpers.ts startManualApp), and the test reads the result.

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
// São Paulo is UTC-3 all year: its midnight is 03:00 UTC (accounts/settings.ts).
const SAO_PAULO_MIDNIGHT_UTC_MS = 3 * HOUR_MS;

// The next São Paulo midnight strictly after `ms`.
function nextSaoPauloMidnight(ms: number): number {
  const dayStart = Math.floor((ms - SAO_PAULO_MIDNIGHT_UTC_MS) / DAY_MS) * DAY_MS + SAO_PAULO_MIDNIGHT_UTC_MS;
  return dayStart + DAY_MS;
}

for (const engine of ENGINES) {
  describe(`time-based rules, moved across their edges on a ManualClock (${engine})`, () => {
    let t: ManualApp;
    let k: Keys;
    const api = (method: string, url: string, key: string, payload?: unknown, headers: Record<string, string> = {}) =>
      t.app.inject({ method: method as 'GET', url, headers: auth(key, headers), payload: payload as object });

    before(async () => {
      // The daily settlement run on (startApp's default turns it off), and production's
      // schedules otherwise (the real webhook schedule, 24 h of idempotency keys, 8 h sessions).
      t = await startManualApp(engine, { settlementScheduleEnabled: true });
      k = await signup(t);
    });
    after(() => t.teardown());

    test('Pix expiry: pending one millisecond before its BR Code expires, expired at that instant', async () => {
      const created = await api('POST', '/v1/payments', k.secretKey, { amountInCents: 1000, method: 'pix', pixExpiresInSeconds: 600 }, { 'idempotency-key': 'pix-expiry' });
      assert.equal(created.statusCode, 200, created.body);
      const payment = created.json();
      const expiresAtMs = Date.parse(payment.pix.expiresAt);
      assert.equal(expiresAtMs, t.clock.nowMs() + 600_000, 'expires 600 s after it was created, by the clock');

      await t.advance(600_000 - 1);
      assert.equal((await api('GET', `/v1/payments/${payment.id}`, k.secretKey)).json().status, 'pending');
      await t.advance(1);
      const after = (await api('GET', `/v1/payments/${payment.id}`, k.secretKey)).json();
      assert.equal(after.status, 'expired', 'the expiry job ran when its time came');
      const events = (await api('GET', '/v1/events?limit=100', k.secretKey)).json().data.filter((e: { type: string; data: { object: { id: string } } }) => e.type === 'payment.expired' && e.data.object.id === payment.id);
      assert.equal(events.length, 1);
      assert.equal(events[0].createdAt, new Date(t.clock.nowMs()).toISOString(), 'stamped by the clock');
      // The payer simulator refuses an expired BR Code.
      assert.equal((await api('POST', `/v1/sandbox/payments/${payment.id}/pay`, k.secretKey, {}, { 'idempotency-key': 'pix-expiry-pay' })).statusCode, 409);
    });

    test('checkout session expiry: open one millisecond before expiresAt, expired (by its job) at it', async () => {
      const created = await api('POST', '/v1/checkout/sessions', k.secretKey, { amount: 2500, expiresInSeconds: 300 }, { 'idempotency-key': 'checkout-expiry' });
      assert.equal(created.statusCode, 200, created.body);
      const session = created.json();
      assert.equal(Date.parse(session.expiresAt), t.clock.nowMs() + 300_000);
      const status = async () => (await t.store.db.selectFrom('checkout_sessions').select('status').where('id', '=', session.id).executeTakeFirstOrThrow()).status;

      await t.advance(300_000 - 1);
      assert.equal(await status(), 'open');
      assert.equal((await api('GET', `/v1/checkout/sessions/${session.id}`, k.secretKey)).json().status, 'open');
      await t.advance(1);
      // Read from the table, not through GET (which would expire a due session itself): the job did it.
      assert.equal(await status(), 'expired');
      assert.equal((await api('GET', `/v1/checkout/sessions/${session.id}`, k.secretKey)).json().status, 'expired');
    });

    test('idempotency-key purge: a key replays for exactly IDEMPOTENCY_RETENTION, then the hourly purge forgets it', async () => {
      const retentionMs = t.config.idempotencyRetentionMs;
      assert.equal(retentionMs, 24 * HOUR_MS);
      const body = { amountInCents: 700, method: 'pix' };
      const first = await api('POST', '/v1/payments', k.secretKey, body, { 'idempotency-key': 'purge-me' });
      assert.equal(first.statusCode, 200);
      const stored = async () => (await t.store.db.selectFrom('idempotency_keys').select('key').where('key', '=', 'purge-me').execute()).length;

      t.clock.advance(retentionMs);
      await purgeExpired(t.store, t.config);
      assert.equal(await stored(), 1, 'kept while exactly 24 h old');
      const replay = await api('POST', '/v1/payments', k.secretKey, body, { 'idempotency-key': 'purge-me' });
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.json().id, first.json().id);

      t.clock.advance(1);
      await purgeExpired(t.store, t.config);
      assert.equal(await stored(), 0, 'purged once older than 24 h');
      const fresh = await api('POST', '/v1/payments', k.secretKey, { ...body, amountInCents: 701 }, { 'idempotency-key': 'purge-me' });
      assert.equal(fresh.statusCode, 200, 'a forgotten key is a new request (not 422 for a different body)');
      assert.notEqual(fresh.json().id, first.json().id);

      // The worker's hourly purge does the same on its own: an hour past the retention, gone.
      t.clock.advance(retentionMs);
      await t.runDue();
      assert.equal(await stored(), 1, 'not yet: the purge has not run since the key became 24 h old');
      await t.advance(HOUR_MS);
      assert.equal(await stored(), 0, 'the hourly purge job ran and removed it');
    });

    test('admin session: valid until one millisecond before its 8 h, refused at 8 h', async () => {
      const email = `time-admin-${engine}@example.com`;
      await createAdminUser(t.store, email, 'a long enough passphrase');
      const signIn = (password: string, ip: string) => t.app.inject({ method: 'POST', url: '/admin/session', payload: { email, password }, remoteAddress: ip });
      const res = await signIn('a long enough passphrase', '10.50.0.1');
      assert.equal(res.statusCode, 200, res.body);
      const cookie = (res.headers['set-cookie'] as string).split(';')[0];
      const me = () => t.app.inject({ method: 'GET', url: '/admin/session', headers: { cookie } });
      assert.equal(DEFAULT_SESSION_TTL_MS, 8 * HOUR_MS);

      t.clock.advance(DEFAULT_SESSION_TTL_MS - 1);
      assert.equal((await me()).statusCode, 200);
      t.clock.advance(1);
      const expired = await me();
      assert.equal(expired.statusCode, 401);
      assert.match(expired.json().error.message, /expired/);
    });

    test('admin sign-in lock: 5 failures lock the email for 15 minutes from the first, to the millisecond', async () => {
      const email = `time-lock-${engine}@example.com`;
      const password = 'a long enough passphrase';
      await createAdminUser(t.store, email, password);
      const signIn = (pw: string, n: number) => t.app.inject({ method: 'POST', url: '/admin/session', payload: { email, password: pw }, remoteAddress: `10.51.0.${n}` });
      const firstFailureMs = t.clock.nowMs();
      for (let i = 1; i <= 5; i++) {
        assert.equal((await signIn('wrong password!!', i)).statusCode, 401);
        t.clock.advance(1000);
      }
      const locked = await signIn(password, 10);
      assert.equal(locked.statusCode, 429, 'the right password is refused while locked');
      const windowMs = 15 * 60_000;
      assert.equal(Number(locked.headers['retry-after']), Math.ceil((firstFailureMs + windowMs - t.clock.nowMs()) / 1000));

      t.clock.set(firstFailureMs + windowMs - 1);
      assert.equal((await signIn(password, 11)).statusCode, 429, 'still locked one millisecond before the first failure leaves the window');
      t.clock.set(firstFailureMs + windowMs);
      assert.equal((await signIn(password, 12)).statusCode, 200, 'unlocked as the first failure leaves the window');
    });

    test('the webhook retry schedule: 8 attempts over about 28 hours, each at its time and not a millisecond before', async () => {
      const hits: number[] = [];
      const receiver = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          hits.push(t.clock.nowMs());
          res.statusCode = 500;
          res.end('down');
        });
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
      try {
        const hk = await signup(t, 'Webhook merchant');
        const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
        const endpoint = (await api('POST', '/v1/webhook-endpoints', hk.secretKey, { url, events: ['payment.created'] })).json();
        const startMs = t.clock.nowMs();
        assert.equal((await api('POST', '/v1/payments', hk.secretKey, { amountInCents: 900, method: 'pix' }, { 'idempotency-key': 'hook-schedule' })).statusCode, 200);
        const delivery = async () => (await t.store.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpoint.id).executeTakeFirstOrThrow());

        await t.runDue();
        assert.deepEqual(hits, [startMs], 'attempt 1 at once');
        const schedule = t.config.webhookScheduleMs;
        assert.deepEqual(schedule, DEFAULT_SCHEDULE_MS);
        for (let attempt = 2; attempt <= schedule.length; attempt++) {
          const row = await delivery();
          assert.equal(row.status, 'pending');
          assert.equal(row.attempts, attempt - 1);
          const gapMs = Number(row.next_attempt_at_ms) - hits[hits.length - 1];
          const nominalMs = schedule[attempt - 1];
          assert.ok(gapMs >= nominalMs * 0.9 && gapMs <= nominalMs * 1.1, `attempt ${attempt}: ${gapMs} ms after the last, ${nominalMs} ms ±10% expected`);
          t.clock.set(Number(row.next_attempt_at_ms) - 1);
          await t.runDue();
          assert.equal(hits.length, attempt - 1, `attempt ${attempt} not a millisecond early`);
          await t.advance(1);
          assert.equal(hits.length, attempt, `attempt ${attempt} at its time`);
        }
        const last = await delivery();
        assert.equal(last.status, 'failed', 'given up after the 8th attempt');
        assert.equal(last.attempts, 8);
        assert.equal(last.last_response_code, 500);
        const spanHours = (hits[hits.length - 1] - startMs) / HOUR_MS;
        const nominalHours = schedule.reduce((a, b) => a + b, 0) / HOUR_MS;
        assert.ok(Math.abs(spanHours - nominalHours) <= nominalHours * 0.1, `${spanHours.toFixed(2)} h from the first attempt to the last (${nominalHours.toFixed(2)} h nominal)`);
        assert.ok(spanHours > 24 && spanHours < 31, `about 28 hours: ${spanHours.toFixed(2)}`);
        // Nothing more, however long one waits.
        await t.advance(7 * DAY_MS);
        assert.equal(hits.length, 8);
        // Failing for 27.6 h is under WEBHOOK_DISABLE_AFTER (120 h): the endpoint stays on.
        assert.equal((await api('GET', `/v1/webhook-endpoints/${endpoint.id}`, hk.secretKey)).json().enabled, true);
      } finally {
        receiver.close();
      }
    });

    test('card availability at D+30 and the daily settlement run: settled by the first run of São Paulo day D+30, not the last run of D+29', async () => {
      const ck = await signup(t, 'Card merchant');
      const created = await api('POST', '/v1/payments', ck.secretKey, { amountInCents: 10_000, method: 'credit_card', cardToken: 'tok_visa' }, { 'idempotency-key': 'card-d30' });
      assert.equal(created.statusCode, 200, created.body);
      await t.runDue(); // the confirmation job: approved now, by the clock
      const paymentId = created.json().id;
      assert.equal((await api('GET', `/v1/payments/${paymentId}`, ck.secretKey)).json().status, 'approved');
      const saleDay = localDate(t.clock.nowMs());
      const receivable = async () => (await t.store.db.selectFrom('receivables').selectAll().where('payment_id', '=', paymentId).executeTakeFirstOrThrow());
      assert.equal((await receivable()).available_on, addDays(saleDay, 30), 'available on São Paulo day D+30');

      // The last instant of day D+29 in São Paulo (02:59:59.999 UTC of D+30): the hourly job runs
      // the day's settlement, which must leave the card receivable pending.
      const d30StartMs = nextSaoPauloMidnight(t.clock.nowMs()) + 29 * DAY_MS;
      assert.equal(localDate(d30StartMs), addDays(saleDay, 30));
      t.clock.set(d30StartMs - 1);
      await t.runDue();
      const runsOn = async (date: string) => t.store.db.selectFrom('settlement_runs').selectAll().where('run_date', '=', date).where('trigger', '=', 'schedule').execute();
      assert.equal((await runsOn(addDays(saleDay, 29))).length, 1, 'the daily run of D+29 ran');
      assert.equal((await receivable()).status, 'pending', 'not available yet on D+29');

      // The next hourly round falls on D+30 in São Paulo: its run settles the receivable.
      await t.advance(HOUR_MS);
      const runs = await runsOn(addDays(saleDay, 30));
      assert.equal(runs.length, 1, 'one run for D+30');
      assert.equal(runs[0].status, 'completed');
      const settled = await receivable();
      assert.equal(settled.status, 'settled');
      const settlement = await t.store.db.selectFrom('settlements').selectAll().where('id', '=', settled.settlement_id as string).executeTakeFirstOrThrow();
      assert.equal(settlement.settlement_date, addDays(saleDay, 30));
      assert.equal(settlement.run_id, runs[0].id);

      // Once per São Paulo day: the later hours of D+30 start no second run.
      await t.advance(HOUR_MS);
      await t.advance(HOUR_MS);
      assert.equal((await runsOn(addDays(saleDay, 30))).length, 1);
    });
  });

  // The worker's own rules, on a store of their own (a worker here would otherwise claim the
  // app's jobs): a lease that runs out, and the retry back-off of a job that throws.
  describe(`job lease and retry back-off on a ManualClock (${engine})`, () => {
    let db: TestDb;
    let store: Store;
    let clock: ManualClock;
    before(async () => {
      db = await testDatabase(engine);
      clock = new ManualClock();
      store = Store.open({ url: db.url, clock });
      await store.migrate();
    });
    after(async () => {
      await store.close();
      await db.drop();
    });
    const silent = { error() {}, warn() {}, info() {}, debug() {}, trace() {}, fatal() {}, child() { return silent; }, level: 'silent' } as never;

    test('a claimed job is taken by another worker only once its lease has run out', async () => {
      const leaseMs = 30_000;
      const ran: string[] = [];
      const worker = new Worker(store, { 'test.lease': async (job, workerId) => {
        ran.push(job.id);
        await store.write((tx) => complete(tx, job, workerId));
      } }, { pollMs: 1000, leaseMs, payloads: { 'test.lease': Type.Object({}) } }, silent);
      const jobId = await store.write((tx) => enqueue(tx, clock.nowMs(), 'test.lease', {}));
      // A worker claims it and dies without finishing.
      const [claimed] = await claim(store, 'wrk_dead', 10, leaseMs);
      assert.equal(claimed.id, jobId);

      clock.advance(leaseMs);
      assert.equal(await worker.runDue(), 0, 'the lease still holds at its last millisecond');
      clock.advance(1);
      assert.equal(await worker.runDue(), 1, 'taken over once the lease ran out');
      assert.deepEqual(ran, [jobId]);
      const row = await store.db.selectFrom('jobs').select('id').where('id', '=', jobId).executeTakeFirst();
      assert.equal(row, undefined, 'completed by the worker that took it over');
    });

    test('a job that throws runs again after 2 s, then 4 s, then 8 s, and not a millisecond before', async () => {
      const attempts: number[] = [];
      const worker = new Worker(store, { 'test.flaky': async () => {
        attempts.push(clock.nowMs());
        throw new Error('not yet');
      } }, { pollMs: 1000, leaseMs: 30_000, payloads: { 'test.flaky': Type.Object({}) } }, silent);
      const startMs = clock.nowMs();
      await store.write((tx) => enqueue(tx, startMs, 'test.flaky', {}));
      assert.equal(await worker.runDue(), 1);
      for (const [attempt, delayMs] of [[2, 2 * JOB_RETRY_BASE_MS], [3, 4 * JOB_RETRY_BASE_MS], [4, 8 * JOB_RETRY_BASE_MS]] as const) {
        clock.advance(delayMs - 1);
        assert.equal(await worker.runDue(), 0, `attempt ${attempt} not a millisecond early`);
        clock.advance(1);
        assert.equal(await worker.runDue(), 1, `attempt ${attempt} after ${delayMs} ms`);
      }
      assert.deepEqual(attempts, [startMs, startMs + 2000, startMs + 6000, startMs + 14_000]);
      const row = await store.db.selectFrom('jobs').select(['attempts', 'last_error']).where('type', '=', 'test.flaky').executeTakeFirstOrThrow();
      assert.equal(row.attempts, 4);
      assert.equal(row.last_error, 'not yet');
    });
  });
}

import http from 'node:http';
import https from 'node:https';
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { MicroBatch, type Settled, type Store } from '../../store/index.js';
import { signatureHeader } from '../../domain/webhook-signature.js';
import { deliveryMove } from '../../domain/states.js';
import { emitEvents, eventPayload } from '../events/service.js';
import { ipLiteralHost, isPrivateAddress, publicOnlyLookup } from './ssrf.js';
import { toEndpoint, type EndpointRow } from './service.js';
import { nowIso as isoOf, type Clock } from '../../clock.js';

export interface DispatcherOptions {
  timeoutMs: number; // a 2xx within this is a success
  scheduleMs: number[]; // delay before each attempt; its length is the number of attempts
  disableAfterMs: number; // an endpoint failing every attempt this long is disabled
  maxInFlight: number; // deliveries being sent at once by this process
  perEndpointMaxInFlight: number; // so one slow endpoint cannot take every slot
  pollMs: number;
  leaseMs: number; // a delivery claimed by a process that died is sent again after this
  // Sandbox deliveries may reach loopback and private networks (WEBHOOK_ALLOW_PRIVATE_URLS);
  // live ones never do.
  allowPrivateUrls: boolean;
}

// What a merchant sees of a failed connection: what went wrong, never where (an address or
// port of our network in an error message would make the delivery log a port scanner).
export function describeDeliveryError(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ECONNREFUSED': return 'connection refused';
    case 'ECONNRESET': case 'EPIPE': return 'connection reset by the endpoint';
    case 'ETIMEDOUT': case 'ESOCKETTIMEDOUT': return 'connection timed out';
    case 'ENOTFOUND': case 'EAI_AGAIN': case 'EAI_NONAME': return 'the host name does not resolve';
    case 'EHOSTUNREACH': case 'ENETUNREACH': return 'the host is unreachable';
    case 'ERR_PRIVATE_ADDRESS': return 'the URL resolves to a private address, which webhooks may not reach';
    case 'HPE_INVALID_CONSTANT': case 'HPE_INVALID_VERSION': case 'HPE_INVALID_STATUS': case 'HPE_INVALID_HEADER_TOKEN': return 'the endpoint did not answer valid HTTP';
  }
  if (typeof err.code === 'string' && /^(ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_SSL)/.test(err.code)) return `TLS failed (${err.code})`;
  return 'the request failed';
}

// Standard Webhooks' suggested schedule: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h
// (about 28 hours of retries, jittered).
export const DEFAULT_SCHEDULE_MS = [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

const MAX_RESPONSE_BYTES = 64 * 1024;

function describeSpan(ms: number): string {
  const round = (n: number) => Math.round(n * 10) / 10;
  if (ms >= 86_400_000) return `${round(ms / 86_400_000)} days`;
  if (ms >= 3_600_000) return `${round(ms / 3_600_000)} hours`;
  return `${round(ms / 60_000)} minutes`;
}

interface Claimed {
  id: string;
  endpoint_id: string;
  event_id: string;
  attempts: number;
}

// Sends webhook deliveries from the webhook_deliveries table (the outbox written with each
// event). Claims with a lease, like the jobs worker: at least once, never lost.
export class WebhookDispatcher {
  readonly id = 'whk_' + randomBytes(6).toString('hex');
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private kicked = false;
  private slots = 0; // HTTP exchanges in progress (inFlight also holds the bookkeeping after it)
  // Successes are written together: one UPDATE per response code per turn of the event loop.
  private readonly successes = new MicroBatch<{ id: string; code: number }, void>({
    maxItemsPerRun: Number.POSITIVE_INFINITY,
    maxConcurrentRuns: Number.POSITIVE_INFINITY,
    maxPending: Number.POSITIVE_INFINITY, // one per delivery in flight: bounded by maxInFlight
    run: (items) => this.writeSuccesses(items),
  });
  private roomSeq = 0; // bumped when room appears, so a wake-up between a claim and the wait is not lost
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perEndpoint = new Map<string, number>();
  // Live and sandbox deliveries never share a kept-alive connection: a sandbox socket may lead
  // to a private address that live mode must not reach (agents pool by host and port only).
  private readonly agents = {
    sandbox: { http: new http.Agent({ keepAlive: true, maxSockets: 1024 }), https: new https.Agent({ keepAlive: true, maxSockets: 1024 }) },
    live: { http: new http.Agent({ keepAlive: true, maxSockets: 1024 }), https: new https.Agent({ keepAlive: true, maxSockets: 1024 }) },
  };

  // The store's (clock.ts): due times, leases, the retry schedule and the poll timer. Only an
  // HTTP exchange's own timeout is real time (it bounds a socket, not a rule).
  private readonly clock: Clock;

  constructor(private readonly store: Store, private readonly options: DispatcherOptions, private readonly log: FastifyBaseLogger) {
    this.clock = store.clock;
  }

  // Sends every delivery due at the clock's now and waits for each answer and its bookkeeping;
  // returns how many were sent. Retries are scheduled by the clock and wait for it. What tests on a
  // ManualClock call after advance(), instead of starting the polling loop and waiting for it.
  async runDue(): Promise<number> {
    let sent = 0;
    for (let round = 0; round < 1_000; round++) {
      const claimed = await this.claim(Math.min(this.options.maxInFlight, 256));
      if (claimed.length === 0) return sent;
      await this.dispatch(claimed);
      await Promise.allSettled([...this.inFlight.values()]);
      sent += claimed.length;
    }
    throw new Error('runDue: deliveries still due after 1000 rounds');
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  kick(): void {
    this.kicked = true;
    this.wake?.();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    await Promise.allSettled([...this.inFlight.values()]);
    for (const pool of [this.agents.sandbox, this.agents.live]) {
      pool.http.destroy();
      pool.https.destroy();
    }
  }

  private async claim(limit: number): Promise<Claimed[]> {
    const nowMs = this.clock.nowMs();
    const perEndpoint = this.options.perEndpointMaxInFlight;
    // An endpoint with little room is treated as full (no claim per completion),
    // candidates are filtered by room BEFORE locking (no hand-back), and the lease moves
    // next_attempt_at_ms so in-flight rows leave the due range.
    const minRoom = Math.max(1, Math.min(64, Math.floor(perEndpoint / 4)));
    const full = [...this.perEndpoint.entries()].filter(([, n]) => perEndpoint - n < minRoom).map(([id]) => id);
    return this.store.write(async (tx) => {
      let due = tx.selectFrom('webhook_deliveries').select(['id', 'endpoint_id'])
        .where('status', '=', 'pending').where('next_attempt_at_ms', '<=', nowMs)
        .where((eb) => eb.or([eb('locked_until_ms', 'is', null), eb('locked_until_ms', '<', nowMs)]))
        .orderBy('next_attempt_at_ms').limit(limit);
      if (full.length > 0) due = due.where('endpoint_id', 'not in', full);
      if (this.store.engine === 'postgres') due = due.forUpdate().skipLocked();
      const candidates = await due.execute();
      const room = new Map<string, number>();
      const ids: string[] = [];
      for (const c of candidates) {
        const left = room.get(c.endpoint_id) ?? perEndpoint - (this.perEndpoint.get(c.endpoint_id) ?? 0);
        if (left > 0) ids.push(c.id);
        room.set(c.endpoint_id, left - 1);
      }
      if (ids.length === 0) return [];
      const until = nowMs + this.options.leaseMs;
      return tx.updateTable('webhook_deliveries').set({ locked_by: this.id, locked_until_ms: until, next_attempt_at_ms: until })
        .where('id', 'in', ids).returning(['id', 'endpoint_id', 'event_id', 'attempts']).execute();
    });
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.kicked = false;
      const seq = this.roomSeq;
      const free = this.options.maxInFlight - this.slots;
      let claimed: Claimed[] = [];
      if (free > 0) {
        try {
          claimed = await this.claim(Math.min(free, 256));
        } catch (error) {
          if (!this.running) break;
          this.log.error({ err: error }, 'webhook claim failed');
        }
      }
      if (claimed.length > 0) {
        await this.dispatch(claimed);
        continue;
      }
      if (this.kicked || !this.running || this.roomSeq !== seq) continue;
      await new Promise<void>((resolve) => {
        const timer = this.clock.setTimeout(resolve, this.options.pollMs);
        this.wake = () => {
          this.clock.clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  private async dispatch(claimed: Claimed[]): Promise<void> {
    const endpointIds = [...new Set(claimed.map((c) => c.endpoint_id))];
    const eventIds = [...new Set(claimed.map((c) => c.event_id))];
    const [endpoints, events] = await Promise.all([
      this.store.db.selectFrom('webhook_endpoints').selectAll().where('id', 'in', endpointIds).execute(),
      this.store.db.selectFrom('events').select(['id', 'type', 'created_at', 'livemode', 'data']).where('id', 'in', eventIds).execute(),
    ]);
    const endpointById = new Map(endpoints.map((e) => [e.id, e]));
    const payloadById = new Map(events.map((e) => [e.id, eventPayload(e)]));
    for (const c of claimed) {
      this.perEndpoint.set(c.endpoint_id, (this.perEndpoint.get(c.endpoint_id) ?? 0) + 1);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        this.slots--;
        const n = (this.perEndpoint.get(c.endpoint_id) ?? 1) - 1;
        if (n <= 0) this.perEndpoint.delete(c.endpoint_id);
        else this.perEndpoint.set(c.endpoint_id, n);
        const P = this.options.perEndpointMaxInFlight;
        const minRoom = Math.max(1, Math.min(64, Math.floor(P / 4)));
        if (P - n === minRoom || this.options.maxInFlight - this.slots === minRoom) {
          this.roomSeq++;
          this.wake?.();
        }
      };
      this.slots++;
      const p = this.deliver(c, endpointById.get(c.endpoint_id), payloadById.get(c.event_id), release).catch((error) => {
        // The lease runs out and another round sends it again: nothing is lost.
        this.log.error({ err: error, deliveryId: c.id }, 'webhook delivery bookkeeping failed');
      }).finally(() => {
        this.inFlight.delete(c.id);
        release();
      });
      this.inFlight.set(c.id, p);
    }
  }

  private recordSuccess(id: string, code: number): Promise<void> {
    return this.successes.add({ id, code });
  }

  private async writeSuccesses(batch: Array<{ id: string; code: number }>): Promise<Array<Settled<void>>> {
    const at = isoOf(this.clock);
    const move = deliveryMove('pending', 'succeeded');
    await this.store.write(async (tx) => {
      const byCode = new Map<number, string[]>();
      for (const b of batch) {
        let ids = byCode.get(b.code);
        if (!ids) byCode.set(b.code, (ids = []));
        ids.push(b.id);
      }
      for (const [code, ids] of byCode) {
        for (let i = 0; i < ids.length; i += 500) {
          await tx.updateTable('webhook_deliveries')
            .set((eb) => ({ status: move.to, attempts: eb('attempts', '+', 1), last_response_code: code, last_error: null, last_attempt_at: at, next_attempt_at_ms: null, locked_by: null, locked_until_ms: null, updated_at: at }))
            .where('id', 'in', ids.slice(i, i + 500)).where('status', '=', move.from).where('locked_by', '=', this.id).execute();
        }
      }
    });
    return batch.map(() => ({ ok: true, value: undefined }));
  }

  private async deliver(c: Claimed, endpoint: EndpointRow | undefined, payload: string | undefined, release: () => void): Promise<void> {
    const nowIso = () => isoOf(this.clock);
    if (!endpoint || endpoint.enabled !== 1 || payload === undefined) {
      release();
      const move = deliveryMove('pending', 'failed');
      await this.store.write((tx) => tx.updateTable('webhook_deliveries')
        .set({ status: move.to, last_error: !endpoint ? 'endpoint deleted' : payload === undefined ? 'event purged' : 'endpoint disabled', next_attempt_at_ms: null, locked_by: null, locked_until_ms: null, updated_at: nowIso() })
        .where('id', '=', c.id).where('status', '=', move.from).where('locked_by', '=', this.id).execute());
      return;
    }
    const nowMs = this.clock.nowMs();
    const secrets = [endpoint.secret];
    if (endpoint.previous_secret && (endpoint.previous_secret_expires_at_ms ?? 0) > nowMs) secrets.push(endpoint.previous_secret);
    const timestamp = Math.floor(nowMs / 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Pagamentos-Webhooks/1.0',
      'webhook-id': c.event_id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(secrets, c.event_id, timestamp, payload),
    };
    const result = await this.post(endpoint.url, headers, payload, endpoint.livemode === 1);
    release();
    const attempts = c.attempts + 1;
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    if (ok && endpoint.failing_since_ms === null) return this.recordSuccess(c.id, result.status as number);
    await this.store.write(async (tx) => {
      const at = nowIso();
      if (ok) {
        const move = deliveryMove('pending', 'succeeded');
        await tx.updateTable('webhook_deliveries').set({ status: move.to, attempts, last_response_code: result.status, last_error: null, last_attempt_at: at, next_attempt_at_ms: null, locked_by: null, locked_until_ms: null, updated_at: at })
          .where('id', '=', c.id).where('status', '=', move.from).where('locked_by', '=', this.id).execute();
        if (endpoint.failing_since_ms !== null) await tx.updateTable('webhook_endpoints').set({ failing_since_ms: null }).where('id', '=', endpoint.id).execute();
        return;
      }
      const gone = result.status === 410;
      const answeredMs = this.clock.nowMs();
      const failingSinceMs = endpoint.failing_since_ms ?? answeredMs;
      const tooLong = answeredMs - failingSinceMs >= this.options.disableAfterMs;
      const last = attempts >= this.options.scheduleMs.length;
      const delayMs = last ? 0 : Math.round(this.options.scheduleMs[attempts] * (0.9 + Math.random() * 0.2));
      const move = deliveryMove('pending', gone || last || tooLong ? 'failed' : 'pending');
      await tx.updateTable('webhook_deliveries').set({
        status: move.to, attempts, last_response_code: result.status, last_error: result.error,
        last_attempt_at: at, next_attempt_at_ms: move.to === 'failed' ? null : answeredMs + delayMs, locked_by: null, locked_until_ms: null, updated_at: at,
      }).where('id', '=', c.id).where('status', '=', move.from).where('locked_by', '=', this.id).execute();
      if (gone || tooLong) {
        const reason = gone ? 'the endpoint answered 410 Gone' : `every delivery failed for ${describeSpan(this.options.disableAfterMs)}`;
        const r = await tx.updateTable('webhook_endpoints').set({ enabled: 0, disabled_reason: reason, updated_at: at }).where('id', '=', endpoint.id).where('enabled', '=', 1).executeTakeFirst();
        if (Number(r.numUpdatedRows) === 1) {
          const stop = deliveryMove('pending', 'failed');
          await tx.updateTable('webhook_deliveries').set({ status: stop.to, last_error: 'endpoint disabled', next_attempt_at_ms: null, updated_at: at })
            .where('endpoint_id', '=', endpoint.id).where('status', '=', stop.from).where('locked_by', 'is', null).execute();
          await emitEvents(tx, { accountId: endpoint.account_id, livemode: endpoint.livemode === 1 }, [
            { type: 'webhook_endpoint.disabled', object: toEndpoint({ ...endpoint, enabled: 0, disabled_reason: reason, updated_at: at }) },
          ], answeredMs);
        }
      } else if (endpoint.failing_since_ms === null) {
        await tx.updateTable('webhook_endpoints').set({ failing_since_ms: failingSinceMs }).where('id', '=', endpoint.id).where('failing_since_ms', 'is', null).execute();
      }
    });
  }

  private post(url: string, headers: Record<string, string>, body: string, livemode: boolean): Promise<{ status: number | null; error: string | null }> {
    return new Promise((resolve) => {
      let settled = false;
      const done = (status: number | null, error: string | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ status, error });
      };
      const target = new URL(url);
      const isHttps = target.protocol === 'https:';
      // Node connects to an IP literal without calling `lookup`: check those here.
      const literal = ipLiteralHost(target.hostname);
      const publicOnly = livemode || !this.options.allowPrivateUrls;
      if (publicOnly && literal !== null && isPrivateAddress(literal)) {
        settled = true;
        resolve({ status: null, error: describeDeliveryError(Object.assign(new Error('private'), { code: 'ERR_PRIVATE_ADDRESS' })) });
        return;
      }
      const req = (isHttps ? https : http).request(target, {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        agent: (livemode ? this.agents.live : this.agents.sandbox)[isHttps ? 'https' : 'http'],
        // Every connection's addresses are checked as DNS answers them (no rebinding around the
        // check made when the URL was registered).
        ...(publicOnly ? { lookup: publicOnlyLookup } : {}),
      }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > MAX_RESPONSE_BYTES) res.destroy();
        });
        res.on('end', () => done(res.statusCode ?? null, null));
        res.on('close', () => done(res.statusCode ?? null, null));
        res.on('error', () => done(res.statusCode ?? null, null));
      });
      // Real time on purpose: it bounds a socket's wait, which no test clock can move.
      const timer = setTimeout(() => {
        req.destroy(new Error('timeout'));
        done(null, `no answer within ${this.options.timeoutMs} ms`);
      }, this.options.timeoutMs);
      req.on('error', (err) => done(null, describeDeliveryError(err)));
      req.end(body);
    });
  }
}

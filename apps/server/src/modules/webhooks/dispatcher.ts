import http from 'node:http';
import https from 'node:https';
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../../store/index.js';
import { signatureHeader } from '../../domain/webhook-signature.js';
import { emitEvents, eventPayload } from '../events/service.js';
import { ipLiteralHost, isPrivateAddress, publicOnlyLookup } from './ssrf.js';
import { toEndpoint, type EndpointRow } from './service.js';

export interface DispatcherOptions {
  timeoutMs: number; // a 2xx within this is a success
  scheduleMs: number[]; // delay before each attempt; its length is the number of attempts
  disableAfterMs: number; // an endpoint failing every attempt this long is disabled
  maxInFlight: number; // deliveries being sent at once by this process
  perEndpointMaxInFlight: number; // so one slow endpoint cannot take every slot
  pollMs: number;
  leaseMs: number; // a delivery claimed by a process that died is sent again after this
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
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perEndpoint = new Map<string, number>();
  // Live and sandbox deliveries never share a kept-alive connection: a sandbox socket may lead
  // to a private address that live mode must not reach (agents pool by host and port only).
  private readonly agents = {
    sandbox: { http: new http.Agent({ keepAlive: true, maxSockets: 1024 }), https: new https.Agent({ keepAlive: true, maxSockets: 1024 }) },
    live: { http: new http.Agent({ keepAlive: true, maxSockets: 1024 }), https: new https.Agent({ keepAlive: true, maxSockets: 1024 }) },
  };

  constructor(private readonly store: Store, private readonly options: DispatcherOptions, private readonly log: FastifyBaseLogger) {}

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
    const nowMs = Date.now();
    const saturated = [...this.perEndpoint.entries()].filter(([, n]) => n >= this.options.perEndpointMaxInFlight).map(([id]) => id);
    return this.store.write(async (tx) => {
      let due = tx.selectFrom('webhook_deliveries').select('id')
        .where('status', '=', 'pending').where('next_attempt_at_ms', '<=', nowMs)
        .where((eb) => eb.or([eb('locked_until_ms', 'is', null), eb('locked_until_ms', '<', nowMs)]))
        .orderBy('next_attempt_at_ms').limit(limit);
      if (saturated.length > 0) due = due.where('endpoint_id', 'not in', saturated);
      const sub = this.store.engine === 'postgres' ? due.forUpdate().skipLocked() : due;
      const claimed = await tx.updateTable('webhook_deliveries').set({ locked_by: this.id, locked_until_ms: nowMs + this.options.leaseMs })
        .where('id', 'in', sub).returning(['id', 'endpoint_id', 'event_id', 'attempts']).execute();
      // One claim can return many due deliveries of one endpoint (a backlog after an outage):
      // keep what fits under its per-endpoint limit and hand the rest back at once, so that a
      // slow endpoint never takes the slots other endpoints need.
      const room = new Map<string, number>();
      const kept: Claimed[] = [];
      const excess: string[] = [];
      for (const c of claimed.sort((a, b) => (a.id < b.id ? -1 : 1))) {
        const left = room.get(c.endpoint_id) ?? this.options.perEndpointMaxInFlight - (this.perEndpoint.get(c.endpoint_id) ?? 0);
        if (left > 0) kept.push(c);
        else excess.push(c.id);
        room.set(c.endpoint_id, left - 1);
      }
      if (excess.length > 0) {
        await tx.updateTable('webhook_deliveries').set({ locked_by: null, locked_until_ms: null })
          .where('id', 'in', excess).where('locked_by', '=', this.id).execute();
      }
      return kept;
    });
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.kicked = false;
      const free = this.options.maxInFlight - this.inFlight.size;
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
      if (this.kicked || !this.running) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.options.pollMs);
        this.wake = () => {
          clearTimeout(timer);
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
      const p = this.deliver(c, endpointById.get(c.endpoint_id), payloadById.get(c.event_id)).catch((error) => {
        // The lease runs out and another round sends it again: nothing is lost.
        this.log.error({ err: error, deliveryId: c.id }, 'webhook delivery bookkeeping failed');
      }).finally(() => {
        this.inFlight.delete(c.id);
        const n = (this.perEndpoint.get(c.endpoint_id) ?? 1) - 1;
        if (n <= 0) this.perEndpoint.delete(c.endpoint_id);
        else this.perEndpoint.set(c.endpoint_id, n);
        this.wake?.();
      });
      this.inFlight.set(c.id, p);
    }
  }

  private async deliver(c: Claimed, endpoint: EndpointRow | undefined, payload: string | undefined): Promise<void> {
    const nowIso = () => new Date().toISOString();
    if (!endpoint || endpoint.enabled !== 1 || payload === undefined) {
      await this.store.write((tx) => tx.updateTable('webhook_deliveries')
        .set({ status: 'failed', last_error: !endpoint ? 'endpoint deleted' : payload === undefined ? 'event purged' : 'endpoint disabled', next_attempt_at_ms: null, locked_by: null, locked_until_ms: null, updated_at: nowIso() })
        .where('id', '=', c.id).where('locked_by', '=', this.id).execute());
      return;
    }
    const nowMs = Date.now();
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
    const attempts = c.attempts + 1;
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    await this.store.write(async (tx) => {
      const at = nowIso();
      if (ok) {
        await tx.updateTable('webhook_deliveries').set({ status: 'succeeded', attempts, last_response_code: result.status, last_error: null, last_attempt_at: at, next_attempt_at_ms: null, locked_by: null, locked_until_ms: null, updated_at: at })
          .where('id', '=', c.id).where('locked_by', '=', this.id).execute();
        if (endpoint.failing_since_ms !== null) await tx.updateTable('webhook_endpoints').set({ failing_since_ms: null }).where('id', '=', endpoint.id).execute();
        return;
      }
      const gone = result.status === 410;
      const failingSinceMs = endpoint.failing_since_ms ?? Date.now();
      const tooLong = Date.now() - failingSinceMs >= this.options.disableAfterMs;
      const last = attempts >= this.options.scheduleMs.length;
      const delayMs = last ? 0 : Math.round(this.options.scheduleMs[attempts] * (0.9 + Math.random() * 0.2));
      await tx.updateTable('webhook_deliveries').set({
        status: gone || last || tooLong ? 'failed' : 'pending', attempts, last_response_code: result.status, last_error: result.error,
        last_attempt_at: at, next_attempt_at_ms: gone || last || tooLong ? null : Date.now() + delayMs, locked_by: null, locked_until_ms: null, updated_at: at,
      }).where('id', '=', c.id).where('locked_by', '=', this.id).execute();
      if (gone || tooLong) {
        const reason = gone ? 'the endpoint answered 410 Gone' : `every delivery failed for ${describeSpan(this.options.disableAfterMs)}`;
        const r = await tx.updateTable('webhook_endpoints').set({ enabled: 0, disabled_reason: reason, updated_at: at }).where('id', '=', endpoint.id).where('enabled', '=', 1).executeTakeFirst();
        if (Number(r.numUpdatedRows) === 1) {
          await tx.updateTable('webhook_deliveries').set({ status: 'failed', last_error: 'endpoint disabled', next_attempt_at_ms: null, updated_at: at })
            .where('endpoint_id', '=', endpoint.id).where('status', '=', 'pending').where('locked_by', 'is', null).execute();
          await emitEvents(tx, { accountId: endpoint.account_id, livemode: endpoint.livemode === 1 }, [
            { type: 'webhook_endpoint.disabled', object: toEndpoint({ ...endpoint, enabled: 0, disabled_reason: reason, updated_at: at }) },
          ]);
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
      if (livemode && literal !== null && isPrivateAddress(literal)) {
        settled = true;
        resolve({ status: null, error: 'webhook URL points at a private address' });
        return;
      }
      const req = (isHttps ? https : http).request(target, {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        agent: (livemode ? this.agents.live : this.agents.sandbox)[isHttps ? 'https' : 'http'],
        ...(livemode ? { lookup: publicOnlyLookup as never } : {}),
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
      const timer = setTimeout(() => {
        req.destroy(new Error('timeout'));
        done(null, `no answer within ${this.options.timeoutMs} ms`);
      }, this.options.timeoutMs);
      req.on('error', (err) => done(null, err.message.slice(0, 200)));
      req.end(body);
    });
  }
}

// Webhook receivers for bench/webhooks.ts: several node:http servers in ONE process of their
// own (never the server's, never the orchestrator's), started with child_process.fork() and
// driven over IPC.
//
//   parent -> child  {type:'start', receivers:[{name, delayMs}]}        -> {type:'listening', ports:{name:port}}
//   parent -> child  {type:'secrets', secrets:{name:'whsec_...'}}       -> {type:'secrets-set'}
//   parent -> child  {type:'report', id, at?:{name:ms}}                 -> {type:'report', id, receivers:{...}}
//   parent -> child  {type:'expect', count}   a receiver reaching `count` distinct valid deliveries
//                                             records that moment as its completion time
//
// Each receiver answers 204 (at once, or after `delayMs`) to every POST, and for each one:
//   - verifies the Standard Webhooks signature against its endpoint's secret, on the raw bytes
//     received: HMAC-SHA256(base64-decoded part after whsec_, "{webhook-id}.{webhook-timestamp}.{body}"),
//     any of the space-separated v1,<base64> signatures, timestamp within 5 minutes;
//   - cross-checks 1 delivery in SAMPLE_EVERY (and the first) with the independent
//     `standardwebhooks` package (the reference implementation the docs point to), if installed;
//   - checks the body's `id` is the webhook-id (the event id) and parses as an event;
//   - records the webhook-id: a second valid delivery of one id is a duplicate.
// The answer does not depend on validity (an invalid delivery still gets 204, so that a bug
// shows up as a count here rather than as retries that could hide it).
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

const SAMPLE_EVERY = 50;
const TOLERANCE_S = 300;

// The reference implementation, a dependency of the bench: the cross-check.
const StandardWebhook: typeof Webhook | null = Webhook;

interface State {
  name: string; delayMs: number; secret: string | null; key: Buffer | null; lib: Webhook | null; server: http.Server | null; port: number;
  requests: number; bytes: number; valid: number; invalid: number; duplicates: number; notReady: number; badBody: number; inFlight: number; maxInFlight: number;
  libChecked: number; libFailed: number; seen: Set<string>; firstMs: number | null; lastMs: number | null; completeMs: number | null;
  arrivals: number[]; invalidSamples: string[];
}

// What the parent (webhooks.ts) sends, and what a report answers per receiver.
export type ReceiverMessage =
  | { type: 'start'; receivers: Array<{ name: string; delayMs: number }> }
  | { type: 'secrets'; secrets: Record<string, string> }
  | { type: 'expect'; count: number }
  | { type: 'report'; id: number; at?: Record<string, number> }
  | { type: 'stop' };
export type ReceiverReply =
  | { type: 'listening'; ports: Record<string, number> }
  | { type: 'secrets-set' }
  | { type: 'report'; id: number; receivers: Record<string, ReceiverReport> }
  | { type: 'error'; message: string };
export interface ReceiverReport {
  port: number; delayMs: number; requests: number; bytes: number; valid: number; distinct: number; invalid: number; duplicates: number;
  notReady: number; badBody: number; inFlight: number; maxInFlight: number; libChecked: number; libFailed: number; libAvailable: boolean;
  firstMs: number | null; lastMs: number | null; completeMs: number | null; invalidSamples: string[]; countAt: Record<string, number>;
}

const receivers = new Map<string, State>(); // name -> state
let expectCount = Infinity;
const send = (reply: ReceiverReply) => process.send?.(reply);

function newState(name: string, delayMs: number): State {
  return {
    name, delayMs, secret: null, key: null, lib: null, server: null, port: 0,
    requests: 0, bytes: 0, valid: 0, invalid: 0, duplicates: 0, notReady: 0, badBody: 0, inFlight: 0, maxInFlight: 0,
    libChecked: 0, libFailed: 0,
    seen: new Set(),
    firstMs: null, lastMs: null, completeMs: null,
    arrivals: [], // ms of each distinct valid delivery, in arrival order (so non-decreasing)
    invalidSamples: [],
  };
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

// Returns null if valid, else the reason.
function verify(state: State & { key: Buffer }, raw: Buffer, req: IncomingMessage, nowS: number): string | null {
  const id = headerOf(req, 'webhook-id');
  const ts = headerOf(req, 'webhook-timestamp');
  const sigs = headerOf(req, 'webhook-signature');
  if (!id || !ts || !sigs) return 'missing webhook-id / webhook-timestamp / webhook-signature';
  if (!/^[0-9]{1,12}$/.test(ts)) return 'bad webhook-timestamp';
  if (Math.abs(nowS - Number(ts)) > TOLERANCE_S) return `timestamp outside ${TOLERANCE_S} s`;
  const expected = createHmac('sha256', state.key).update(`${id}.${ts}.`).update(raw).digest();
  let ok = false;
  for (const s of sigs.split(' ')) {
    if (!s.startsWith('v1,')) continue;
    const got = Buffer.from(s.slice(3), 'base64');
    if (got.length === expected.length && timingSafeEqual(got, expected)) { ok = true; break; }
  }
  if (!ok) return 'no signature matches the secret';
  return null;
}

function handle(state: State, req: IncomingMessage, res: ServerResponse): void {
  state.requests++;
  state.inFlight++;
  if (state.inFlight > state.maxInFlight) state.maxInFlight = state.inFlight;
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const now = Date.now();
    const raw = Buffer.concat(chunks);
    state.bytes += raw.length;
    const key = state.key;
    if (!key) {
      state.notReady++;
    } else {
      const reason = req.method !== 'POST' ? `method ${req.method}` : verify({ ...state, key }, raw, req, Math.floor(now / 1000));
      if (reason) {
        state.invalid++;
        if (state.invalidSamples.length < 3) state.invalidSamples.push(reason);
      } else {
        const id = headerOf(req, 'webhook-id') as string;
        let event: { id?: string; object?: string; type?: unknown } | null = null;
        try { event = JSON.parse(raw.toString('utf8')); } catch { /* counted below */ }
        if (!event || event.id !== id || event.object !== 'event' || typeof event.type !== 'string') state.badBody++;
        if (StandardWebhook && (state.valid % SAMPLE_EVERY === 0)) {
          state.libChecked++;
          try { state.lib?.verify(raw.toString('utf8'), req.headers as Record<string, string>); } catch { state.libFailed++; }
        }
        state.valid++;
        if (state.seen.has(id)) {
          state.duplicates++;
        } else {
          state.seen.add(id);
          state.arrivals.push(now);
          if (state.firstMs === null) state.firstMs = now;
          state.lastMs = now;
          if (state.seen.size === expectCount) state.completeMs = now;
        }
      }
    }
    const answer = () => {
      state.inFlight--;
      res.writeHead(204);
      res.end();
    };
    if (state.delayMs > 0) setTimeout(answer, state.delayMs);
    else answer();
  });
  req.on('error', () => { state.inFlight--; });
}

// Distinct valid deliveries that had arrived at or before `ms` (arrivals are sorted).
function countAt(state: State, ms: number): number {
  const a = state.arrivals;
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] <= ms) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function snapshot(at?: Record<string, number>): Record<string, ReceiverReport> {
  const out: Record<string, ReceiverReport> = {};
  for (const [name, s] of receivers) {
    out[name] = {
      port: s.port, delayMs: s.delayMs,
      requests: s.requests, bytes: s.bytes, valid: s.valid, distinct: s.seen.size, invalid: s.invalid, duplicates: s.duplicates,
      notReady: s.notReady, badBody: s.badBody, inFlight: s.inFlight, maxInFlight: s.maxInFlight,
      libChecked: s.libChecked, libFailed: s.libFailed, libAvailable: StandardWebhook !== null,
      firstMs: s.firstMs, lastMs: s.lastMs, completeMs: s.completeMs,
      invalidSamples: s.invalidSamples,
      countAt: Object.fromEntries(Object.entries(at ?? {}).map(([k, ms]) => [k, countAt(s, ms)])),
    };
  }
  return out;
}

async function start(list: Array<{ name: string; delayMs: number }>): Promise<Record<string, number>> {
  const ports: Record<string, number> = {};
  for (const { name, delayMs } of list) {
    const state = newState(name, delayMs);
    const server = http.createServer((req, res) => handle(state, req, res));
    // Like a receiver behind a load balancer: keep idle connections for a minute, so the
    // dispatcher's keep-alive pool is not torn down between bursts.
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    server.requestTimeout = 0;
    server.maxRequestsPerSocket = 0;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    state.server = server;
    state.port = (server.address() as AddressInfo).port;
    receivers.set(name, state);
    ports[name] = state.port;
  }
  return ports;
}

// Not awaited by process.on: the handler catches its own failures and reports them to the parent.
process.on('message', (msg: ReceiverMessage) => void (async () => {
  try {
    if (msg.type === 'start') {
      send({ type: 'listening', ports: await start(msg.receivers) });
    } else if (msg.type === 'secrets') {
      for (const [name, secret] of Object.entries(msg.secrets)) {
        const s = receivers.get(name);
        if (!s) throw new Error(`no receiver ${name}`);
        s.secret = secret;
        s.key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
        s.lib = StandardWebhook ? new StandardWebhook(secret) : null;
      }
      send({ type: 'secrets-set' });
    } else if (msg.type === 'expect') {
      expectCount = msg.count;
    } else if (msg.type === 'report') {
      send({ type: 'report', id: msg.id, receivers: snapshot(msg.at) });
    } else if (msg.type === 'stop') {
      for (const s of receivers.values()) s.server?.closeAllConnections();
      await Promise.all([...receivers.values()].map((s) => new Promise((r) => (s.server ? s.server.close(r) : r(undefined)))));
      process.exit(0);
    }
  } catch (error) {
    send({ type: 'error', message: String(error instanceof Error ? error.stack : error) });
  }
})());
// The parent went away: do not linger.
process.on('disconnect', () => process.exit(0));

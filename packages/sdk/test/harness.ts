// Test harness only: a real server on a free port (the server's own test helpers: temp SQLite,
// or a fresh PostgreSQL schema when TEST_DATABASE_URL is set), a proxy that can cut or hold
// connections or answer for the server, and a webhook receiver. The SDK never imports any of it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ENGINES, eventually, startApp, type EngineName, type TestApp } from '../../../apps/server/test/helpers.js';
import type { Config } from '../../../apps/server/src/config.js';
import type { WriteOp } from '../../../apps/server/src/store/index.js';
import { createAdminUser } from '../../../apps/server/src/modules/admin/index.js';
import { activateLive, createKey } from '../../../apps/server/src/modules/accounts/service.js';
import { createSandboxAccount, Pagamentos, type ClientOptions } from '../src/index.js';

export { ENGINES, eventually, type EngineName };

export interface Running {
  t: TestApp;
  baseUrl: string;
  port: number;
  close(): Promise<void>;
}

// `worker: false`: no job worker and no webhook dispatcher (nothing writes but requests).
export async function startServer(engine: EngineName, overrides: Partial<Config> = {}, options: { worker?: boolean } = {}): Promise<Running> {
  const t = await startApp(engine, overrides, options);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (t.app.server.address() as AddressInfo).port;
  return { t, port, baseUrl: `http://127.0.0.1:${port}`, close: () => t.teardown() };
}

// A new sandbox merchant, signed up through the SDK itself, and a client for it.
export async function merchant(baseUrl: string, options: ClientOptions = {}): Promise<{ client: Pagamentos; accountId: string; secretKey: string; publishableKey: string }> {
  const account = await createSandboxAccount({ name: 'SDK test merchant' }, { baseUrl });
  const secretKey = account.keys.secretKey.key;
  return { client: new Pagamentos(secretKey, { baseUrl, ...options }), accountId: account.account.id, secretKey, publishableKey: account.keys.publishableKey.key };
}

export interface Call {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  status?: number;
  responseHeaders?: Record<string, string>;
  startedAtMs: number;
}

// A fetch that records what the SDK sends (and what came back) and passes it on unchanged.
export function recordingFetch(): { fetch: typeof fetch; calls: Call[] } {
  const calls: Call[] = [];
  const recorded: typeof fetch = async (input, init) => {
    const call: Call = {
      method: init?.method ?? 'GET',
      url: typeof input === 'string' ? input : input instanceof URL ? input.href : input.url,
      headers: Object.fromEntries(new Headers(init?.headers).entries()),
      body: typeof init?.body === 'string' ? init.body : undefined,
      startedAtMs: Date.now(),
    };
    calls.push(call);
    const res = await fetch(input, init);
    call.status = res.status;
    call.responseHeaders = Object.fromEntries(res.headers.entries());
    return res;
  };
  return { fetch: recorded, calls };
}

type ProxyAction =
  | { kind: 'drop-after-answer' } // forward, let the server answer, then cut the client's connection
  | { kind: 'hold' } // never answer (until the proxy closes)
  | { kind: 'answer'; status: number; headers?: Record<string, string>; body: string }; // answer instead of the server

export interface Proxy {
  baseUrl: string;
  // Requests seen, in order, with the action taken.
  seen: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; action: ProxyAction['kind'] | 'forward' }>;
  // Actions for the next requests, taken in order; then requests are forwarded.
  plan(...actions: ProxyAction[]): void;
  close(): Promise<void>;
}

// `pages`: documents the proxy serves itself at those paths (a browser page on the API's origin).
export async function startProxy(targetPort: number, pages: Record<string, string> = {}): Promise<Proxy> {
  const queue: ProxyAction[] = [];
  const seen: Proxy['seen'] = [];
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && pages[req.url!] !== undefined) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(pages[req.url!]);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const action = queue.shift();
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, action: action?.kind ?? 'forward' });
      if (action?.kind === 'hold') return;
      if (action?.kind === 'answer') {
        res.writeHead(action.status, { 'content-type': 'application/json', ...action.headers });
        res.end(action.body);
        return;
      }
      const upstream = http.request({ host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers: req.headers }, (up) => {
        const body: Buffer[] = [];
        up.on('data', (c: Buffer) => body.push(c));
        up.on('end', () => {
          if (action?.kind === 'drop-after-answer') {
            req.socket.destroy();
            return;
          }
          res.writeHead(up.statusCode!, up.headers);
          res.end(Buffer.concat(body));
        });
      });
      upstream.on('error', () => req.socket.destroy());
      upstream.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    seen,
    plan: (...actions) => queue.push(...actions),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface Delivery {
  headers: http.IncomingHttpHeaders;
  rawBody: Buffer;
}

// A webhook endpoint on this machine: records each delivery's exact bytes and headers, answers 200.
export async function startReceiver(): Promise<{ url: string; deliveries: Delivery[]; close(): Promise<void> }> {
  const deliveries: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ headers: req.headers, rawBody: Buffer.concat(chunks) });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    deliveries,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// Holds the server's store writes until release(): a mutating request stays in flight on the
// server (its Idempotency-Key marked in use) for as long as the test needs; its reads, and
// every other request, go on. `reached` resolves when a write is first held: on a server started
// with `worker: false` that is the request's own. The store itself is untouched: each held write
// runs, in order, once released.
export function holdWrites(r: Running): { reached: Promise<void>; release(): void } {
  const store = r.t.store;
  const write = store.write.bind(store);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let reached!: () => void;
  const firstHeld = new Promise<void>((resolve) => (reached = resolve));
  store.write = <T>(op: WriteOp<T>): Promise<T> => {
    reached();
    return released.then(() => write(op));
  };
  return {
    reached: firstHeld,
    release: () => {
      Reflect.deleteProperty(store, 'write'); // back to Store.prototype.write
      release();
    },
  };
}

// A live secret key for the account, made as the CLI's `keys:create --live` does (operators
// make live keys; no API does); `activate` turns live mode on as `accounts:activate-live` does.
export async function liveKey(r: Running, accountId: string): Promise<{ key: string; activate(): Promise<void> }> {
  const { key } = await createKey(r.t.store, accountId, 'secret', true);
  return { key, activate: () => activateLive(r.t.store, accountId) };
}

// Settlement runs are an operator's action (admin API, not the SDK's): signs in as an admin
// and runs one for `date`, through HTTP like the back office does.
export async function runSettlement(r: Running, date?: string): Promise<void> {
  const email = `ops-${Math.random().toString(36).slice(2)}@example.com`;
  const password = 'correct horse battery';
  await createAdminUser(r.t.store, email, password);
  const login = await fetch(`${r.baseUrl}/admin/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  if (login.status !== 200) throw new Error(`admin login: ${login.status} ${await login.text()}`);
  const cookie = login.headers.get('set-cookie')!.split(';')[0];
  const { csrfToken } = (await login.json()) as { csrfToken: string };
  const run = await fetch(`${r.baseUrl}/admin/settlement-runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrfToken },
    body: JSON.stringify({ ...(date ? { date } : {}), reason: 'SDK test run' }),
  });
  if (run.status !== 200) throw new Error(`settlement run: ${run.status} ${await run.text()}`);
  // The answer is the run, pending: a worker carries it out.
  const { id } = (await run.json()) as { id: string };
  await eventually(async () => ((await (await fetch(`${r.baseUrl}/admin/settlement-runs/${id}`, { headers: { cookie } })).json()) as { status: string }).status === 'completed', 'the settlement run to complete');
}

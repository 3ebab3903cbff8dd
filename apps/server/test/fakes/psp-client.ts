// Small HTTPS helpers for tests that talk to the fake PSP (and for the fake's callback
// receiver): one request over mutual TLS, a token, and a webhook receiver that records what
// arrived and with which client certificate. Not the connector: the connector under test has its
// own client; these exist so the fake's own tests exercise it from outside.
import { createServer, request, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { ClientCredentials, Dialect, FakePixPsp } from './fake-pix-psp.js';
import type { KeyPair } from './pki.js';

export interface TlsIdentity {
  cert?: string;
  key?: string;
  ca: string | string[];
}

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON (undefined when empty or not JSON). */
  json: unknown;
}

/** One HTTPS request with the given TLS identity; rejects on network errors and on `timeoutMs`. */
export function httpsCall(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string; tls: TlsIdentity; timeoutMs?: number },
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: opts.method ?? 'GET',
        headers: { ...(opts.body !== undefined ? { 'content-length': String(Buffer.byteLength(opts.body)) } : {}), ...opts.headers },
        ca: opts.tls.ca,
        cert: opts.tls.cert,
        key: opts.tls.key,
        agent: false,
        timeout: opts.timeoutMs ?? 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? (JSON.parse(text) as unknown) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timed out after ${opts.timeoutMs ?? 10_000} ms`)));
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Ask the fake for a token the way its dialect wants it. */
export async function fetchToken(fake: FakePixPsp, client: ClientCredentials = fake.client, opts: { scope?: string; dialect?: Dialect } = {}): Promise<HttpAnswer> {
  const dialect = opts.dialect ?? fake.dialect;
  const basic = 'Basic ' + Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64');
  const body =
    dialect === 'efi'
      ? JSON.stringify({ grant_type: 'client_credentials', ...(opts.scope ? { scope: opts.scope } : {}) })
      : new URLSearchParams({ grant_type: 'client_credentials', ...(opts.scope ? { scope: opts.scope } : {}) }).toString();
  return httpsCall(fake.tokenUrl, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': dialect === 'efi' ? 'application/json' : 'application/x-www-form-urlencoded' },
    body,
    tls: { cert: client.cert, key: client.key, ca: client.ca },
  });
}

/** A token's access_token, or throw. */
export async function accessToken(fake: FakePixPsp, client: ClientCredentials = fake.client, scope?: string): Promise<string> {
  const a = await fetchToken(fake, client, { scope });
  if (a.status !== 200) throw new Error(`token: ${a.status} ${a.text}`);
  return (a.json as { access_token: string }).access_token;
}

/** Call the API (path relative to the dialect's base URL) with a bearer token over mTLS. */
export function api(
  fake: FakePixPsp,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; rawBody?: string; client?: ClientCredentials; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<HttpAnswer> {
  const client = opts.client ?? fake.client;
  const body = opts.rawBody ?? (opts.body !== undefined ? JSON.stringify(opts.body) : undefined);
  return httpsCall(fake.baseUrl + path, {
    method,
    headers: {
      ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...opts.headers,
    },
    body,
    tls: { cert: client.cert, key: client.key, ca: client.ca },
    timeoutMs: opts.timeoutMs,
  });
}

export interface ReceivedCallback {
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** Did the client present a certificate our CA signed? */
  authorized: boolean;
  peerFingerprint256?: string;
}

export interface WebhookReceiver {
  /** https://127.0.0.1:<port>/<prefix> */
  url: string;
  received: ReceivedCallback[];
  close(): Promise<void>;
}

/**
 * A webhook endpoint on loopback, as a merchant platform would run it: TLS with a server
 * certificate, asking for a client certificate. `requireCert: 'handshake'` refuses a client
 * without a trusted certificate in the TLS handshake; `'answer'` (default) lets it in and
 * answers 403 (so a test can see the attempt); `'none'` does not ask at all.
 */
export async function startWebhookReceiver(opts: { serverPair: KeyPair; trust: string[]; requireCert?: 'handshake' | 'answer' | 'none'; prefix?: string }): Promise<WebhookReceiver> {
  const received: ReceivedCallback[] = [];
  const mode = opts.requireCert ?? 'answer';
  const server: Server = createServer(
    { key: opts.serverPair.key, cert: opts.serverPair.cert, ca: opts.trust, requestCert: mode !== 'none', rejectUnauthorized: mode === 'handshake' },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const socket = req.socket as TLSSocket;
        const peer = socket.getPeerCertificate();
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = JSON.parse(text) as unknown;
        } catch {
          body = text;
        }
        received.push({ path: req.url ?? '', headers: req.headers, body, authorized: socket.authorized, peerFingerprint256: peer?.fingerprint256 });
        const ok = mode === 'none' || socket.authorized;
        res.writeHead(ok ? 200 : 403, { 'content-type': 'application/json' });
        res.end(ok ? '{}' : '{"error":"client certificate required"}');
      });
    },
  );
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}${opts.prefix ?? '/webhooks/pix-psp'}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

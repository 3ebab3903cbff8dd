import { Agent, request } from 'node:https';
import type { Clock, ClockTimer } from '../../clock.js';
import type { OpenedConnectorAccount } from '../connector.js';
import { ProviderRejected, ProviderUnavailable } from '../port.js';
import { DIALECTS, type PixDialect } from './dialects/index.js';

// One client of the Banco Central's standard API Pix (bacen/pix-api openapi.yaml 2.9.0), for
// every PSP; what a PSP does differently is its dialect (dialects/). OAuth2 client credentials
// over mutual TLS (the PSP's client certificate), the token cached until shortly before it
// expires (by the Clock) and fetched again on a 401; a timeout on every call. Errors are the
// standard's RFC 7807 problems.

export const DEFAULT_TIMEOUT_MS = 10_000;
// A token is used until this long before its expiry, then fetched again.
const TOKEN_MARGIN_MS = 60_000;
// An answer larger than this is refused (a page of GET /pix is at most ~1000 items).
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface PixApiResponse {
  status: number;
  body: unknown;
}

// The PSP answered with a problem (4xx other than 401/404/409-ish handling by the caller).
export class PixApiProblem extends ProviderRejected {
  constructor(readonly status: number, readonly problem: { type?: string; title?: string; detail?: string }) {
    super(problem.type?.split('/').pop() || `http_${status}`, `PSP answered ${status}: ${problem.title ?? 'error'}${problem.detail ? ` (${String(problem.detail).slice(0, 200)})` : ''}`);
    this.name = 'PixApiProblem';
  }
}

interface CachedToken {
  token: string;
  useUntilMs: number;
}

export class PixApiClient {
  private readonly dialect: PixDialect;
  private readonly agent: Agent;
  private token: CachedToken | null = null;
  private tokenInFlight: Promise<string> | null = null;
  readonly timeoutMs: number;

  constructor(private readonly account: OpenedConnectorAccount, private readonly clock: Clock) {
    this.dialect = DIALECTS[account.settings.dialect] ?? DIALECTS.standard;
    this.timeoutMs = account.settings.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.agent = new Agent({
      keepAlive: true,
      maxSockets: 16,
      cert: account.secrets.certificatePem,
      key: account.secrets.privateKeyPem,
      ...(account.secrets.caPem ? { ca: account.secrets.caPem } : {}),
    });
  }

  close(): void {
    this.agent.destroy();
  }

  // The standard's path (`/cob/{txid}`) as this PSP serves it; `exact`: a PSP's own path
  // (Efí's `/v3/gn/pix/{idEnvio}`), under the base URL as it is.
  url(standardPath: string, query?: Record<string, string>, exact = false): string {
    const base = this.account.settings.baseUrl.replace(/\/+$/, '');
    const qs = query ? '?' + new URLSearchParams(query).toString() : '';
    return base + (exact ? standardPath : this.dialect.path(standardPath)) + qs;
  }

  // A call with the bearer token; a 401 drops the cached token and tries once more with a fresh
  // one (a revoked or expired token). Transport failures are ProviderUnavailable.
  async call(method: string, standardPath: string, options: { body?: unknown; query?: Record<string, string>; exactPath?: boolean } = {}): Promise<PixApiResponse> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.accessToken();
      const res = await this.send(method, this.url(standardPath, options.query, options.exactPath), {
        authorization: `Bearer ${token}`,
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      }, options.body === undefined ? undefined : JSON.stringify(options.body));
      if (res.status === 401 && attempt === 0) {
        this.token = null;
        continue;
      }
      if (res.status >= 500 || res.status === 429) throw new ProviderUnavailable(`PSP ${method} ${standardPath.split('/')[1]} answered ${res.status}`);
      return res;
    }
  }

  // A 2xx body, or the problem thrown.
  static ok(res: PixApiResponse): unknown {
    if (res.status >= 200 && res.status < 300) return res.body;
    throw new PixApiProblem(res.status, (res.body && typeof res.body === 'object' ? res.body : {}));
  }

  async accessToken(): Promise<string> {
    const nowMs = this.clock.nowMs();
    if (this.token && this.token.useUntilMs > nowMs) return this.token.token;
    // One token request at a time per account, however many calls wait for it.
    this.tokenInFlight ??= this.fetchToken().finally(() => {
      this.tokenInFlight = null;
    });
    return this.tokenInFlight;
  }

  private async fetchToken(): Promise<string> {
    const { contentType, body } = this.dialect.tokenRequest(this.account.settings.scopes ?? this.dialect.defaultScopes);
    const basic = Buffer.from(`${this.account.clientId}:${this.account.secrets.clientSecret}`).toString('base64');
    const startedMs = this.clock.nowMs();
    const res = await this.send('POST', this.account.settings.tokenUrl ?? this.dialect.tokenUrl(this.account.settings), { authorization: `Basic ${basic}`, 'content-type': contentType }, body);
    if (res.status >= 500 || res.status === 429) throw new ProviderUnavailable(`PSP token endpoint answered ${res.status}`);
    const answer = res.body as { access_token?: unknown; expires_in?: unknown } | null;
    if (res.status !== 200 || typeof answer?.access_token !== 'string') {
      // Never the body: it may echo credentials.
      throw new ProviderRejected('oauth_refused', `The PSP refused the client credentials (token endpoint answered ${res.status}).`);
    }
    const expiresInS = typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in : 300;
    // Measured from when we asked, and a margin before the end, so a token is never sent stale.
    this.token = { token: answer.access_token, useUntilMs: startedMs + Math.max(expiresInS * 1000 - TOKEN_MARGIN_MS, (expiresInS * 1000) / 2) };
    return answer.access_token;
  }

  // One HTTPS exchange over the account's mutual-TLS agent, bounded by the timeout (of this
  // client's Clock).
  private send(method: string, url: string, headers: Record<string, string>, body: string | undefined): Promise<PixApiResponse> {
    return new Promise((resolve, reject) => {
      let timer: ClockTimer | null = null;
      let settled = false;
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        if (timer) this.clock.clearTimeout(timer);
        fn();
      };
      const req = request(url, {
        method,
        agent: this.agent,
        headers: { accept: 'application/json', ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) },
      }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY_BYTES) {
            req.destroy();
            finish(() => reject(new ProviderUnavailable(`PSP answer over ${MAX_BODY_BYTES} bytes`)));
            return;
          }
          chunks.push(chunk);
        });
        res.on('error', (err) => finish(() => reject(new ProviderUnavailable(`PSP answer cut: ${err.message}`))));
        res.on('end', () => finish(() => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = null;
          if (text.length > 0) {
            try {
              parsed = JSON.parse(text);
            } catch {
              if ((res.statusCode ?? 0) < 300) return reject(new ProviderUnavailable(`PSP answered ${res.statusCode} with a body that is not JSON`));
            }
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        }));
      });
      timer = this.clock.setTimeout(() => {
        req.destroy();
        finish(() => reject(new ProviderUnavailable(`PSP did not answer within ${this.timeoutMs} ms`)));
      }, this.timeoutMs);
      timer.unref?.();
      req.on('error', (err) => finish(() => reject(new ProviderUnavailable(`PSP unreachable: ${(err as NodeJS.ErrnoException).code ?? err.message}`))));
      if (body !== undefined) req.write(body);
      req.end();
    });
  }
}

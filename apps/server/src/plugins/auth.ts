import { countRawHeader } from '../http/headers.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import { sameSecret } from '../domain/secrets.js';
import type { Store } from '../store/index.js';
import { findKey, hashKey, parseKeyPrefix, type AuthRecord } from '../modules/accounts/service.js';

export type AuthMode = 'secret' | 'publishable' | 'checkout' | 'none';

// A checkout session's client secret: `<session id>_secret_<32+ base62>`.
export const CLIENT_SECRET = /^(cs_[0-9a-z]{26})_secret_[0-9A-Za-z]{32,64}$/;

declare module 'fastify' {
  interface FastifyContextConfig {
    // Which key the route takes: 'secret' (default under /v1), 'publishable' (browser routes,
    // which also take a secret key, and an open checkout session's client secret: the hosted
    // page tokenizes its buyer's card with it), 'checkout' (the hosted page's own calls: only the
    // client secret of the session named in the path), or 'none'.
    auth?: AuthMode;
  }
  interface FastifyRequest {
    auth: AuthRecord | null;
    // Why the request has no valid key (401): raised by the rate-limit hook, after the request
    // has been counted against its address's anonymous limit (plugins/rate-limit.ts).
    authError: ApiError | null;
  }
}

// Positive lookups are cached briefly: the key table is read on every request otherwise.
// A revocation made through this process clears the cache at once; one made elsewhere (the CLI,
// another instance) takes effect within the TTL.
export class KeyCache {
  private entries = new Map<string, { record: AuthRecord; expiresAtMs: number }>();
  constructor(readonly store: Store, private readonly ttlMs: number, private readonly maxEntries = 10_000) {}

  async lookup(plain: string): Promise<AuthRecord | null> {
    const hash = hashKey(plain);
    const now = this.store.clock.nowMs();
    const hit = this.entries.get(hash);
    if (hit && hit.expiresAtMs > now) return hit.record;
    const record = await findKey(this.store, plain);
    if (record && this.ttlMs > 0) {
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(hash, { record, expiresAtMs: now + this.ttlMs });
    } else {
      this.entries.delete(hash);
    }
    return record;
  }

  clear(): void {
    this.entries.clear();
  }
}

// The credential of an `Authorization: Bearer <credential>` header, or null when the header is
// not that. RFC 9110 11.1: the scheme is case-insensitive (`bearer sk_...` too), then one or
// more spaces.
export function bearerToken(header: string): string | null {
  return /^bearer +(\S+)$/i.exec(header)?.[1] ?? null;
}

export async function authenticate(req: FastifyRequest, mode: AuthMode, cache: KeyCache): Promise<AuthRecord | null> {
  if (mode === 'none') return null;
  // Node keeps the first of several Authorization headers and drops the rest: which credential
  // a request meant would be a guess (a proxy's and the client's, say). Refused instead.
  if (countRawHeader(req.raw.rawHeaders, 'authorization') > 1) {
    throw new ApiError('VALIDATION_ERROR', 'Send one Authorization header, not several.', { param: 'Authorization' });
  }
  const header = req.headers.authorization;
  if (!header) throw new ApiError('AUTHENTICATION_REQUIRED', 'Send your API key as "Authorization: Bearer sk_test_...".');
  const token = bearerToken(header);
  if (token === null) throw new ApiError('AUTHENTICATION_REQUIRED', 'The Authorization header must be "Bearer <API key>".');
  if (mode === 'checkout') return checkoutSecret(token, cache.store, { sessionId: (req.params as { id?: string } | undefined)?.id ?? null, openOnly: false });
  // The hosted page tokenizes its buyer's card (POST /v1/tokens) with its session's client
  // secret, never with a merchant key: the page is handed no key at all.
  const pageSecret = mode === 'publishable' ? CLIENT_SECRET.exec(token) : null;
  if (pageSecret) return checkoutSecret(token, cache.store, { sessionId: pageSecret[1], openOnly: true });
  const prefix = parseKeyPrefix(token);
  // Never echo the key: a pasted live key in an error message ends up in someone's logs.
  if (!prefix) throw new ApiError('INVALID_API_KEY', 'The API key is not valid.');
  const record = await cache.lookup(token);
  if (!record) throw new ApiError('INVALID_API_KEY', 'The API key is not valid or has been revoked.');
  if (record.kind === 'publishable' && mode === 'secret') {
    throw new ApiError('PERMISSION_DENIED', 'Publishable keys (pk_) only make card tokens; use a secret key (sk_) from your server.');
  }
  if (record.livemode && !record.liveEnabled) {
    throw new ApiError('PERMISSION_DENIED', 'Live mode is not activated for this account yet; use your sk_test_ key in the sandbox.');
  }
  return record;
}

// The hosted page is authorized by its session's client secret, and by nothing else: merchant
// keys are refused (a page never holds one), and so is another session's secret. Nothing of
// the secret is ever echoed. `sessionId`: the session the route names (the path's id), which the
// secret must be of. `openOnly`: only while the session can still be paid (tokenizing a card for
// a finished session is of no use to anyone, and a leaked old secret then makes no tokens).
async function checkoutSecret(secret: string, store: Store, options: { sessionId: string | null; openOnly: boolean }): Promise<AuthRecord> {
  if (parseKeyPrefix(secret)) {
    throw new ApiError('PERMISSION_DENIED', 'The checkout page API only takes the session\'s client secret, never an API key.');
  }
  const m = CLIENT_SECRET.exec(secret);
  const { sessionId } = options;
  const invalid = () => new ApiError('INVALID_API_KEY', 'The client secret is not valid for this checkout session.');
  if (!m || !sessionId || m[1] !== sessionId) throw invalid();
  const row = await store.db.selectFrom('checkout_sessions')
    .innerJoin('accounts', 'accounts.id', 'checkout_sessions.account_id')
    .select(['checkout_sessions.account_id as accountId', 'checkout_sessions.livemode', 'checkout_sessions.client_secret', 'checkout_sessions.status', 'checkout_sessions.expires_at_ms', 'accounts.live_enabled'])
    .where('checkout_sessions.id', '=', sessionId).executeTakeFirst();
  if (!row || !sameSecret(row.client_secret, secret)) throw invalid();
  if (options.openOnly && (row.status !== 'open' || row.expires_at_ms <= store.clock.nowMs())) {
    throw new ApiError('PERMISSION_DENIED', 'This checkout session is no longer open: its client secret makes no more card tokens.');
  }
  return { keyId: `checkout:${sessionId}`, accountId: row.accountId, livemode: row.livemode === 1, kind: 'checkout', liveEnabled: row.live_enabled === 1, checkoutSessionId: sessionId };
}

export function registerAuth(app: FastifyInstance, cache: KeyCache): void {
  app.decorateRequest('auth', null);
  app.decorateRequest('authError', null);
  app.addHook('onRequest', async (req) => {
    const mode = req.routeOptions.config?.auth ?? 'none';
    try {
      req.auth = await authenticate(req, mode, cache);
    } catch (error) {
      // No key or an invalid one: anonymous, refused once the anonymous limit has counted it
      // (so guessing keys is rate-limited too). A valid key that may not do this (403) is not.
      if (error instanceof ApiError && error.statusCode === 401) req.authError = error;
      else throw error;
    }
  });
}

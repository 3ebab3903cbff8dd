import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import type { Clock } from '../clock.js';

// Token bucket per caller, in this process's memory: `limit` requests per window, refilled
// continuously. Bounded in size: past `maxBuckets` the oldest idle buckets are dropped.
export class RateLimiter {
  private buckets = new Map<string, { tokens: number; updatedMs: number }>();
  constructor(readonly limit: number, readonly windowMs: number, private readonly clock: Clock, private readonly maxBuckets = 100_000) {}

  take(key: string, nowMs = this.clock.nowMs()): { ok: boolean; remaining: number; resetSeconds: number } {
    const rate = this.limit / this.windowMs;
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= this.maxBuckets) this.buckets.delete(this.buckets.keys().next().value as string);
      bucket = { tokens: this.limit, updatedMs: nowMs };
      this.buckets.set(key, bucket);
    } else {
      bucket.tokens = Math.min(this.limit, bucket.tokens + (nowMs - bucket.updatedMs) * rate);
      bucket.updatedMs = nowMs;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true, remaining: Math.floor(bucket.tokens), resetSeconds: Math.ceil((this.limit - bucket.tokens) / rate / 1000) };
    }
    return { ok: false, remaining: 0, resetSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / rate / 1000)) };
  }
}

type Taken = ReturnType<RateLimiter['take']>;

const limitHeaders = (limiter: RateLimiter, r: Taken): Record<string, string> => ({
  'ratelimit-limit': String(limiter.limit), 'ratelimit-remaining': String(r.remaining), 'ratelimit-reset': String(r.resetSeconds),
});

// Every 429 carries Retry-After and the RateLimit-* headers of the limit it hit.
const tooMany = (limiter: RateLimiter, r: Taken, what: string) =>
  new ApiError('RATE_LIMITED', `Too many ${what}; retry after ${r.resetSeconds} s.`, { headers: { 'retry-after': String(r.resetSeconds), ...limitHeaders(limiter, r) } });

export function applyLimit(reply: FastifyReply, limiter: RateLimiter, key: string, what: string): void {
  const r = limiter.take(key);
  reply.headers(limitHeaders(limiter, r));
  if (!r.ok) throw tooMany(limiter, r, what);
}

declare module 'fastify' {
  interface FastifyContextConfig {
    // A route-specific limiter (e.g. sandbox signup, per client address) instead of per key.
    rateLimit?: { limiter: RateLimiter; what: string };
  }
}

// Paths outside the anonymous limit as it is taken up front: the back office's pages (static
// files); the admin API, whose requests are charged only once refused without a session (see
// chargeAdminRefusal), so that a signed-in operator is never limited by others' traffic from the
// same address; and the health checks, which cost nothing and must never tell a load balancer
// "429" (it would take the instance out of rotation).
// PSP callbacks are never throttled by address: a PSP sends bursts from a few addresses, and a
// refused callback only delays a payment until reconciliation. An unknown token costs one indexed
// lookup (a 404); a known one stores a deduplicated row.
export const PROVIDER_CALLBACKS_PREFIX = '/v1/provider-callbacks';
const OWN_THROTTLE = ['/admin', '/backoffice', '/healthz', '/readyz', PROVIDER_CALLBACKS_PREFIX];
const under = (url: string, p: string) => url === p || url.startsWith(`${p}/`) || url.startsWith(`${p}?`);
const hasOwnThrottle = (url: string) => OWN_THROTTLE.some((p) => under(url, p));

// Admin requests not yet charged, with the limiter to charge if they are refused before a session
// is found (chargeAdminRefusal).
const unchargedAdminRequests = new WeakMap<FastifyRequest, RateLimiter>();

// Called for every error answer (plugins/errors.ts sendError). An admin request refused before it
// had a valid session (no cookie, an unknown or expired one, an API key, a missing CSRF token, a
// path that is no route) counts against its address's anonymous limit, like a request without a
// valid key; once the address is over it, it is answered 429 instead. Sign-in is not charged: it
// has its own throttle (per email and per address).
export function chargeAdminRefusal(req: FastifyRequest, refusal: ApiError): ApiError {
  const limiter = unchargedAdminRequests.get(req);
  if (!limiter || req.admin || refusal.statusCode >= 500) return refusal;
  unchargedAdminRequests.delete(req);
  const r = limiter.take(req.ip);
  return r.ok ? refusal : tooMany(limiter, r, 'requests without a valid admin session from this address');
}

// Registered right after the auth hook: a request with a valid key counts against its key's
// limit; any other (no key, an invalid key, a route that takes none, an unknown path) against its
// client address's anonymous limit (the address is the socket's, or X-Forwarded-For's as
// TRUST_PROXY allows). Then the auth hook's refusal, if any, is raised.
export function registerRateLimit(app: FastifyInstance, perKey: RateLimiter, anonymous: RateLimiter): void {
  app.addHook('onRequest', async (req, reply) => {
    if (under(req.url, '/admin') && !(req.method === 'POST' && req.routeOptions.url === '/admin/session')) {
      unchargedAdminRequests.set(req, anonymous);
    } else if (!req.auth && !hasOwnThrottle(req.url)) {
      // Only a refusal carries headers: a 401 says nothing about the limit of an address.
      const r = anonymous.take(req.ip);
      if (!r.ok) throw tooMany(anonymous, r, 'requests without a valid API key from this address');
    }
    // A route's own limiter replaces the per-key one (its RateLimit-* headers are the route's).
    const special = req.routeOptions.config?.rateLimit;
    if (special) applyLimit(reply, special.limiter, req.ip, special.what);
    else if (req.auth) applyLimit(reply, perKey, req.auth.keyId, 'requests with this key');
    if (req.authError) throw req.authError;
  });
}

import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../errors.js';

// Token bucket per caller, in this process's memory: `limit` requests per window, refilled
// continuously. Bounded in size: past `maxBuckets` the oldest idle buckets are dropped.
export class RateLimiter {
  private buckets = new Map<string, { tokens: number; updatedMs: number }>();
  constructor(readonly limit: number, readonly windowMs: number, private readonly maxBuckets = 100_000) {}

  take(key: string, nowMs = Date.now()): { ok: boolean; remaining: number; resetSeconds: number } {
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

export function applyLimit(reply: FastifyReply, limiter: RateLimiter, key: string, what: string): void {
  const r = limiter.take(key);
  reply.header('ratelimit-limit', limiter.limit).header('ratelimit-remaining', r.remaining).header('ratelimit-reset', r.resetSeconds);
  if (!r.ok) {
    throw new ApiError('RATE_LIMITED', `Too many ${what}; retry after ${r.resetSeconds} s.`, { headers: { 'retry-after': String(r.resetSeconds) } });
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    // A route-specific limiter (e.g. sandbox signup, per client address) instead of per key.
    rateLimit?: { limiter: RateLimiter; what: string };
  }
}

// Paths outside the anonymous limit: the back office's pages and its API, which has its own
// sign-in throttle (per address and per email) and answers nothing without a session; and the
// health checks, which cost nothing and must never tell a load balancer "429" (it would take the
// instance out of rotation).
const OWN_THROTTLE = ['/admin', '/backoffice', '/healthz', '/readyz'];
const hasOwnThrottle = (url: string) => OWN_THROTTLE.some((p) => url === p || url.startsWith(`${p}/`) || url.startsWith(`${p}?`));

// Registered right after the auth hook: a request with a valid key counts against its key's
// limit; any other (no key, an invalid key, a route that takes none, an unknown path) against its
// client address's anonymous limit (the address is the socket's, or X-Forwarded-For's as
// TRUST_PROXY allows). Then the auth hook's refusal, if any, is raised.
export function registerRateLimit(app: FastifyInstance, perKey: RateLimiter, anonymous: RateLimiter): void {
  app.addHook('onRequest', async (req, reply) => {
    if (!req.auth && !hasOwnThrottle(req.url)) {
      // Only a refusal carries headers: a 401 says nothing about the limit of an address.
      const r = anonymous.take(req.ip);
      if (!r.ok) {
        throw new ApiError('RATE_LIMITED', `Too many requests without a valid API key from this address; retry after ${r.resetSeconds} s.`, { headers: { 'retry-after': String(r.resetSeconds) } });
      }
    }
    // A route's own limiter replaces the per-key one (its RateLimit-* headers are the route's).
    const special = req.routeOptions.config?.rateLimit;
    if (special) applyLimit(reply, special.limiter, req.ip, special.what);
    else if (req.auth) applyLimit(reply, perKey, req.auth.keyId, 'requests with this key');
    if (req.authError) throw req.authError;
  });
}

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

export function registerRateLimit(app: FastifyInstance, perKey: RateLimiter): void {
  app.addHook('onRequest', async (req, reply) => {
    const special = req.routeOptions.config?.rateLimit;
    if (special) return applyLimit(reply, special.limiter, req.ip, special.what);
    if (req.auth) applyLimit(reply, perKey, req.auth.keyId, 'requests with this key');
  });
}

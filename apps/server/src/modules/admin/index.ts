import type { FastifyInstance } from 'fastify';
import type { Store } from '../../store/index.js';
import type { Config } from '../../config.js';
import type { KeyCache } from '../../plugins/auth.js';
import { ApiError } from '../../errors.js';
import { sendError, toApiError } from '../../plugins/errors.js';
import { DEFAULT_SESSION_TTL_MS, LoginThrottle } from './sessions.js';
import { adminGuard, sessionRoutes } from './session-routes.js';
import { splitRuleRoutes } from './split-rules.js';
import { adminAccountRoutes } from './accounts.js';

// The admin API (/admin/...): back-office operations behind an admin session (cookie + CSRF
// token), never an API key. Everything lives in one encapsulated plugin scope (no prefix: routes
// register full `/admin/...` paths) whose onRequest hook authenticates the session and sets
// req.admin; the idempotency preHandler then scopes
// Idempotency-Keys to that admin and gives each route req.ctx.write.

export { adminSchemas } from './schemas.js';
export { createAdminUser } from './users.js';
export { LoginThrottle, DEFAULT_SESSION_TTL_MS } from './sessions.js';
export { LOGIN_FAILED_MESSAGE } from './session-routes.js';

export interface AdminDeps {
  store: Store;
  config: Config;
  // Failed sign-in throttle (default: 5 failures per email, 20 per client address, in 15 min).
  loginLimiter?: LoginThrottle;
  // Session lifetime (default 8 hours, absolute).
  sessionTtlMs?: number;
  // When given, cleared on live-mode activation so the change applies at once in this process.
  keyCache?: KeyCache;
  // More admin routes to mount inside the admin scope, behind the same session/CSRF guard and
  // error handling (e.g. `(scope) => settlementRunRoutes(scope, settlementDeps)`). They register
  // full paths (`/admin/...`): the scope has no prefix.
  routes?: Array<(scope: FastifyInstance) => void>;
}

// Array indexes in field names read `splits[0].amount` in admin errors (the domain's spelling),
// rather than the validator's `splits.0.amount`.
const bracketed = (param: string) => param.replace(/\.(\d+)(?=\.|$)/g, '[$1]');

function adminError(err: unknown): unknown {
  if (!(err as { validation?: unknown })?.validation) return err;
  const e = toApiError(err);
  if (e.code !== 'VALIDATION_ERROR' || e.param === undefined) return e;
  const param = bracketed(e.param);
  const details = Array.isArray(e.details)
    ? e.details.map((d: { param?: string }) => (typeof d?.param === 'string' ? { ...d, param: bracketed(d.param) } : d))
    : e.details;
  return new ApiError(e.code, e.message.split(e.param).join(param), { param, details, headers: e.headers });
}

export async function registerAdmin(app: FastifyInstance, deps: AdminDeps): Promise<void> {
  const { store, config } = deps;
  const ttlMs = deps.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS;
  const throttle = deps.loginLimiter ?? new LoginThrottle();
  const secureCookie = (config.publicUrl ?? '').toLowerCase().startsWith('https:');

  await app.register(async (scope) => {
    scope.setErrorHandler(async (err, req, reply) => sendError(req, reply, adminError(err)));
    scope.addHook('onRequest', adminGuard(store));
    sessionRoutes(scope, { store, ttlMs, secureCookie, throttle });
    splitRuleRoutes(scope, store);
    adminAccountRoutes(scope, store, deps.keyCache);
    for (const register of deps.routes ?? []) register(scope);
  });
}

import type { FastifyInstance } from 'fastify';
import type { Store } from '../../store/index.js';
import type { Config } from '../../config.js';
import type { KeyCache } from '../../plugins/auth.js';
import { ApiError } from '../../errors.js';
import { sendError, toApiError } from '../../plugins/errors.js';
import type { TSchema } from 'typebox';
import { DEFAULT_SESSION_TTL_MS, LoginThrottle } from './sessions/service.js';
import { adminGuard, sessionRoutes } from './sessions/routes.js';
import { AdminLoginRequest, AdminSession, AdminSessionEnded, AdminSessionStatus, AdminUser } from './sessions/schemas.js';
import { splitRuleActionRoutes, splitRuleRoutes } from './split-rules/routes.js';
import { ActivateSplitRuleRequest, AmountSplitShare, AmountSplitShareRequest, CreateSplitRuleRequest, DeactivateSplitRuleRequest, PercentageSplitShare, PercentageSplitShareRequest, ReorderSplitRulesRequest, SplitPreview, SplitPreviewOutcome, SplitPreviewReceivable, SplitPreviewRequest, SplitPreviewRule, SplitRule, SplitRuleConditions, SplitRuleList, SplitShare, SplitShareRequest, UpdateSplitRuleRequest } from './split-rules/schemas.js';
import { adminAccountRoutes, accountViewRoutes } from './accounts/routes.js';
import { AccountViewSchemas, ActivateLiveModeRequest, AdminAccount, AdminAccountList, AdminAccountSettings, UpdateAccountSettingsRequest, UpdatePayoutBankAccountRequest, UpdateEmbedOriginsRequest } from './accounts/schemas.js';
import { adminPaymentRoutes } from './payments/routes.js';
import { adminPaymentSchemas } from './payments/schemas.js';
import { auditAdminWrites } from './shared/audit.js';
import { auditLogRoutes } from './audit-log/routes.js';
import { auditLogSchemas } from './audit-log/schemas.js';
import { checkPermission, requirePermissionDeclared } from './shared/permissions.js';
import { settlementRunSchemas } from './settlement-runs/schemas.js';
import { connectorAccountSchemas } from './connector-accounts/schemas.js';
import { brandingRoutes } from './branding/routes.js';
import { brandingSchemas } from './branding/schemas.js';
import { adminStatsRoutes } from './stats/routes.js';
import { adminStatsSchemas } from './stats/schemas.js';
import { adminSearchRoutes } from './search/routes.js';
import { adminSearchSchemas } from './search/schemas.js';
import { adminSettlementRoutes } from './settlements/routes.js';
import { adminDisputeRoutes, adminDisputeSchemas } from './disputes/routes.js';
import { systemClock, type Clock } from '../../clock.js';

// The admin API (/admin/...): back-office operations behind an admin session (cookie + CSRF
// token), never an API key. Everything lives in one encapsulated plugin scope (no prefix: routes
// register full `/admin/...` paths) whose onRequest hook authenticates the session and sets
// req.admin; the idempotency preHandler then scopes
// Idempotency-Keys to that admin and gives each route req.ctx.write.
//
// Two rules hold for every route of the scope, checked when the route is registered (the app
// does not start otherwise): it declares the permission it needs (permissions.ts, enforced on
// each request after the session), and, if it changes data, what it changes, so that each of its
// writes records an audit entry in the same transaction (shared/audit.ts).
//
// Layout: one folder per resource (accounts, sessions, users, split-rules, payments,
// settlement-runs, audit-log) with its routes.ts, schemas.ts and service.ts; what they all
// use (permissions, passwords, the audit hook, common schemas) in shared/.

// The admin API's named schemas, in the order of the OpenAPI document's components.
const baseAdminSchemas: TSchema[] = [
  AdminLoginRequest, AdminUser, AdminSession, AdminSessionEnded,
  SplitRuleConditions, PercentageSplitShare, AmountSplitShare, SplitShare, PercentageSplitShareRequest, AmountSplitShareRequest, SplitShareRequest, CreateSplitRuleRequest, UpdateSplitRuleRequest, SplitRule, SplitRuleList,
  AdminAccountSettings, AdminAccount, AdminAccountList, UpdateAccountSettingsRequest,
  ActivateSplitRuleRequest, DeactivateSplitRuleRequest, ReorderSplitRulesRequest, SplitPreviewRule, SplitPreviewRequest, SplitPreviewReceivable, SplitPreviewOutcome, SplitPreview,
  ActivateLiveModeRequest, UpdatePayoutBankAccountRequest, UpdateEmbedOriginsRequest,
];

export const adminSchemas = [...baseAdminSchemas, ...auditLogSchemas, ...AccountViewSchemas, ...adminPaymentSchemas, ...settlementRunSchemas, ...connectorAccountSchemas, ...brandingSchemas, ...adminStatsSchemas, ...adminSearchSchemas, ...adminDisputeSchemas, AdminSessionStatus];
export { createAdminUser } from './users/service.js';
export { LoginThrottle, DEFAULT_SESSION_TTL_MS } from './sessions/service.js';
export { LOGIN_FAILED_MESSAGE } from './sessions/routes.js';

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
  // Today's date for the home's default period (tests pass a ManualClock).
  clock?: Clock;
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
  const throttle = deps.loginLimiter ?? new LoginThrottle(deps.store);
  const secureCookie = (config.publicUrl ?? '').toLowerCase().startsWith('https:');

  await app.register(async (scope) => {
    scope.setErrorHandler(async (err, req, reply) => sendError(req, reply, adminError(err)));
    requirePermissionDeclared(scope);
    auditAdminWrites(scope);
    scope.addHook('onRequest', adminGuard(store));
    scope.addHook('onRequest', checkPermission);
    sessionRoutes(scope, { store, ttlMs, secureCookie, throttle });
    splitRuleRoutes(scope, store);
    splitRuleActionRoutes(scope, store);
    adminAccountRoutes(scope, store, deps.keyCache);
    accountViewRoutes(scope, store);
    adminPaymentRoutes(scope, store);
    adminStatsRoutes(scope, store, deps.clock ?? systemClock);
    adminSearchRoutes(scope, store, deps.clock ?? systemClock);
    adminSettlementRoutes(scope, store);
    adminDisputeRoutes(scope, store);
    auditLogRoutes(scope, store);
    brandingRoutes(scope, store);
    for (const register of deps.routes ?? []) register(scope);
  });
}

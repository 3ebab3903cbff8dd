import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { ApiError } from '../../../errors.js';

// Who may do what in the admin API, by resource and verb (as Lago's config/permissions.yml does):
// each permission names the roles that hold it. The server checks the permission each route
// declares (`config.permission`) on every request; GET /admin/session hands the signed-in role's
// list to the back office, which shows only the screens and controls it allows.
//
// Roles: `admin` manages, `viewer` only reads (and may run the split preview, which changes
// nothing).

export const ADMIN_ROLES = ['admin', 'viewer'] as const;
export type AdminRole = (typeof ADMIN_ROLES)[number];

export const PERMISSIONS = {
  'accounts:view': ['admin', 'viewer'],
  'accounts:update': ['admin'],
  'accounts:activate_live': ['admin'],
  'accounts:set_payout_bank_account': ['admin'],
  'accounts:set_embed_origins': ['admin'],
  'recipients:view': ['admin', 'viewer'],
  'split_rules:view': ['admin', 'viewer'],
  'split_rules:preview': ['admin', 'viewer'],
  'split_rules:create': ['admin'],
  'split_rules:update': ['admin'],
  'split_rules:activate': ['admin'],
  'split_rules:deactivate': ['admin'],
  'payments:view': ['admin', 'viewer'],
  'settlement_runs:view': ['admin', 'viewer'],
  'settlement_runs:create': ['admin'],
  'settlements:retry': ['admin'],
  'audit_log:view': ['admin', 'viewer'],
  'connector_accounts:view': ['admin', 'viewer'],
  'connector_accounts:manage': ['admin'],
} as const satisfies Record<string, readonly AdminRole[]>;

export type Permission = keyof typeof PERMISSIONS;
export const PERMISSION_NAMES = Object.keys(PERMISSIONS) as Permission[];

// What a route needs: a permission, or only a signed-in admin of any role (the session itself),
// or nothing (sign-in).
export type RoutePermission = Permission | 'signed_in' | 'public';

declare module 'fastify' {
  interface FastifyContextConfig {
    permission?: RoutePermission;
  }
}

export function isAdminRole(value: unknown): value is AdminRole {
  return typeof value === 'string' && (ADMIN_ROLES as readonly string[]).includes(value);
}

export function permissionsOf(role: AdminRole): Permission[] {
  return PERMISSION_NAMES.filter((p) => (PERMISSIONS[p] as readonly AdminRole[]).includes(role));
}

export function can(role: AdminRole, permission: Permission): boolean {
  return (PERMISSIONS[permission] as readonly AdminRole[]).includes(role);
}

// Registration-time check for the admin scope: a route that does not say what it needs cannot
// be registered, so no admin route is ever open by omission.
export function requirePermissionDeclared(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route: RouteOptions) => {
    const permission = (route.config as { permission?: unknown } | undefined)?.permission;
    if (permission === 'signed_in' || permission === 'public') return;
    if (typeof permission === 'string' && permission in PERMISSIONS) return;
    throw new Error(`admin route ${String(route.method)} ${route.url} must declare config.permission (one of ${PERMISSION_NAMES.join(', ')}, 'signed_in' or 'public')`);
  });
}

// onRequest, after the session guard has set req.admin.
export async function checkPermission(req: FastifyRequest): Promise<void> {
  const permission = req.routeOptions.config?.permission;
  if (permission === undefined || permission === 'public' || permission === 'signed_in') return;
  const role = req.admin?.role;
  if (!role || !can(role, permission)) {
    throw new ApiError('PERMISSION_DENIED', `Your admin role (${role ?? 'none'}) does not allow this: it needs the ${permission} permission.`);
  }
}

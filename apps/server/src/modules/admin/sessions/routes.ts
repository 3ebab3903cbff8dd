import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../errors.js';
import type { Store } from '../../../store/index.js';
import { ref, refTo } from '../../../http/common.js';
import { dummyPasswordHash, verifyPassword } from '../shared/passwords.js';
import { normalizeEmail } from '../users/service.js';
import { clearedSessionCookie, csrfMatches, findSession, insertSession, readCookie, SESSION_COOKIE, sessionCookie, type LoginThrottle, type SessionRecord } from './service.js';
import { AdminMutationHeaders, security, tags } from '../shared/schemas.js';
import { AdminLoginRequest, type AdminSession } from './schemas.js';
import { isAdminRole, permissionsOf, type AdminRole } from '../shared/permissions.js';
import { typed } from '../../../http/typed.js';

const MUTATING = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);
// Same words whether the email is unknown or the password wrong.
export const LOGIN_FAILED_MESSAGE = 'The email or password is incorrect.';

export interface SessionOptions {
  store: Store;
  ttlMs: number;
  secureCookie: boolean;
  throttle: LoginThrottle;
}

// The session behind each authenticated admin request (for GET/DELETE /admin/session).
const sessions = new WeakMap<FastifyRequest, SessionRecord>();

const isLogin = (req: FastifyRequest) => req.method === 'POST' && req.routeOptions.url === '/admin/session';

// onRequest hook of the admin scope. Order: an API key is refused outright (admin routes never
// take one, even on sign-in); then the session cookie (401 when missing, unknown, expired or
// logged out); then, on mutating methods, the session's CSRF token in X-CSRF-Token (403).
export const SESSION_STATUS_PATH = '/admin/session/status';

export function adminGuard(store: Store) {
  return async (req: FastifyRequest): Promise<void> => {
    if (req.headers.authorization !== undefined) {
      throw new ApiError('PERMISSION_DENIED', 'Admin routes do not take API keys; sign in with POST /admin/session and use the session cookie.');
    }
    if (isLogin(req)) return;
    // GET /admin/session/status answers "not signed in" itself, with a 200 (the back office's
    // first load asks it, and a 401 there would be an error in the browser's console).
    const optional = req.method === 'GET' && req.routeOptions.url === SESSION_STATUS_PATH;
    const sessionId = readCookie(req.headers.cookie, SESSION_COOKIE);
    if (!sessionId) {
      if (optional) return;
      throw new ApiError('AUTHENTICATION_REQUIRED', 'An admin session is required: sign in with POST /admin/session.');
    }
    const session = await findSession(store, sessionId);
    if (!session) {
      if (optional) return;
      throw new ApiError('AUTHENTICATION_REQUIRED', 'The admin session has expired or was signed out: sign in again with POST /admin/session.');
    }
    if (MUTATING.has(req.method) && !csrfMatches(req.headers['x-csrf-token'], session.csrfToken)) {
      throw new ApiError('PERMISSION_DENIED', 'Send the csrfToken returned at sign-in as the X-CSRF-Token header.', { param: 'X-CSRF-Token' });
    }
    sessions.set(req, session);
    req.admin = { id: session.adminId, email: session.email, role: session.role };
  };
}

function sessionView(session: { adminId: string; email: string; role: AdminRole; csrfToken: string; expiresAtMs: number }): AdminSession {
  return {
    object: 'admin_session',
    admin: { id: session.adminId, email: session.email, role: session.role },
    permissions: permissionsOf(session.role),
    csrfToken: session.csrfToken,
    expiresAt: new Date(session.expiresAtMs).toISOString(),
    livemode: false,
  };
}


export function sessionRoutes(scopeInstance: FastifyInstance, options: SessionOptions): void {
  const scope = typed(scopeInstance);
  const { store, ttlMs, secureCookie, throttle } = options;
  const maxAgeSeconds = Math.max(1, Math.floor(ttlMs / 1000));

  scope.post('/admin/session', {
    config: { auth: 'none', idempotent: false, permission: 'public', audit: { exempt: 'signs in: creates a session, changes no data an operator manages (sign-ins are in the request log)' }, throws: ['AUTHENTICATION_REQUIRED', 'RATE_LIMITED'], sets: { 200: ['Set-Cookie'] } },
    schema: {
      operationId: 'adminCreateSession', tags, summary: 'Sign in as an admin',
      description: `Checks the email and password of an admin user (created on the command line with \`admin:create\`). On success sets the \`${SESSION_COOKIE}\` cookie (HttpOnly, SameSite=Strict, Path=/admin; Secure over HTTPS) and returns the CSRF token for mutating calls. Sessions last 8 hours. Failed sign-ins are throttled per email and per client address (5 and 20 failures in 15 minutes), then RATE_LIMITED with Retry-After. The error never says whether the email exists.`,
      security: [],
      body: refTo(AdminLoginRequest),
      response: { 200: ref('AdminSession') },
    },
  }, async (req, reply) => {
    const email = normalizeEmail(req.body.email);
    const ip = req.ip;
    // Counted before the (slow) check, so parallel guesses cannot slip past the limit; taken
    // back if the sign-in succeeds. In the store: every API process counts the same attempts.
    const { waitSeconds: wait, limit, attemptMs } = await throttle.attempt(email, ip);
    if (wait > 0) {
      // Like every 429: Retry-After and the RateLimit-* of the limit hit (failures per window).
      const headers = { 'retry-after': String(wait), 'ratelimit-limit': String(limit), 'ratelimit-remaining': '0', 'ratelimit-reset': String(wait) };
      throw new ApiError('RATE_LIMITED', `Too many failed sign-in attempts; retry after ${wait} s.`, { headers });
    }
    const user = await store.db.selectFrom('admin_users').select(['id', 'email', 'password_hash', 'role']).where('email', '=', email).executeTakeFirst();
    // An unknown email still costs one scrypt, so timing does not tell it from a wrong password.
    const ok = await verifyPassword(req.body.password, user?.password_hash ?? (await dummyPasswordHash()));
    if (!user || !ok || !isAdminRole(user.role)) {
      req.log.info({ adminLogin: 'failed' }, 'admin sign-in failed');
      throw new ApiError('AUTHENTICATION_REQUIRED', LOGIN_FAILED_MESSAGE);
    }
    await throttle.recordSuccess(email, ip, attemptMs);
    const created = await store.write((tx) => insertSession(tx, user.id, ttlMs, store.clock.nowMs()));
    req.log.info({ adminId: user.id }, 'admin signed in');
    reply.header('set-cookie', sessionCookie(created.sessionId, maxAgeSeconds, { secure: secureCookie }));
    return sessionView({ adminId: user.id, email: user.email, role: user.role, csrfToken: created.csrfToken, expiresAtMs: created.expiresAtMs });
  });

  scope.get('/admin/session', {
    config: { auth: 'none', permission: 'signed_in' },
    schema: {
      operationId: 'adminGetSession', tags, security, summary: 'The current admin session',
      description: 'Who is signed in (with their role and its permissions), until when, and the session\'s CSRF token (for a back office page that was reloaded).',
      response: { 200: ref('AdminSession') },
    },
  }, async (req) => sessionView(sessions.get(req) as SessionRecord));

  scope.get(SESSION_STATUS_PATH, {
    config: { auth: 'none', permission: 'public' },
    schema: {
      operationId: 'adminGetSessionStatus', tags,
      // The session is optional: read when the cookie is sent, `{signedIn: false}` when not.
      security: [...security, {}],
      summary: 'Whether an admin is signed in',
      description: 'Like GET /admin/session, but answers 200 `{signedIn: false, session: null}` when no session is signed in (instead of a 401): what a page asks first, before it knows.',
      response: { 200: ref('AdminSessionStatus') },
    },
  }, async (req) => {
    const session = sessions.get(req);
    return { object: 'admin_session_status' as const, livemode: false as const, ...(session ? { signedIn: true, session: sessionView(session) } : { signedIn: false, session: null }) };
  });

  scope.delete('/admin/session', {
    config: { auth: 'none', permission: 'signed_in', audit: { exempt: 'signs out: ends the session, changes no data an operator manages' }, sets: { 200: ['Set-Cookie'] } },
    schema: {
      operationId: 'adminDeleteSession', tags, security, summary: 'Sign out',
      description: 'Ends the session (its cookie stops working at once) and clears the cookie.',
      headers: AdminMutationHeaders,
      response: { 200: ref('AdminSessionEnded') },
    },
  }, async (req: FastifyRequest, reply: FastifyReply) => {
    const session = sessions.get(req) as SessionRecord;
    const result = await req.ctx.write(async (tx) => {
      await tx.deleteFrom('admin_sessions').where('id_hash', '=', session.idHash).execute();
      return { object: 'admin_session' as const, deleted: true as const, livemode: false as const };
    });
    reply.header('set-cookie', clearedSessionCookie({ secure: secureCookie }));
    req.log.info({ adminId: session.adminId }, 'admin signed out');
    return result;
  });
}

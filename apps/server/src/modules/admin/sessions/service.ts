import { createHash, randomBytes } from 'node:crypto';
import type { Store, Tx } from '../../../store/index.js';
import { sameSecret } from '../../../domain/secrets.js';
import { isAdminRole, type AdminRole } from '../shared/permissions.js';

// Admin sessions: a random 32-byte id in an HttpOnly, SameSite=Strict cookie scoped to /admin.
// Only its SHA-256 is stored (admin_sessions.id_hash), so a copy of the database opens no
// session. Each session has its own CSRF token, returned by the login, that mutating calls
// send back in X-CSRF-Token. Expiry is absolute (no sliding): 8 hours by default.

export const SESSION_COOKIE = 'admin_session';
export const DEFAULT_SESSION_TTL_MS = 8 * 3600_000;
const TOKEN = /^[A-Za-z0-9_-]{43}$/; // 32 bytes, base64url without padding

export const hashSessionId = (sessionId: string) => createHash('sha256').update(sessionId).digest('hex');

// The value of one cookie from a Cookie header (RFC 6265 `name=value; name2=value2`). The first
// occurrence wins, as browsers send the most specific path first.
export function readCookie(header: string | string[] | undefined, name: string): string | null {
  if (header === undefined) return null;
  const text = Array.isArray(header) ? header.join('; ') : header;
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    return value;
  }
  return null;
}

export interface CookieOptions {
  secure: boolean;
}

export function sessionCookie(sessionId: string, maxAgeSeconds: number, options: CookieOptions): string {
  return `${SESSION_COOKIE}=${sessionId}; HttpOnly; SameSite=Strict; Path=/admin; Max-Age=${maxAgeSeconds}${options.secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(options: CookieOptions): string {
  return `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/admin; Max-Age=0${options.secure ? '; Secure' : ''}`;
}

export interface SessionRecord {
  idHash: string;
  adminId: string;
  email: string;
  role: AdminRole;
  csrfToken: string;
  expiresAtMs: number;
}

export interface CreatedSession {
  sessionId: string; // goes into the cookie, never stored
  csrfToken: string;
  expiresAtMs: number;
}

// Runs inside the login's write; also sweeps expired sessions (a bounded batch) so the table
// does not grow with every login.
export async function insertSession(tx: Tx, adminId: string, ttlMs: number, nowMs = Date.now()): Promise<CreatedSession> {
  const expired = tx.selectFrom('admin_sessions').select('id_hash').where('expires_at_ms', '<=', nowMs).limit(1000);
  await tx.deleteFrom('admin_sessions').where('id_hash', 'in', expired).execute();
  const sessionId = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(32).toString('base64url');
  const expiresAtMs = nowMs + ttlMs;
  await tx.insertInto('admin_sessions').values({
    id_hash: hashSessionId(sessionId),
    admin_id: adminId,
    csrf_token: csrfToken,
    expires_at_ms: expiresAtMs,
    created_at: new Date(nowMs).toISOString(),
  }).execute();
  return { sessionId, csrfToken, expiresAtMs };
}

// The live session for a cookie value, or null (malformed, unknown, expired, or its admin gone).
// The role is read with it on every request, so a changed role applies at once.
export async function findSession(store: Store, sessionId: string, nowMs = Date.now()): Promise<SessionRecord | null> {
  if (!TOKEN.test(sessionId)) return null;
  const row = await store.db.selectFrom('admin_sessions')
    .innerJoin('admin_users', 'admin_users.id', 'admin_sessions.admin_id')
    .select(['admin_sessions.id_hash', 'admin_sessions.admin_id', 'admin_sessions.csrf_token', 'admin_sessions.expires_at_ms', 'admin_users.email', 'admin_users.role'])
    .where('admin_sessions.id_hash', '=', hashSessionId(sessionId))
    .executeTakeFirst();
  if (!row || Number(row.expires_at_ms) <= nowMs || !isAdminRole(row.role)) return null;
  return { idHash: row.id_hash, adminId: row.admin_id, email: row.email, role: row.role, csrfToken: row.csrf_token, expiresAtMs: Number(row.expires_at_ms) };
}

// Constant-time (sameSecret).
export function csrfMatches(sent: string | string[] | undefined, expected: string): boolean {
  if (typeof sent !== 'string' || sent.length === 0 || sent.length > 256) return false;
  return sameSecret(sent, expected);
}

// Failed sign-ins, counted per email and per client address over a sliding window, in this
// process's memory. Defaults: 5 failures per email or 20 per address in 15 minutes lock that
// email / address out until the oldest failure leaves the window. While locked out, even the
// right password is refused (otherwise the lock would still be a password oracle). A successful
// sign-in clears its email's count (not its address's).
export interface LoginThrottleOptions {
  maxFailuresPerEmail?: number;
  maxFailuresPerIp?: number;
  windowMs?: number;
  maxKeys?: number;
}

export class LoginThrottle {
  readonly maxFailuresPerEmail: number;
  readonly maxFailuresPerIp: number;
  readonly windowMs: number;
  private readonly maxKeys: number;
  private failures = new Map<string, number[]>();

  constructor(options: LoginThrottleOptions = {}) {
    this.maxFailuresPerEmail = options.maxFailuresPerEmail ?? 5;
    this.maxFailuresPerIp = options.maxFailuresPerIp ?? 20;
    this.windowMs = options.windowMs ?? 15 * 60_000;
    this.maxKeys = options.maxKeys ?? 100_000;
  }

  private recent(key: string, nowMs: number): number[] {
    const list = this.failures.get(key);
    if (!list) return [];
    const kept = list.filter((t) => t > nowMs - this.windowMs);
    if (kept.length === 0) this.failures.delete(key);
    else if (kept.length !== list.length) this.failures.set(key, kept);
    return kept;
  }

  // Seconds until a new attempt is allowed (0: allowed now), and the limit (failures per window)
  // that imposes the wait, for the 429's RateLimit-*.
  blocked(email: string, ip: string, nowMs = Date.now()): { waitSeconds: number; limit: number } {
    let waitMs = 0;
    let limit = this.maxFailuresPerEmail;
    for (const [key, max] of [[`e:${email}`, this.maxFailuresPerEmail], [`i:${ip}`, this.maxFailuresPerIp]] as const) {
      const list = this.recent(key, nowMs);
      if (list.length < max) continue;
      const ms = list[list.length - max] + this.windowMs - nowMs;
      if (ms > waitMs) [waitMs, limit] = [ms, max];
    }
    return { waitSeconds: waitMs > 0 ? Math.max(1, Math.ceil(waitMs / 1000)) : 0, limit };
  }

  // Counts one failed attempt for the email and the address; returns its timestamp.
  recordFailure(email: string, ip: string, nowMs = Date.now()): number {
    for (const [key, max] of [[`e:${email}`, this.maxFailuresPerEmail], [`i:${ip}`, this.maxFailuresPerIp]] as const) {
      const list = this.recent(key, nowMs);
      list.push(nowMs);
      if (list.length > max) list.splice(0, list.length - max);
      if (!this.failures.has(key) && this.failures.size >= this.maxKeys) {
        this.failures.delete(this.failures.keys().next().value as string);
      }
      this.failures.set(key, list);
    }
    return nowMs;
  }

  // A sign-in succeeded: the email's failures are forgotten, and the attempt counted for the
  // address (at `attemptMs`) is taken back.
  recordSuccess(email: string, ip: string, attemptMs: number): void {
    this.failures.delete(`e:${email}`);
    const list = this.failures.get(`i:${ip}`);
    const at = list ? list.lastIndexOf(attemptMs) : -1;
    if (list && at >= 0) {
      list.splice(at, 1);
      if (list.length === 0) this.failures.delete(`i:${ip}`);
    }
  }
}

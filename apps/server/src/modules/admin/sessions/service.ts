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
export async function insertSession(tx: Tx, adminId: string, ttlMs: number, nowMs: number): Promise<CreatedSession> {
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
export async function findSession(store: Store, sessionId: string, nowMs = store.clock.nowMs()): Promise<SessionRecord | null> {
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

// Failed sign-ins, counted per email and per client address over a sliding window, in the store
// (admin_sign_in_failures), so every API process sharing it counts the same attempts: with the
// count in each process's memory, three processes evaluated 15 wrong passwords for one email
// where 5 are promised, and one accepted the right password while another had it locked.
// Defaults: 5 failures per email or 20 per address in 15 minutes lock that email / address out
// until the oldest failure leaves the window. While locked out, even the right password is
// refused (otherwise the lock would still be a password oracle). A successful sign-in clears its
// email's count (not its address's).
export interface LoginThrottleOptions {
  maxFailuresPerEmail?: number;
  maxFailuresPerIp?: number;
  windowMs?: number;
}

// Rows whose last failure left the window are swept, this many per attempt (the table holds one
// row per email or address that failed recently: bounded by the window, not by history).
const SWEEP_ROWS_PER_ATTEMPT = 100;

export interface SignInAttempt {
  // Seconds until a new attempt is allowed; 0: this attempt is counted and may go on.
  waitSeconds: number;
  // The limit (failures per window) that imposes the wait, for the 429's RateLimit-*.
  limit: number;
  // When the counted attempt was recorded (recordSuccess takes it back).
  attemptMs: number;
}

export class LoginThrottle {
  readonly maxFailuresPerEmail: number;
  readonly maxFailuresPerIp: number;
  readonly windowMs: number;

  constructor(private readonly store: Store, options: LoginThrottleOptions = {}) {
    this.maxFailuresPerEmail = options.maxFailuresPerEmail ?? 5;
    this.maxFailuresPerIp = options.maxFailuresPerIp ?? 20;
    this.windowMs = options.windowMs ?? 15 * 60_000;
  }

  // The keys' rows, created if missing and locked on PostgreSQL in key order (one order for every
  // process: two attempts never wait on each other in a cycle). SQLite's write is exclusive.
  private async lockRows(tx: Tx, keys: string[], nowMs: number): Promise<Map<string, number[]>> {
    for (const key of keys) {
      await tx.insertInto('admin_sign_in_failures').values({ key, failures: '[]', updated_at_ms: nowMs }).onConflict((oc) => oc.column('key').doNothing()).execute();
    }
    const q = tx.selectFrom('admin_sign_in_failures').select(['key', 'failures']).where('key', 'in', keys).orderBy('key');
    const rows = await (this.store.engine === 'postgres' ? q.forUpdate() : q).execute();
    return new Map(rows.map((r) => [r.key, (JSON.parse(r.failures) as number[]).filter((t) => t > nowMs - this.windowMs)]));
  }

  // Refused while the email or the address is locked out; otherwise counted as a failure before
  // the (slow) password check, so parallel guesses cannot slip past the limit, and taken back by
  // recordSuccess. One transaction: the count and the check are one step for every process.
  async attempt(email: string, ip: string, nowMs = this.store.clock.nowMs()): Promise<SignInAttempt> {
    const limits: Array<[string, number]> = [[`e:${email}`, this.maxFailuresPerEmail], [`i:${ip}`, this.maxFailuresPerIp]];
    limits.sort((a, b) => (a[0] < b[0] ? -1 : 1));
    return this.store.write(async (tx) => {
      const stale = tx.selectFrom('admin_sign_in_failures').select('key').where('updated_at_ms', '<=', nowMs - this.windowMs).limit(SWEEP_ROWS_PER_ATTEMPT);
      await tx.deleteFrom('admin_sign_in_failures').where('key', 'in', stale).execute();
      const recent = await this.lockRows(tx, limits.map(([k]) => k), nowMs);
      let waitMs = 0;
      let limit = this.maxFailuresPerEmail;
      for (const [key, max] of limits) {
        const list = recent.get(key) ?? [];
        if (list.length < max) continue;
        const ms = list[list.length - max] + this.windowMs - nowMs;
        if (ms > waitMs) [waitMs, limit] = [ms, max];
      }
      if (waitMs > 0) return { waitSeconds: Math.max(1, Math.ceil(waitMs / 1000)), limit, attemptMs: nowMs };
      for (const [key, max] of limits) {
        const list = [...(recent.get(key) ?? []), nowMs].slice(-max);
        await tx.updateTable('admin_sign_in_failures').set({ failures: JSON.stringify(list), updated_at_ms: nowMs }).where('key', '=', key).execute();
      }
      return { waitSeconds: 0, limit, attemptMs: nowMs };
    });
  }

  // A sign-in succeeded: the email's failures are forgotten, and the attempt counted for the
  // address (at `attemptMs`) is taken back.
  async recordSuccess(email: string, ip: string, attemptMs: number): Promise<void> {
    await this.store.write(async (tx) => {
      await tx.deleteFrom('admin_sign_in_failures').where('key', '=', `e:${email}`).execute();
      const recent = await this.lockRows(tx, [`i:${ip}`], attemptMs);
      const list = recent.get(`i:${ip}`) ?? [];
      const at = list.lastIndexOf(attemptMs);
      if (at >= 0) list.splice(at, 1);
      if (list.length === 0) await tx.deleteFrom('admin_sign_in_failures').where('key', '=', `i:${ip}`).execute();
      else await tx.updateTable('admin_sign_in_failures').set({ failures: JSON.stringify(list) }).where('key', '=', `i:${ip}`).execute();
    });
  }
}

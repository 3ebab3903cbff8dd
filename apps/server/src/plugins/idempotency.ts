import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, StoredResponse } from '../errors.js';
import { canonicalJson } from '../domain/canonical-json.js';
import { isUniqueViolation, type Store, type Tx, type WriteOp, type WriteOptions } from '../store/index.js';
import { MicroBatch, defer, selectWhere } from '../store/index.js';
import type { StoreErrorHook } from './errors.js';
import { MUTATING_METHODS } from './route-rules.js';
import { countRawHeader } from '../http/headers.js';
import type { Clock } from '../clock.js';

// What a service needs from the request: whose data, which mode, and the one way to write.
export interface RequestContext {
  accountId: string;
  livemode: boolean;
  correlationId: string;
  // Runs `op` in a (group-committed) transaction. With an Idempotency-Key, the key's record and
  // the serialized response commit in that same transaction: either both or neither.
  // `options`: Store.write's (WriteOptions).
  write: <T>(op: WriteOp<T>, options?: WriteOptions) => Promise<T>;
  // The app's clock (the store's): "now" for everything the request writes (clock.ts).
  clock: Clock;
}

declare module 'fastify' {
  interface FastifyRequest {
    // Set by the admin session hook for /admin routes (which never take API keys).
    admin: { id: string; email: string; role: 'admin' | 'viewer' } | null;
    ctx: RequestContext;
    storeIdempotentError: StoreErrorHook | null;
  }
  interface FastifyContextConfig {
    // Mutating routes are idempotent unless they opt out (sandbox signup, which has no account
    // to scope a key to and whose response carries secrets we will not keep).
    idempotent?: boolean;
  }
}

class KeyConflict extends Error {}

interface StoredKey {
  fingerprint: string;
  status_code: number;
  body: string;
}

// Every mutating request with a key looks it up first. On PostgreSQL that is a round trip
// each, so the lookups of one turn of the event loop share one query (at most
// MAX_KEYS_PER_QUERY keys). On SQLite a lookup is a local B-tree read: no need.
const MAX_KEYS_PER_QUERY = 500;
class KeyLookups {
  private readonly lookups: MicroBatch<KeyItem, StoredKey | undefined>;
  constructor(private readonly store: Store) {
    this.lookups = new MicroBatch<KeyItem, StoredKey | undefined>({
      maxItemsPerRun: MAX_KEYS_PER_QUERY,
      maxConcurrentRuns: Number.POSITIVE_INFINITY,
      maxPending: Number.POSITIVE_INFINITY, // one per request in flight: bounded by the server's connections
      run: async (items) => {
        const { rows } = await keyLookupQuery(items).execute(store.db);
        const found = new Map(rows.map((r) => [Number(r.i), r]));
        return items.map((_item, i) => {
          const r = found.get(i + 1);
          return { ok: true, value: r ? { fingerprint: r.fingerprint, status_code: r.status_code, body: r.body } : undefined };
        });
      },
    });
  }

  get(accountId: string, livemode: number, key: string): Promise<StoredKey | undefined> {
    if (this.store.engine === 'sqlite') {
      return selectWhere(this.store.db, 'idempotency_keys', ['fingerprint', 'status_code', 'body'], { account_id: accountId, livemode, key }).then((rows) => rows[0]);
    }
    return this.lookups.add({ accountId, livemode, key });
  }
}

type KeyItem = { accountId: string; livemode: number; key: string };

// Looks up (account, mode, key) triples in one PostgreSQL query; rows carry `i`, the 1-based
// position of their triple. The keys go in as arrays, each looked up by a LATERAL subquery on
// the whole primary key (its LIMIT keeps PostgreSQL from flattening it into a join). A
// row-constructor IN list let the planner, without fresh statistics, walk every key of the
// account and filter: measured 8-15 ms per lookup at 30k keys, growing with the table.
export function keyLookupQuery(items: ReadonlyArray<{ accountId: string; livemode: number; key: string }>) {
  return sql<StoredKey & { i: number }>`select u.i, k.fingerprint, k.status_code, k.body
    from unnest(${items.map((b) => b.accountId)}::text[], ${items.map((b) => b.livemode)}::integer[], ${items.map((b) => b.key)}::text[]) with ordinality as u(account_id, livemode, key, i)
    cross join lateral (select fingerprint, status_code, body from idempotency_keys k
      where k.account_id = u.account_id and k.livemode = u.livemode and k.key = u.key limit 1) k`;
}

const KEY_PATTERN = /^[\x20-\x7E]{1,255}$/;
// An in-flight marker older than this is stale (its request died without cleaning up).
const IN_FLIGHT_STALE_MS = 60_000;

// The stored response of a keyed request: written in the transaction of its effects (or alone,
// for an error response), so a retry with the key gets the same bytes.
export function insertKey(tx: Tx, auth: { accountId: string; livemode: boolean }, key: string, fp: string, statusCode: number, body: string, nowMs: number): Promise<void> {
  return defer(tx, 'idempotency_keys', [{
    account_id: auth.accountId,
    livemode: auth.livemode ? 1 : 0,
    key,
    fingerprint: fp,
    status_code: statusCode,
    body,
    created_at: new Date(nowMs).toISOString(),
    created_at_ms: nowMs,
  }]);
}

// What a request answers when another request with its key committed first: that request's
// stored answer (replayed), a 422 when the two requests differ, or, should the winner's row not
// be readable yet, 409 IN_USE so the client retries.
function winnerAnswer(winner: StoredKey | undefined, fp: string): StoredResponse | ApiError {
  if (!winner) return new ApiError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed; retry in a moment.', { headers: { 'retry-after': '1' } });
  if (winner.fingerprint !== fp) return new ApiError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request; use a new key for a new request.');
  return new StoredResponse(winner.status_code, winner.body);
}

export function fingerprint(method: string, url: string, body: unknown): string {
  const path = url.split('?')[0];
  return createHash('sha256').update(`${method} ${path}\n${canonicalJson(body ?? null)}`).digest('base64url');
}

// A mutating route of the API: POST, PUT, PATCH or DELETE under /v1 or /admin.
export function isMutatingRoute(route: { method: string | string[]; url: string }): boolean {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  return methods.some((m) => MUTATING_METHODS.has(m)) && (route.url.startsWith('/v1/') || route.url.startsWith('/admin/'));
}

// The one idempotent write of a mutating request. Every mutating route (bar the two that opt
// out, see docs/idempotency.md) writes exactly once, through req.ctx.write, whose transaction
// also holds the Idempotency-Key's record and the response bytes. This plugin makes that
// structural rather than a convention each route remembers:
// - req.ctx.write works once per request; a second call is a bug and throws.
// - A mutating route that answers 2xx without having called it is a bug: 500, logged, never a
//   success whose effects (if any) were written outside the key's transaction.
// - With `writeGuard` (on in the test suite; off by default because AsyncLocalStorage costs
//   every promise on Node 20), any other store write started while a mutating route's handler
//   runs throws: writing around the key fails the request instead of passing unnoticed.
export function registerIdempotency(app: FastifyInstance, store: Store, options: { writeGuard?: boolean } = {}): void {
  // Requests of this process still running, by scope: a second one with the same key gets 409
  // at once. Across processes the primary key of idempotency_keys decides.
  const inFlight = new Map<string, number>();
  // Whether each request has made its write.
  const wrote = new WeakSet<FastifyRequest>();

  // The mutating handler a store write comes from, when the guard is on.
  const handling = options.writeGuard ? new AsyncLocalStorage<string>() : null;
  // Runs a write of this plugin's own (the request's write, a stored error) outside the guard.
  const unguarded = <T>(write: () => Promise<T>): Promise<T> => (handling ? handling.exit(write) : write());
  if (handling) {
    store.checkWrites(() => {
      const route = handling.getStore();
      if (route) throw new Error(`${route} wrote to the store around its idempotent write: use req.ctx.write, once`);
    });
  }

  app.decorateRequest('ctx', null as unknown as RequestContext);
  app.decorateRequest('admin', null);
  app.decorateRequest('storeIdempotentError', null);

  app.addHook('onRoute', (route) => {
    if (!isMutatingRoute(route) || route.config?.idempotent === false) return;
    const handler = route.handler as (this: FastifyInstance, req: FastifyRequest, reply: FastifyReply) => unknown;
    const name = `${Array.isArray(route.method) ? route.method.join(',') : route.method} ${route.url}`;
    route.handler = async function (this: FastifyInstance, req: FastifyRequest, reply: FastifyReply) {
      const result = await (handling ? handling.run(name, () => handler.call(this, req, reply)) : handler.call(this, req, reply));
      if (!wrote.has(req) && !reply.sent && reply.statusCode < 300) {
        throw new Error(`${name} answered ${reply.statusCode} without its idempotent write (req.ctx.write)`);
      }
      return result;
    };
  });

  const lookups = new KeyLookups(store);
  const lookup = (accountId: string, livemode: boolean, key: string) => lookups.get(accountId, livemode ? 1 : 0, key);

  app.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
    // Whose keys: an API key's account and mode, or an admin's own scope.
    const auth = req.auth ?? (req.admin ? { accountId: `admin:${req.admin.id}`, livemode: false } : null);
    if (!auth) return;
    const once = () => {
      if (wrote.has(req)) throw new Error(`${req.method} ${req.routeOptions.url} called req.ctx.write twice: one request, one transaction`);
      wrote.add(req);
    };
    const ctx: RequestContext = {
      accountId: auth.accountId,
      livemode: auth.livemode,
      correlationId: req.id,
      clock: store.clock,
      write: <T>(op: WriteOp<T>, options?: WriteOptions) => {
        once();
        return unguarded(() => store.write(op, options));
      },
    };
    req.ctx = ctx;

    if (!MUTATING_METHODS.has(req.method) || req.routeOptions.config?.idempotent === false) return;
    const header = req.headers['idempotency-key'];
    if (header === undefined) return;
    // Node joins repeated headers with ", ": two Idempotency-Key headers would become one key
    // nobody sent. A comma may be part of one key, so the raw headers decide.
    if (typeof header === 'string' && header.includes(',') && countRawHeader(req.raw.rawHeaders, 'idempotency-key') > 1) {
      throw new ApiError('VALIDATION_ERROR', 'Send one Idempotency-Key header, not several.', { param: 'Idempotency-Key' });
    }
    if (typeof header !== 'string' || !KEY_PATTERN.test(header)) {
      throw new ApiError('VALIDATION_ERROR', 'Idempotency-Key must be 1-255 printable ASCII characters.', { param: 'Idempotency-Key' });
    }
    const key = header;
    const fp = fingerprint(req.method, req.url, req.body);
    // The hosted page's keys (chosen by a buyer's browser) live in their session's own scope,
    // apart from the merchant's.
    const keyScope = req.auth?.kind === 'checkout' ? { accountId: `${auth.accountId}:${req.auth.checkoutSessionId}`, livemode: auth.livemode } : auth;
    const scope = `${keyScope.accountId}\u0000${keyScope.livemode ? 1 : 0}\u0000${key}`;

    const startedMs = inFlight.get(scope);
    if (startedMs !== undefined && store.clock.nowMs() - startedMs < IN_FLIGHT_STALE_MS) {
      throw new ApiError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed; retry in a moment.', { headers: { 'retry-after': '1' } });
    }
    // Marked before the first await: a concurrent duplicate in this process sees it.
    inFlight.set(scope, store.clock.nowMs());
    reply.raw.once('close', () => inFlight.delete(scope));

    const stored = await lookup(keyScope.accountId, keyScope.livemode, key);
    if (stored) {
      inFlight.delete(scope);
      if (stored.fingerprint !== fp) {
        throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request; use a new key for a new request.');
      }
      return reply.code(stored.status_code).header('idempotent-replayed', 'true').type('application/json; charset=utf-8').send(stored.body);
    }

    ctx.write = async <T>(op: WriteOp<T>, options?: WriteOptions): Promise<T> => {
      once();
      try {
        let body = '';
        const value = await unguarded(() => store.write(async (tx) => {
          const result = await op(tx);
          // Serialized here, with the route's own response schema, so the bytes stored are the
          // bytes sent; committed with the effects or not at all.
          body = reply.serialize(result) as string;
          try {
            await insertKey(tx, keyScope, key, fp, reply.statusCode, body, store.clock.nowMs());
          } catch (error) {
            if (isUniqueViolation(error)) throw new KeyConflict();
            throw error;
          }
          return result;
        }, options));
        // Committed: send the stored bytes themselves rather than serializing the value again.
        // (Set only now: a write can run more than once before it commits, see store/batch.ts.)
        const stored = body;
        reply.type('application/json; charset=utf-8').serializer((payload: unknown) => (payload === value ? stored : JSON.stringify(payload)));
        return value;
      } catch (error) {
        if (!(error instanceof KeyConflict)) throw error;
        // Another process committed this key while we ran; our effects were rolled back.
        throw winnerAnswer(await lookup(keyScope.accountId, keyScope.livemode, key), fp);
      }
    };

    // A refusal is this key's answer only if no other request with the key got there first. In
    // another process, one with the same key may have committed while this one ran, and this
    // refusal may be only what its effects left (a refund refused because the other refunded
    // the payment): the key's answer is then the other's, replayed, never this one's own.
    req.storeIdempotentError = async (statusCode, body) => {
      try {
        await unguarded(() => store.write((tx) => insertKey(tx, keyScope, key, fp, statusCode, body, store.clock.nowMs())));
        return null;
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }
      return winnerAnswer(await lookup(keyScope.accountId, keyScope.livemode, key), fp);
    };
  });
}

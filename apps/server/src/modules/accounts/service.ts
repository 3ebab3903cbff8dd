import { createHash, randomBytes } from 'node:crypto';
import type { Store, Tx } from '../../store/index.js';
import { newId } from '../../domain/ids.js';
import { ApiError } from '../../errors.js';
import { nowIso } from '../../clock.js';

export type KeyKind = 'secret' | 'publishable';

export interface AuthRecord {
  keyId: string;
  accountId: string;
  livemode: boolean;
  // 'checkout': the hosted page, authorized by one checkout session's client secret.
  kind: KeyKind | 'checkout';
  liveEnabled: boolean;
  checkoutSessionId?: string;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function randomBase62(length: number): string {
  // Rejection sampling keeps every character uniformly likely.
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

// API keys carry 32 base62 characters (~190 bits): a fast hash is enough, a slow one would only
// slow down every request. Only the hash is stored.
export function hashKey(plain: string): string {
  return createHash('sha256').update(plain).digest('hex');
}

export function keyPrefix(kind: KeyKind, livemode: boolean): string {
  return `${kind === 'secret' ? 'sk' : 'pk'}_${livemode ? 'live' : 'test'}_`;
}

export function parseKeyPrefix(plain: string): { kind: KeyKind; livemode: boolean } | null {
  const m = /^(sk|pk)_(test|live)_[0-9A-Za-z]{16,128}$/.exec(plain);
  if (!m) return null;
  return { kind: m[1] === 'sk' ? 'secret' : 'publishable', livemode: m[2] === 'live' };
}

export interface CreatedKey {
  id: string;
  key: string; // shown once
  kind: KeyKind;
  livemode: boolean;
  display: string;
}

export async function insertKey(tx: Tx, accountId: string, kind: KeyKind, livemode: boolean, nowMs: number): Promise<CreatedKey> {
  const key = keyPrefix(kind, livemode) + randomBase62(32);
  const id = newId('apiKey', nowMs);
  const display = `${keyPrefix(kind, livemode)}…${key.slice(-4)}`;
  await tx.insertInto('api_keys').values({
    id,
    account_id: accountId,
    livemode: livemode ? 1 : 0,
    kind,
    key_hash: hashKey(key),
    display,
    created_at: new Date(nowMs).toISOString(),
    revoked_at: null,
    // Every key is kept hashed only, publishable ones too (migration 0008 cleared the readable
    // copies the hosted page once used; it tokenizes with its session's client secret now).
    publishable_key: null,
  }).execute();
  return { id, key, kind, livemode, display };
}

export interface CreatedAccount {
  account: { id: string; object: 'account'; name: string; email: string | null; liveEnabled: boolean; livemode: false; createdAt: string };
  keys: { secretKey: CreatedKey; publishableKey: CreatedKey };
}

export async function createAccount(store: Store, input: { name: string; email?: string | null }): Promise<CreatedAccount> {
  return store.write(async (tx) => {
    const nowMs = store.clock.nowMs();
    const id = newId('account', nowMs);
    const createdAt = new Date(nowMs).toISOString();
    await tx.insertInto('accounts').values({ id, name: input.name, email: input.email ?? null, live_enabled: 0, settings: '{}', created_at: createdAt }).execute();
    const secretKey = await insertKey(tx, id, 'secret', false, nowMs);
    const publishableKey = await insertKey(tx, id, 'publishable', false, nowMs);
    return {
      account: { id, object: 'account' as const, name: input.name, email: input.email ?? null, liveEnabled: false, livemode: false as const, createdAt },
      keys: { secretKey, publishableKey },
    };
  });
}

export async function createKey(store: Store, accountId: string, kind: KeyKind, livemode: boolean): Promise<CreatedKey> {
  return store.write(async (tx) => {
    const account = await tx.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
    if (!account) throw new ApiError('NOT_FOUND', `No such account: ${accountId}.`);
    return insertKey(tx, accountId, kind, livemode, store.clock.nowMs());
  });
}

export async function revokeKey(store: Store, keyIdOrKey: string): Promise<{ id: string; display: string }> {
  return store.write(async (tx) => {
    const byHash = parseKeyPrefix(keyIdOrKey) ? hashKey(keyIdOrKey) : null;
    const row = await tx.selectFrom('api_keys').select(['id', 'display', 'revoked_at'])
      .where(byHash ? 'key_hash' : 'id', '=', byHash ?? keyIdOrKey).executeTakeFirst();
    if (!row) throw new ApiError('NOT_FOUND', 'No such key.');
    if (!row.revoked_at) await tx.updateTable('api_keys').set({ revoked_at: nowIso(store.clock) }).where('id', '=', row.id).execute();
    return { id: row.id, display: row.display };
  });
}

// Live mode on, with no reason and no audit row: a shortcut for test fixtures only. An operator
// turns it on through the admin API or `npm run cli -- accounts:activate-live`, which both need a
// reason and write the audit row (admin/accounts/service.ts).
export async function activateLive(store: Store, accountId: string): Promise<void> {
  await store.write(async (tx) => {
    const r = await tx.updateTable('accounts').set({ live_enabled: 1 }).where('id', '=', accountId).executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) throw new ApiError('NOT_FOUND', `No such account: ${accountId}.`);
  });
}

export async function findKey(store: Store, plain: string): Promise<AuthRecord | null> {
  const row = await store.db.selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .select(['api_keys.id as keyId', 'api_keys.account_id as accountId', 'api_keys.livemode', 'api_keys.kind', 'api_keys.revoked_at', 'accounts.live_enabled'])
    .where('api_keys.key_hash', '=', hashKey(plain))
    .executeTakeFirst();
  if (!row || row.revoked_at) return null;
  return { keyId: row.keyId, accountId: row.accountId, livemode: row.livemode === 1, kind: row.kind, liveEnabled: row.live_enabled === 1 };
}

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

// Envelope encryption of connector secrets (client secrets, private keys, certificates), as a
// KMS does it: each secret set is encrypted with its own random data key (AES-256-GCM), and only
// that data key is encrypted ("wrapped") with a master key that lives in the environment, never
// in the store. Rotating the master key rewraps the data keys (`keys:rewrap`), not the secrets.
//
// MASTER_KEYS holds one or more keys, `id:base64` separated by commas; the FIRST one wraps new
// data keys, every one listed can unwrap (so a rotation is: put the new key first, keep the old
// one listed, run `keys:rewrap`, then drop the old one). A key is 32 random bytes
// (`npm run cli -- keys:new` prints one).
//
// The wrapped blob is bound to its owner (the connector account id) as GCM additional data: a
// blob copied onto another row does not decrypt.

export interface MasterKey {
  id: string;
  key: Buffer; // 32 bytes
}

export interface Keyring {
  // The key new data keys are wrapped with.
  current: MasterKey;
  byId: Map<string, MasterKey>;
}

export interface SealedSecrets {
  v: 1;
  kid: string; // the master key that wraps `dk`
  dk: string; // wrapped data key: base64 of iv(12) | tag(16) | ciphertext(32)
  data: string; // base64 of iv(12) | tag(16) | ciphertext
}

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class MasterKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MasterKeyError';
  }
}

// Parses MASTER_KEYS ("k2026b:BASE64,k2026a:BASE64"); null when unset (no connector secrets can
// then be stored or read, and the admin API says so).
export function parseKeyring(raw: string | undefined | null): Keyring | null {
  const text = (raw ?? '').trim();
  if (!text) return null;
  const keys: MasterKey[] = [];
  for (const part of text.split(',')) {
    const [id, b64, ...rest] = part.trim().split(':');
    if (!id || !b64 || rest.length > 0 || !KEY_ID.test(id)) throw new MasterKeyError('MASTER_KEYS must be comma-separated id:base64 pairs (an id of letters, digits, _ or -; make a key with `npm run cli -- keys:new`)');
    const key = Buffer.from(b64, 'base64');
    if (key.length !== KEY_BYTES) throw new MasterKeyError(`MASTER_KEYS: key ${id} is ${key.length} bytes; a key is ${KEY_BYTES} random bytes in base64`);
    if (keys.some((k) => k.id === id)) throw new MasterKeyError(`MASTER_KEYS: key id ${id} is listed twice`);
    keys.push({ id, key });
  }
  return { current: keys[0], byId: new Map(keys.map((k) => [k.id, k])) };
}

export function newMasterKey(id: string): string {
  if (!KEY_ID.test(id)) throw new MasterKeyError('a key id is 1-32 letters, digits, _ or -');
  return `${id}:${randomBytes(KEY_BYTES).toString('base64')}`;
}

function encrypt(key: Buffer, plain: Buffer, aad: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

function decrypt(key: Buffer, sealed: string, aad: string): Buffer {
  const raw = Buffer.from(sealed, 'base64');
  if (raw.length < IV_BYTES + TAG_BYTES) throw new MasterKeyError('a sealed secret is truncated');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  } catch {
    throw new MasterKeyError('a sealed secret does not decrypt (wrong master key, or the blob was moved or altered)');
  }
}

export function seal(keyring: Keyring, owner: string, secrets: Record<string, string>): string {
  const dataKey = randomBytes(KEY_BYTES);
  const sealed: SealedSecrets = {
    v: 1,
    kid: keyring.current.id,
    dk: encrypt(keyring.current.key, dataKey, `dk:${owner}`),
    data: encrypt(dataKey, Buffer.from(JSON.stringify(secrets), 'utf8'), `data:${owner}`),
  };
  dataKey.fill(0);
  return JSON.stringify(sealed);
}

function parseSealed(blob: string): SealedSecrets {
  const sealed = JSON.parse(blob) as SealedSecrets;
  if (sealed?.v !== 1 || typeof sealed.kid !== 'string' || typeof sealed.dk !== 'string' || typeof sealed.data !== 'string') throw new MasterKeyError('not a sealed secret (v1)');
  return sealed;
}

function unwrapDataKey(keyring: Keyring, owner: string, sealed: SealedSecrets): Buffer {
  const master = keyring.byId.get(sealed.kid);
  if (!master) throw new MasterKeyError(`the master key ${sealed.kid} that wraps these secrets is not in MASTER_KEYS`);
  return decrypt(master.key, sealed.dk, `dk:${owner}`);
}

export function open(keyring: Keyring, owner: string, blob: string): Record<string, string> {
  const sealed = parseSealed(blob);
  const dataKey = unwrapDataKey(keyring, owner, sealed);
  try {
    return JSON.parse(decrypt(dataKey, sealed.data, `data:${owner}`).toString('utf8')) as Record<string, string>;
  } finally {
    dataKey.fill(0);
  }
}

// The same secrets under the current master key: only the data key is rewrapped. Null when it
// is already wrapped by the current key.
export function rewrap(keyring: Keyring, owner: string, blob: string): string | null {
  const sealed = parseSealed(blob);
  if (sealed.kid === keyring.current.id) return null;
  const dataKey = unwrapDataKey(keyring, owner, sealed);
  try {
    return JSON.stringify({ ...sealed, kid: keyring.current.id, dk: encrypt(keyring.current.key, dataKey, `dk:${owner}`) } satisfies SealedSecrets);
  } finally {
    dataKey.fill(0);
  }
}

export function keyIdOf(blob: string): string {
  return parseSealed(blob).kid;
}

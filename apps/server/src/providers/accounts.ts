import { createHash, createPrivateKey, randomBytes, X509Certificate } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, ConnectorAccountsTable } from '../store/schema.js';
import { ApiError, validation } from '../errors.js';
import { open, seal, type Keyring } from './secrets/envelope.js';
import type { CardSecrets, ConnectorSecrets, ConnectorSettings, OpenedConnectorAccount } from './connector.js';

// Connector accounts in the store: their secrets sealed with the master keys, opened only in
// memory when a call needs them; which one serves a payment (resolve); the callback token.

export type ConnectorAccountRow = ConnectorAccountsTable;

export function noKeyring(): ApiError {
  return new ApiError('UNPROCESSABLE', 'Connector secrets cannot be stored or read: MASTER_KEYS is not set on this instance (docs/providers.md, "The master key").');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function newWebhookToken(): string {
  return randomBytes(32).toString('base64url');
}

export interface CertificateFacts {
  fingerprint: string;
  subject: string;
  expiresAtIso: string;
}

// The client certificate and its key are checked when given: PEM, the key matches the
// certificate. A problem is a VALIDATION_ERROR naming the field, never echoing the secret.
export function checkCertificate(certificatePem: string, privateKeyPem: string, nowMs: number): CertificateFacts {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certificatePem);
  } catch {
    throw validation('certificatePem is not a PEM X.509 certificate (convert a .p12 with `openssl pkcs12 -in cert.p12 -nodes`, or send pkcs12Base64).', 'certificatePem');
  }
  let key;
  try {
    key = createPrivateKey(privateKeyPem);
  } catch {
    throw validation('privateKeyPem is not a PEM private key.', 'privateKeyPem');
  }
  if (!cert.checkPrivateKey(key)) throw validation('privateKeyPem is not the key of certificatePem.', 'privateKeyPem');
  const expiresAtMs = Date.parse(cert.validTo);
  if (!(expiresAtMs > nowMs)) throw validation(`certificatePem expired on ${new Date(expiresAtMs).toISOString().slice(0, 10)}.`, 'certificatePem');
  return { fingerprint: cert.fingerprint256, subject: cert.subject.replace(/\n/g, ', ').slice(0, 300), expiresAtIso: new Date(expiresAtMs).toISOString() };
}

export function sealSecrets(keyring: Keyring | null, id: string, secrets: ConnectorSecrets | CardSecrets): { blob: string; keyId: string } {
  if (!keyring) throw noKeyring();
  return { blob: seal(keyring, id, secrets as unknown as Record<string, string>), keyId: keyring.current.id };
}

export function openAccount<S = ConnectorSettings, X = ConnectorSecrets>(keyring: Keyring | null, row: ConnectorAccountRow): OpenedConnectorAccount<S, X> {
  if (!keyring) throw noKeyring();
  return {
    id: row.id,
    connector: row.connector,
    environment: row.environment,
    clientId: row.client_id,
    settings: JSON.parse(row.settings) as S,
    secrets: open(keyring, row.id, row.secrets) as unknown as X,
  };
}

export function readConnectorAccount(db: Kysely<Database>, id: string): Promise<ConnectorAccountRow | undefined> {
  return db.selectFrom('connector_accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

// Which connector account serves (merchant account, mode, method): live keys only `production`;
// test keys a `homologation` account when one is configured, else the in-house sandbox (null).
// A merchant's own account overrides the platform's.
export async function resolveConnectorAccount(db: Kysely<Database>, owner: { accountId: string; livemode: boolean }, method: string): Promise<ConnectorAccountRow | null> {
  const environment = owner.livemode ? 'production' : 'homologation';
  const rows = await db.selectFrom('connector_accounts').selectAll()
    .where('method', '=', method).where('environment', '=', environment).where('status', '=', 'active')
    .where((eb) => eb.or([eb('owner_account_id', '=', owner.accountId), eb('owner_account_id', 'is', null)]))
    .orderBy('created_at', 'desc').orderBy('id', 'desc')
    .execute();
  return rows.find((r) => r.owner_account_id === owner.accountId) ?? rows.find((r) => r.owner_account_id === null) ?? null;
}

import { execFileSync } from 'node:child_process';
import type { Store, Tx } from '../../../store/index.js';
import type { RequestContext } from '../../../plugins/idempotency.js';
import type { Clock } from '../../../clock.js';
import type { Keyring } from '../../../providers/secrets/envelope.js';
import type { PixConnector, CardSecrets, CardSettings, ConnectorSecrets, ConnectorSettings } from '../../../providers/connector.js';
import { ApiError, notFound, validation } from '../../../errors.js';
import { newId } from '../../../domain/ids.js';
import { paginate, type Page } from '../../../http/pagination.js';
import { checkCertificate, hashToken, newWebhookToken, openAccount, readConnectorAccount, sealSecrets, type ConnectorAccountRow } from '../../../providers/accounts.js';
import type { AuditSpec } from '../shared/audit.js';
import { adyenDefaultClientOrigin } from '../../../providers/adyen/client-side.js';
import type { ConnectorAccount, CreateAdyenConnectorAccountRequest, CreateConnectorAccountRequest, RotateConnectorSecretsRequest, UpdateConnectorAccountRequest } from './schemas.js';

export interface ConnectorAdminDeps {
  store: Store;
  keyring: Keyring | null;
  clock: Clock;
  pix: PixConnector;
  publicUrl: string | null;
  // Told after any change to connector accounts, before its answer leaves: which account serves
  // a payment is cached (providers/registry.ts) and must not outlive the change in this process.
  changed?: () => void;
}

const DAY_MS = 86_400_000;
export const CERTIFICATE_WARNING_DAYS = 30;

export function toConnectorAccount(row: ConnectorAccountRow, nowMs: number, notificationUrl: string | null = null): ConnectorAccount {
  const settings = JSON.parse(row.settings) as ConnectorSettings & { secretsPresent?: { ca?: boolean } };
  const card = row.method === 'card' ? (settings as unknown as CardSettings) : null;
  return {
    id: row.id,
    object: 'connector_account',
    livemode: false,
    name: row.name,
    ownerAccountId: row.owner_account_id,
    connector: row.connector,
    dialect: card ? 'checkout_v71' : settings.dialect,
    method: row.method,
    environment: row.environment,
    status: row.status,
    baseUrl: settings.baseUrl,
    tokenUrl: settings.tokenUrl ?? null,
    pixKey: settings.pixKey ?? null,
    merchantAccount: card ? card.merchantAccount : null,
    clientKey: card ? card.clientKey ?? null : null,
    clientOrigin: card ? card.clientOrigin ?? adyenDefaultClientOrigin(row.environment) : null,
    captureMode: card ? card.captureMode ?? 'automatic' : null,
    notificationUrl,
    scopes: settings.scopes ?? null,
    timeoutMs: settings.timeoutMs ?? null,
    clientId: row.client_id,
    secrets: { clientSecret: card ? null : 'set', privateKey: card ? null : 'set', ca: settings.secretsPresent?.ca ? 'set' : null, apiKey: card ? 'set' : null, hmacKey: card ? 'set' : null, masterKeyId: row.secrets_key_id, rotatedAt: row.secrets_rotated_at },
    certificate: row.certificate_expires_at
      ? { subject: row.certificate_subject ?? '', fingerprintSha256: row.certificate_fingerprint ?? '', expiresAt: row.certificate_expires_at, expiresSoon: Date.parse(row.certificate_expires_at) - nowMs < CERTIFICATE_WARNING_DAYS * DAY_MS }
      : null,
    webhookRegisteredAt: row.webhook_registered_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    disabledAt: row.disabled_at,
  };
}

// The audit log keeps the masked resource (never a secret), before and after.
function auditSpec(action: string, clock: Clock, create = false): AuditSpec {
  return {
    action: `connector_account.${action}`,
    objectType: 'connector_account',
    objectId: create ? (_req, result) => (result as { id?: string } | undefined)?.id : (req) => (req.params as { id: string }).id,
    snapshot: async (tx: Tx, id: string) => {
      const row = await readConnectorAccount(tx, id);
      return row ? toConnectorAccount(row, clock.nowMs()) : null;
    },
    reasonRequired: true,
    reasonHint: 'a connector account decides where live money goes',
  };
}

export const connectorAudits = (clock: Clock) => ({
  create: auditSpec('create', clock, true),
  update: auditSpec('update', clock),
  rotate: auditSpec('rotate', clock),
  disable: auditSpec('disable', clock),
  registerWebhook: auditSpec('register_webhook', clock),
});

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]+?-----END \1-----/g;

// PKCS#12 to PEM with the openssl command (Node cannot read .p12; older ones need -legacy on
// OpenSSL 3). The password goes through the environment, never the command line.
export function pkcs12ToPem(base64: string, password: string): { certificatePem: string; privateKeyPem: string } {
  const input = Buffer.from(base64, 'base64');
  for (const extra of [[], ['-legacy']]) {
    try {
      const out = execFileSync('openssl', ['pkcs12', ...extra, '-nodes', '-passin', 'env:P12_PASSWORD'], { input, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', P12_PASSWORD: password }, stdio: ['pipe', 'pipe', 'ignore'], timeout: 10_000 }).toString('utf8');
      const blocks = out.match(PEM_BLOCK) ?? [];
      const certificatePem = blocks.find((b) => b.startsWith('-----BEGIN CERTIFICATE'));
      const privateKeyPem = blocks.find((b) => /^-----BEGIN (RSA |EC |ENCRYPTED )?PRIVATE KEY/.test(b));
      if (certificatePem && privateKeyPem) return { certificatePem: certificatePem + '\n', privateKeyPem: privateKeyPem + '\n' };
    } catch { /* try the legacy algorithms, then give up */ }
  }
  throw validation('pkcs12Base64 could not be read: not a PKCS#12 file, or the wrong pkcs12Password.', 'pkcs12Base64');
}

// The certificate and key from either PEM fields or a PKCS#12 file.
function certificateFrom(body: { certificatePem?: string; privateKeyPem?: string; pkcs12Base64?: string; pkcs12Password?: string }, required: boolean): { certificatePem: string; privateKeyPem: string } | null {
  if (body.pkcs12Base64 !== undefined) {
    if (body.certificatePem !== undefined || body.privateKeyPem !== undefined) throw validation('Send pkcs12Base64 or certificatePem and privateKeyPem, not both.', 'pkcs12Base64');
    return pkcs12ToPem(body.pkcs12Base64, body.pkcs12Password ?? '');
  }
  if (body.certificatePem === undefined && body.privateKeyPem === undefined) {
    if (required) throw validation('certificatePem and privateKeyPem (or pkcs12Base64) are required: PSPs authenticate us by mutual TLS.', 'certificatePem');
    return null;
  }
  if (body.certificatePem === undefined || body.privateKeyPem === undefined) throw validation('Send certificatePem and privateKeyPem together.', body.certificatePem === undefined ? 'certificatePem' : 'privateKeyPem');
  return { certificatePem: body.certificatePem, privateKeyPem: body.privateKeyPem };
}

export async function listConnectorAccounts(deps: ConnectorAdminDeps, query: { limit?: number; startingAfter?: string; endingBefore?: string; ownerAccountId?: string }): Promise<Page<ConnectorAccount>> {
  let scope = deps.store.db.selectFrom('connector_accounts').selectAll();
  const owner = query.ownerAccountId;
  if (owner === 'platform') scope = scope.where('owner_account_id', 'is', null);
  else if (owner) scope = scope.where((eb) => eb.or([eb('owner_account_id', '=', owner), eb('owner_account_id', 'is', null)]));
  return paginate(scope, query, (r) => toConnectorAccount(r, deps.clock.nowMs()), scope);
}

export async function getConnectorAccount(deps: ConnectorAdminDeps, id: string): Promise<ConnectorAccount> {
  const row = await readConnectorAccount(deps.store.db, id);
  if (!row) throw notFound('connector account', 'id');
  // An Adyen account's notification URL (its token opened from the sealed secrets), for the
  // operator to enter in Adyen's Customer Area; in this detail only (never in a list, or in the
  // audit log's copies of the account).
  const notificationUrl = row.connector === 'adyen' && deps.publicUrl ? `${callbackUrl(deps.publicUrl, openAccount<CardSettings, CardSecrets>(deps.keyring, row).secrets.webhookToken)}/adyen` : null;
  return toConnectorAccount(row, deps.clock.nowMs(), notificationUrl);
}

export async function createConnectorAccount(deps: ConnectorAdminDeps, ctx: RequestContext, body: CreateConnectorAccountRequest): Promise<ConnectorAccount> {
  const nowMs = deps.clock.nowMs();
  const nowIso = new Date(nowMs).toISOString();
  const pem = certificateFrom(body, true)!;
  const cert = checkCertificate(pem.certificatePem, pem.privateKeyPem, nowMs);
  const id = newId('connectorAccount', nowMs);
  const webhookToken = newWebhookToken();
  const secrets: ConnectorSecrets = { clientSecret: body.clientSecret, ...pem, ...(body.caPem ? { caPem: body.caPem } : {}), webhookToken };
  const sealed = sealSecrets(deps.keyring, id, secrets);
  const settings = { dialect: body.dialect, baseUrl: body.baseUrl, pixKey: body.pixKey, ...(body.tokenUrl ? { tokenUrl: body.tokenUrl } : {}), ...(body.scopes ? { scopes: body.scopes } : {}), ...(body.timeoutMs ? { timeoutMs: body.timeoutMs } : {}), secretsPresent: { ca: !!body.caPem } };
  const row: ConnectorAccountRow = {
    id, owner_account_id: body.ownerAccountId ?? null, connector: body.connector, method: body.method, environment: body.environment, status: 'active',
    name: body.name, settings: JSON.stringify(settings), client_id: body.clientId, secrets: sealed.blob, secrets_key_id: sealed.keyId, secrets_rotated_at: nowIso,
    certificate_fingerprint: cert.fingerprint, certificate_subject: cert.subject, certificate_expires_at: cert.expiresAtIso,
    webhook_token_hash: hashToken(webhookToken), webhook_registered_at: null, created_at: nowIso, updated_at: nowIso, disabled_at: null,
  };
  return ctx.write(async (tx) => {
    if (row.owner_account_id !== null) {
      const owner = await tx.selectFrom('accounts').select('id').where('id', '=', row.owner_account_id).executeTakeFirst();
      if (!owner) throw validation('No such merchant account.', 'ownerAccountId');
    }
    await tx.insertInto('connector_accounts').values(row).execute();
    return toConnectorAccount(row, nowMs);
  });
}

// An Adyen merchant account as the card acquirer: its API key and HMAC key sealed under a new
// data key, as a Pix account's secrets are; the callback token made here (its hash stored).
export async function createAdyenConnectorAccount(deps: ConnectorAdminDeps, ctx: RequestContext, body: CreateAdyenConnectorAccountRequest): Promise<ConnectorAccount> {
  const nowMs = deps.clock.nowMs();
  const nowIso = new Date(nowMs).toISOString();
  if (body.clientKey && !body.clientKey.startsWith(body.environment === 'production' ? 'live_' : 'test_')) throw validation(`A ${body.environment} account takes a ${body.environment === 'production' ? 'live_' : 'test_'} client key.`, 'clientKey');
  const id = newId('connectorAccount', nowMs);
  const webhookToken = newWebhookToken();
  const secrets: CardSecrets = { apiKey: body.apiKey, hmacKey: body.hmacKey.toUpperCase(), webhookToken };
  const sealed = sealSecrets(deps.keyring, id, secrets);
  const settings: CardSettings = { baseUrl: body.baseUrl, merchantAccount: body.merchantAccount, clientKey: body.clientKey ?? null, ...(body.clientOrigin ? { clientOrigin: body.clientOrigin } : {}), captureMode: body.captureMode ?? 'automatic', ...(body.timeoutMs ? { timeoutMs: body.timeoutMs } : {}) };
  const row: ConnectorAccountRow = {
    id, owner_account_id: body.ownerAccountId ?? null, connector: body.connector, method: body.method, environment: body.environment, status: 'active',
    name: body.name, settings: JSON.stringify(settings), client_id: body.merchantAccount, secrets: sealed.blob, secrets_key_id: sealed.keyId, secrets_rotated_at: nowIso,
    certificate_fingerprint: null, certificate_subject: null, certificate_expires_at: null,
    webhook_token_hash: hashToken(webhookToken), webhook_registered_at: null, created_at: nowIso, updated_at: nowIso, disabled_at: null,
  };
  return ctx.write(async (tx) => {
    if (row.owner_account_id !== null) {
      const owner = await tx.selectFrom('accounts').select('id').where('id', '=', row.owner_account_id).executeTakeFirst();
      if (!owner) throw validation('No such merchant account.', 'ownerAccountId');
    }
    await tx.insertInto('connector_accounts').values(row).execute();
    return toConnectorAccount(row, nowMs);
  });
}

async function loadForChange(tx: Tx, id: string): Promise<ConnectorAccountRow> {
  const row = await readConnectorAccount(tx, id);
  if (!row) throw notFound('connector account', 'id');
  if (row.status === 'disabled') throw new ApiError('INVALID_STATE', 'This connector account is disabled; create a new one.');
  return row;
}

export async function updateConnectorAccount(deps: ConnectorAdminDeps, ctx: RequestContext, id: string, body: UpdateConnectorAccountRequest): Promise<ConnectorAccount> {
  const nowMs = deps.clock.nowMs();
  return ctx.write(async (tx) => {
    const row = await loadForChange(tx, id);
    const settings = JSON.parse(row.settings) as Record<string, unknown>;
    for (const field of ['baseUrl', 'tokenUrl', 'pixKey', 'scopes', 'timeoutMs'] as const) if (body[field] !== undefined) settings[field] = body[field];
    const changes = { settings: JSON.stringify(settings), name: body.name ?? row.name, client_id: body.clientId ?? row.client_id, updated_at: new Date(nowMs).toISOString() };
    await tx.updateTable('connector_accounts').set(changes).where('id', '=', id).execute();
    return toConnectorAccount({ ...row, ...changes }, nowMs);
  });
}

// New secrets (the others kept) under a new data key and the current master key.
export async function rotateConnectorSecrets(deps: ConnectorAdminDeps, ctx: RequestContext, id: string, body: RotateConnectorSecretsRequest): Promise<ConnectorAccount> {
  const nowMs = deps.clock.nowMs();
  const pem = certificateFrom(body, false);
  if (!pem && body.clientSecret === undefined && body.caPem === undefined) throw validation('Send at least one secret to rotate: clientSecret, certificatePem and privateKeyPem (or pkcs12Base64), caPem.', 'clientSecret');
  const cert = pem ? checkCertificate(pem.certificatePem, pem.privateKeyPem, nowMs) : null;
  return ctx.write(async (tx) => {
    const row = await loadForChange(tx, id);
    if (row.method === 'card') throw new ApiError('INVALID_STATE', 'A card acquirer\'s keys are rotated by creating a new connector account (then disabling this one).');
    const current = openAccount(deps.keyring, row).secrets;
    const next: ConnectorSecrets = { ...current, ...(body.clientSecret ? { clientSecret: body.clientSecret } : {}), ...(pem ?? {}), ...(body.caPem ? { caPem: body.caPem } : {}) };
    const sealed = sealSecrets(deps.keyring, id, next);
    const settings = JSON.parse(row.settings) as Record<string, unknown>;
    settings.secretsPresent = { ca: !!next.caPem };
    const nowIso = new Date(nowMs).toISOString();
    const changes = {
      secrets: sealed.blob, secrets_key_id: sealed.keyId, secrets_rotated_at: nowIso, updated_at: nowIso, settings: JSON.stringify(settings),
      ...(cert ? { certificate_fingerprint: cert.fingerprint, certificate_subject: cert.subject, certificate_expires_at: cert.expiresAtIso } : {}),
    };
    await tx.updateTable('connector_accounts').set(changes).where('id', '=', id).execute();
    return toConnectorAccount({ ...row, ...changes }, nowMs);
  });
}

export async function disableConnectorAccount(deps: ConnectorAdminDeps, ctx: RequestContext, id: string): Promise<ConnectorAccount> {
  const nowMs = deps.clock.nowMs();
  return ctx.write(async (tx) => {
    const row = await loadForChange(tx, id);
    const nowIso = new Date(nowMs).toISOString();
    const changes = { status: 'disabled' as const, disabled_at: nowIso, updated_at: nowIso };
    await tx.updateTable('connector_accounts').set(changes).where('id', '=', id).execute();
    return toConnectorAccount({ ...row, ...changes }, nowMs);
  });
}

// Our callback URL for a connector account (the PSP posts to it + `/pix`).
export function callbackUrl(publicUrl: string | null, token: string): string {
  if (!publicUrl) throw new ApiError('UNPROCESSABLE', 'PUBLIC_URL is not set on this instance: the PSP needs the public https URL to send its callbacks to.');
  return `${publicUrl.replace(/\/+$/, '')}/v1/provider-callbacks/${token}`;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : 'unknown error';
}

// "Test connection": a token over mutual TLS, then the webhook the PSP has for the Pix key.
export async function testConnectorAccount(deps: ConnectorAdminDeps, id: string) {
  const row = await readConnectorAccount(deps.store.db, id);
  if (!row) throw notFound('connector account', 'id');
  if (row.method === 'card') return { object: 'connector_test' as const, livemode: false as const, ok: false, token: false, webhookUrl: null, webhookIsOurs: false, error: 'Test connection reads a Pix PSP; an Adyen account is tested by a test payment.' };
  const account = openAccount(deps.keyring, row);
  const ours = deps.publicUrl ? callbackUrl(deps.publicUrl, account.secrets.webhookToken) : null;
  let token = false;
  try {
    await deps.pix.authenticate(account);
    token = true;
    const url = await deps.pix.readWebhook(account);
    const isOurs = url !== null && ours !== null && url.replace(/\/pix$/, '') === ours;
    return { object: 'connector_test' as const, livemode: false as const, ok: isOurs, token, webhookUrl: url === null ? null : url.replace(account.secrets.webhookToken, '…'), webhookIsOurs: isOurs, error: isOurs ? null : url === null ? 'No webhook is registered for the Pix key.' : 'The webhook registered for the Pix key is not this connector account\'s.' };
  } catch (error) {
    return { object: 'connector_test' as const, livemode: false as const, ok: false, token, webhookUrl: null, webhookIsOurs: false, error: describe(error) };
  }
}

// "Register the webhook": PUT /webhook/{chave} with our callback URL, then the row says when.
export async function registerConnectorWebhook(deps: ConnectorAdminDeps, ctx: RequestContext, id: string): Promise<ConnectorAccount> {
  const row = await readConnectorAccount(deps.store.db, id);
  if (!row) throw notFound('connector account', 'id');
  if (row.status === 'disabled') throw new ApiError('INVALID_STATE', 'This connector account is disabled.');
  if (row.method === 'card') throw new ApiError('INVALID_STATE', 'Adyen\'s notification URL is set in its Customer Area (docs/providers.md, "Cards on Adyen").');
  const account = openAccount(deps.keyring, row);
  try {
    await deps.pix.registerWebhook(account, callbackUrl(deps.publicUrl, account.secrets.webhookToken));
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError('PROVIDER_UNAVAILABLE', `The PSP did not register the webhook: ${describe(error)}`, { headers: { 'retry-after': '30' } });
  }
  const nowMs = deps.clock.nowMs();
  return ctx.write(async (tx) => {
    const nowIso = new Date(nowMs).toISOString();
    await tx.updateTable('connector_accounts').set({ webhook_registered_at: nowIso, updated_at: nowIso }).where('id', '=', id).execute();
    return toConnectorAccount({ ...row, webhook_registered_at: nowIso, updated_at: nowIso }, nowMs);
  });
}

export async function listPixReceived(store: Store, status: string | undefined) {
  let qb = store.db.selectFrom('pix_received').selectAll().orderBy('created_at', 'desc').limit(100);
  if (status) qb = qb.where('status', '=', status as 'matched');
  const rows = await qb.execute();
  return {
    object: 'list' as const,
    data: rows.map((r) => ({ object: 'pix_received' as const, livemode: false as const, e2eid: r.e2eid, connectorAccountId: r.connector_account_id, txid: r.txid, amount: Number(r.amount), paidAt: r.paid_at, paymentId: r.payment_id, status: r.status, createdAt: r.created_at })),
  };
}

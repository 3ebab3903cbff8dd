import { Type, type Static } from 'typebox';
import { ListQueryBase, cents, int32, listOf, nullableRef, ref, refTo, stringEnum, constant } from '../../../http/common.js';
import { ADMIN_LIVEMODE, reasonText } from '../shared/schemas.js';

// Connector accounts (issue 25): a provider's credentials and settings. Secrets go in (create,
// rotate) and never come out: the resource shows that they are set, the certificate's subject,
// fingerprint and expiry, and which master key wraps them.

const reason = reasonText('Why, for the audit log. Required: a connector account decides where live money goes.');
const MAX_PEM = 20_000;

const settingsFields = {
  name: Type.String({ minLength: 1, maxLength: 100, description: 'A name operators recognise, e.g. "Efí produção".' }),
  baseUrl: Type.String({ minLength: 9, maxLength: 300, pattern: '^https://[^\\s?#]+$', description: 'The PSP\'s API Pix base URL (https), e.g. `https://pix.api.efipay.com.br` for Efí production, `https://pix-h.api.efipay.com.br` for its homologation. The standard\'s paths (`/cob/{txid}`) are added to it (the `efi` dialect adds `/v2` first).' }),
  tokenUrl: Type.Optional(Type.String({ minLength: 9, maxLength: 300, pattern: '^https://[^\\s?#]+$', description: 'The OAuth2 token endpoint, when not `{baseUrl}/oauth/token`.' })),
  pixKey: Type.String({ minLength: 1, maxLength: 77, description: 'The receiver\'s Pix key (chave) at this PSP: charges are made to it and the webhook is registered on it.' }),
  scopes: Type.Optional(Type.String({ maxLength: 300, description: 'OAuth2 scopes to ask for (space separated); default: the dialect\'s (the standard: `cob.write cob.read pix.write pix.read webhook.write webhook.read`; Efí: none, they come with the application).' })),
  timeoutMs: Type.Optional(int32({ minimum: 100, maximum: 60_000, description: 'Timeout of every call to the PSP, ms (default 10000).' })),
  clientId: Type.String({ minLength: 1, maxLength: 200, description: 'The OAuth2 client id.' }),
};

const secretFields = {
  clientSecret: Type.String({ minLength: 1, maxLength: 500, description: 'The OAuth2 client secret. Stored encrypted; never returned.' }),
  certificatePem: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_PEM, description: 'The client certificate for mutual TLS, PEM. Give it with `privateKeyPem`, or send `pkcs12Base64` instead.' })),
  privateKeyPem: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_PEM, description: 'The certificate\'s private key, PEM (unencrypted). Stored encrypted; never returned.' })),
  pkcs12Base64: Type.Optional(Type.String({ minLength: 1, maxLength: 40_000, description: 'The certificate and its key as a PKCS#12 file (`.p12`, as Efí hands it out), base64: converted to PEM on upload (older .p12 files do not load on Node 20 as they are).' })),
  pkcs12Password: Type.Optional(Type.String({ maxLength: 200, description: 'The PKCS#12 file\'s password (empty for none, as Efí\'s).' })),
  caPem: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_PEM, description: 'CA certificates to trust for the PSP\'s server, PEM (homologation servers with a private CA); default: the system\'s.' })),
};

export const CreateConnectorAccountRequest = Type.Object(
  {
    ...settingsFields,
    connector: constant('pix_api', { description: '`pix_api`: the Banco Central\'s standard API Pix.' }),
    dialect: stringEnum(['standard', 'efi'], { description: 'What the PSP does differently from the standard: `standard` or `efi`.' }),
    method: constant('pix', { description: 'The payment method it serves.' }),
    environment: stringEnum(['production', 'homologation'], { description: '`production` serves live keys; `homologation` serves test keys instead of the in-house sandbox.' }),
    ownerAccountId: Type.Optional(Type.String({ maxLength: 64, description: 'A merchant account (`acct_`) whose own PSP this is (it overrides the platform\'s); omitted: the platform\'s, every merchant\'s default.' })),
    ...secretFields,
    reason,
  },
  { $id: 'CreateConnectorAccountRequest', additionalProperties: false },
);
export type CreateConnectorAccountRequest = Static<typeof CreateConnectorAccountRequest>;

export const UpdateConnectorAccountRequest = Type.Object(
  {
    name: Type.Optional(settingsFields.name),
    baseUrl: Type.Optional(settingsFields.baseUrl),
    tokenUrl: settingsFields.tokenUrl,
    pixKey: Type.Optional(settingsFields.pixKey),
    scopes: settingsFields.scopes,
    timeoutMs: settingsFields.timeoutMs,
    clientId: Type.Optional(settingsFields.clientId),
    reason,
  },
  { $id: 'UpdateConnectorAccountRequest', additionalProperties: false, examples: [{ timeoutMs: 5000, reason: 'The PSP answers slowly at month end (ticket 88)' }], description: 'Settings only; secrets change through rotate.' },
);
export type UpdateConnectorAccountRequest = Static<typeof UpdateConnectorAccountRequest>;

export const RotateConnectorSecretsRequest = Type.Object(
  {
    clientSecret: Type.Optional(secretFields.clientSecret),
    certificatePem: secretFields.certificatePem,
    privateKeyPem: secretFields.privateKeyPem,
    pkcs12Base64: secretFields.pkcs12Base64,
    pkcs12Password: secretFields.pkcs12Password,
    caPem: secretFields.caPem,
    reason,
  },
  { $id: 'RotateConnectorSecretsRequest', additionalProperties: false, examples: [{ clientSecret: 'the-new-client-secret', reason: 'Yearly rotation' }], description: 'New secrets (any of them; the others are kept), sealed under a new data key and the current master key.' },
);
export type RotateConnectorSecretsRequest = Static<typeof RotateConnectorSecretsRequest>;

// A card acquirer (issue 27): Adyen's Checkout API. Its API key and notification HMAC key are
// sealed as the Pix secrets are; the client key is public (the browser encrypts card fields with
// it).
export const CreateAdyenConnectorAccountRequest = Type.Object(
  {
    name: settingsFields.name,
    connector: constant('adyen', { description: '`adyen`: Adyen\'s Checkout API v71.' }),
    method: constant('card', { description: 'The payment method it serves.' }),
    environment: stringEnum(['production', 'homologation'], { description: '`production` serves live keys; `homologation` (Adyen\'s test environment) serves test keys instead of the in-house sandbox.' }),
    ownerAccountId: Type.Optional(Type.String({ maxLength: 64, description: 'A merchant account (`acct_`) whose own acquirer this is; omitted: the platform\'s.' })),
    baseUrl: Type.String({ minLength: 9, maxLength: 300, pattern: '^(https://[^\\s?#]+|http://(127\\.0\\.0\\.1|localhost)(:[0-9]+)?(/[^\\s?#]*)?)$', description: 'The Checkout API base with its version: `https://checkout-test.adyen.com/v71` (test) or `https://{prefix}-checkout-live.adyenpayments.com/checkout/v71` (live). https only (plain http only to this machine, for tests).' }),
    merchantAccount: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$', description: 'The Adyen merchant account payments are made on.' }),
    clientKey: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^(test|live)_[A-Za-z0-9]+$', description: 'The public client key (`test_...` or `live_...`) the browser encrypts card fields with.' })),
    clientOrigin: Type.Optional(Type.String({ minLength: 9, maxLength: 200, pattern: '^(https://[A-Za-z0-9.-]+(:[0-9]{1,5})?|http://(127\\.0\\.0\\.1|localhost)(:[0-9]{1,5})?)$', description: 'The origin the hosted checkout page loads Adyen\'s client-side encryption from (an origin: no path). Default: `https://checkoutshopper-live.adyen.com` (production) or `https://checkoutshopper-test.adyen.com` (homologation); a regional live origin (`https://checkoutshopper-live-us.adyen.com`, ...) where Adyen says so. The page\'s Content-Security-Policy allows exactly this origin, in live mode only. https only (plain http only to this machine, for tests).' })),
    captureMode: Type.Optional(stringEnum(['automatic', 'manual'], { description: '`automatic` (default): Adyen captures on authorization. `manual`: each payment is authorized only (`requires_capture`) and captured by POST /v1/payments/{id}/capture.' })),
    timeoutMs: settingsFields.timeoutMs,
    apiKey: Type.String({ minLength: 1, maxLength: 500, description: 'The API key of Adyen\'s API credential (`X-API-Key`). Stored encrypted; never returned.' }),
    hmacKey: Type.String({ minLength: 32, maxLength: 256, pattern: '^([0-9A-Fa-f]{2})+$', description: 'The HMAC key of the standard notification webhook (hex, as the Customer Area shows it). Stored encrypted; never returned.' }),
    reason,
  },
  { $id: 'CreateAdyenConnectorAccountRequest', additionalProperties: false, description: 'An Adyen merchant account as the card acquirer.' },
);
export type CreateAdyenConnectorAccountRequest = Static<typeof CreateAdyenConnectorAccountRequest>;

export const ConnectorAccountReasonRequest = Type.Object({ reason }, { $id: 'ConnectorAccountReasonRequest', additionalProperties: false, examples: [{ reason: 'Moving to another PSP' }] });

const masked = Type.Union([constant('set'), Type.Null()], { description: '`set` when stored (encrypted); the value is never returned.' });

// Named components, not inline objects (issue 28: generators invent names for inline ones).
export const ConnectorAccountSecrets = Type.Object({
  clientSecret: masked,
  privateKey: masked,
  ca: masked,
  apiKey: masked,
  hmacKey: masked,
  masterKeyId: Type.String({ description: 'The master key (MASTER_KEYS id) that wraps them.' }),
  rotatedAt: Type.String({ format: 'date-time' }),
}, { $id: 'ConnectorAccountSecrets', additionalProperties: false, description: 'Which secrets are stored (masked), and under which master key.' });

export const ConnectorCertificate = Type.Object({
  subject: Type.String(),
  fingerprintSha256: Type.String(),
  expiresAt: Type.String({ format: 'date-time' }),
  expiresSoon: Type.Boolean({ description: 'Expires within 30 days: rotate it.' }),
}, { $id: 'ConnectorCertificate', additionalProperties: false, description: 'The client certificate for mutual TLS (its key is never returned).' });

export const ConnectorAccount = Type.Object(
  {
    id: Type.String({ description: 'Prefix `cna_`.' }),
    object: constant('connector_account'),
    livemode: ADMIN_LIVEMODE,
    name: Type.String(),
    ownerAccountId: Type.Union([Type.String(), Type.Null()], { description: 'The merchant account it belongs to; null: the platform\'s.' }),
    connector: Type.String(),
    dialect: Type.String(),
    method: Type.String(),
    environment: stringEnum(['production', 'homologation']),
    status: stringEnum(['active', 'disabled']),
    baseUrl: Type.String(),
    tokenUrl: Type.Union([Type.String(), Type.Null()]),
    pixKey: Type.Union([Type.String(), Type.Null()], { description: 'A Pix connector account\'s Pix key; null for a card acquirer.' }),
    merchantAccount: Type.Union([Type.String(), Type.Null()], { description: 'A card acquirer\'s merchant account (Adyen); null for Pix.' }),
    clientKey: Type.Union([Type.String(), Type.Null()], { description: 'A card acquirer\'s public client key (Adyen); null when not set or for Pix.' }),
    notificationUrl: Type.Union([Type.String(), Type.Null()], { description: 'An Adyen account, in its detail (GET /admin/connector-accounts/{id}) only: the URL to enter in Adyen\'s Customer Area as the standard webhook\'s (it carries the account\'s unguessable token; notifications are also checked with the HMAC key). Null in lists, for Pix, and when PUBLIC_URL is not set.' }),
    captureMode: Type.Union([stringEnum(['automatic', 'manual']), Type.Null()], { description: 'A card acquirer\'s captures: `automatic` or `manual` (POST /v1/payments/{id}/capture); null for Pix.' }),
    clientOrigin: Type.Union([Type.String(), Type.Null()], { description: 'A card acquirer\'s: the origin the hosted page loads its client-side encryption from (the default of the environment when not set); null for Pix.' }),
    scopes: Type.Union([Type.String(), Type.Null()]),
    timeoutMs: Type.Union([int32({ minimum: 100, maximum: 60_000 }), Type.Null()], { description: 'Timeout of every call to the PSP, ms; null: the default (10000).' }),
    clientId: Type.String(),
    secrets: refTo(ConnectorAccountSecrets),
    certificate: nullableRef(ConnectorCertificate),
    webhookRegisteredAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When our callback URL was last registered at the PSP (POST .../register-webhook).' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    disabledAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'ConnectorAccount', additionalProperties: false, description: 'A provider\'s credentials and settings; secrets masked.' },
);
export type ConnectorAccount = Static<typeof ConnectorAccount>;
export const ConnectorAccountList = listOf('ConnectorAccount', 'ConnectorAccountList');

export const ConnectorTestResult = Type.Object(
  {
    object: constant('connector_test'),
    livemode: ADMIN_LIVEMODE,
    ok: Type.Boolean(),
    token: Type.Boolean({ description: 'An OAuth2 token was obtained over mutual TLS.' }),
    webhookUrl: Type.Union([Type.String(), Type.Null()], { description: 'The callback URL the PSP has for the Pix key (the token part masked), or null.' }),
    webhookIsOurs: Type.Boolean({ description: 'The PSP\'s callback URL is this connector account\'s.' }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'What failed, without secrets.' }),
  },
  { $id: 'ConnectorTestResult', additionalProperties: false, description: 'What a test connection found: a token, and whose webhook the PSP has.' },
);

export const PixReceived = Type.Object(
  {
    object: constant('pix_received'),
    livemode: ADMIN_LIVEMODE,
    e2eid: Type.String(),
    connectorAccountId: Type.String(),
    txid: Type.Union([Type.String(), Type.Null()]),
    amount: cents({ description: 'Centavos.' }),
    paidAt: Type.String({ format: 'date-time' }),
    paymentId: Type.Union([Type.String(), Type.Null()]),
    status: stringEnum(['matched', 'unmatched', 'amount_mismatch', 'late_returned'], { description: '`matched`: it paid `paymentId`; `unmatched`: no payment of ours has its txid; `amount_mismatch`: the amount differs from the payment\'s; `late_returned`: it arrived when the payment could no longer be approved and was returned to the payer.' }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'PixReceived', additionalProperties: false, description: 'A Pix a PSP received, and what it paid on our side.' },
);
export const PixReceivedList = Type.Object({ object: constant('list'), data: Type.Array(ref('PixReceived')) }, { $id: 'PixReceivedList', additionalProperties: false, description: 'Pix received at PSPs, newest first.' });

export const ListConnectorAccountsQuery = Type.Object({
  limit: ListQueryBase.limit, startingAfter: ListQueryBase.startingAfter, endingBefore: ListQueryBase.endingBefore,
  ownerAccountId: Type.Optional(Type.String({ maxLength: 64, pattern: '^(platform|acct_[0-9a-z]+)$', description: 'A merchant account (`acct_`): the connector accounts that may serve it, its own and the platform\'s (its own override the platform\'s); `platform`: only the platform\'s.' })),
}, { additionalProperties: false });

export const connectorAccountSchemas = [CreateConnectorAccountRequest, CreateAdyenConnectorAccountRequest, UpdateConnectorAccountRequest, RotateConnectorSecretsRequest, ConnectorAccountReasonRequest, ConnectorAccountSecrets, ConnectorCertificate, ConnectorAccount, ConnectorAccountList, ConnectorTestResult, PixReceived, PixReceivedList];

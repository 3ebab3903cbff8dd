import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ref, refTo } from '../../../http/common.js';
import { typed } from '../../../http/typed.js';
import { AdminMutationHeaders, IdParams, security, tags } from '../shared/schemas.js';
import { ConnectorAccountReasonRequest, CreateAdyenConnectorAccountRequest, CreateConnectorAccountRequest, ListConnectorAccountsQuery, RotateConnectorSecretsRequest, UpdateConnectorAccountRequest } from './schemas.js';
import { connectorAudits, createAdyenConnectorAccount, createConnectorAccount, disableConnectorAccount, getConnectorAccount, listConnectorAccounts, listPixReceived, registerConnectorWebhook, rotateConnectorSecrets, testConnectorAccount, updateConnectorAccount, type ConnectorAdminDeps } from './service.js';

// Registered inside the admin scope, behind its session and CSRF guard. Every change takes a
// reason and writes the audit log (the masked resource before and after); a viewer reads.
export function connectorAccountRoutes(appInstance: FastifyInstance, deps: ConnectorAdminDeps): void {
  const app = typed(appInstance);
  const audits = connectorAudits(deps.clock);
  // Before the answer is sent (the change is committed by then), so a payment made after the
  // operator saw it sees the change.
  appInstance.addHook('onSend', async (req, _reply, payload) => {
    if (req.method !== 'GET' && req.method !== 'HEAD' && req.url.startsWith('/admin/connector-accounts')) deps.changed?.();
    return payload;
  });
  const params = IdParams('The connector account (`cna_`).');

  app.get('/admin/connector-accounts', {
    config: { permission: 'connector_accounts:view' },
    schema: { operationId: 'adminListConnectorAccounts', tags, security, summary: 'List connector accounts', description: 'Every connector account (platform and merchant ones), newest first, secrets masked.', querystring: ListConnectorAccountsQuery, response: { 200: ref('ConnectorAccountList') } },
  }, (req) => listConnectorAccounts(deps, req.query));

  app.post('/admin/connector-accounts', {
    config: { permission: 'connector_accounts:manage', audit: audits.create },
    schema: {
      operationId: 'adminCreateConnectorAccount', tags, security, summary: 'Create a connector account',
      description: 'A PSP\'s credentials and settings. The certificate must match its key and not be expired (VALIDATION_ERROR otherwise); a PKCS#12 file is converted to PEM. Secrets are sealed with the instance\'s master key (MASTER_KEYS; UNPROCESSABLE when unset) and never returned. A `production` account serves live payments of its method (of its merchant, or of every merchant without one of its own).',
      headers: AdminMutationHeaders, body: refTo(CreateConnectorAccountRequest), response: { 200: ref('ConnectorAccount') },
    },
  }, (req) => createConnectorAccount(deps, req.ctx, req.body));

  app.post('/admin/connector-accounts/adyen', {
    config: { permission: 'connector_accounts:manage', audit: audits.create },
    schema: {
      operationId: 'adminCreateAdyenConnectorAccount', tags, security, summary: 'Create an Adyen connector account',
      description: 'Adyen as the card acquirer: its merchant account, API key, notification HMAC key and client key. The keys are sealed with the instance\'s master key (MASTER_KEYS; UNPROCESSABLE when unset) and never returned. Notifications go to `{PUBLIC_URL}/v1/provider-callbacks/{token}/adyen` (the token is shown once, by the back office, from the account).',
      headers: AdminMutationHeaders, body: refTo(CreateAdyenConnectorAccountRequest), response: { 200: ref('ConnectorAccount') },
    },
  }, (req) => createAdyenConnectorAccount(deps, req.ctx, req.body));

  app.get('/admin/connector-accounts/:id', {
    config: { permission: 'connector_accounts:view' },
    schema: { operationId: 'adminGetConnectorAccount', tags, security, summary: 'Fetch a connector account', description: 'One connector account, secrets masked, with its certificate\'s expiry.', params, response: { 200: ref('ConnectorAccount') } },
  }, (req) => getConnectorAccount(deps, req.params.id));

  app.patch('/admin/connector-accounts/:id', {
    config: { permission: 'connector_accounts:manage', audit: audits.update },
    schema: { operationId: 'adminUpdateConnectorAccount', tags, security, summary: 'Update a connector account', description: 'Its settings (secrets change through rotate). INVALID_STATE once disabled.', params, headers: AdminMutationHeaders, body: refTo(UpdateConnectorAccountRequest), response: { 200: ref('ConnectorAccount') } },
  }, (req) => updateConnectorAccount(deps, req.ctx, req.params.id, req.body));

  app.post('/admin/connector-accounts/:id/rotate', {
    config: { permission: 'connector_accounts:manage', audit: audits.rotate },
    schema: { operationId: 'adminRotateConnectorSecrets', tags, security, summary: 'Rotate a connector account\'s secrets', description: 'New client secret, certificate and key, or CA (any of them; the others kept), sealed under a new data key and the current master key.', params, headers: AdminMutationHeaders, body: refTo(RotateConnectorSecretsRequest), response: { 200: ref('ConnectorAccount') } },
  }, (req) => rotateConnectorSecrets(deps, req.ctx, req.params.id, req.body));

  app.post('/admin/connector-accounts/:id/disable', {
    config: { permission: 'connector_accounts:manage', audit: audits.disable },
    schema: { operationId: 'adminDisableConnectorAccount', tags, security, summary: 'Disable a connector account', description: 'It serves no new payment (live payments of its method are then refused unless another production account serves them); payments it made are still synced and refunded through it.', params, headers: AdminMutationHeaders, body: refTo(ConnectorAccountReasonRequest), response: { 200: ref('ConnectorAccount') } },
  }, (req) => disableConnectorAccount(deps, req.ctx, req.params.id));

  app.post('/admin/connector-accounts/:id/register-webhook', {
    config: { permission: 'connector_accounts:manage', audit: audits.registerWebhook },
    schema: { operationId: 'adminRegisterConnectorWebhook', tags, security, summary: 'Register our callback at the PSP', description: '`PUT /webhook/{chave}` at the PSP with this connector account\'s callback URL (built on PUBLIC_URL, with an unguessable token). PROVIDER_UNAVAILABLE when the PSP refuses or does not answer.', params, headers: AdminMutationHeaders, body: refTo(ConnectorAccountReasonRequest), response: { 200: ref('ConnectorAccount') } },
  }, (req) => registerConnectorWebhook(deps, req.ctx, req.params.id));

  app.post('/admin/connector-accounts/:id/test', {
    // A viewer may run it: it reads at the PSP and changes nothing.
    config: { idempotent: false, writes: false, permission: 'connector_accounts:view', audit: { exempt: 'a test connection only reads at the PSP' } },
    schema: { operationId: 'adminTestConnectorAccount', tags, security, summary: 'Test a connector account', description: 'Gets a token over mutual TLS and reads the webhook the PSP has for the Pix key. Answers what worked; changes nothing.', params, headers: AdminMutationHeaders, response: { 200: ref('ConnectorTestResult') } },
  }, (req) => testConnectorAccount(deps, req.params.id));

  app.get('/admin/pix-received', {
    config: { permission: 'connector_accounts:view' },
    schema: {
      operationId: 'adminListPixReceived', tags, security, summary: 'Pix received at PSPs',
      description: 'What reconciliation and read-backs saw, newest first (at most 100): `status=unmatched` or `amount_mismatch` are what operators resolve (docs/providers.md, "Reconciliation").',
      querystring: Type.Object({ status: Type.Optional(Type.Union([Type.Literal('matched'), Type.Literal('unmatched'), Type.Literal('amount_mismatch'), Type.Literal('late_returned')])) }, { additionalProperties: false }),
      response: { 200: ref('PixReceivedList') },
    },
  }, (req) => listPixReceived(deps.store, req.query.status));
}

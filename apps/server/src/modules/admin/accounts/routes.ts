import type { FastifyInstance } from 'fastify';
import type { Store } from '../../../store/index.js';
import type { KeyCache } from '../../../plugins/auth.js';
import { ref, refTo } from '../../../http/common.js';
import { AdminMutationHeaders, IdParams, security, tags } from '../shared/schemas.js';
import { ActivateLiveModeRequest, ListAccountRecipientsQuery, ListAccountsQuery, ListKeysQuery, UpdateAccountSettingsRequest, UpdateEmbedOriginsRequest, UpdatePayoutBankAccountRequest } from './schemas.js';
import { accountAudit as audits, activateLiveMode, getAccount, listAccounts, updateAccountSettings, updateEmbedOrigins, updatePayoutBankAccount } from './service.js';
import { accountList, toAdminApiKey, toAdminRecipient } from './views.js';
import { typed } from '../../../http/typed.js';

const AccountIdParams = IdParams('Merchant account id (`acct_...`).');

export function adminAccountRoutes(scopeInstance: FastifyInstance, store: Store, keyCache?: KeyCache): void {
  const scope = typed(scopeInstance);
  scope.get('/admin/accounts', {
    config: { auth: 'none', permission: 'accounts:view' },
    schema: {
      operationId: 'adminListAccounts', tags, security, summary: 'List merchant accounts',
      description: 'Every merchant account, newest first, with cursors. Filter by `liveEnabled`; `search` finds an account by id, or by a part of its name or email.',
      querystring: ListAccountsQuery,
      response: { 200: ref('AdminAccountList') },
    },
  }, (req) => listAccounts(store, req.query));

  scope.get('/admin/accounts/:id', {
    config: { auth: 'none', permission: 'accounts:view' },
    schema: {
      operationId: 'adminGetAccount', tags, security, summary: 'Fetch a merchant account',
      description: 'The account with its effective settings: processing fee per method (`percentBps`, `fixedCents`) and `settlementDelayDays` per method, defaults filled in.',
      params: AccountIdParams,
      response: { 200: ref('AdminAccount') },
    },
  }, (req) => getAccount(store, req.params.id));

  scope.post('/admin/accounts/:id/activate-live', {
    config: { auth: 'none', permission: 'accounts:activate_live', audit: audits.activateLive },
    schema: {
      operationId: 'adminActivateLiveMode', tags, security, summary: 'Activate live mode for an account',
      description: 'From now on the account\'s `sk_live_` / `pk_live_` keys work (until then they get PERMISSION_DENIED). Needs a `reason` (kept in the audit log): live mode takes real money. Activating an active account changes nothing.',
      headers: AdminMutationHeaders,
      params: AccountIdParams,
      body: refTo(ActivateLiveModeRequest),
      response: { 200: ref('AdminAccount') },
    },
  }, (req) => activateLiveMode(req.ctx, req.params.id, keyCache));

  scope.patch('/admin/accounts/:id/settings', {
    config: { auth: 'none', permission: 'accounts:update', audit: audits.updateSettings },
    schema: {
      operationId: 'adminUpdateAccountSettings', tags, security, summary: 'Change an account\'s fees and settlement delays',
      description: 'Fees per method (`percentBps` 0-10000, `fixedCents` >= 0) and `settlementDelayDays` per method (0-365). Only the fields sent change. Applies to payments approved from now on.',
      headers: AdminMutationHeaders,
      params: AccountIdParams,
      body: refTo(UpdateAccountSettingsRequest),
      response: { 200: ref('AdminAccount') },
    },
  }, (req) => updateAccountSettings(req.ctx, req.params.id, req.body));

  scope.patch('/admin/accounts/:id/payout-bank-account', {
    config: { auth: 'none', permission: 'accounts:set_payout_bank_account', audit: audits.setPayoutBankAccount },
    schema: {
      operationId: 'adminUpdatePayoutBankAccount', tags, security, summary: 'Set an account\'s payout bank account',
      description: 'Where the merchant\'s own settlements are paid, validated as a recipient\'s bank account (`bankCode` 3 digits, `agency` digits with an optional check digit, `account` digits, `-` and a check digit, `accountType`). Replaces the current one. Settlements that were `held` for want of it take it at once and go to payout (`settlement.updated` events); later settlements take it when they are made. Needs a `reason` (kept in the audit log): it decides where the merchant\'s money is paid.',
      headers: AdminMutationHeaders,
      params: AccountIdParams,
      body: refTo(UpdatePayoutBankAccountRequest),
      response: { 200: ref('AdminAccount') },
    },
  }, (req) => updatePayoutBankAccount(req.ctx, req.params.id, req.body));

  scope.put('/admin/accounts/:id/embed-origins', {
    config: { auth: 'none', permission: 'accounts:set_embed_origins', audit: audits.setEmbedOrigins },
    schema: {
      operationId: 'adminUpdateEmbedOrigins', tags, security, summary: 'Set the origins allowed to frame an account\'s hosted checkout',
      description: 'Replaces the list the hosted checkout page\'s `Content-Security-Policy: frame-ancestors` is built from, for the account\'s sandbox and live sessions alike. Exact origins (`https://loja.example`, `https://loja.example:8443`); http only for `localhost` / `127.0.0.1`, which may use `:*` for any port. Each invalid origin is a VALIDATION_ERROR naming it (`origins.N`). Needs a `reason` (kept in the audit log).',
      headers: AdminMutationHeaders,
      params: AccountIdParams,
      body: refTo(UpdateEmbedOriginsRequest),
      response: { 200: ref('AdminAccount') },
    },
  }, (req) => updateEmbedOrigins(req.ctx, req.params.id, req.body));
}

export function accountViewRoutes(scopeInstance: FastifyInstance, store: Store): void {
  const scope = typed(scopeInstance);
  scope.get('/admin/accounts/:id/api-keys', {
    config: { auth: 'none', permission: 'accounts:view' },
    schema: {
      operationId: 'adminListAccountApiKeys', tags, security, summary: 'List an account\'s API keys',
      description: 'The account\'s keys, newest first, revoked ones included, as display prefixes (`sk_test_…a1b2`): the secrets themselves are stored hashed and never shown.',
      params: AccountIdParams,
      querystring: ListKeysQuery,
      response: { 200: ref('AdminApiKeyList') },
    },
  }, accountList(store, 'api_keys', toAdminApiKey));

  scope.get('/admin/accounts/:id/recipients', {
    config: { auth: 'none', permission: 'recipients:view' },
    schema: {
      operationId: 'adminListAccountRecipients', tags, security, summary: 'List an account\'s recipients',
      description: 'The account\'s recipients (both modes unless `livemode` is given), newest first, read-only, with their documents masked.',
      params: AccountIdParams,
      querystring: ListAccountRecipientsQuery,
      response: { 200: ref('AdminRecipientList') },
    },
  }, accountList(store, 'recipients', toAdminRecipient));
}

import type { FastifyInstance } from 'fastify';
import { sql, type Selectable } from 'kysely';
import type { Store, Tx } from '../../store/index.js';
import type { AccountsTable } from '../../store/schema.js';
import type { RequestContext } from '../../plugins/idempotency.js';
import type { KeyCache } from '../../plugins/auth.js';
import { notFound, validation } from '../../errors.js';
import { effectiveEmbedOrigins, InvalidOrigin, parseEmbedOrigin } from '../../domain/embed-origins.js';
import { ref } from '../../http/common.js';
import { paginate, type Page } from '../../http/pagination.js';
import { parseSettings } from '../accounts/settings.js';
import { AdminMutationHeaders, IdParams, ListAccountsQuery, type AdminAccount, type UpdateAccountSettingsRequest, type UpdateEmbedOriginsRequest, type UpdatePayoutBankAccountRequest } from './schemas.js';
import type { AuditSpec } from './audit-log.js';
import { checkBankAccount } from '../recipients/service.js';
import { releaseHeldSettlements } from '../settlements/service.js';

// Merchant accounts as the back office sees them: live-mode activation and money settings.
// Settings are stored on the account row (accounts.settings JSON) as overrides only, in the
// shape parseSettings reads ({fees: {pix: {percentBps, fixedCents}, ...}, settlementDelayDays:
// {pix, credit_card}}); what is not overridden follows the documented defaults.

type Row = Selectable<AccountsTable>;

export function toAdminAccount(row: Row): AdminAccount {
  const settings = parseSettings(row.settings);
  return {
    id: row.id,
    object: 'account',
    name: row.name,
    email: row.email,
    liveEnabled: row.live_enabled === 1,
    livemode: false,
    settings: {
      fees: {
        pix: { percentBps: settings.fees.pix.percentBps, fixedCents: settings.fees.pix.fixedCents },
        credit_card: { percentBps: settings.fees.credit_card.percentBps, fixedCents: settings.fees.credit_card.fixedCents },
      },
      settlementDelayDays: { pix: settings.settlementDelayDays.pix, credit_card: settings.settlementDelayDays.credit_card },
    },
    payoutBankAccount: row.payout_bank_account ? JSON.parse(row.payout_bank_account) : null,
    embedOrigins: effectiveEmbedOrigins(row.embed_origins, false),
    createdAt: row.created_at,
  };
}

async function loadAccount(db: Store['db'] | Tx, id: string): Promise<Row> {
  const row = await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('account', 'id');
  return row;
}

export async function listAccounts(store: Store, query: ListAccountsQuery): Promise<Page<AdminAccount>> {
  const scope = store.db.selectFrom('accounts').selectAll();
  let qb = scope;
  if (query.liveEnabled !== undefined) qb = qb.where('live_enabled', '=', query.liveEnabled ? 1 : 0);
  if (query.search !== undefined) {
    const text = query.search.trim().toLowerCase();
    // LIKE with its wildcards escaped, on lower() of both sides: case-insensitive on both engines.
    const pattern = `%${text.replace(/[\\%_]/g, (c) => '\\' + c)}%`;
    qb = qb.where((eb) => eb.or([
      eb('id', '=', query.search!.trim()),
      eb(sql`lower(name)`, 'like', sql`${pattern} escape '\\'`),
      eb(sql`lower(coalesce(email, ''))`, 'like', sql`${pattern} escape '\\'`),
    ]));
  }
  return paginate(qb, query, toAdminAccount, scope);
}

export async function getAccount(store: Store, id: string): Promise<AdminAccount> {
  return toAdminAccount(await loadAccount(store.db, id));
}

// Idempotent: activating an active account answers it unchanged.
export async function activateLiveMode(ctx: RequestContext, id: string, keyCache?: KeyCache): Promise<AdminAccount> {
  const account = await ctx.write(async (tx) => {
    const row = await loadAccount(tx, id);
    if (row.live_enabled === 1) return toAdminAccount(row);
    await tx.updateTable('accounts').set({ live_enabled: 1 }).where('id', '=', id).execute();
    return toAdminAccount({ ...row, live_enabled: 1 });
  });
  // Cached key lookups carry liveEnabled; drop them so the change shows at once in this process
  // (elsewhere it shows within the auth cache TTL).
  keyCache?.clear();
  return account;
}

type RawSettings = Record<string, unknown> & {
  fees?: Record<string, Record<string, number> | undefined>;
  settlementDelayDays?: Record<string, number>;
};

export async function updateAccountSettings(ctx: RequestContext, id: string, body: UpdateAccountSettingsRequest): Promise<AdminAccount> {
  return ctx.write(async (tx) => {
    const row = await loadAccount(tx, id);
    const raw = (row.settings ? JSON.parse(row.settings) : {}) as RawSettings;
    if (body.fees) {
      const fees = { ...(raw.fees ?? {}) };
      for (const method of ['pix', 'credit_card'] as const) {
        const patch = body.fees[method];
        if (patch) fees[method] = { ...(fees[method] ?? {}), ...patch };
      }
      raw.fees = fees;
    }
    if (body.settlementDelayDays) raw.settlementDelayDays = { ...(raw.settlementDelayDays ?? {}), ...body.settlementDelayDays };
    const settings = JSON.stringify(raw);
    // The schema already bounds every value; this is the same check the money code runs.
    parseSettings(settings);
    await tx.updateTable('accounts').set({ settings }).where('id', '=', id).execute();
    return toAdminAccount({ ...row, settings });
  });
}

// Sets (replaces) the merchant's payout bank account, validated as a recipient's, and releases
// its held settlements to payout in the same transaction.
export async function updatePayoutBankAccount(ctx: RequestContext, id: string, body: UpdatePayoutBankAccountRequest): Promise<AdminAccount> {
  const bankAccount = checkBankAccount(body.bankAccount);
  return ctx.write(async (tx) => {
    const row = await loadAccount(tx, id);
    const payout = JSON.stringify({ bankCode: bankAccount.bankCode, agency: bankAccount.agency, account: bankAccount.account, accountType: bankAccount.accountType });
    await tx.updateTable('accounts').set({ payout_bank_account: payout }).where('id', '=', id).execute();
    await releaseHeldSettlements(tx, id, bankAccount);
    return toAdminAccount({ ...row, payout_bank_account: payout });
  });
}

// Replaces the origins allowed to frame the account's hosted checkout: each checked and made
// canonical (lowercase, default port dropped), duplicates dropped.
export async function updateEmbedOrigins(ctx: RequestContext, id: string, body: UpdateEmbedOriginsRequest): Promise<AdminAccount> {
  const origins: string[] = [];
  body.origins.forEach((origin, i) => {
    let canonical: string;
    try {
      canonical = parseEmbedOrigin(origin);
    } catch (error) {
      if (error instanceof InvalidOrigin) throw validation(`origins[${i}] ${error.message}.`, `origins.${i}`);
      throw error;
    }
    if (!origins.includes(canonical)) origins.push(canonical);
  });
  return ctx.write(async (tx) => {
    const row = await loadAccount(tx, id);
    const embedOrigins = JSON.stringify(origins);
    await tx.updateTable('accounts').set({ embed_origins: embedOrigins }).where('id', '=', id).execute();
    return toAdminAccount({ ...row, embed_origins: embedOrigins });
  });
}

const idParam = (req: { params: unknown }) => (req.params as { id: string }).id;
async function accountSnapshot(tx: Tx, id: string): Promise<AdminAccount | null> {
  const row = await tx.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toAdminAccount(row) : null;
}

const audits = {
  activateLive: {
    action: 'account.activate_live', objectType: 'account', snapshot: accountSnapshot, objectId: idParam,
    reasonRequired: true, reasonHint: 'live mode lets the account take real money',
  },
  updateSettings: { action: 'account.update_settings', objectType: 'account', snapshot: accountSnapshot, objectId: idParam },
  // It decides where the merchant's money is paid (and pays out what was held for want of it):
  // a money-moving action.
  setPayoutBankAccount: {
    action: 'account.set_payout_bank_account', objectType: 'account', snapshot: accountSnapshot, objectId: idParam,
    reasonRequired: true, reasonHint: 'the payout bank account decides where the merchant\'s money is paid',
  },
  // Which sites may frame the payment page: a security setting, so it says why.
  setEmbedOrigins: {
    action: 'account.set_embed_origins', objectType: 'account', snapshot: accountSnapshot, objectId: idParam,
    reasonRequired: true, reasonHint: 'embed origins decide which sites may show the payment page in a frame',
  },
} satisfies Record<string, AuditSpec>;

const tags = ['Admin'];
const security = [{ adminSession: [] }];
const AccountIdParams = IdParams('Merchant account id (`acct_...`).');

export function adminAccountRoutes(scope: FastifyInstance, store: Store, keyCache?: KeyCache): void {
  scope.get<{ Querystring: ListAccountsQuery }>('/admin/accounts', {
    config: { auth: 'none', permission: 'accounts:view' },
    schema: {
      operationId: 'adminListAccounts', tags, security, summary: 'List merchant accounts',
      description: 'Every merchant account, newest first, with cursors. Filter by `liveEnabled`; `search` finds an account by id, or by a part of its name or email.',
      querystring: ListAccountsQuery,
      response: { 200: ref('AdminAccountList') },
    },
  }, (req) => listAccounts(store, req.query));

  scope.get<{ Params: { id: string } }>('/admin/accounts/:id', {
    config: { auth: 'none', permission: 'accounts:view' },
    schema: {
      operationId: 'adminGetAccount', tags, security, summary: 'Fetch a merchant account',
      description: 'The account with its effective settings: processing fee per method (`percentBps`, `fixedCents`) and `settlementDelayDays` per method, defaults filled in.',
      params: AccountIdParams,
      response: { 200: ref('AdminAccount') },
    },
  }, (req) => getAccount(store, req.params.id));

  scope.post<{ Params: { id: string }; Body: { reason: string } }>('/admin/accounts/:id/activate-live', {
    config: { auth: 'none', permission: 'accounts:activate_live', audit: audits.activateLive },
    schema: {
      operationId: 'adminActivateLiveMode', tags, security, summary: 'Activate live mode for an account',
      description: 'From now on the account\'s `sk_live_` / `pk_live_` keys work (until then they get PERMISSION_DENIED). Needs a `reason` (kept in the audit log): live mode takes real money. Activating an active account changes nothing.',
      headers: AdminMutationHeaders,
      params: AccountIdParams,
      body: ref('ActivateLiveModeRequest'),
      response: { 200: ref('AdminAccount') },
    },
  }, (req) => activateLiveMode(req.ctx, req.params.id, keyCache));

  scope.patch<{ Params: { id: string }; Body: UpdateAccountSettingsRequest }>('/admin/accounts/:id/settings', {
    config: { auth: 'none', permission: 'accounts:update', audit: audits.updateSettings },
    schema: {
      operationId: 'adminUpdateAccountSettings', tags, security, summary: 'Change an account\'s fees and settlement delays',
      description: 'Fees per method (`percentBps` 0-10000, `fixedCents` >= 0) and `settlementDelayDays` per method (0-365). Only the fields sent change. Applies to payments approved from now on.',
      headers: AdminMutationHeaders,
      params: AccountIdParams,
      body: ref('UpdateAccountSettingsRequest'),
      response: { 200: ref('AdminAccount') },
    },
  }, (req) => updateAccountSettings(req.ctx, req.params.id, req.body));

  scope.patch<{ Params: { id: string }; Body: UpdatePayoutBankAccountRequest }>('/admin/accounts/:id/payout-bank-account', {
    config: { auth: 'none', permission: 'accounts:set_payout_bank_account', audit: audits.setPayoutBankAccount },
    schema: {
      operationId: 'adminUpdatePayoutBankAccount', tags, security, summary: 'Set an account\'s payout bank account',
      description: 'Where the merchant\'s own settlements are paid, validated as a recipient\'s bank account (`bankCode` 3 digits, `agency` digits with an optional check digit, `account` digits, `-` and a check digit, `accountType`). Replaces the current one. Settlements that were `held` for want of it take it at once and go to payout (`settlement.updated` events); later settlements take it when they are made. Needs a `reason` (kept in the audit log): it decides where the merchant\'s money is paid.',
      headers: AdminMutationHeaders,
      params: AccountIdParams,
      body: ref('UpdatePayoutBankAccountRequest'),
      response: { 200: ref('AdminAccount') },
    },
  }, (req) => updatePayoutBankAccount(req.ctx, req.params.id, req.body));

  scope.put<{ Params: { id: string }; Body: UpdateEmbedOriginsRequest }>('/admin/accounts/:id/embed-origins', {
    config: { auth: 'none', permission: 'accounts:set_embed_origins', audit: audits.setEmbedOrigins },
    schema: {
      operationId: 'adminUpdateEmbedOrigins', tags, security, summary: 'Set the origins allowed to frame an account\'s hosted checkout',
      description: 'Replaces the list the hosted checkout page\'s `Content-Security-Policy: frame-ancestors` is built from, for the account\'s sandbox and live sessions alike. Exact origins (`https://loja.example`, `https://loja.example:8443`); http only for `localhost` / `127.0.0.1`, which may use `:*` for any port. Each invalid origin is a VALIDATION_ERROR naming it (`origins.N`). Needs a `reason` (kept in the audit log).',
      headers: AdminMutationHeaders,
      params: AccountIdParams,
      body: ref('UpdateEmbedOriginsRequest'),
      response: { 200: ref('AdminAccount') },
    },
  }, (req) => updateEmbedOrigins(req.ctx, req.params.id, req.body));
}

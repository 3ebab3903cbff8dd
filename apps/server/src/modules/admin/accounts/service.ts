import { sql, type Selectable } from 'kysely';
import type { Store, Tx } from '../../../store/index.js';
import type { AccountsTable } from '../../../store/schema.js';
import type { RequestContext } from '../../../plugins/idempotency.js';
import type { KeyCache } from '../../../plugins/auth.js';
import { ApiError, notFound, validation } from '../../../errors.js';
import { effectiveEmbedOrigins, InvalidOrigin, parseEmbedOrigin } from '../../../domain/embed-origins.js';
import { paginate, type Page } from '../../../http/pagination.js';
import { parseSettings } from '../../accounts/settings.js';
import type { AdminAccount, ListAccountsQuery, UpdateAccountSettingsRequest, UpdateEmbedOriginsRequest, UpdatePayoutBankAccountRequest } from './schemas.js';
import { insertAuditEntry, MAX_REASON_LENGTH, type AuditSpec } from '../shared/audit.js';
import { can, isAdminRole } from '../shared/permissions.js';
import { normalizeEmail } from '../users/service.js';
import { ulid } from '../../../domain/ids.js';
import { checkBankAccount, checkKeyHolder, checkPixKey } from '../../recipients/service.js';
import { isCpf, maskPixKey, type PixKey } from '../../../domain/pix-key.js';
import { maskCnpj, normalizeCnpj } from '../../../domain/cnpj.js';

// The payout account holder's document: a CPF (11 digits, check digits) or a CNPJ, canonical.
function checkHolderDocument(input: string): string {
  const digits = input.replace(/[./\-\s]/g, '');
  if (/^[0-9]{11}$/.test(digits) && isCpf(digits)) return digits;
  const cnpj = normalizeCnpj(input);
  if (cnpj) return cnpj;
  throw new ApiError('VALIDATION_ERROR', 'holderDocument must be a valid CPF (11 digits) or CNPJ (14 characters), check digits included; punctuation . / - is ignored.', { param: 'holderDocument' });
}
import { releaseHeldSettlements } from '../../settlements/service.js';

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
    payoutPixKey: row.payout_pix_key ? JSON.parse(row.payout_pix_key) : null,
    payoutHolderDocument: row.payout_holder_document === null ? null
      : row.payout_holder_document.length === 11 ? maskPixKey({ type: 'cpf', key: row.payout_holder_document }) : maskCnpj(row.payout_holder_document),
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
  const pixKey = body.pixKey ? checkPixKey(body.pixKey) : body.pixKey;
  const holder = typeof body.holderDocument === 'string' ? checkHolderDocument(body.holderDocument) : body.holderDocument;
  return ctx.write(async (tx) => {
    const row = await loadAccount(tx, id);
    const payout = JSON.stringify({ bankCode: bankAccount.bankCode, agency: bankAccount.agency, account: bankAccount.account, accountType: bankAccount.accountType });
    const payoutPixKey = pixKey === undefined ? row.payout_pix_key : pixKey === null ? null : JSON.stringify(pixKey);
    const holderDocument = holder === undefined ? row.payout_holder_document : holder;
    checkKeyHolder(payoutPixKey ? JSON.parse(payoutPixKey) as PixKey : null, holderDocument, 'the payout account\'s holderDocument');
    await tx.updateTable('accounts').set({ payout_bank_account: payout, payout_pix_key: payoutPixKey, payout_holder_document: holderDocument }).where('id', '=', id).execute();
    await releaseHeldSettlements(tx, id, bankAccount, ctx.clock.nowMs(), payoutPixKey);
    return toAdminAccount({ ...row, payout_bank_account: payout, payout_pix_key: payoutPixKey, payout_holder_document: holderDocument });
  });
}

// The audit hook runs for every admin route and sees params untyped; on these routes the params
// schema (AccountIdParams) has made them `{ id: string }`, which this checks instead of casting.
const idParam = (req: { params: unknown }): string => {
  const { params } = req;
  if (typeof params === 'object' && params !== null && 'id' in params && typeof params.id === 'string') return params.id;
  throw new Error('audit: an account route names its account in :id');
};
async function accountSnapshot(tx: Tx, id: string): Promise<AdminAccount | null> {
  const row = await tx.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toAdminAccount(row) : null;
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

export const accountAudit = {
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

// Live activation from the command line (`npm run cli -- accounts:activate-live`): the API's own
// activation (activateLiveMode) with the audit row its route writes (accountAudit.activateLive,
// the same action, snapshots and reason rule), in the change's transaction. The actor is an
// existing admin user whose role may activate live mode (as the route's permission requires);
// the row says it came from the command line where the API records an address and a browser.
export async function activateLiveModeFromCommandLine(
  store: Store, id: string, by: { adminEmail: string; reason: string; where: string },
): Promise<{ account: AdminAccount; auditEntryId: string }> {
  const spec = accountAudit.activateLive;
  const reason = by.reason.trim();
  if (reason.length === 0) throw validation(`reason is required: ${spec.reasonHint}.`, 'reason');
  if (reason.length > MAX_REASON_LENGTH) throw validation(`reason must be at most ${MAX_REASON_LENGTH} characters long.`, 'reason');
  const actor = await store.db.selectFrom('admin_users').select(['id', 'email', 'role']).where('email', '=', normalizeEmail(by.adminEmail)).executeTakeFirst();
  if (!actor || !isAdminRole(actor.role)) throw validation('admin must be the email of an existing admin user (npm run cli -- admin:create).', 'admin');
  if (!can(actor.role, 'accounts:activate_live')) {
    throw new ApiError('PERMISSION_DENIED', `The admin role of ${actor.email} (${actor.role}) does not allow this: it needs the accounts:activate_live permission.`);
  }
  const correlationId = `cli_${ulid(store.clock.nowMs())}`;
  let auditEntryId = '';
  const ctx: RequestContext = {
    accountId: `admin:${actor.id}`,
    livemode: false,
    correlationId,
    clock: store.clock,
    write: (op, options) => store.write(async (tx) => {
      const before = await accountSnapshot(tx, id);
      const result = await op(tx);
      auditEntryId = await insertAuditEntry(tx, {
        actor, action: spec.action, objectType: spec.objectType, objectId: id,
        before, after: await accountSnapshot(tx, id), reason,
        ip: 'command line', userAgent: by.where, correlationId,
      }, store.clock.nowMs());
      return result;
    }, options),
  };
  // No key cache to clear here: the servers' caches show the change within their TTL.
  const account = await activateLiveMode(ctx, id);
  return { account, auditEntryId };
}

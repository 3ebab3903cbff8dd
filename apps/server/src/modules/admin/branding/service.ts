import { createHash } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Store, Tx } from '../../../store/index.js';
import type { AccountBrandingTable } from '../../../store/schema.js';
import type { RequestContext } from '../../../plugins/idempotency.js';
import { notFound, validation } from '../../../errors.js';
import { contrastRatio, formatRatio, HEX_COLOR, WCAG_AA_NORMAL_TEXT } from '../../../domain/contrast.js';
import { LOGO_TYPES, MAX_DISPLAY_NAME_LENGTH, MAX_LOGO_BYTES, type CheckoutBranding, type LogoType, type UpdateCheckoutBrandingRequest } from './schemas.js';
import type { AuditSpec } from '../shared/audit.js';

type Row = Selectable<AccountBrandingTable>;

export const logoUrl = (sha256: string) => `/checkout/logos/${sha256}`;

export function toCheckoutBranding(accountId: string, row: Row | undefined): CheckoutBranding {
  return {
    object: 'checkout_branding',
    accountId,
    displayName: row?.display_name ?? null,
    accentColor: row?.accent_color ?? null,
    logo: row?.logo_sha256 && row.logo_type
      ? { contentType: row.logo_type, bytes: Number(row.logo_bytes), sha256: row.logo_sha256, url: logoUrl(row.logo_sha256) }
      : null,
    updatedAt: row?.updated_at ?? null,
    livemode: false,
  };
}

const readRow = (db: Store['db'] | Tx, accountId: string) => db.selectFrom('account_branding')
  .select(['account_id', 'display_name', 'accent_color', 'logo_type', 'logo_sha256', 'logo_bytes', 'updated_at'])
  .where('account_id', '=', accountId).executeTakeFirst() as Promise<Row | undefined>;

async function assertAccount(db: Store['db'] | Tx, id: string): Promise<void> {
  const row = await db.selectFrom('accounts').select('id').where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('account', 'id');
}

export async function getBranding(store: Store, accountId: string): Promise<CheckoutBranding> {
  await assertAccount(store.db, accountId);
  return toCheckoutBranding(accountId, await readRow(store.db, accountId));
}

// What the file says it is, by its first bytes: a logo is taken only when that is what was declared.
function sniff(bytes: Buffer): LogoType | null {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return null;
}

export function checkAccentColor(color: string): string {
  if (!HEX_COLOR.test(color)) throw validation(`accentColor must be a #rrggbb color, like #1d4ed8; got "${color.slice(0, 16)}".`, 'accentColor');
  const ratio = contrastRatio(color, '#ffffff');
  if (ratio < WCAG_AA_NORMAL_TEXT) {
    throw validation(
      `accentColor ${color} has a contrast of ${formatRatio(ratio)} against white; WCAG AA needs at least ${WCAG_AA_NORMAL_TEXT}:1 (the pay button's white text is drawn on it, and it colors text on the white page). Choose a darker shade.`,
      'accentColor',
    );
  }
  return color.toLowerCase();
}

export function checkLogo(logo: { contentType: string; dataBase64: string }): { type: LogoType; bytes: Buffer; base64: string; sha256: string } {
  if (!(LOGO_TYPES as readonly string[]).includes(logo.contentType)) {
    throw validation(`logo.contentType must be ${LOGO_TYPES.join(', ')}; ${logo.contentType.slice(0, 64)} is not taken${/svg/i.test(logo.contentType) ? ' (an SVG can carry scripts)' : ''}.`, 'logo.contentType');
  }
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(logo.dataBase64) || logo.dataBase64.length % 4 !== 0) {
    throw validation('logo.dataBase64 must be the image file in base64 (A-Z, a-z, 0-9, + and /, padded with =).', 'logo.dataBase64');
  }
  const bytes = Buffer.from(logo.dataBase64, 'base64');
  if (bytes.length > MAX_LOGO_BYTES) {
    throw validation(`The logo is ${bytes.length} bytes; at most ${MAX_LOGO_BYTES} bytes (${MAX_LOGO_BYTES / 1024} KiB) are taken. A logo is drawn 40 px high: export it smaller.`, 'logo.dataBase64');
  }
  const actual = sniff(bytes);
  if (actual !== logo.contentType) {
    throw validation(
      actual ? `The logo is declared ${logo.contentType} but the file is ${actual}.` : `The logo is not a PNG, JPEG or WebP file (its first bytes say otherwise).`,
      'logo.contentType',
    );
  }
  return { type: actual, bytes, base64: bytes.toString('base64'), sha256: createHash('sha256').update(bytes).digest('hex') };
}

export async function updateBranding(ctx: RequestContext, accountId: string, body: UpdateCheckoutBrandingRequest): Promise<CheckoutBranding> {
  // Everything is checked before anything is written: a refused field changes nothing.
  const accent = body.accentColor === undefined || body.accentColor === null ? body.accentColor : checkAccentColor(body.accentColor);
  const displayName = body.displayName === undefined || body.displayName === null ? body.displayName : body.displayName.trim();
  if (displayName === '') throw validation(`displayName must not be blank: 1-${MAX_DISPLAY_NAME_LENGTH} characters, or null for the account's name.`, 'displayName');
  const logo = body.logo === undefined || body.logo === null ? body.logo : checkLogo(body.logo);
  return ctx.write(async (tx) => {
    const nowIso = new Date(ctx.clock.nowMs()).toISOString();
    await assertAccount(tx, accountId);
    const before = await readRow(tx, accountId);
    const changes: Partial<AccountBrandingTable> = { updated_at: nowIso };
    if (displayName !== undefined) changes.display_name = displayName;
    if (accent !== undefined) changes.accent_color = accent;
    if (logo === null) Object.assign(changes, { logo_type: null, logo_base64: null, logo_sha256: null, logo_bytes: null });
    else if (logo) Object.assign(changes, { logo_type: logo.type, logo_base64: logo.base64, logo_sha256: logo.sha256, logo_bytes: logo.bytes.length });
    if (before) await tx.updateTable('account_branding').set(changes).where('account_id', '=', accountId).execute();
    else await tx.insertInto('account_branding').values({ account_id: accountId, display_name: null, accent_color: null, logo_type: null, logo_base64: null, logo_sha256: null, logo_bytes: null, ...changes, updated_at: nowIso }).execute();
    return toCheckoutBranding(accountId, await readRow(tx, accountId));
  });
}

// The hosted page's view of it.
export async function brandingForPage(db: Store['db'] | Tx, accountId: string): Promise<{ displayName: string | null; accentColor: string | null; logoUrl: string | null }> {
  const row = await readRow(db, accountId);
  return { displayName: row?.display_name ?? null, accentColor: row?.accent_color ?? null, logoUrl: row?.logo_sha256 ? logoUrl(row.logo_sha256) : null };
}

export async function readLogo(store: Store, sha256: string): Promise<{ type: string; body: Buffer } | null> {
  const row = await store.db.selectFrom('account_branding').select(['logo_type', 'logo_base64']).where('logo_sha256', '=', sha256).executeTakeFirst();
  if (!row?.logo_type || !row.logo_base64) return null;
  return { type: row.logo_type, body: Buffer.from(row.logo_base64, 'base64') };
}

const accountParam = (req: { params: unknown }) => (req.params as { id?: string }).id;
export const brandingAudit = {
  update: {
    action: 'account.update_checkout_branding', objectType: 'account', objectId: accountParam,
    snapshot: async (tx: Tx, id: string) => {
      const row = await readRow(tx, id);
      return row ? toCheckoutBranding(id, row) : null;
    },
  },
} satisfies Record<string, AuditSpec>;

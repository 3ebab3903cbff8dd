import type { Selectable } from 'kysely';
import type { RecipientsTable } from '../../store/schema.js';
import type { Store, Tx } from '../../store/index.js';
import type { RequestContext } from '../../plugins/idempotency.js';
import { notFound, validation } from '../../errors.js';
import { newId } from '../../domain/ids.js';
import { normalizeCnpj } from '../../domain/cnpj.js';
import { validateBankAccount, type BankAccount, type BankAccountType } from '../../domain/bank-account.js';
import { participantByCode } from '../../domain/banks.js';
import { validatePixKey, type PixKey, type PixKeyType } from '../../domain/pix-key.js';
import { canonicalJson } from '../../domain/canonical-json.js';
import { paginate } from '../../http/pagination.js';
import { recordEvent, type Owner } from '../events/service.js';
import type { CreateRecipientBody, ListRecipientsQuery, Recipient, UpdateRecipientBody } from './schemas.js';

export type RecipientRow = Selectable<RecipientsTable>;

export function toRecipient(row: RecipientRow): Recipient {
  return {
    id: row.id,
    object: 'recipient',
    name: row.name,
    document: row.document,
    bankAccount: {
      bankCode: row.bank_code,
      agency: row.agency,
      account: row.account,
      accountType: row.account_type as BankAccountType,
    },
    pixKey: row.pix_key && row.pix_key_type ? { type: row.pix_key_type as PixKeyType, key: row.pix_key } : null,
    metadata: row.metadata ? JSON.parse(row.metadata) : {},
    livemode: row.livemode === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function findRecipient(db: Store['db'] | Tx, owner: Owner, id: string): Promise<RecipientRow | undefined> {
  return db.selectFrom('recipients').selectAll()
    .where('id', '=', id).where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0)
    .executeTakeFirst();
}

// Another account's or the other mode's recipient is as absent as a made-up id. Split rules use
// it to check that a recipient belongs to the rule's account; pass `param` to name the field.
export async function loadRecipient(db: Store['db'] | Tx, owner: Owner, id: string, param = 'id'): Promise<RecipientRow> {
  const row = await findRecipient(db, owner, id);
  if (!row) throw notFound('recipient', param);
  return row;
}

// Canonical CNPJ or a VALIDATION_ERROR naming `param`. Messages say what is wrong, never echo
// the value.
export function checkDocument(input: string, param = 'document'): string {
  const canonical = normalizeCnpj(input);
  if (canonical) return canonical;
  const stripped = input.replace(/[./\-\s]/g, '').toUpperCase();
  if (stripped.length !== 14) throw validation(`${param} must be a CNPJ of 14 characters (punctuation . / - is ignored).`, param);
  if (!/^[0-9A-Z]{12}/.test(stripped)) throw validation(`${param} must contain only digits and letters (punctuation . / - is ignored).`, param);
  if (!/[0-9]{2}$/.test(stripped)) throw validation(`${param} must end in 2 check digits (digits, not letters).`, param);
  throw validation(`${param} is not a valid CNPJ: the check digits do not match.`, param);
}

// Also the merchant account's payout bank account (admin API): validated the same way. The bank
// code must be a participant of the Banco Central's list (domain/banks.ts): a payout by Pix to a
// bank account is addressed by the bank's ISPB, which only the list gives.
export function checkBankAccount(input: unknown, param = 'bankAccount'): BankAccount {
  const result = validateBankAccount(input);
  if (result.ok) {
    if (!participantByCode(result.value.bankCode)) throw validation(`${param}.bankCode is not a bank in the Banco Central's list of participants (STR).`, `${param}.bankCode`);
    return result.value;
  }
  // The first problem names the field; all of them are in `details` when there are several.
  const [first] = result.errors;
  const details = result.errors.length > 1 ? result.errors.map((e) => ({ param: e.param, issue: e.message })) : undefined;
  throw validation(`${first.param} ${first.message}.`, first.param, details);
}

// A Pix key validated as the DICT defines it (domain/pix-key.ts), canonical.
export function checkPixKey(input: { type: string; key: string }, param = 'pixKey'): PixKey {
  const result = validatePixKey(input.type, input.key);
  if (!result.ok) throw validation(`${param}.key ${result.message}.`, `${param}.key`);
  return result.value;
}

// Our holder check (issue 26): a CPF or CNPJ Pix key is its holder's document, so it must be the
// payee's own (the recipient's CNPJ, or the merchant's payout holder document). An e-mail, phone
// or random key cannot be checked here: the PSP checks it against the document we send.
export function checkKeyHolder(pixKey: PixKey | null, holderDocument: string | null, whose: string, param = 'pixKey'): void {
  if (!pixKey || !holderDocument || (pixKey.type !== 'cpf' && pixKey.type !== 'cnpj')) return;
  if (pixKey.key !== holderDocument) {
    throw validation(`${param}.key is a ${pixKey.type.toUpperCase()} Pix key of someone else: a CPF or CNPJ key must be ${whose} (payouts go only to accounts the payee holds).`, `${param}.key`);
  }
}

function checkName(name: string): string {
  if (name.trim() === '') throw validation('name must not be blank.', 'name');
  return name;
}

// The shared Metadata schema bounds values and the key count; its key-length bound is lost in
// TypeBox's Record (patternProperties), so it is checked here.
const MAX_METADATA_KEY = 40;

function metadataColumn(metadata: Record<string, string> | undefined): string | null {
  if (metadata && Object.keys(metadata).some((key) => key.length > MAX_METADATA_KEY)) {
    throw validation(`metadata keys must be at most ${MAX_METADATA_KEY} characters.`, 'metadata');
  }
  return metadata && Object.keys(metadata).length > 0 ? JSON.stringify(metadata) : null;
}

export async function createRecipient(ctx: RequestContext, body: CreateRecipientBody): Promise<Recipient> {
  const name = checkName(body.name);
  const document = checkDocument(body.document);
  const bankAccount = checkBankAccount(body.bankAccount);
  const pixKey = body.pixKey ? checkPixKey(body.pixKey) : null;
  checkKeyHolder(pixKey, document, 'the recipient\'s own CNPJ (document)');
  const nowMs = ctx.clock.nowMs();
  const nowIso = new Date(nowMs).toISOString();
  const row: RecipientRow = {
    id: newId('recipient', nowMs),
    account_id: ctx.accountId,
    livemode: ctx.livemode ? 1 : 0,
    name,
    document,
    bank_code: bankAccount.bankCode,
    agency: bankAccount.agency,
    account: bankAccount.account,
    account_type: bankAccount.accountType,
    pix_key_type: pixKey?.type ?? null,
    pix_key: pixKey?.key ?? null,
    metadata: metadataColumn(body.metadata as Record<string, string> | undefined),
    created_at: nowIso,
    updated_at: nowIso,
  };
  return ctx.write(async (tx) => {
    await tx.insertInto('recipients').values(row).execute();
    const resource = toRecipient(row);
    await recordEvent(tx, ctx, 'recipient.created', resource, nowMs);
    return resource;
  });
}

export async function getRecipient(store: Store, owner: Owner, id: string): Promise<Recipient> {
  return toRecipient(await loadRecipient(store.db, owner, id));
}

export async function listRecipients(store: Store, owner: Owner, query: ListRecipientsQuery) {
  const scope = store.db.selectFrom('recipients').selectAll()
    .where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0);
  let qb = scope;
  if (query.document !== undefined) qb = qb.where('document', '=', checkDocument(query.document));
  if (query.name !== undefined) qb = qb.where('name', '=', query.name);
  return paginate(qb, query, toRecipient, scope);
}

// Partial update: only the fields sent change. `bankAccount` and `metadata` are replaced whole.
// A request that changes nothing answers the recipient as it is, without an event.
export async function updateRecipient(ctx: RequestContext, id: string, body: UpdateRecipientBody): Promise<Recipient> {
  if (body.name === undefined && body.bankAccount === undefined && body.pixKey === undefined && body.metadata === undefined) {
    throw validation('Send at least one of name, bankAccount, pixKey, metadata.');
  }
  const changes: Partial<RecipientRow> = {};
  if (body.name !== undefined) changes.name = checkName(body.name);
  if (body.bankAccount !== undefined) {
    const bankAccount = checkBankAccount(body.bankAccount);
    changes.bank_code = bankAccount.bankCode;
    changes.agency = bankAccount.agency;
    changes.account = bankAccount.account;
    changes.account_type = bankAccount.accountType;
  }
  if (body.pixKey !== undefined) {
    const pixKey = body.pixKey === null ? null : checkPixKey(body.pixKey);
    changes.pix_key_type = pixKey?.type ?? null;
    changes.pix_key = pixKey?.key ?? null;
  }
  if (body.metadata !== undefined) changes.metadata = metadataColumn(body.metadata as Record<string, string>);
  return ctx.write(async (tx) => {
    const row = await loadRecipient(tx, ctx, id);
    if (changes.pix_key && changes.pix_key_type) checkKeyHolder({ type: changes.pix_key_type as PixKeyType, key: changes.pix_key }, row.document, 'the recipient\'s own CNPJ (document)');
    const changed = (Object.keys(changes) as Array<keyof RecipientRow>).filter((column) =>
      column === 'metadata'
        ? canonicalJson(row.metadata ? JSON.parse(row.metadata) : {}) !== canonicalJson(changes.metadata ? JSON.parse(changes.metadata) : {})
        : row[column] !== changes[column]);
    if (changed.length === 0) return toRecipient(row);
    const nowMs = ctx.clock.nowMs();
    const set: Partial<RecipientRow> = { updated_at: new Date(nowMs).toISOString() };
    for (const column of changed) (set as Record<string, unknown>)[column] = changes[column];
    await tx.updateTable('recipients').set(set).where('id', '=', row.id).execute();
    const resource = toRecipient({ ...row, ...set });
    await recordEvent(tx, ctx, 'recipient.updated', resource, nowMs);
    return resource;
  });
}

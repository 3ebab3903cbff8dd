import { sql } from 'kysely';
import type { Store } from '../../../store/index.js';
import { ID_PREFIXES, idFloor, type IdKind } from '../../../domain/ids.js';
import { normalizeCnpj } from '../../../domain/cnpj.js';
import { maskDocument } from '../accounts/views.js';
import { MAX_SEARCH_RESULTS, SEARCH_PAYMENT_WINDOW_DAYS, type AdminSearchResult, type AdminSearchResults } from './schemas.js';

// One search box for the back office. The query is read as one thing, by its shape, and looked
// up where that thing lives, through an index or a bounded id range:
// - an id with a known prefix: its table's primary key;
// - 14 letters/digits (a CNPJ, punctuation ignored): recipients by document. Payers' CPF/CNPJ are
//   stored masked (never in clear), so they cannot be searched;
// - an e-mail: merchant accounts, and payers of the payments of the last 90 days;
// - four digits and an amount: card payments of the last 90 days;
// - anything else: merchant accounts by name.

type Kind = 'account' | 'payment' | 'refund' | 'recipient' | 'split_rule' | 'receivable' | 'settlement' | 'settlement_run' | 'webhook_endpoint' | 'checkout_session';
const BY_PREFIX: Array<[IdKind, Kind]> = [
  ['payment', 'payment'], ['refund', 'refund'], ['recipient', 'recipient'], ['splitRule', 'split_rule'], ['receivable', 'receivable'],
  ['settlement', 'settlement'], ['settlementRun', 'settlement_run'], ['webhookEndpoint', 'webhook_endpoint'], ['checkoutSession', 'checkout_session'], ['account', 'account'],
];

// "100", "100,5", "1.234,56" (pt-BR) or "1234.56": reais to centavos, exactly; null otherwise.
export function parseReais(text: string): number | null {
  const s = text.replace(/^R\$\s*/i, '').trim();
  let parts: string[];
  if (/^\d{1,3}(\.\d{3})*(,\d{1,2})?$/.test(s) || /^\d+(,\d{1,2})?$/.test(s)) parts = s.replace(/\./g, '').split(',');
  else if (/^\d+\.\d{2}$/.test(s)) parts = s.split('.');
  else return null;
  const [whole, cents = ''] = parts;
  const value = Number(whole) * 100 + Number(cents.padEnd(2, '0') || '0');
  return Number.isSafeInteger(value) ? value : null;
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export async function adminSearch(store: Store, q: string, nowMs: number): Promise<AdminSearchResults> {
  const query = q.trim();
  const db = store.db;
  const results: AdminSearchResult[] = [];
  const base = { object: 'search_result', accountName: null, livemode: false, amount: null, status: null, parentId: null, createdAt: null } as const;
  const recentPayments = () => db.selectFrom('payments').selectAll().where('id', '>=', idFloor('payment', nowMs - SEARCH_PAYMENT_WINDOW_DAYS * 86_400_000));
  const payment = (p: { id: string; account_id: string; livemode: number; amount: number; status: string; method: string; card_last4: string | null; created_at: string }): AdminSearchResult => ({
    ...base, type: 'payment', id: p.id, accountId: p.account_id, livemode: p.livemode === 1, amount: p.amount, status: p.status, createdAt: p.created_at,
    label: p.method === 'pix' ? 'Pix' : `Cartão •••• ${p.card_last4 ?? '????'}`,
  });
  let interpretedAs: AdminSearchResults['interpretedAs'] = 'name';

  const prefixed = BY_PREFIX.find(([k]) => query.startsWith(ID_PREFIXES[k]));
  const card = /^(\d{4})\s+(.+)$/.exec(query);
  const document = /^[0-9A-Za-z./\-\s]{14,20}$/.test(query) && /\d/.test(query) ? normalizeCnpj(query) : null;
  if (prefixed && /^[a-z]+_[0-9a-z]{1,64}$/.test(query)) {
    interpretedAs = 'id';
    const [, kind] = prefixed;
    const id = query;
    if (kind === 'payment') {
      const p = await db.selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirst();
      if (p) results.push(payment(p));
    } else if (kind === 'refund') {
      const r = await db.selectFrom('refunds').selectAll().where('id', '=', id).executeTakeFirst();
      if (r) results.push({ ...base, type: 'refund', id, accountId: r.account_id, livemode: r.livemode === 1, amount: r.amount, status: r.status, parentId: r.payment_id, createdAt: r.created_at, label: `Reembolso de ${r.payment_id}` });
    } else if (kind === 'recipient') {
      const r = await db.selectFrom('recipients').selectAll().where('id', '=', id).executeTakeFirst();
      if (r) results.push({ ...base, type: 'recipient', id, accountId: r.account_id, livemode: r.livemode === 1, createdAt: r.created_at, label: `${r.name} · ${maskDocument(r.document)}` });
    } else if (kind === 'split_rule') {
      const r = await db.selectFrom('split_rules').selectAll().where('id', '=', id).executeTakeFirst();
      if (r) results.push({ ...base, type: 'split_rule', id, accountId: r.account_id, livemode: r.livemode === 1, status: r.active ? 'active' : 'inactive', createdAt: r.created_at, label: r.description ?? id });
    } else if (kind === 'receivable') {
      const r = await db.selectFrom('receivables').selectAll().where('id', '=', id).executeTakeFirst();
      if (r) results.push({ ...base, type: 'receivable', id, accountId: r.account_id, livemode: r.livemode === 1, amount: r.amount, status: r.status, parentId: r.payment_id, createdAt: r.created_at, label: `${r.payee_type === 'merchant' ? 'Lojista' : r.payee_id} · ${r.available_on}` });
    } else if (kind === 'settlement') {
      const r = await db.selectFrom('settlements').selectAll().where('id', '=', id).executeTakeFirst();
      if (r) results.push({ ...base, type: 'settlement', id, accountId: r.account_id, livemode: r.livemode === 1, amount: r.amount, status: r.status, parentId: r.run_id, createdAt: r.created_at, label: `${r.payee_type === 'merchant' ? 'Lojista' : r.payee_id} · ${r.settlement_date}` });
    } else if (kind === 'settlement_run') {
      const r = await db.selectFrom('settlement_runs').selectAll().where('id', '=', id).executeTakeFirst();
      if (r) results.push({ ...base, type: 'settlement_run', id, accountId: null, amount: r.total_amount, status: r.status, createdAt: r.started_at, label: `Liquidação de ${r.run_date}` });
    } else if (kind === 'webhook_endpoint') {
      const r = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
      if (r) results.push({ ...base, type: 'webhook_endpoint', id, accountId: r.account_id, livemode: r.livemode === 1, status: r.enabled ? 'enabled' : 'disabled', createdAt: r.created_at, label: r.url });
    } else if (kind === 'checkout_session') {
      const r = await db.selectFrom('checkout_sessions').selectAll().where('id', '=', id).executeTakeFirst();
      if (r) results.push({ ...base, type: 'checkout_session', id, accountId: r.account_id, livemode: r.livemode === 1, amount: r.amount, status: r.status, parentId: r.payment_id, createdAt: r.created_at, label: r.description ?? id });
    } else if (kind === 'account') {
      const r = await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
      if (r) results.push({ ...base, type: 'account', id, accountId: id, accountName: r.name, createdAt: r.created_at, label: r.email ? `${r.name} · ${r.email}` : r.name });
    }
  } else if (document) {
    interpretedAs = 'document';
    const rows = await db.selectFrom('recipients').selectAll().where('document', '=', document).orderBy('id', 'desc').limit(MAX_SEARCH_RESULTS).execute();
    for (const r of rows) results.push({ ...base, type: 'recipient', id: r.id, accountId: r.account_id, livemode: r.livemode === 1, createdAt: r.created_at, label: `${r.name} · ${maskDocument(r.document)}` });
  } else if (/^[^\s@]+@[^\s@]+$/.test(query)) {
    interpretedAs = 'email';
    const email = query.toLowerCase();
    const accounts = await db.selectFrom('accounts').selectAll().where(sql`lower(email)`, '=', email).orderBy('id', 'desc').limit(MAX_SEARCH_RESULTS).execute();
    for (const a of accounts) results.push({ ...base, type: 'account', id: a.id, accountId: a.id, accountName: a.name, createdAt: a.created_at, label: `${a.name} · ${a.email}` });
    // The customer JSON holds the e-mail as sent; matched case-insensitively on its JSON text.
    const payers = await recentPayments().where(sql`lower(customer)`, 'like', sql`${`%"email":"${escapeLike(JSON.stringify(email).slice(1, -1))}"%`} escape '\\'`)
      .orderBy('id', 'desc').limit(MAX_SEARCH_RESULTS - results.length).execute();
    for (const p of payers) results.push(payment(p));
  } else if (card && parseReais(card[2]) !== null) {
    interpretedAs = 'card';
    const rows = await recentPayments().where('card_last4', '=', card[1]).where('amount', '=', parseReais(card[2]) as number)
      .orderBy('id', 'desc').limit(MAX_SEARCH_RESULTS).execute();
    for (const p of rows) results.push(payment(p));
  } else {
    const rows = await db.selectFrom('accounts').selectAll().where(sql`lower(name)`, 'like', sql`${`%${escapeLike(query.toLowerCase())}%`} escape '\\'`)
      .orderBy('id', 'desc').limit(MAX_SEARCH_RESULTS).execute();
    for (const a of rows) results.push({ ...base, type: 'account', id: a.id, accountId: a.id, accountName: a.name, createdAt: a.created_at, label: a.email ? `${a.name} · ${a.email}` : a.name });
  }
  // Every result carries its merchant's name.
  const ids = [...new Set(results.map((r) => r.accountId).filter((id): id is string => id !== null))];
  if (ids.length > 0) {
    const names = new Map((await db.selectFrom('accounts').select(['id', 'name']).where('id', 'in', ids).execute()).map((a) => [a.id, a.name]));
    for (const r of results) if (r.accountId) r.accountName = names.get(r.accountId) ?? null;
  }
  return { object: 'list', query, interpretedAs, data: results };
}

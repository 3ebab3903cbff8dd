import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../store/schema.js';
import type { Keyring } from './secrets/envelope.js';
import type { CardConnector, CardSecrets, CardSettings, OpenedCardAccount, OpenedConnectorAccount, PayoutConnector, PixConnector } from './connector.js';
import { openAccount, readConnectorAccount, resolveConnectorAccount, type ConnectorAccountRow } from './accounts.js';
import { PixApiConnector } from './pix-api/connector.js';
import { EfiPayoutConnector } from './efi-payout/connector.js';
import { AdyenConnector } from './adyen/connector.js';
import { adyenClientEncryption, type CardClientEncryption } from './adyen/client-side.js';

// The registry: which connector implements a connector account's `connector`, and which
// connector account serves a (merchant account, mode, method). The in-house sandbox is what test
// mode uses when no homologation account is configured (sandbox.ts: cards; the sandbox Pix is a
// local BR Code paid through /v1/sandbox/payments/{id}/pay); live mode never reaches it.

export interface ResolvedPix {
  row: ConnectorAccountRow;
  account: OpenedConnectorAccount;
  connector: PixConnector;
}

export interface ResolvedPayout {
  row: ConnectorAccountRow;
  account: OpenedConnectorAccount;
  connector: PayoutConnector;
}

export interface ResolvedCard {
  row: ConnectorAccountRow;
  account: OpenedCardAccount;
  connector: CardConnector;
}

export class ConnectorRegistry {
  private readonly pix: Record<string, PixConnector>;
  // Payout connectors by the Pix connector account's dialect that sends them (issue 26): Efí's
  // send-Pix API for `efi`. Another PSP's payouts are one more entry (and folder).
  private readonly payouts: Record<string, PayoutConnector>;

  // Card acquirers by connector name (issue 27): Adyen's Checkout API for `adyen`.
  private readonly card: Record<string, CardConnector>;

  // Which connector account serves a (merchant account, mode, method), as last read, for at most
  // resolveTtlMs: every payment create asks, test mode included (a homologation account may serve
  // it), and nearly always gets "none", so reading connector_accounts each time cost a round trip
  // per POST /v1/payments on PostgreSQL (issue 30's bench: 0.46-0.48 of the ceiling before, 0.33
  // with it). A change made through this process's admin routes clears it at once (clearResolved);
  // one made elsewhere (another instance, the CLI's rewrap) is seen within the TTL, as API keys are
  // (AUTH_CACHE_TTL_MS). 0 turns it off. Bounded: a full map is emptied, not grown.
  private readonly resolved = new Map<string, { row: ConnectorAccountRow | null; expiresAtMs: number }>();
  private static readonly RESOLVED_MAX_ENTRIES = 10_000;
  resolveTtlMs = 0;

  constructor(readonly keyring: Keyring | null, readonly clock: Clock, pix?: Record<string, PixConnector>, payouts?: Record<string, PayoutConnector>, card?: Record<string, CardConnector>) {
    this.pix = pix ?? { pix_api: new PixApiConnector(clock) };
    this.payouts = payouts ?? { efi: new EfiPayoutConnector(clock) };
    this.card = card ?? { adyen: new AdyenConnector(clock) };
  }

  clearResolved(): void {
    this.resolved.clear();
  }

  private async resolveRow(db: Kysely<Database>, owner: { accountId: string; livemode: boolean }, method: 'pix' | 'card'): Promise<ConnectorAccountRow | null> {
    if (this.resolveTtlMs <= 0) return resolveConnectorAccount(db, owner, method);
    const key = `${method} ${owner.livemode ? 'live' : 'test'} ${owner.accountId}`;
    const nowMs = this.clock.nowMs();
    const hit = this.resolved.get(key);
    if (hit && hit.expiresAtMs > nowMs) return hit.row;
    const row = await resolveConnectorAccount(db, owner, method);
    if (this.resolved.size >= ConnectorRegistry.RESOLVED_MAX_ENTRIES) this.resolved.clear();
    this.resolved.set(key, { row, expiresAtMs: nowMs + this.resolveTtlMs });
    return row;
  }

  // Which connector account pays settlements out in a mode: the platform's own Pix connector
  // account (no owner) whose PSP has a payout connector, `production` for live settlements,
  // `homologation` for test ones. null: none (test mode pays through the sandbox).
  async resolvePayout(db: Kysely<Database>, livemode: boolean): Promise<ResolvedPayout | null> {
    const rows = await db.selectFrom('connector_accounts').selectAll()
      .where('method', '=', 'pix').where('environment', '=', livemode ? 'production' : 'homologation').where('status', '=', 'active')
      .where('owner_account_id', 'is', null).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    const row = rows.find((r) => this.payouts[(JSON.parse(r.settings) as { dialect?: string }).dialect ?? '']);
    return row ? this.openedPayout(row) : null;
  }

  async payoutForAccount(db: Kysely<Database>, connectorAccountId: string): Promise<ResolvedPayout> {
    const row = await readConnectorAccount(db, connectorAccountId);
    if (!row) throw new Error(`connector account ${connectorAccountId} is gone`);
    return this.openedPayout(row);
  }

  openedPayout(row: ConnectorAccountRow): ResolvedPayout {
    const dialect = (JSON.parse(row.settings) as { dialect?: string }).dialect ?? '';
    const connector = this.payouts[dialect];
    if (!connector) throw new Error(`no payout connector for the ${dialect} dialect`);
    return { row, account: openAccount(this.keyring, row), connector };
  }

  payoutConnectors(): PayoutConnector[] {
    return Object.values(this.payouts);
  }

  cardConnector(name: string): CardConnector {
    const connector = this.card[name];
    if (!connector) throw new Error(`no card connector named ${name}`);
    return connector;
  }

  // The card connector account for a new payment; null: the sandbox (test mode) or none (live
  // mode: the caller refuses).
  async resolveCard(db: Kysely<Database>, owner: { accountId: string; livemode: boolean }): Promise<ResolvedCard | null> {
    const row = await this.resolveRow(db, owner, 'card');
    return row ? this.openedCard(row) : null;
  }

  // What the hosted page needs to encrypt card fields in the buyer's browser: live mode with a
  // card acquirer that has a client key; null otherwise (the sandbox page takes test cards).
  // Reads settings only, never the sealed secrets.
  async cardClientEncryption(db: Kysely<Database>, owner: { accountId: string; livemode: boolean }): Promise<CardClientEncryption | null> {
    if (!owner.livemode) return null;
    // The same (cached) resolution as a payment's: the page encrypts for the account that will
    // authorize.
    const row = await this.resolveRow(db, owner, 'card');
    if (!row || row.connector !== 'adyen') return null;
    return adyenClientEncryption(JSON.parse(row.settings) as CardSettings, row.environment);
  }

  async forCardAccount(db: Kysely<Database>, connectorAccountId: string): Promise<ResolvedCard> {
    const row = await readConnectorAccount(db, connectorAccountId);
    if (!row) throw new Error(`connector account ${connectorAccountId} is gone`);
    return this.openedCard(row);
  }

  openedCard(row: ConnectorAccountRow): ResolvedCard {
    return { row, account: openAccount<CardSettings, CardSecrets>(this.keyring, row), connector: this.cardConnector(row.connector) };
  }

  pixConnector(name: string): PixConnector {
    const connector = this.pix[name];
    if (!connector) throw new Error(`no Pix connector named ${name}`);
    return connector;
  }

  // The connector account for a new payment; null: the sandbox (test mode) or none (live mode:
  // the caller refuses).
  async resolvePix(db: Kysely<Database>, owner: { accountId: string; livemode: boolean }): Promise<ResolvedPix | null> {
    const row = await this.resolveRow(db, owner, 'pix');
    return row ? this.opened(row) : null;
  }

  // The connector account a payment was made with (even if disabled since: its charge is still
  // synced and refunded there).
  async forAccount(db: Kysely<Database>, connectorAccountId: string): Promise<ResolvedPix> {
    const row = await readConnectorAccount(db, connectorAccountId);
    if (!row) throw new Error(`connector account ${connectorAccountId} is gone`);
    return this.opened(row);
  }

  opened(row: ConnectorAccountRow): ResolvedPix {
    return { row, account: openAccount(this.keyring, row), connector: this.pixConnector(row.connector) };
  }

  close(): void {
    for (const c of [...Object.values(this.pix), ...Object.values(this.payouts)]) (c as { close?: () => void }).close?.();
  }
}

import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../store/schema.js';
import type { Keyring } from './secrets/envelope.js';
import type { OpenedConnectorAccount, PixConnector } from './connector.js';
import { openAccount, readConnectorAccount, resolveConnectorAccount, type ConnectorAccountRow } from './accounts.js';
import { PixApiConnector } from './pix-api/connector.js';

// The registry: which connector implements a connector account's `connector`, and which
// connector account serves a (merchant account, mode, method). The in-house sandbox is what test
// mode uses when no homologation account is configured (sandbox.ts: cards; the sandbox Pix is a
// local BR Code paid through /v1/sandbox/payments/{id}/pay); live mode never reaches it.

export interface ResolvedPix {
  row: ConnectorAccountRow;
  account: OpenedConnectorAccount;
  connector: PixConnector;
}

export class ConnectorRegistry {
  private readonly pix: Record<string, PixConnector>;

  constructor(readonly keyring: Keyring | null, readonly clock: Clock, pix?: Record<string, PixConnector>) {
    this.pix = pix ?? { pix_api: new PixApiConnector(clock) };
  }

  pixConnector(name: string): PixConnector {
    const connector = this.pix[name];
    if (!connector) throw new Error(`no Pix connector named ${name}`);
    return connector;
  }

  // The connector account for a new payment; null: the sandbox (test mode) or none (live mode:
  // the caller refuses).
  async resolvePix(db: Kysely<Database>, owner: { accountId: string; livemode: boolean }): Promise<ResolvedPix | null> {
    const row = await resolveConnectorAccount(db, owner, 'pix');
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
    for (const c of Object.values(this.pix)) (c as { close?: () => void }).close?.();
  }
}

// A fake PSP (Pix receiving bank) for tests: the Banco Central's API Pix over mutual TLS on
// 127.0.0.1, driven by the vendored contract (pix-api/openapi.yaml, patched as pix-api/NOTICE
// says). Every request is checked against the contract before anything else happens, and every
// answer the fake gives (and every callback it sends) is checked against it too: an answer off
// the contract is recorded in `contractViolations` and sent as a 500, so a test notices.
// State lives in memory: charges (cob), received Pix, devoluções, webhooks, OAuth2 clients and
// tokens. Time comes from a Clock (token expiry, charge expiry, timestamps).
// The test-control API (plain methods, not HTTP) plays the payer, the payer's bank (MED
// returns) and the network (faults). See README.md beside this file.
import { createServer, request as httpsRequest, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { systemClock, type Clock, type ClockTimer } from '../../src/clock.js';
import { createPki, type KeyPair, type Pki } from './pki.js';
import { pixApiContract, type Operation, type PixApiContract, type Violation } from './pix-api/contract.js';

export type Dialect = 'standard' | 'efi';

export const ALL_SCOPES = ['cob.write', 'cob.read', 'pix.write', 'pix.read', 'webhook.write', 'webhook.read'] as const;
export type Scope = (typeof ALL_SCOPES)[number] | (string & {});

/** The dialects' differences: where the API lives, how a token is asked for. */
export const DIALECTS: Record<Dialect, { basePath: string; tokenPath: string; tokenBody: 'form' | 'json' }> = {
  // bacen/pix-api: paths at the API's root, OAuth2 client credentials (RFC 6749 section 4.4:
  // form-encoded body, client authenticated with HTTP Basic).
  standard: { basePath: '', tokenPath: '/oauth/token', tokenBody: 'form' },
  // Efí Pay (efipay/sdk-node-apis-efi, src/lib/constants.js and endpoints.js): paths under /v2,
  // token at /oauth/token with Basic auth and a JSON body {"grant_type":"client_credentials"};
  // PUT /v2/webhook/:chave takes `x-skip-mtls-checking`.
  efi: { basePath: '/v2', tokenPath: '/oauth/token', tokenBody: 'json' },
};

const ERROR_BASE = 'https://pix.bcb.gov.br/api/v2/error/';
const PSP_ISPB = '99999008';
const MAX_BODY_BYTES = 1_000_000;
const REFUND_WINDOW_MS = 90 * 24 * 3600 * 1000;

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  scopes: string[];
  /** The client certificate this client must present (tokens are bound to it, RFC 8705). */
  cert: string;
  key: string;
  fingerprint256: string;
  /** The CA that signed the fake's server certificate (what a client must trust). */
  ca: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  correlationId?: string;
  violacoes?: { razao: string; propriedade: string; valor?: string }[];
}

export interface Cob {
  txid: string;
  revisao: number;
  criacaoMs: number;
  expiracaoS: number;
  status: 'ATIVA' | 'CONCLUIDA' | 'REMOVIDA_PELO_USUARIO_RECEBEDOR' | 'REMOVIDA_PELO_PSP';
  chave: string;
  valor: { original: string; modalidadeAlteracao?: number };
  devedor?: Record<string, string>;
  solicitacaoPagador?: string;
  infoAdicionais?: { nome: string; valor: string }[];
  loc: { id: number; location: string; tipoCob: 'cob'; criacaoMs: number };
  /** e2eids of the Pix received for this charge. */
  pix: string[];
  /** Set by expire(): the charge counts as expired from then on, whatever its calendar says. */
  expiredAtMs?: number;
  history: Record<string, unknown>[];
}

export interface Devolucao {
  id: string;
  rtrId: string;
  valor: string;
  natureza?: 'ORIGINAL' | 'RETIRADA' | 'MED_OPERACIONAL' | 'MED_FRAUDE' | 'MED_PIX_AUTOMATICO';
  descricao?: string;
  horario: { solicitacao: string; liquidacao?: string };
  status: 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO';
  motivo?: string;
}

export interface ReceivedPix {
  endToEndId: string;
  txid?: string;
  valor: string;
  chave: string;
  horario: string;
  infoPagador?: string;
  devolucoes: Devolucao[];
  /** Who paid (not in the contract's Pix; used by the cpf/cnpj filters of GET /pix). */
  pagador?: { cpf?: string; cnpj?: string };
}

export type CallbackCertificate = 'psp' | 'none' | 'untrusted';

export interface CallbackDelivery {
  seq: number;
  url: string;
  body: { pix: Record<string, unknown>[] };
  certificate: CallbackCertificate;
  status?: number;
  error?: string;
  atMs: number;
}

export interface RequestLogEntry {
  method: string;
  path: string;
  /** The contract operation ("PUT /cob/{txid}"), "POST /oauth/token", or undefined when none matched. */
  operation?: string;
  status?: number;
  /** What happened to the answer: sent, dropped (fault), held (slow, client gave up). */
  outcome: 'sent' | 'dropped' | 'held' | 'client-gone';
  clientCertFingerprint?: string;
  atMs: number;
}

export type FaultKind = 'unavailable' | 'gateway-timeout' | 'slow' | 'drop';

export interface Fault {
  /**
   * unavailable: 503 ServicoIndisponivel (with Retry-After), nothing done.
   * gateway-timeout: 504 IndisponibilidadePorTempoEsgotado; `applied` (default false) says
   *   whether the PSP did the work behind the gateway anyway.
   * slow: the answer is held `delayMs` on the fake's clock, or until releaseHeldAnswers() when
   *   no delay is given (longer than any client timeout); `applied` defaults to true.
   * drop: the work is done (`applied`, default true), then the connection is destroyed without
   *   an answer.
   */
  kind: FaultKind;
  /** The contract operation to hit ("PUT /cob/{txid}", "POST /oauth/token"); any when absent. */
  operation?: string;
  /** How many matching requests it hits (default 1). */
  times?: number;
  applied?: boolean;
  retryAfterS?: number;
  delayMs?: number;
}

export interface FakePixPspOptions {
  clock?: Clock;
  dialect?: Dialect;
  /** Certificates: the fake makes its own PKI (and disposes of it on close) when absent. */
  pki?: Pki;
  /** The receiver's Pix keys (DICT). Default: one random EVP key. */
  chaves?: string[];
  /** Access tokens' lifetime (default 3600 s). */
  tokenTtlS?: number;
  /** Host of the payload locations the fake gives charges (no scheme, as in the contract). */
  locationHost?: string;
  /** Merchant name and city written in the BR Code. */
  merchantName?: string;
  merchantCity?: string;
  /** Answer charges without `pixCopiaECola` (optional in the contract): only their location. */
  omitCopyPaste?: boolean;
  /** Settle a devolução asked through the API at once (DEVOLVIDO) instead of waiting for settleRefund(). */
  autoSettleRefunds?: boolean;
  /** CAs trusted when sending callbacks (default: the fake's PKI CA). */
  callbackTrust?: string[];
  /** Timeout of a callback delivery (real milliseconds; default 5000). */
  callbackTimeoutMs?: number;
}

interface Token {
  accessToken: string;
  clientId: string;
  scopes: string[];
  expiresAtMs: number;
  revoked: boolean;
  fingerprint256: string;
}

interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Work to run after the answer was sent (callbacks). */
  after?: () => void | Promise<void>;
  /** Not checked against the contract (the 501 of an operation the fake does not implement). */
  unchecked?: boolean;
}

interface Webhook {
  chave: string;
  webhookUrl: string;
  criacaoMs: number;
}

const problemTypeByOperation: Record<string, string> = {
  'PUT /cob/{txid}': 'CobOperacaoInvalida',
  'POST /cob': 'CobOperacaoInvalida',
  'PATCH /cob/{txid}': 'CobOperacaoInvalida',
  'GET /cob/{txid}': 'CobConsultaInvalida',
  'GET /pix': 'PixConsultaInvalida',
  'PUT /pix/{e2eid}/devolucao/{id}': 'PixDevolucaoInvalida',
  'PUT /webhook/{chave}': 'WebhookOperacaoInvalida',
  'GET /webhook': 'WebhookConsultaInvalida',
};

const IMPLEMENTED = new Set([
  'PUT /cob/{txid}', 'POST /cob', 'PATCH /cob/{txid}', 'GET /cob/{txid}',
  'GET /pix', 'GET /pix/{e2eid}', 'PUT /pix/{e2eid}/devolucao/{id}', 'GET /pix/{e2eid}/devolucao/{id}',
  'PUT /webhook/{chave}', 'GET /webhook/{chave}', 'DELETE /webhook/{chave}', 'GET /webhook',
]);

// Money as the contract writes it ("10.50") to integer centavos and back: never floats.
export function toCentavos(valor: string): number {
  const m = /^(\d{1,10})\.(\d{2})$/.exec(valor);
  if (!m) throw new Error(`not a Pix amount: ${JSON.stringify(valor)}`);
  return Number(m[1]) * 100 + Number(m[2]);
}
export function fromCentavos(centavos: number): string {
  if (!Number.isSafeInteger(centavos) || centavos < 0) throw new Error(`bad centavos ${centavos}`);
  return `${Math.floor(centavos / 100)}.${String(centavos % 100).padStart(2, '0')}`;
}

function alnum(n: number): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(n);
  let s = '';
  for (let i = 0; i < n; i++) s += chars[bytes[i] % chars.length];
  return s;
}

// yyyyMMddHHmm in UTC, as in an end-to-end id.
function stamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 12);
}

// EMV® QRCPS (the BR Code): id + 2-digit length + value; CRC16-CCITT (0x1021, init 0xFFFF) last.
function emv(id: string, value: string): string {
  return id + String(value.length).padStart(2, '0') + value;
}
function crc16(s: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(s, 'utf8')) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}
function ascii(s: string, max: number): string {
  return s.normalize('NFD').replace(/[^\x20-\x7e]/g, '').slice(0, max);
}
/** A dynamic BR Code (Pix Copia e Cola) pointing at a payload location. */
export function dynamicBrCode(location: string, merchantName: string, merchantCity: string): string {
  const body =
    emv('00', '01') + emv('01', '12') + emv('26', emv('00', 'br.gov.bcb.pix') + emv('25', location)) + emv('52', '0000') + emv('53', '986') +
    emv('58', 'BR') + emv('59', ascii(merchantName, 25)) + emv('60', ascii(merchantCity, 15)) + emv('62', emv('05', '***')) + '6304';
  return body + crc16(body);
}

function problem(type: string, title: string, status: number, detail?: string, violacoes?: Violation[]): Problem {
  return {
    type: ERROR_BASE + type,
    title,
    status,
    ...(detail ? { detail } : {}),
    correlationId: randomUUID(),
    ...(violacoes && violacoes.length ? { violacoes: violacoes.map((v) => ({ razao: v.razao, propriedade: v.propriedade, ...(v.valor !== undefined ? { valor: v.valor } : {}) })) } : {}),
  };
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export class FakePixPsp {
  readonly dialect: Dialect;
  readonly clock: Clock;
  readonly pki: Pki;
  readonly contract: PixApiContract;
  readonly chaves: string[];
  /** The fake's server certificate. */
  readonly serverCertificate: KeyPair;
  /** The certificate the fake presents when it sends callbacks (pin its fingerprint). */
  readonly callbackCertificate: KeyPair;
  /** A certificate from a CA nobody trusts, for forged callbacks. */
  readonly untrustedCertificate: KeyPair;
  /** The default client: all six scopes, certificate issued by the fake's CA. */
  client!: ClientCredentials;
  /** https://127.0.0.1:<port> */
  origin = '';

  readonly cobs = new Map<string, Cob>();
  readonly pix = new Map<string, ReceivedPix>();
  readonly webhooks = new Map<string, Webhook>();
  readonly requests: RequestLogEntry[] = [];
  readonly callbacks: CallbackDelivery[] = [];
  /** The fake's own answers and callbacks that broke the contract (a test should assert it is empty). */
  readonly contractViolations: { where: string; violations: Violation[] }[] = [];

  private readonly options: Required<Pick<FakePixPspOptions, 'tokenTtlS' | 'locationHost' | 'merchantName' | 'merchantCity' | 'autoSettleRefunds' | 'callbackTimeoutMs'>>;
  /** Answer charges without `pixCopiaECola` (only `location`), as the contract allows; settable. */
  omitCopyPaste: boolean;
  private readonly ownPki: boolean;
  private readonly untrustedPki: Pki;
  private readonly callbackTrust: string[];
  private readonly clients = new Map<string, ClientCredentials>();
  private readonly tokens = new Map<string, Token>();
  private faults: (Fault & { left: number })[] = [];
  private held: { res: ServerResponse; answer: Answer; operation?: Operation; entry: RequestLogEntry; timer?: ClockTimer }[] = [];
  private holdingCallbacks = false;
  private pendingCallbacks: { url: string; body: { pix: Record<string, unknown>[] }; certificate: CallbackCertificate }[] = [];
  private server?: Server;
  private nextLocId = 1;
  private callbackSeq = 0;

  constructor(options: FakePixPspOptions = {}) {
    this.dialect = options.dialect ?? 'standard';
    this.clock = options.clock ?? systemClock;
    this.contract = pixApiContract();
    this.ownPki = !options.pki;
    this.pki = options.pki ?? createPki({ caName: 'Fake PSP CA' });
    this.untrustedPki = createPki({ caName: 'Untrusted CA' });
    this.chaves = options.chaves ?? [randomUUID()];
    this.omitCopyPaste = options.omitCopyPaste ?? false;
    this.options = {
      tokenTtlS: options.tokenTtlS ?? 3600,
      locationHost: options.locationHost ?? 'pix.fake-psp.test',
      merchantName: options.merchantName ?? 'Loja Teste',
      merchantCity: options.merchantCity ?? 'Sao Paulo',
      autoSettleRefunds: options.autoSettleRefunds ?? false,
      callbackTimeoutMs: options.callbackTimeoutMs ?? 5000,
    };
    this.serverCertificate = this.pki.issueServer('fake-psp');
    this.callbackCertificate = this.pki.issueClient('fake-psp-callbacks');
    this.untrustedCertificate = this.untrustedPki.issueClient('fake-psp-callbacks');
    this.callbackTrust = options.callbackTrust ?? [this.pki.ca];
  }

  /** The API's base URL (the dialect's prefix included): https://127.0.0.1:<port>[/v2]. */
  get baseUrl(): string {
    return this.origin + DIALECTS[this.dialect].basePath;
  }

  get tokenUrl(): string {
    return this.origin + DIALECTS[this.dialect].tokenPath;
  }

  async start(): Promise<this> {
    this.client = this.addClient({ clientId: 'client-default' });
    this.server = createServer(
      { key: this.serverCertificate.key, cert: this.serverCertificate.cert, ca: [this.pki.ca], requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.2' },
      (req, res) => void this.handle(req, res),
    );
    this.server.on('tlsClientError', () => {
      // A client without an accepted certificate: the handshake fails, nothing to log.
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(0, '127.0.0.1', () => resolve());
    });
    this.origin = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const h of this.held) {
      if (h.timer) this.clock.clearTimeout(h.timer);
      h.res.destroy();
    }
    this.held = [];
    if (this.server) {
      this.server.closeAllConnections();
      await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    }
    this.untrustedPki.dispose();
    if (this.ownPki) this.pki.dispose();
  }

  // ---------------------------------------------------------------- control: clients and tokens

  /** Register an OAuth2 client, with its own client certificate from the fake's CA. */
  addClient(opts: { clientId?: string; clientSecret?: string; scopes?: string[] } = {}): ClientCredentials {
    const clientId = opts.clientId ?? `client-${alnum(8)}`;
    const pair = this.pki.issueClient(clientId);
    const client: ClientCredentials = {
      clientId,
      clientSecret: opts.clientSecret ?? alnum(32),
      scopes: opts.scopes ?? [...ALL_SCOPES],
      cert: pair.cert,
      key: pair.key,
      fingerprint256: pair.fingerprint256,
      ca: this.pki.ca,
    };
    this.clients.set(clientId, client);
    return client;
  }

  /** Revoke one access token, or every token issued so far (the client must ask for a new one). */
  revokeTokens(accessToken?: string): number {
    let n = 0;
    for (const t of this.tokens.values()) {
      if ((accessToken === undefined || t.accessToken === accessToken) && !t.revoked) {
        t.revoked = true;
        n++;
      }
    }
    return n;
  }

  /** Tokens issued (newest last), for tests that check the client cached its token. */
  issuedTokens(): { accessToken: string; clientId: string; scopes: string[]; expiresAtMs: number; revoked: boolean }[] {
    return [...this.tokens.values()].map(({ accessToken, clientId, scopes, expiresAtMs, revoked }) => ({ accessToken, clientId, scopes, expiresAtMs, revoked }));
  }

  /** Trust another CA for the webhook receivers' server certificates (callbacks and Efí's probe). */
  trustForCallbacks(ca: string): void {
    this.callbackTrust.push(ca);
  }

  // ---------------------------------------------------------------- control: faults

  /** Inject a fault for the next matching request(s). */
  inject(fault: Fault): void {
    this.faults.push({ ...fault, left: fault.times ?? 1 });
  }

  clearFaults(): void {
    this.faults = [];
  }

  /** Send every answer held by a `slow` fault without a delay (to clients still listening). */
  releaseHeldAnswers(): number {
    const held = this.held;
    this.held = [];
    for (const h of held) {
      if (h.timer) this.clock.clearTimeout(h.timer);
      this.send(h.res, h.answer, h.operation, h.entry);
    }
    return held.length;
  }

  // ---------------------------------------------------------------- control: the payer

  /**
   * The payer pays a charge: a received Pix with a new e2eid, the charge's amount (or `valor`),
   * the txid, the time now. Refuses a charge that is not ATIVA or has expired (see
   * payAfterExpiry). Resolves once the callback (if a webhook is set for the key) was delivered.
   */
  async pay(txid: string, opts: { valor?: string; infoPagador?: string; pagador?: { cpf?: string; cnpj?: string } } = {}): Promise<{ pix: ReceivedPix; callback?: CallbackDelivery }> {
    const cob = this.cobs.get(txid);
    if (!cob) throw new Error(`fake PSP: no charge ${txid}`);
    if (cob.status !== 'ATIVA') throw new Error(`fake PSP: charge ${txid} is ${cob.status}`);
    if (this.isExpired(cob)) throw new Error(`fake PSP: charge ${txid} expired (use payAfterExpiry to force it)`);
    return this.receive(cob, opts);
  }

  /**
   * Money arriving for a charge that expired or was removed (the payer read the code in time, the
   * transfer settled late): the Pix is received and attached to the charge all the same. A
   * charge already CONCLUIDA is refused.
   */
  async payAfterExpiry(txid: string, opts: { valor?: string; infoPagador?: string } = {}): Promise<{ pix: ReceivedPix; callback?: CallbackDelivery }> {
    const cob = this.cobs.get(txid);
    if (!cob) throw new Error(`fake PSP: no charge ${txid}`);
    if (cob.status === 'CONCLUIDA') throw new Error(`fake PSP: charge ${txid} is already paid`);
    if (cob.status === 'ATIVA' && !this.isExpired(cob)) this.expire(txid);
    return this.receive(cob, opts);
  }

  /**
   * A Pix received with no charge behind it: a txid the receiver never created (a callback for an
   * unknown txid), or none at all (a plain transfer to the key: no callback, per the standard).
   */
  async receivePix(opts: { valor: string; txid?: string; chave?: string; infoPagador?: string }): Promise<{ pix: ReceivedPix; callback?: CallbackDelivery }> {
    toCentavos(opts.valor);
    const pix: ReceivedPix = {
      endToEndId: this.newE2eId(),
      ...(opts.txid ? { txid: opts.txid } : {}),
      valor: opts.valor,
      chave: opts.chave ?? this.chaves[0],
      horario: this.nowIso(),
      ...(opts.infoPagador ? { infoPagador: opts.infoPagador } : {}),
      devolucoes: [],
    };
    this.pix.set(pix.endToEndId, pix);
    const callback = pix.txid ? await this.notify(pix) : undefined;
    return { pix, callback };
  }

  /** Expire a charge now (its calendar is left as it was; the standard keeps it ATIVA). */
  expire(txid: string): void {
    const cob = this.mustCob(txid);
    cob.expiredAtMs = this.clock.nowMs();
  }

  /** The PSP removes a charge on its own (status REMOVIDA_PELO_PSP). */
  removeByPsp(txid: string): void {
    const cob = this.mustCob(txid);
    cob.status = 'REMOVIDA_PELO_PSP';
    cob.revisao++;
    cob.history.push(this.cobBody(cob));
  }

  // ---------------------------------------------------------------- control: returns

  /** Finish a devolução asked through the API (DEVOLVIDO or NAO_REALIZADO); sends the callback. */
  async settleRefund(e2eid: string, id: string, status: 'DEVOLVIDO' | 'NAO_REALIZADO' = 'DEVOLVIDO', motivo?: string): Promise<{ devolucao: Devolucao; callback?: CallbackDelivery }> {
    const pix = this.pix.get(e2eid);
    const dev = pix?.devolucoes.find((d) => d.id === id);
    if (!pix || !dev) throw new Error(`fake PSP: no devolução ${e2eid}/${id}`);
    if (dev.status !== 'EM_PROCESSAMENTO') throw new Error(`fake PSP: devolução ${id} is already ${dev.status}`);
    dev.status = status;
    if (status === 'DEVOLVIDO') dev.horario.liquidacao = this.nowIso();
    if (motivo) dev.motivo = motivo;
    const callback = pix.txid ? await this.notify(pix) : undefined;
    return { devolucao: dev, callback };
  }

  /**
   * A return the receiver did not ask for: the payer's bank starts a MED (Mecanismo Especial de
   * Devolução) for fraud (`MED_FRAUDE`, FR01) or an operational failure (`MED_OPERACIONAL`,
   * BE08) and the PSP debits the receiver. The devolução gets a PSP-made id, `natureza` as the
   * contract's DevolucaoNatureza names it, and is DEVOLVIDO at once (or EM_PROCESSAMENTO, then
   * settleRefund()). The whole Pix by default.
   */
  async startMedReturn(e2eid: string, opts: { natureza?: 'MED_FRAUDE' | 'MED_OPERACIONAL'; valor?: string; status?: 'DEVOLVIDO' | 'EM_PROCESSAMENTO'; descricao?: string } = {}): Promise<{ devolucao: Devolucao; callback?: CallbackDelivery }> {
    const pix = this.pix.get(e2eid);
    if (!pix) throw new Error(`fake PSP: no Pix ${e2eid}`);
    const valor = opts.valor ?? fromCentavos(toCentavos(pix.valor) - this.returnedCentavos(pix));
    if (toCentavos(valor) <= 0 || toCentavos(valor) + this.returnedCentavos(pix) > toCentavos(pix.valor)) throw new Error(`fake PSP: MED of ${valor} exceeds what is left of ${pix.valor}`);
    const status = opts.status ?? 'DEVOLVIDO';
    const now = this.nowIso();
    const devolucao: Devolucao = {
      id: `MED${alnum(20)}`,
      rtrId: this.newRtrId(),
      valor,
      natureza: opts.natureza ?? 'MED_FRAUDE',
      ...(opts.descricao ? { descricao: opts.descricao } : {}),
      horario: { solicitacao: now, ...(status === 'DEVOLVIDO' ? { liquidacao: now } : {}) },
      status,
    };
    pix.devolucoes.push(devolucao);
    const callback = status === 'DEVOLVIDO' && pix.txid ? await this.notify(pix) : undefined;
    return { devolucao, callback };
  }

  // ---------------------------------------------------------------- control: callbacks

  /** Queue callbacks instead of sending them (for out-of-order and duplicate deliveries). */
  holdCallbacks(): void {
    this.holdingCallbacks = true;
  }

  /** Send the queued callbacks, in order or reversed, each once or twice; stop holding. */
  async releaseCallbacks(opts: { order?: 'fifo' | 'reverse'; duplicate?: boolean } = {}): Promise<CallbackDelivery[]> {
    this.holdingCallbacks = false;
    const queue = opts.order === 'reverse' ? [...this.pendingCallbacks].reverse() : [...this.pendingCallbacks];
    this.pendingCallbacks = [];
    const out: CallbackDelivery[] = [];
    for (const c of queue) {
      out.push(await this.deliver(c.url, c.body, c.certificate));
      if (opts.duplicate) out.push(await this.deliver(c.url, c.body, c.certificate));
    }
    return out;
  }

  /** Lose the queued callbacks (a PSP whose notifications never arrive); stop holding. */
  discardHeldCallbacks(): number {
    const n = this.pendingCallbacks.length;
    this.pendingCallbacks = [];
    this.holdingCallbacks = false;
    return n;
  }

  /** Send a delivered callback again, byte for byte the same body (a duplicate). */
  async resendCallback(delivery: CallbackDelivery = this.callbacks[this.callbacks.length - 1]): Promise<CallbackDelivery> {
    if (!delivery) throw new Error('fake PSP: no callback to resend');
    return this.deliver(delivery.url, delivery.body, delivery.certificate);
  }

  /**
   * Send the callback of a real received Pix (as the PSP knows it now) with the given
   * certificate: 'psp' (the fake's callback certificate), 'none' (no client certificate) or
   * 'untrusted' (one from a CA the receiver does not trust).
   */
  async sendCallbackFor(e2eid: string, certificate: CallbackCertificate = 'psp'): Promise<CallbackDelivery> {
    const pix = this.pix.get(e2eid);
    if (!pix) throw new Error(`fake PSP: no Pix ${e2eid}`);
    const url = this.callbackUrl(pix.chave);
    if (!url) throw new Error(`fake PSP: no webhook for key ${pix.chave}`);
    return this.deliver(url, { pix: [this.pixBody(pix)] }, certificate);
  }

  /**
   * A forged callback: a well-formed notification of a Pix the PSP never received (its e2eid and
   * amount made up), sent to the key's webhook with the chosen certificate (default 'untrusted':
   * an attacker; 'psp' models a notification that lies, which only a read of the truth catches).
   */
  async forgeCallback(opts: { txid: string; valor: string; certificate?: CallbackCertificate; chave?: string; url?: string }): Promise<CallbackDelivery> {
    const chave = opts.chave ?? this.chaves[0];
    const url = opts.url ?? this.callbackUrl(chave);
    if (!url) throw new Error(`fake PSP: no webhook for key ${chave}`);
    const body = { pix: [{ endToEndId: this.newE2eId(), txid: opts.txid, valor: opts.valor, chave, horario: this.nowIso() }] };
    return this.deliver(url, body, opts.certificate ?? 'untrusted');
  }

  // ---------------------------------------------------------------- state readers

  /** A charge as GET /cob/{txid} answers it. */
  getCob(txid: string): Record<string, unknown> | undefined {
    const cob = this.cobs.get(txid);
    return cob && this.cobBody(cob, true);
  }

  /** A received Pix as GET /pix/{e2eid} answers it. */
  getPix(e2eid: string): Record<string, unknown> | undefined {
    const pix = this.pix.get(e2eid);
    return pix && this.pixBody(pix);
  }

  isExpired(cob: Cob): boolean {
    const now = this.clock.nowMs();
    return (cob.expiredAtMs !== undefined && now >= cob.expiredAtMs) || now >= cob.criacaoMs + cob.expiracaoS * 1000;
  }

  // ---------------------------------------------------------------- HTTP

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const socket = req.socket as TLSSocket;
    const peer = socket.getPeerCertificate();
    const entry: RequestLogEntry = { method: req.method ?? '', path: req.url ?? '', outcome: 'sent', clientCertFingerprint: peer?.fingerprint256, atMs: this.clock.nowMs() };
    this.requests.push(entry);
    let raw: string;
    try {
      raw = await readBody(req);
    } catch {
      entry.status = 413;
      return this.send(res, { status: 413, body: problem('RequisicaoInvalida', 'Corpo grande demais', 413) }, undefined, entry, false);
    }
    const url = new URL(req.url ?? '/', 'https://fake');
    const d = DIALECTS[this.dialect];

    if (url.pathname === d.tokenPath) {
      entry.operation = 'POST /oauth/token';
      if (req.method !== 'POST') return this.send(res, { status: 405, body: { error: 'invalid_request' }, headers: { allow: 'POST' } }, undefined, entry, false);
      if (await this.applyFault(entry.operation, res, entry, undefined, () => this.token(req, raw, peer?.fingerprint256))) return;
      return this.send(res, this.token(req, raw, peer?.fingerprint256), undefined, entry, false);
    }

    if (!url.pathname.startsWith(d.basePath + '/')) {
      return this.send(res, { status: 404, body: problem('NaoEncontrado', 'Não encontrado', 404, `nada em ${url.pathname}`) }, undefined, entry, false);
    }
    const path = url.pathname.slice(d.basePath.length);
    const matched = this.contract.match(req.method ?? '', path);
    if (!matched) {
      const status = this.contract.pathExists(path) ? 405 : 404;
      return this.send(res, { status, body: problem(status === 404 ? 'NaoEncontrado' : 'RequisicaoInvalida', status === 404 ? 'Não encontrado' : 'Método não permitido', status) }, undefined, entry, false);
    }
    const { operation, pathParams } = matched;
    entry.operation = operation.key;

    const work = async (): Promise<Answer> => {
      // OAuth2: a valid, unexpired, unrevoked token bound to this connection's certificate, with the scope.
      const auth = req.headers.authorization ?? '';
      const m = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(auth);
      const token = m ? this.tokens.get(m[1]) : undefined;
      if (!token || token.revoked || this.clock.nowMs() >= token.expiresAtMs || token.fingerprint256 !== peer?.fingerprint256) {
        const why = !m ? 'token ausente' : !token ? 'token desconhecido' : token.revoked ? 'token revogado' : this.clock.nowMs() >= token.expiresAtMs ? 'token expirado' : 'token emitido para outro certificado';
        return { status: 401, body: problem('AcessoNegado', 'Não autenticado', 401, why), headers: { 'www-authenticate': `Bearer error="invalid_token", error_description="${why}"` } };
      }
      const missing = operation.scopes.filter((s) => !token.scopes.includes(s));
      if (missing.length > 0) {
        return { status: 403, body: problem('AcessoNegado', 'Acesso negado', 403, `escopo necessário: ${missing.join(' ')}`) };
      }
      // The contract: path and query parameters, body.
      let body: unknown;
      if (raw.length > 0) {
        try {
          body = JSON.parse(raw) as unknown;
        } catch {
          body = undefined;
        }
      }
      const { query, violations } = this.contract.checkParameters(operation, pathParams, url.searchParams);
      violations.push(...this.contract.checkBody(operation, req.headers['content-type'], body, raw));
      if (violations.length > 0) {
        const type = problemTypeByOperation[operation.key] ?? 'RequisicaoInvalida';
        return { status: 400, body: problem(type, 'Requisição inválida', 400, 'A requisição não respeita o schema.', violations) };
      }
      if (!IMPLEMENTED.has(operation.key)) {
        return { status: 501, body: problem('ErroInternoDoServidor', 'Não implementado pelo PSP falso', 501, operation.key), unchecked: true };
      }
      return this.route(operation.key, pathParams, query, body as Record<string, unknown> | undefined, req);
    };
    if (await this.applyFault(operation.key, res, entry, operation, work)) return;
    this.send(res, await work(), operation, entry);
  }

  // A fault for this operation, if one is armed: answers (or not) and returns true.
  private async applyFault(key: string, res: ServerResponse, entry: RequestLogEntry, operation: Operation | undefined, work: () => Answer | Promise<Answer>): Promise<boolean> {
    const fault = this.faults.find((f) => (!f.operation || f.operation === key) && f.left > 0);
    if (!fault) return false;
    fault.left--;
    this.faults = this.faults.filter((f) => f.left > 0);
    const validate = operation !== undefined;
    switch (fault.kind) {
      case 'unavailable':
        this.send(res, { status: 503, body: problem('ServicoIndisponivel', 'Serviço indisponível', 503), headers: { 'retry-after': String(fault.retryAfterS ?? 1) } }, operation, entry, validate);
        return true;
      case 'gateway-timeout': {
        const answer = fault.applied ? await work() : undefined;
        this.send(res, { status: 504, body: problem('IndisponibilidadePorTempoEsgotado', 'Tempo esgotado', 504), after: answer?.after }, operation, entry, validate);
        return true;
      }
      case 'drop': {
        const answer = fault.applied === false ? undefined : await work();
        entry.outcome = 'dropped';
        entry.status = answer?.status;
        res.socket?.destroy();
        void answer?.after?.();
        return true;
      }
      case 'slow': {
        const answer = fault.applied === false ? { status: 503, body: problem('ServicoIndisponivel', 'Serviço indisponível', 503) } : await work();
        entry.outcome = 'held';
        const h: (typeof this.held)[number] = { res, answer, operation, entry };
        res.on('close', () => {
          if (!res.writableEnded) entry.outcome = 'client-gone';
        });
        if (fault.delayMs !== undefined) {
          h.timer = this.clock.setTimeout(() => {
            this.held = this.held.filter((x) => x !== h);
            this.send(res, answer, operation, entry);
          }, fault.delayMs);
        }
        this.held.push(h);
        return true;
      }
    }
  }

  private send(res: ServerResponse, answer: Answer, operation: Operation | undefined, entry: RequestLogEntry, validate = true): void {
    let a = answer;
    if (validate && operation && !a.unchecked) {
      const isProblem = a.status >= 400;
      const violations = this.contract.checkAnswer(operation, a.status, a.body === undefined ? undefined : isProblem ? 'application/problem+json' : 'application/json', a.body);
      if (violations.length > 0) {
        this.contractViolations.push({ where: `${operation.key} -> ${a.status}`, violations });
        a = { status: 500, body: problem('ErroInternoDoServidor', 'Resposta fora do contrato', 500, JSON.stringify(violations).slice(0, 2000)) };
      }
    }
    entry.status = a.status;
    if (res.destroyed || res.writableEnded || res.socket === null || res.socket.destroyed || entry.outcome === 'client-gone') {
      entry.outcome = 'client-gone';
    } else {
      entry.outcome = 'sent';
      const headers: Record<string, string> = { ...(a.headers ?? {}) };
      let payload = '';
      if (a.body !== undefined) {
        payload = JSON.stringify(a.body);
        headers['content-type'] = a.status >= 400 && !isOAuthError(a.body) ? 'application/problem+json' : 'application/json';
      }
      headers['content-length'] = String(Buffer.byteLength(payload));
      res.writeHead(a.status, headers);
      res.end(payload);
    }
    void a.after?.();
  }

  // POST /oauth/token: client credentials (RFC 6749 4.4), client authenticated by HTTP Basic and
  // by its certificate; scopes asked for must be the client's (all of them when none is asked).
  private token(req: IncomingMessage, raw: string, fingerprint?: string): Answer {
    const basic = /^Basic ([A-Za-z0-9+/]+=*)$/.exec(req.headers.authorization ?? '');
    const [id, ...rest] = basic ? Buffer.from(basic[1], 'base64').toString('utf8').split(':') : [];
    const client = id !== undefined ? this.clients.get(id) : undefined;
    if (!client || !safeEqual(rest.join(':'), client.clientSecret) || client.fingerprint256 !== fingerprint) {
      return { status: 401, body: { error: 'invalid_client' }, headers: { 'www-authenticate': 'Basic realm="fake-psp"' } };
    }
    const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    let grantType: unknown;
    let scope: unknown;
    if (DIALECTS[this.dialect].tokenBody === 'form') {
      if (type !== 'application/x-www-form-urlencoded') return { status: 400, body: { error: 'invalid_request', error_description: 'Content-Type must be application/x-www-form-urlencoded' } };
      const form = new URLSearchParams(raw);
      grantType = form.get('grant_type');
      scope = form.get('scope') ?? undefined;
    } else {
      if (type !== 'application/json') return { status: 400, body: { error: 'invalid_request', error_description: 'Content-Type must be application/json' } };
      try {
        const json = JSON.parse(raw) as Record<string, unknown>;
        grantType = json.grant_type;
        scope = json.scope;
      } catch {
        return { status: 400, body: { error: 'invalid_request', error_description: 'invalid JSON' } };
      }
    }
    if (grantType !== 'client_credentials') return { status: 400, body: { error: 'unsupported_grant_type' } };
    let scopes = client.scopes;
    if (scope !== undefined) {
      if (typeof scope !== 'string') return { status: 400, body: { error: 'invalid_scope' } };
      const asked = scope.split(' ').filter(Boolean);
      if (asked.some((s) => !client.scopes.includes(s))) return { status: 400, body: { error: 'invalid_scope' } };
      scopes = asked;
    }
    const accessToken = randomBytes(24).toString('base64url');
    this.tokens.set(accessToken, { accessToken, clientId: client.clientId, scopes, expiresAtMs: this.clock.nowMs() + this.options.tokenTtlS * 1000, revoked: false, fingerprint256: client.fingerprint256 });
    return { status: 200, body: { access_token: accessToken, token_type: 'Bearer', expires_in: this.options.tokenTtlS, scope: scopes.join(' ') }, headers: { 'cache-control': 'no-store' } };
  }

  private async route(key: string, p: Record<string, string>, query: Record<string, unknown>, body: Record<string, unknown> | undefined, req: IncomingMessage): Promise<Answer> {
    switch (key) {
      case 'PUT /cob/{txid}':
        return this.putCob(p.txid, body!);
      case 'POST /cob':
        return this.putCob(this.newTxid(), body!);
      case 'PATCH /cob/{txid}':
        return this.patchCob(p.txid, body!);
      case 'GET /cob/{txid}': {
        const cob = this.cobs.get(p.txid);
        if (!cob) return notFound('CobNaoEncontrado', 'Cobrança não encontrada');
        if (query.revisao !== undefined) {
          const snapshot = cob.history[query.revisao as number];
          if (!snapshot) return notFound('CobNaoEncontrado', `Revisão ${query.revisao as number} não encontrada`);
          return { status: 200, body: snapshot };
        }
        return { status: 200, body: this.cobBody(cob, true) };
      }
      case 'GET /pix':
        return this.listPix(query);
      case 'GET /pix/{e2eid}': {
        const pix = this.pix.get(p.e2eid);
        return pix ? { status: 200, body: this.pixBody(pix) } : notFound('PixNaoEncontrado', 'Pix não encontrado');
      }
      case 'PUT /pix/{e2eid}/devolucao/{id}':
        return this.putDevolucao(p.e2eid, p.id, body!);
      case 'GET /pix/{e2eid}/devolucao/{id}': {
        const dev = this.pix.get(p.e2eid)?.devolucoes.find((x) => x.id === p.id);
        return dev ? { status: 200, body: dev } : notFound('PixDevolucaoNaoEncontrada', 'Devolução não encontrada');
      }
      case 'PUT /webhook/{chave}':
        return this.putWebhook(p.chave, body!, req);
      case 'GET /webhook/{chave}': {
        const w = this.webhooks.get(p.chave);
        return w ? { status: 200, body: this.webhookBody(w) } : notFound('WebhookNaoEncontrado', 'Webhook não encontrado');
      }
      case 'DELETE /webhook/{chave}':
        return this.webhooks.delete(p.chave) ? { status: 204 } : notFound('WebhookNaoEncontrado', 'Webhook não encontrado');
      case 'GET /webhook': {
        const list = [...this.webhooks.values()].map((w) => this.webhookBody(w));
        return { status: 200, body: { webhooks: list } };
      }
      default:
        return { status: 501, body: problem('ErroInternoDoServidor', 'Não implementado', 501) };
    }
  }

  private putCob(txid: string, body: Record<string, unknown>): Answer {
    const invalid = (razao: string, propriedade: string) => ({ status: 400, body: problem('CobOperacaoInvalida', 'Cobrança inválida', 400, razao, [{ razao, propriedade }]) });
    const valor = body.valor as { original: string; modalidadeAlteracao?: number };
    if (toCentavos(valor.original) === 0) return invalid('O campo cob.valor.original é zero', 'cob.valor.original');
    const chave = body.chave as string;
    if (!this.chaves.includes(chave)) return invalid('A chave não pertence a este usuário recebedor', 'cob.chave');
    const calendario = body.calendario as { expiracao?: number } | undefined;
    const expiracaoS = calendario?.expiracao ?? 86400;
    if (expiracaoS <= 0) return invalid('O campo cob.calendario.expiracao é igual ou menor que zero', 'cob.calendario.expiracao');
    const devedor = body.devedor as Record<string, string> | undefined;
    if (devedor && devedor.cpf && devedor.cnpj) return invalid('devedor.cpf e devedor.cnpj preenchidos ao mesmo tempo', 'cob.devedor');
    if (body.loc !== undefined) return invalid('O location referenciado por loc.id inexiste', 'cob.loc.id');
    const fields = {
      expiracaoS,
      chave,
      valor: { original: valor.original, ...(valor.modalidadeAlteracao !== undefined ? { modalidadeAlteracao: valor.modalidadeAlteracao } : {}) },
      devedor,
      solicitacaoPagador: body.solicitacaoPagador as string | undefined,
      infoAdicionais: body.infoAdicionais as { nome: string; valor: string }[] | undefined,
    };
    const existing = this.cobs.get(txid);
    if (existing) {
      // PUT on an existing charge revises it while ATIVA (the standard's only PUT violation is
      // "exists, is not ATIVA, and this request would change it"); the same body is a no-op, so
      // a retried create answers the same charge.
      const same = JSON.stringify(this.cobFields(existing)) === JSON.stringify(fields);
      if (existing.status !== 'ATIVA' && !same) return invalid('A cobrança já existe e não está ATIVA', 'cob.txid');
      if (!same) {
        Object.assign(existing, fields);
        existing.revisao++;
        existing.history.push(this.cobBody(existing));
      }
      return { status: 201, body: this.cobBody(existing) };
    }
    const now = this.clock.nowMs();
    const locId = this.nextLocId++;
    const cob: Cob = {
      txid,
      revisao: 0,
      criacaoMs: now,
      status: 'ATIVA',
      ...fields,
      loc: { id: locId, location: `${this.options.locationHost}/qr/v2/${randomUUID().replace(/-/g, '')}`, tipoCob: 'cob', criacaoMs: now },
      pix: [],
      history: [],
    };
    this.cobs.set(txid, cob);
    cob.history.push(this.cobBody(cob));
    return { status: 201, body: this.cobBody(cob) };
  }

  private patchCob(txid: string, body: Record<string, unknown>): Answer {
    const cob = this.cobs.get(txid);
    if (!cob) return notFound('CobNaoEncontrado', 'Cobrança não encontrada');
    const invalid = (razao: string, propriedade: string) => ({ status: 400, body: problem('CobOperacaoInvalida', 'Cobrança inválida', 400, razao, [{ razao, propriedade }]) });
    if (cob.status !== 'ATIVA') return invalid('A cobrança não está ATIVA', 'cob.status');
    if (body.status === 'REMOVIDA_PELO_USUARIO_RECEBEDOR') {
      if (Object.keys(body).length > 1) return invalid('Remoção junto com outras alterações', 'cob.status');
      cob.status = 'REMOVIDA_PELO_USUARIO_RECEBEDOR';
    } else {
      if (body.loc !== undefined) return invalid('O location referenciado por loc.id inexiste', 'cob.loc.id');
      const valor = body.valor as { original?: string; modalidadeAlteracao?: number } | undefined;
      if (valor?.original !== undefined && toCentavos(valor.original) === 0) return invalid('O campo cob.valor.original é zero', 'cob.valor.original');
      if (body.chave !== undefined && !this.chaves.includes(body.chave as string)) return invalid('A chave não pertence a este usuário recebedor', 'cob.chave');
      const cal = body.calendario as { expiracao?: number } | undefined;
      if (cal?.expiracao !== undefined && cal.expiracao <= 0) return invalid('O campo cob.calendario.expiracao é igual ou menor que zero', 'cob.calendario.expiracao');
      if (cal?.expiracao !== undefined) cob.expiracaoS = cal.expiracao;
      if (valor) cob.valor = { ...cob.valor, ...valor };
      if (body.chave !== undefined) cob.chave = body.chave as string;
      if (body.devedor !== undefined) cob.devedor = body.devedor as Record<string, string>;
      if (body.solicitacaoPagador !== undefined) cob.solicitacaoPagador = body.solicitacaoPagador as string;
      if (body.infoAdicionais !== undefined) cob.infoAdicionais = body.infoAdicionais as { nome: string; valor: string }[];
    }
    cob.revisao++;
    cob.history.push(this.cobBody(cob));
    return { status: 200, body: this.cobBody(cob) };
  }

  private listPix(query: Record<string, unknown>): Answer {
    const inicio = Date.parse(query.inicio as string);
    const fim = Date.parse(query.fim as string);
    const bad = (razao: string, propriedade: string) => ({ status: 400, body: problem('PixConsultaInvalida', 'Consulta inválida', 400, razao, [{ razao, propriedade }]) });
    if (fim < inicio) return bad('fim é anterior a inicio', 'fim');
    if (query.cpf !== undefined && query.cnpj !== undefined) return bad('cpf e cnpj ao mesmo tempo', 'cpf');
    const page = (query['paginacao.paginaAtual'] as number | undefined) ?? 0;
    const perPage = (query['paginacao.itensPorPagina'] as number | undefined) ?? 100;
    const all = [...this.pix.values()]
      .filter((x) => {
        const t = Date.parse(x.horario);
        return t >= inicio && t <= fim;
      })
      .filter((x) => query.txid === undefined || x.txid === query.txid)
      .filter((x) => query.txIdPresente === undefined || (x.txid !== undefined) === query.txIdPresente)
      .filter((x) => query.devolucaoPresente === undefined || (x.devolucoes.length > 0) === query.devolucaoPresente)
      .filter((x) => query.cpf === undefined || x.pagador?.cpf === query.cpf)
      .filter((x) => query.cnpj === undefined || x.pagador?.cnpj === query.cnpj)
      .sort((a, b) => Date.parse(a.horario) - Date.parse(b.horario));
    const parametros: Record<string, unknown> = {
      inicio: new Date(inicio).toISOString(),
      fim: new Date(fim).toISOString(),
      paginacao: { paginaAtual: page, itensPorPagina: perPage, quantidadeDePaginas: Math.max(1, Math.ceil(all.length / perPage)), quantidadeTotalDeItens: all.length },
    };
    for (const k of ['txid', 'txIdPresente', 'devolucaoPresente', 'cpf', 'cnpj']) if (query[k] !== undefined) parametros[k] = query[k];
    return { status: 200, body: { parametros, pix: all.slice(page * perPage, (page + 1) * perPage).map((x) => this.pixBody(x)) } };
  }

  private putDevolucao(e2eid: string, id: string, body: Record<string, unknown>): Answer {
    const pix = this.pix.get(e2eid);
    if (!pix) return notFound('PixNaoEncontrado', 'Pix não encontrado');
    const invalid = (razao: string, propriedade: string) => ({ status: 400, body: problem('PixDevolucaoInvalida', 'Devolução inválida', 400, razao, [{ razao, propriedade }]) });
    if (pix.devolucoes.some((d) => d.id === id)) return invalid('O id de devolução já foi utilizado para este e2eid', 'id');
    const valor = body.valor as string;
    if (toCentavos(valor) === 0) return invalid('O valor da devolução é zero', 'devolucao.valor');
    if (toCentavos(valor) + this.returnedCentavos(pix) > toCentavos(pix.valor)) return invalid('A devolução excederia o valor do Pix', 'devolucao.valor');
    if (body.natureza === 'RETIRADA') return invalid('Pix comum: a natureza deve ser ORIGINAL', 'devolucao.natureza');
    if (this.clock.nowMs() - Date.parse(pix.horario) > REFUND_WINDOW_MS) return invalid('Fora da janela de 90 dias para devolução', 'devolucao');
    const devolucao: Devolucao = {
      id,
      rtrId: this.newRtrId(),
      valor,
      natureza: (body.natureza as 'ORIGINAL' | undefined) ?? 'ORIGINAL',
      ...(body.descricao !== undefined ? { descricao: body.descricao as string } : {}),
      horario: { solicitacao: this.nowIso() },
      status: 'EM_PROCESSAMENTO',
    };
    pix.devolucoes.push(devolucao);
    const answer = { ...devolucao, horario: { ...devolucao.horario } };
    return { status: 201, body: answer, after: this.options.autoSettleRefunds ? () => this.settleRefund(e2eid, id).then(() => undefined) : undefined };
  }

  private async putWebhook(chave: string, body: Record<string, unknown>, req: IncomingMessage): Promise<Answer> {
    const invalid = (razao: string, propriedade: string) => ({ status: 400, body: problem('WebhookOperacaoInvalida', 'Webhook inválido', 400, razao, [{ razao, propriedade }]) });
    if (!this.chaves.includes(chave)) return invalid('A chave não pertence a este usuário recebedor', 'chave');
    const webhookUrl = body.webhookUrl as string;
    if (!webhookUrl.startsWith('https://')) return invalid('O webhook deve usar https (mTLS)', 'webhook.webhookUrl');
    if (this.dialect === 'efi') {
      // Efí checks that the webhook's server asks for a client certificate unless told to skip it.
      const skip = String(req.headers['x-skip-mtls-checking'] ?? 'false').toLowerCase() === 'true';
      if (!skip) {
        // Modelled on Efí's documented check: a POST to the URL with the PSP's certificate must
        // be accepted, and one without a certificate must be refused.
        const withCert = await this.probe(webhookUrl, 'psp');
        const withoutCert = await this.probe(webhookUrl, 'none');
        if (withCert.status === undefined || withCert.status >= 300) return invalid(`O webhook não aceitou a notificação de teste (${withCert.status ?? withCert.error ?? '?'})`, 'webhook.webhookUrl');
        if (withoutCert.status !== undefined && withoutCert.status < 300) return invalid('O webhook aceitou uma requisição sem certificado de cliente (mTLS)', 'webhook.webhookUrl');
      }
    }
    this.webhooks.set(chave, { chave, webhookUrl, criacaoMs: this.clock.nowMs() });
    return { status: 200 };
  }

  // ---------------------------------------------------------------- bodies

  private cobFields(cob: Cob): unknown {
    return { expiracaoS: cob.expiracaoS, chave: cob.chave, valor: cob.valor, devedor: cob.devedor, solicitacaoPagador: cob.solicitacaoPagador, infoAdicionais: cob.infoAdicionais };
  }

  private cobBody(cob: Cob, withPix = false): Record<string, unknown> {
    const location = cob.loc.location;
    return {
      calendario: { criacao: new Date(cob.criacaoMs).toISOString(), expiracao: cob.expiracaoS },
      txid: cob.txid,
      revisao: cob.revisao,
      // CobGerada requires loc.txid (and loc.criacao), though the contract's examples omit them.
      loc: { id: cob.loc.id, txid: cob.txid, location, tipoCob: cob.loc.tipoCob, criacao: new Date(cob.loc.criacaoMs).toISOString() },
      location,
      status: cob.status,
      ...(cob.devedor ? { devedor: cob.devedor } : {}),
      valor: cob.valor,
      chave: cob.chave,
      ...(cob.solicitacaoPagador !== undefined ? { solicitacaoPagador: cob.solicitacaoPagador } : {}),
      ...(cob.infoAdicionais !== undefined ? { infoAdicionais: cob.infoAdicionais } : {}),
      ...(this.omitCopyPaste ? {} : { pixCopiaECola: dynamicBrCode(location, this.options.merchantName, this.options.merchantCity) }),
      ...(withPix && cob.pix.length > 0 ? { pix: cob.pix.map((e) => this.pixBody(this.pix.get(e)!)) } : {}),
    };
  }

  private pixBody(pix: ReceivedPix): Record<string, unknown> {
    return {
      endToEndId: pix.endToEndId,
      ...(pix.txid !== undefined ? { txid: pix.txid } : {}),
      valor: pix.valor,
      chave: pix.chave,
      horario: pix.horario,
      ...(pix.infoPagador !== undefined ? { infoPagador: pix.infoPagador } : {}),
      ...(pix.devolucoes.length > 0 ? { devolucoes: pix.devolucoes.map((d) => ({ ...d, horario: { ...d.horario } })) } : {}),
    };
  }

  private webhookBody(w: Webhook): Record<string, unknown> {
    return { webhookUrl: w.webhookUrl, chave: w.chave, criacao: new Date(w.criacaoMs).toISOString() };
  }

  // ---------------------------------------------------------------- internals

  private async receive(cob: Cob, opts: { valor?: string; infoPagador?: string; pagador?: { cpf?: string; cnpj?: string } }): Promise<{ pix: ReceivedPix; callback?: CallbackDelivery }> {
    const valor = opts.valor ?? cob.valor.original;
    toCentavos(valor);
    const pix: ReceivedPix = {
      endToEndId: this.newE2eId(),
      txid: cob.txid,
      valor,
      chave: cob.chave,
      horario: this.nowIso(),
      ...(opts.infoPagador ? { infoPagador: opts.infoPagador } : {}),
      devolucoes: [],
      ...(opts.pagador ? { pagador: opts.pagador } : {}),
    };
    this.pix.set(pix.endToEndId, pix);
    cob.pix.push(pix.endToEndId);
    if (cob.status === 'ATIVA') {
      cob.status = 'CONCLUIDA';
      cob.history.push(this.cobBody(cob));
    }
    const callback = await this.notify(pix);
    return { pix, callback };
  }

  private callbackUrl(chave: string): string | undefined {
    const w = this.webhooks.get(chave);
    // The standard's callback is `{webhookUrl}/pix`: appended as written (Efí does the same).
    return w && w.webhookUrl + '/pix';
  }

  private async notify(pix: ReceivedPix): Promise<CallbackDelivery | undefined> {
    const url = this.callbackUrl(pix.chave);
    if (!url) return undefined;
    const body = { pix: [this.pixBody(pix)] };
    if (this.holdingCallbacks) {
      this.pendingCallbacks.push({ url, body, certificate: 'psp' });
      return undefined;
    }
    return this.deliver(url, body, 'psp');
  }

  /** POST a callback body to a URL over TLS, presenting the chosen client certificate. */
  async deliver(url: string, body: { pix: Record<string, unknown>[] }, certificate: CallbackCertificate): Promise<CallbackDelivery> {
    const violations = this.contract.checkCallback(body);
    // A forged body is checked too: an attacker's notification is still well-formed.
    if (violations.length > 0) this.contractViolations.push({ where: `callback ${url}`, violations });
    const delivery: CallbackDelivery = { seq: ++this.callbackSeq, url, body, certificate, atMs: this.clock.nowMs() };
    this.callbacks.push(delivery);
    const { status, error } = await this.post(url, JSON.stringify(body), certificate);
    if (status !== undefined) delivery.status = status;
    if (error !== undefined) delivery.error = error;
    return delivery;
  }

  private probe(url: string, certificate: CallbackCertificate): Promise<{ status?: number; error?: string }> {
    return this.post(url, JSON.stringify({ evento: 'teste_webhook' }), certificate);
  }

  private async post(url: string, payload: string, certificate: CallbackCertificate): Promise<{ status?: number; error?: string }> {
    const out: { status?: number; error?: string } = {};
    const pair = certificate === 'psp' ? this.callbackCertificate : certificate === 'untrusted' ? this.untrustedCertificate : undefined;
    await new Promise<void>((resolve) => {
      const req = httpsRequest(
        url,
        {
          method: 'POST',
          ca: this.callbackTrust,
          ...(pair ? { cert: pair.cert, key: pair.key } : {}),
          agent: false,
          timeout: this.options.callbackTimeoutMs,
          headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) },
        },
        (res) => {
          out.status = res.statusCode;
          res.resume();
          res.on('end', () => resolve());
          res.on('error', () => resolve());
        },
      );
      req.on('timeout', () => req.destroy(new Error('callback timed out')));
      req.on('error', (err) => {
        out.error = err.message;
        resolve();
      });
      req.end(payload);
    });
    return out;
  }

  private returnedCentavos(pix: ReceivedPix): number {
    return pix.devolucoes.filter((d) => d.status !== 'NAO_REALIZADO').reduce((sum, d) => sum + toCentavos(d.valor), 0);
  }

  private mustCob(txid: string): Cob {
    const cob = this.cobs.get(txid);
    if (!cob) throw new Error(`fake PSP: no charge ${txid}`);
    return cob;
  }

  private nowIso(): string {
    return new Date(this.clock.nowMs()).toISOString();
  }

  private newTxid(): string {
    return alnum(32);
  }

  // E + ISPB (8) + yyyyMMddHHmm + 11 characters: 32.
  private newE2eId(): string {
    return `E${PSP_ISPB}${stamp(this.clock.nowMs())}${alnum(11)}`;
  }

  private newRtrId(): string {
    return `D${PSP_ISPB}${stamp(this.clock.nowMs())}${alnum(11)}`;
  }
}

function notFound(type: string, title: string): Answer {
  return { status: 404, body: problem(type, title, 404) };
}

function isOAuthError(body: unknown): boolean {
  return typeof body === 'object' && body !== null && 'error' in body;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('body too large'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Start a fake PSP on 127.0.0.1 (a free port). Close it with `close()`. */
export async function startFakePixPsp(options: FakePixPspOptions = {}): Promise<FakePixPsp> {
  return new FakePixPsp(options).start();
}

import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { parseKeyring, type Keyring } from './providers/secrets/envelope.js';

// Configuration from the environment, read once. Every limit has a unit in its name.
export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  logLevel: string;
  logFile: string | null;
  bodyLimitBytes: number;
  rateLimitPerMinute: number;
  sandboxSignupEnabled: boolean;
  sandboxSignupPerHour: number;
  idempotencyRetentionMs: number;
  eventRetentionMs: number;
  workerInProcess: boolean;
  workerPollMs: number;
  workerConcurrency: number;
  workerConcurrencyWithRequests: number;
  workerBusyRoundMs: number;
  jobLeaseMs: number;
  providerRetryBaseMs: number;
  providerMaxAttempts: number;
  pixExpiresInSeconds: number;
  pixKey: string;
  pixMerchantName: string;
  // The platform's name, shown by the hosted checkout as "Pagamento seguro · <name>".
  platformName: string;
  pixMerchantCity: string;
  authCacheTtlMs: number;
  connectorCacheTtlMs: number;
  writeBatchMax: number;
  writeQueueMaxPending: number;
  pgWriters: number;
  settlementScheduleEnabled: boolean;
  providerBreakerFailures: number;
  providerBreakerCooldownMs: number;
  webhookTimeoutMs: number;
  webhookScheduleMs: number[];
  webhookDisableAfterMs: number;
  webhookMaxInFlight: number;
  webhookPerEndpointMaxInFlight: number;
  webhookLeaseMs: number;
  publicUrl: string | null;
  // Where the built back office is (default: apps/backoffice/dist of this repository).
  backofficeDist: string | null;
  // The hosted checkout page's build (default: apps/checkout-page/dist) and the browser library's
  // script-tag build (default: packages/checkout/dist/checkout.global.js).
  checkoutPageDist: string | null;
  checkoutJsDist: string | null;
  writeGuard: boolean;
  // NODE_ENV=production: the defaults that keep local development easy are off.
  production: boolean;
  // Node's HTTP server limits (the whole request includes its body; see README, Security).
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  // Requests without a valid API key, per client address.
  rateLimitAnonymousPerMinute: number;
  // Which proxies' X-Forwarded-For is believed for the client address (Fastify's trustProxy).
  trustProxy: boolean | number | string[];
  // Bearer token for /metrics; unset: /metrics is open outside production and off in it.
  metricsToken: string | null;
  // MASTER_KEYS: the master keys that wrap connector secrets (providers/secrets/envelope.ts);
  // null: connector accounts cannot be created or used.
  masterKeys: Keyring | null;
  // How often the Pix reconciliation job asks each PSP (GET /pix), and the window it asks for.
  pixReconcileEveryMs: number;
  pixReconcileWindowMs: number;
  // Payouts by Pix (issue 26): at most one sent per `payoutIntervalMs` from each source account
  // (PSPs ask for a rate), and a payout still processing after `payoutReconcileAfterMs` is read
  // back from the PSP by the reconciliation job (every `payoutReconcileEveryMs`).
  payoutIntervalMs: number;
  payoutReconcileAfterMs: number;
  payoutReconcileEveryMs: number;
  // Webhook URLs may reach loopback and private networks (local development).
  webhookAllowPrivateUrls: boolean;
}

// TRUST_PROXY: false (default: X-Forwarded-For is ignored), true (believe every hop), a number
// of hops, or comma-separated proxy addresses/CIDRs.
function trustProxy(env: NodeJS.ProcessEnv): boolean | number | string[] {
  const raw = (env.TRUST_PROXY ?? '').trim();
  if (raw === '' || /^(false|0|no|off)$/i.test(raw)) return false;
  if (/^(true|yes|on)$/i.test(raw)) return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw.split(',').map((v) => v.trim()).filter(Boolean);
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new Error(`${name} must be true or false, got "${raw}"`);
}

// A relative sqlite path is relative to where the user ran npm (INIT_CWD), not to the
// workspace folder npm switches into, so `./data/` means the repository's data folder.
function resolveDatabaseUrl(env: NodeJS.ProcessEnv): string {
  const url = env.DATABASE_URL || 'sqlite:./data/payments.db';
  if (!url.startsWith('sqlite:')) return url;
  const file = url.slice('sqlite:'.length);
  return 'sqlite:' + (isAbsolute(file) || !file ? file : resolve(env.INIT_CWD || process.cwd(), file));
}

// Settings that are secrets: each may instead be read from the file named by NAME_FILE (a
// container's secret, e.g. /run/secrets/database_url), so the value never sits in an environment
// that `podman inspect`, /proc/<pid>/environ or a crash report shows. A new secret setting (a
// provider's credentials, the key that encrypts secrets at rest) joins this list.
export const SECRET_SETTINGS = ['DATABASE_URL', 'METRICS_TOKEN', 'MASTER_KEYS'] as const;

// The environment with every NAME_FILE of SECRET_SETTINGS read into NAME. The file's content is
// the value, without its trailing newline (`echo x > file` writes one). Errors name the setting
// and the file, never the content.
export function readSecretFiles(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  let out = env;
  for (const name of SECRET_SETTINGS) {
    const file = env[`${name}_FILE`];
    if (file === undefined || file === '') continue;
    if (env[name] !== undefined && env[name] !== '') throw new Error(`${name} and ${name}_FILE are both set: set one`);
    let value: string;
    try {
      value = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (error) {
      throw new Error(`${name}_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { cause: error });
    }
    if (value === '') throw new Error(`${name}_FILE: ${file} is empty`);
    out = { ...out, [name]: value, [`${name}_FILE`]: undefined };
  }
  return out;
}

export function loadConfig(rawEnv: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const env = readSecretFiles(rawEnv);
  const production = env.NODE_ENV === 'production';
  const config: Config = {
    port: int(env, 'PORT', 3000),
    host: env.HOST || '127.0.0.1',
    databaseUrl: resolveDatabaseUrl(env),
    logLevel: env.LOG_LEVEL || 'info',
    logFile: env.LOG_FILE || null,
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 100 * 1024),
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 6000),
    sandboxSignupEnabled: bool(env, 'SANDBOX_SIGNUP', true),
    sandboxSignupPerHour: int(env, 'SANDBOX_SIGNUP_PER_HOUR', 20),
    idempotencyRetentionMs: int(env, 'IDEMPOTENCY_RETENTION_HOURS', 24) * 3600_000,
    eventRetentionMs: int(env, 'EVENT_RETENTION_DAYS', 30) * 86_400_000,
    workerInProcess: bool(env, 'WORKER_IN_PROCESS', true),
    workerPollMs: int(env, 'WORKER_POLL_MS', 200),
    // Jobs run at once per process. Modest by default: background work shares the writer (and,
    // in process, the event loop) with the API, and requests come first.
    workerConcurrency: int(env, 'WORKER_CONCURRENCY', 32),
    // The in-process worker while the API has requests in flight: at most this many jobs at once
    // (jobs/worker.ts says why; measured in docs/performance.md).
    workerConcurrencyWithRequests: int(env, 'WORKER_CONCURRENCY_WITH_REQUESTS', 8),
    // The in-process worker, while requests saturate the event loop: one round of jobs per this
    // many ms (jobs/load.ts). 32 jobs per 100 ms keeps confirmations moving at a few % of the loop.
    workerBusyRoundMs: int(env, 'WORKER_BUSY_ROUND_MS', 100),
    jobLeaseMs: int(env, 'JOB_LEASE_MS', 30_000),
    providerRetryBaseMs: int(env, 'PROVIDER_RETRY_BASE_MS', 1000),
    providerMaxAttempts: int(env, 'PROVIDER_MAX_ATTEMPTS', 5),
    pixExpiresInSeconds: int(env, 'PIX_EXPIRES_IN_SECONDS', 3600),
    // A sandbox EVP (random) Pix key. Production sets the institution's own key.
    pixKey: env.PIX_KEY || '7d9f0335-8dcc-4054-9bf9-0dbd61d36906',
    pixMerchantName: env.PIX_MERCHANT_NAME || 'PAGAMENTOS SANDBOX',
    platformName: (env.PLATFORM_NAME || 'Pagamentos').slice(0, 60),
    pixMerchantCity: env.PIX_MERCHANT_CITY || 'SAO PAULO',
    authCacheTtlMs: int(env, 'AUTH_CACHE_TTL_MS', 1000),
    // How long which connector account serves a merchant is kept (providers/registry.ts).
    connectorCacheTtlMs: int(env, 'CONNECTOR_CACHE_TTL_MS', 1000),
    writeBatchMax: int(env, 'WRITE_BATCH_MAX', 256),
    // Writes accepted and not yet committed; past it a write answers 503 with Retry-After
    // (store/index.ts). Far above what a batch holds, so only an overload reaches it.
    writeQueueMaxPending: int(env, 'WRITE_QUEUE_MAX_PENDING', 20_000),
    // PostgreSQL connections that commit batches in parallel (its own WAL flush groups them).
    pgWriters: int(env, 'PG_WRITERS', 4),
    // The worker runs settlement once a day (checked hourly). Off for tests that drive runs.
    settlementScheduleEnabled: bool(env, 'SETTLEMENT_SCHEDULE', true),
    providerBreakerFailures: int(env, 'PROVIDER_BREAKER_FAILURES', 20),
    providerBreakerCooldownMs: int(env, 'PROVIDER_BREAKER_COOLDOWN_MS', 30_000),
    publicUrl: env.PUBLIC_URL || null,
    backofficeDist: env.BACKOFFICE_DIST || null,
    checkoutPageDist: env.CHECKOUT_PAGE_DIST || null,
    checkoutJsDist: env.CHECKOUT_JS_DIST || null,
    webhookTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 15_000),
    webhookScheduleMs: env.WEBHOOK_SCHEDULE_MS ? env.WEBHOOK_SCHEDULE_MS.split(',').map((v) => Number(v)) : [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
    webhookDisableAfterMs: int(env, 'WEBHOOK_DISABLE_AFTER_HOURS', 120) * 3600_000,
    webhookMaxInFlight: int(env, 'WEBHOOK_MAX_IN_FLIGHT', 512),
    // A sixteenth of the slots per endpoint: it takes 16 hanging endpoints with backlogs to
    // fill them all.
    webhookPerEndpointMaxInFlight: int(env, 'WEBHOOK_PER_ENDPOINT_MAX_IN_FLIGHT', 32),
    webhookLeaseMs: int(env, 'WEBHOOK_LEASE_MS', 60_000),
    // Fails any store write a mutating request makes outside its idempotent write (the test
    // suite turns it on; it costs every promise on Node 20, see plugins/idempotency.ts).
    writeGuard: bool(env, 'WRITE_GUARD', false),
    production,
    // Headers must arrive within 20 s, the whole request (body included) within 60 s: a client
    // that trickles a body holds a socket no longer than that. Idle kept-alive connections are
    // closed after 72 s (longer than the 60 s idle timeout of common load balancers, so the
    // balancer, not us, closes first).
    headersTimeoutMs: int(env, 'HEADERS_TIMEOUT_MS', 20_000),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 60_000),
    keepAliveTimeoutMs: int(env, 'KEEP_ALIVE_TIMEOUT_MS', 72_000),
    rateLimitAnonymousPerMinute: int(env, 'RATE_LIMIT_ANONYMOUS_PER_MINUTE', 300),
    trustProxy: trustProxy(env),
    metricsToken: env.METRICS_TOKEN || null,
    masterKeys: parseKeyring(env.MASTER_KEYS),
    pixReconcileEveryMs: int(env, 'PIX_RECONCILE_EVERY_SECONDS', 300) * 1000,
    pixReconcileWindowMs: int(env, 'PIX_RECONCILE_WINDOW_MINUTES', 120) * 60_000,
    payoutIntervalMs: int(env, 'PAYOUT_INTERVAL_MS', 1000),
    payoutReconcileAfterMs: int(env, 'PAYOUT_RECONCILE_AFTER_MINUTES', 30) * 60_000,
    payoutReconcileEveryMs: int(env, 'PAYOUT_RECONCILE_EVERY_SECONDS', 600) * 1000,
    webhookAllowPrivateUrls: bool(env, 'WEBHOOK_ALLOW_PRIVATE_URLS', !production),
    ...overrides,
  };
  if (config.headersTimeoutMs < 1 || config.requestTimeoutMs < 1) throw new Error('HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS must be positive');
  if (config.headersTimeoutMs > config.requestTimeoutMs) throw new Error('HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS');
  if (config.rateLimitAnonymousPerMinute < 1) throw new Error('RATE_LIMIT_ANONYMOUS_PER_MINUTE must be at least 1');
  if (config.bodyLimitBytes < 1024) throw new Error('BODY_LIMIT_BYTES must be at least 1024');
  if (config.writeBatchMax < 1 || config.writeBatchMax > 10_000) throw new Error('WRITE_BATCH_MAX must be 1..10000');
  if (config.writeQueueMaxPending < 1) throw new Error('WRITE_QUEUE_MAX_PENDING must be at least 1');
  if (config.webhookScheduleMs.length < 1 || config.webhookScheduleMs.length > 20 || config.webhookScheduleMs.some((v) => !Number.isSafeInteger(v) || v < 0)) {
    throw new Error('WEBHOOK_SCHEDULE_MS must be 1-20 comma-separated non-negative integers (ms)');
  }
  if (config.webhookLeaseMs <= config.webhookTimeoutMs) throw new Error('WEBHOOK_LEASE_MS must exceed WEBHOOK_TIMEOUT_MS');
  if (config.publicUrl !== null && !/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/i.test(config.publicUrl)) {
    throw new Error(`PUBLIC_URL must be the absolute http(s) URL clients reach this instance at, such as https://pay.example.com`);
  }
  return config;
}

// What `serve` needs on top of loadConfig. In production the instance's public URL is set, not
// guessed: without it, the request's Host header would pick the checkout session's `url` (which
// carries its client secret) and the OpenAPI document's `servers`, so anyone who can reach the
// server with a forged Host could hand a buyer a link to their own site.
export function checkServeConfig(config: Config): void {
  if (config.production && config.publicUrl === null) {
    throw new Error('PUBLIC_URL is required in production (NODE_ENV=production): set it to the URL clients reach this instance at, such as PUBLIC_URL=https://pay.example.com. Checkout links and the OpenAPI servers are built on it.');
  }
}

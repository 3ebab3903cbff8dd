import type { ServerOptions } from 'node:http';
import Fastify, { LogController, type FastifyInstance, type RouteOptions } from 'fastify';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import pino from 'pino';
import type { Config } from './config.js';
import type { Store } from './store/index.js';
import { idFloor, ulid } from './domain/ids.js';
import { isDateTimeQuery, sharedSchemas } from './http/common.js';
import { answerWhatNodeWould, clientErrorHandler, frameworkErrors, MAX_PARAM_LENGTH, registerErrorHandling } from './plugins/errors.js';
import { responseHeaders } from './http/headers.js';
import { redactingStream, type LineStream } from './http/redact.js';
import { registerBodyParsers } from './plugins/body.js';
import { registerRouteRules } from './plugins/route-rules.js';
import { registerInputChecks } from './plugins/input-checks.js';
import { KeyCache, registerAuth } from './plugins/auth.js';
import { RateLimiter, registerRateLimit } from './plugins/rate-limit.js';
import { registerIdempotency } from './plugins/idempotency.js';
import { Metrics, registerMetrics } from './plugins/metrics.js';
import { registerOpenApi } from './plugins/openapi.js';
import { contractViolations as contractViolationsOf } from './http/contract.js';
import { healthRoutes } from './modules/health.js';
import { accountRoutes, accountSchemas } from './modules/accounts/routes.js';
import { tokenRoutes, tokenSchemas } from './modules/tokens/index.js';
import { paymentRoutes } from './modules/payments/routes.js';
import { CreatePaymentFields, Payment, PaymentList, paymentPartSchemas, paymentRequestSchemas } from './modules/payments/schemas.js';
import { compileBody, type ShapeRule } from './http/shapes.js';
import { cachedSerializerFactory, cachedValidatorCompiler } from './http/compile-cache.js';
import { LooseCreateSplitRuleRequest, LooseSplitPreviewRequest, LooseUpdateSplitRuleRequest } from './modules/admin/split-rules/schemas.js';
import { checkPreviewShares, checkShares } from './modules/admin/split-rules/service.js';
import { cardOutcome, checkPaymentShape, confirmCardJob, confirmCardJobs, expirePixJob, JOB_CONFIRM, JOB_EXPIRE, type PaymentDeps } from './modules/payments/service.js';
import { SandboxProvider } from './providers/sandbox.js';
import type { PaymentProvider } from './providers/port.js';
import { CircuitBreaker } from './providers/breaker.js';
import { ConnectorRegistry } from './providers/registry.js';
import { connectorAccountRoutes } from './modules/admin/connector-accounts/routes.js';
import { providerCallbackRoutes, providerCallbackSchemas } from './modules/payments/provider-callbacks.js';
import { JOB_PIX_RECONCILE, JOB_PIX_SYNC, pixReconcileJob, pixSyncJob } from './modules/payments/live-pix.js';
import { JOB_CARD_CAPTURE, JOB_CARD_SYNC, cardCaptureJob, cardReconcileJob, cardSyncJob } from './modules/payments/live-card.js';
import { Worker, type JobHandler } from './jobs/worker.js';
import { LoadGauge } from './jobs/load.js';
import type { JobRow } from './jobs/queue.js';
import { recipientRoutes, recipientSchemas } from './modules/recipients/routes.js';
import { receivableRoutes, receivableSchemas } from './modules/receivables/routes.js';
import { registerAdmin, adminSchemas } from './modules/admin/index.js';
import { settlementRunRoutes } from './modules/admin/settlement-runs/routes.js';
import { foldStatsDeltas, STATS_FOLD_BATCH } from './modules/admin/stats/service.js';
import { settlementRoutes, settlementSchemas } from './modules/settlements/routes.js';
import { dailyRunJob, JOB_DAILY_RUN, JOB_PAYOUT, JOB_RUN, payoutJob, settlementRunJob } from './modules/settlements/service.js';
import { JOB_PAYOUT_RECONCILE, JOB_PAYOUT_SYNC, payoutReconcileJob, payoutSyncJob } from './modules/settlements/pix-payouts.js';
import { refundRoutes, refundSchemas } from './modules/refunds/routes.js';
import { disputeRoutes, disputeSchemas } from './modules/disputes/routes.js';
import { JOB_REFUND, refundJob } from './modules/refunds/service.js';
import { Balance, BalanceAmounts, RecipientBalance, balanceRoutes } from './modules/balance/routes.js';
import { webhookRoutes } from './modules/webhooks/routes.js';
import { webhookSchemas } from './modules/webhooks/schemas.js';
import { WebhookDispatcher } from './modules/webhooks/dispatcher.js';
import { takeDeliveriesCreated } from './modules/events/service.js';
import { backofficeRoutes } from './modules/backoffice.js';
import { checkoutRoutes } from './modules/checkout/routes.js';
import { checkoutPageRoutes } from './modules/checkout/pages.js';
import { checkoutSchemas, CheckoutPayFields, checkPayShape } from './modules/checkout/schemas.js';
import { expireCheckoutSessionJob, JOB_CHECKOUT_EXPIRE } from './modules/checkout/service.js';
import { systemClock, type Clock } from './clock.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const CORRELATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export const LOG_REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.card.number',
  '*.card.cvc',
  '*.cardNumber',
  '*.cvc',
  '*.secret',
  '*.clientSecret',
  '*.key',
];

export interface AppOptions {
  config: Config;
  store: Store;
  provider?: PaymentProvider;
  // The connectors (default: the standard API Pix for every Pix connector account).
  connectors?: ConnectorRegistry;
  logger?: pino.Logger | false;
  // Record every response whose status or headers its route does not declare in the OpenAPI
  // document (http/contract.ts) in `contractViolations`. Tests turn it on.
  checkContract?: boolean;
  // Serve HTTPS (tests: PSP callbacks arrive over mutual TLS; `requestCert` lets the callback
  // route check the PSP's client certificate).
  https?: import('node:https').ServerOptions;
  // Node's HTTP server options (tests shorten connectionsCheckingInterval, how often Node looks
  // for requests over their headers/request timeouts).
  http?: ServerOptions;
  // Routes added after the product's own, on the same instance (so every hook, the auth, the
  // idempotent write and the log line apply to them): `cli.ts serve --plugin FILE`. The bench
  // registers its ceiling routes this way (bench/ceiling-plugin.ts); the product ships none.
  plugins?: ServerPlugin[];
  // Where every time-based rule takes "now" (clock.ts): systemClock in production, a ManualClock
  // in tests that move time. One clock for the app, its store, worker and dispatcher: the store
  // must have been opened with the same one (Store.open({ clock })).
  clock?: Clock;
}

// A module given to `serve --plugin` exports one of these as its default.
export type ServerPlugin = (app: FastifyInstance) => void | Promise<void>;

export interface App {
  app: FastifyInstance;
  // What the payment jobs use (tests run a job's handler, e.g. the Pix reconciliation, directly).
  paymentDeps: PaymentDeps;
  worker: Worker;
  dispatcher: WebhookDispatcher;
  keyCache: KeyCache;
  // This process's requests in flight and event-loop load (the in-process worker yields to them).
  load: LoadGauge;
  // Responses that broke their route's documented contract (only with `checkContract`).
  contractViolations: string[];
  // Every registered route (Fastify's route table, in registration order).
  routes: readonly RouteOptions[];
  // Starts background work in this process (unless WORKER_IN_PROCESS=false).
  startWorker(): Promise<void>;
  // Stops taking requests, lets in-flight ones finish, stops jobs, closes the store.
  close(): Promise<void>;
}

// Strict JSON bodies: no coercion ("10" is not 10), no defaults slipped in, unknown properties
// refused. Query strings and path parameters are text by nature, so there (and only there)
// "20" is read as the integer 20.
function validators() {
  // verbose: an error carries its schema, so messages can say e.g. which fields an update takes.
  const base = { allErrors: true, strict: false, removeAdditional: false as const, verbose: true };
  const body = addFormats(new Ajv({ ...base, coerceTypes: false, useDefaults: false }));
  const url = addFormats(new Ajv({ ...base, coerceTypes: true, useDefaults: true }));
  // A date-time takes what ISO 8601 allows, seconds optional (http/common.ts, DATE_TIME_RULE):
  // generated Java clients send a whole minute as `2026-11-28T07:00Z`.
  for (const ajv of [body, url]) ajv.addFormat('date-time', { type: 'string', validate: isDateTimeQuery });
  return { body, url };
}

// `destination`: where lines go (tests capture them); by default LOG_FILE or stdout. Every line
// passes through redactSecrets (http/redact.ts) on its way out.
export function createLogger(config: Config, destination?: LineStream): pino.Logger {
  const inner = destination ?? (config.logFile ? pino.destination({ dest: config.logFile, sync: false, mkdir: true }) : pino.destination({ fd: 1, sync: false }));
  return pino({ level: config.logLevel, redact: { paths: LOG_REDACT, censor: '[redacted]' } }, redactingStream(inner) as pino.DestinationStream);
}

export async function buildApp(options: AppOptions): Promise<App> {
  const { config, store } = options;
  const clock = options.clock ?? systemClock;
  if (store.clock !== clock) throw new Error('buildApp: the store was opened with another clock; pass the same Clock to Store.open and buildApp.');
  const logger = options.logger === false ? pino({ level: 'silent' }) : options.logger ?? createLogger(config);
  let shuttingDown = false;

  const app = Fastify({
    loggerInstance: logger,
    // One line per request, written by our onResponse hook, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'correlationId' }),
    bodyLimit: config.bodyLimitBytes,
    genReqId: (req) => {
      const given = req.headers['x-correlation-id'];
      return typeof given === 'string' && CORRELATION_ID.test(given) ? given : 'req_' + ulid(clock.nowMs());
    },
    // Fastify's own 503 on closing is not our envelope; requests already received finish
    // normally while the server closes (see close()).
    return503OnClosing: false,
    ...(options.https ? { https: options.https } : {}),
    forceCloseConnections: 'idle',
    // Compiled response serializers are kept for the process's next app (http/compile-cache.ts).
    schemaController: { compilersFactory: { buildSerializer: cachedSerializerFactory() } },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Every answer in the envelope, including those to requests that never reach a route (bad
    // percent-encoding, over-long path parameters) or that the HTTP parser refuses.
    frameworkErrors,
    clientErrorHandler: clientErrorHandler(logger, clock),
    // A slow client holds a socket only so long (config.ts): Node refuses requests over these
    // limits with ERR_HTTP_REQUEST_TIMEOUT, answered 408 in the envelope by clientErrorHandler
    // (or the connection is closed, when an answer is already on its way).
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // Which proxy's X-Forwarded-For sets req.ip (per-address limits, the audit log). A number
    // (hops) is accepted by Fastify though its types leave it out.
    trustProxy: config.trustProxy as boolean,
    // Node's bare 400 for a missing Host becomes ours, in the envelope (plugins/errors.ts).
    http: {
      requireHostHeader: false,
      headersTimeout: config.headersTimeoutMs,
      // How often Node looks for requests over those limits (30 s by default, which would let a
      // request live up to 30 s past its limit): a quarter of the shorter limit, within 50 ms..30 s.
      connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(Math.min(config.headersTimeoutMs, config.requestTimeoutMs) / 4))),
      ...options.http,
    },
  }) as unknown as FastifyInstance;

  const schemas = [
    ...sharedSchemas, ...paymentRequestSchemas, ...paymentPartSchemas, Payment, PaymentList, ...accountSchemas, ...tokenSchemas,
    ...recipientSchemas, ...receivableSchemas, ...settlementSchemas, ...refundSchemas, ...disputeSchemas, BalanceAmounts, RecipientBalance, Balance, ...webhookSchemas, ...adminSchemas,
    ...checkoutSchemas, ...providerCallbackSchemas,
  ];
  for (const schema of schemas) app.addSchema(schema);
  // Made when a validator is first compiled: an app whose validators are all kept from an earlier
  // app of the process (http/compile-cache.ts) needs none.
  let ajv: ReturnType<typeof validators> | null = null;
  const ajvs = () => {
    if (!ajv) {
      ajv = validators();
      for (const schema of schemas) {
        ajv.body.addSchema(schema);
        ajv.url.addSchema(schema);
      }
    }
    return ajv;
  };
  // Bodies with a oneOf answer a clear message when they match no shape (http/shapes.ts).
  const shapes: Record<string, ShapeRule> = {
    CreatePaymentRequest: { loose: CreatePaymentFields, check: checkPaymentShape },
    CreateSplitRuleRequest: { loose: LooseCreateSplitRuleRequest, check: checkShares },
    UpdateSplitRuleRequest: { loose: LooseUpdateSplitRuleRequest, check: checkShares },
    SplitPreviewRequest: { loose: LooseSplitPreviewRequest, check: checkPreviewShares },
    CheckoutPayRequest: { loose: CheckoutPayFields, check: checkPayShape },
  };
  app.setValidatorCompiler(cachedValidatorCompiler(schemas, (schema, httpPart) => (httpPart === 'body' ? compileBody(ajvs().body, schema, shapes) : ajvs().url.compile(schema))));

  registerBodyParsers(app);

  // Every route as registered (after the hooks above it), for tests that walk the route table.
  const routes: RouteOptions[] = [];

  // Routes under /v1 take a secret key unless they say otherwise; docs and the document are public.
  app.addHook('onRoute', (route) => {
    routes.push(route);
    route.config ??= {} as never;
    const config = route.config as { auth?: string };
    if (config.auth === undefined) {
      const publicDoc = route.url.startsWith('/v1/docs') || route.url === '/v1/openapi.json';
      config.auth = route.url.startsWith('/v1/') && !publicDoc ? 'secret' : 'none';
    }
  });

  // Requests in flight, for the in-process worker's yielding (jobs/load.ts); counted only when
  // that worker runs here. The raw response's 'close' comes once per request whether it was
  // answered or the client went away.
  const load = new LoadGauge();
  if (config.workerInProcess) {
    const requestEnded = () => load.requestEnded();
    app.addHook('onRequest', (_req, reply, done) => {
      load.requestStarted();
      reply.raw.once('close', requestEnded);
      done();
    });
  }

  registerErrorHandling(app);
  answerWhatNodeWould(app.server, logger, clock);
  registerRouteRules(app);
  registerInputChecks(app);

  const keyCache = new KeyCache(store, config.authCacheTtlMs);
  registerAuth(app, keyCache);
  registerRateLimit(app, new RateLimiter(config.rateLimitPerMinute, 60_000, clock), new RateLimiter(config.rateLimitAnonymousPerMinute, 60_000, clock));
  registerIdempotency(app, store, { writeGuard: config.writeGuard });

  const metrics = new Metrics();
  registerMetrics(app, store, metrics, { token: config.metricsToken, production: config.production, clock });

  app.addHook('onSend', async (req, reply, payload) => {
    for (const [name, value] of Object.entries(responseHeaders(req.url, req.id))) {
      // A route that serves a page (the back office) sets its own policy and caching.
      if ((name === 'content-security-policy' || name === 'cache-control') && reply.hasHeader(name)) continue;
      reply.header(name, value);
    }
    return payload;
  });

  const contractViolations: string[] = [];
  if (options.checkContract) {
    app.addHook('onResponse', async (req, reply) => {
      contractViolations.push(...contractViolationsOf(req, reply));
    });
  }

  app.addHook('onResponse', async (req, reply) => {
    req.log.info({ method: req.method, url: req.routeOptions.url ?? req.url.split('?')[0], statusCode: reply.statusCode, durationMs: Math.round(reply.elapsedTime * 100) / 100, accountId: req.auth?.accountId }, 'request completed');
  });

  await registerOpenApi(app, { publicUrl: config.publicUrl });

  const provider = options.provider ?? new SandboxProvider(store, (token) => cardOutcome(store, token));
  const workerRef: { current: Worker | null } = { current: null };
  const breaker = new CircuitBreaker(config.providerBreakerFailures, config.providerBreakerCooldownMs, clock);
  const connectors = options.connectors ?? new ConnectorRegistry(config.masterKeys, clock);
  connectors.resolveTtlMs = config.connectorCacheTtlMs;
  const deps: PaymentDeps = { store, config, provider, kickWorker: () => workerRef.current?.kick(), breaker, connectors, clock };

  healthRoutes(app, store, () => shuttingDown);
  accountRoutes(app, store, { enabled: config.sandboxSignupEnabled, perHour: config.sandboxSignupPerHour });
  tokenRoutes(app, store);
  paymentRoutes(app, deps);
  recipientRoutes(app, store);
  receivableRoutes(app, store);
  settlementRoutes(app, store);
  refundRoutes(app, store, deps.kickWorker);
  disputeRoutes(app, store);
  balanceRoutes(app, store);
  webhookRoutes(app, store, { allowPrivateUrls: config.webhookAllowPrivateUrls });
  checkoutRoutes(app, deps);
  providerCallbackRoutes(app, deps);
  await registerAdmin(app, { store, config, keyCache, routes: [
    (scope) => settlementRunRoutes(scope, { store, kickWorker: deps.kickWorker }),
    (scope) => connectorAccountRoutes(scope, { store, keyring: config.masterKeys, clock, pix: connectors.pixConnector('pix_api'), get publicUrl() { return config.publicUrl; }, changed: () => connectors.clearResolved() }),
  ] });
  backofficeRoutes(app, { dir: config.backofficeDist ?? undefined });
  checkoutPageRoutes(app, store, { pageDir: config.checkoutPageDist, scriptFile: config.checkoutJsDist, cardEncryption: (owner) => connectors.cardClientEncryption(store.db, owner) });
  for (const plugin of options.plugins ?? []) await plugin(app);

  const worker = createWorker(store, config, deps, app.log, config.workerInProcess ? load : undefined);
  workerRef.current = worker;
  const dispatcher = createDispatcher(store, config, app.log);

  await app.ready();

  return {
    app,
    paymentDeps: deps,
    routes,
    load,
    contractViolations,
    worker,
    dispatcher,
    keyCache,
    async startWorker() {
      if (!config.workerInProcess) return;
      await worker.start();
      store.onCommit(() => {
        if (takeDeliveriesCreated()) dispatcher.kick();
      });
      dispatcher.start();
    },
    async close() {
      shuttingDown = true;
      await app.close();
      await worker.stop();
      await dispatcher.stop();
      connectors.close();
      await store.close();
      logger.flush?.();
    },
  };
}

export function createDispatcher(store: Store, config: Config, log: FastifyInstance['log']): WebhookDispatcher {
  return new WebhookDispatcher(store, {
    timeoutMs: config.webhookTimeoutMs,
    scheduleMs: config.webhookScheduleMs,
    disableAfterMs: config.webhookDisableAfterMs,
    maxInFlight: config.webhookMaxInFlight,
    perEndpointMaxInFlight: config.webhookPerEndpointMaxInFlight,
    pollMs: config.workerPollMs,
    leaseMs: config.webhookLeaseMs,
    allowPrivateUrls: config.webhookAllowPrivateUrls,
  }, log);
}

// `load`: the API process's own (the in-process worker then yields to saturating requests).
export function createWorker(store: Store, config: Config, deps: PaymentDeps, log: FastifyInstance['log'], load?: LoadGauge): Worker {
  const handlers: Record<string, JobHandler> = {
    [JOB_CONFIRM]: (job, workerId) => confirmCardJob(deps, job, workerId),
    [JOB_EXPIRE]: (job, workerId) => expirePixJob(deps, job, workerId),
    [JOB_PAYOUT]: (job, workerId) => payoutJob({ ...deps, retryBaseMs: config.providerRetryBaseMs }, job, workerId),
    [JOB_PAYOUT_SYNC]: (job, workerId) => payoutSyncJob(deps, job, workerId),
    [JOB_REFUND]: (job, workerId) => refundJob({ ...deps, retryBaseMs: config.providerRetryBaseMs }, job, workerId),
    [JOB_RUN]: (job, workerId) => settlementRunJob(deps, job, workerId),
    [JOB_CHECKOUT_EXPIRE]: (job, workerId) => expireCheckoutSessionJob(deps, job, workerId),
    [JOB_PIX_SYNC]: (job, workerId) => pixSyncJob(deps, job, workerId),
    [JOB_CARD_SYNC]: (job, workerId) => cardSyncJob(deps, job, workerId),
    [JOB_CARD_CAPTURE]: (job, workerId) => cardCaptureJob(deps, job, workerId),
  };
  const batchHandlers = { [JOB_CONFIRM]: (jobs: JobRow[], workerId: string) => confirmCardJobs(deps, jobs, workerId) };
  const worker = new Worker(store, handlers, { pollMs: config.workerPollMs, leaseMs: config.jobLeaseMs, concurrency: config.workerConcurrency, batchSize: config.workerConcurrency, yieldTo: load, busyRoundMs: config.workerBusyRoundMs, concurrencyWithRequests: config.workerConcurrencyWithRequests }, log, batchHandlers);
  if (config.settlementScheduleEnabled) worker.every(JOB_DAILY_RUN, 3_600_000, () => dailyRunJob(deps));
  // One reconciliation for every connector: Pix at its PSPs, then cards waiting for an acquirer.
  worker.every(JOB_PIX_RECONCILE, config.pixReconcileEveryMs, async () => {
    await pixReconcileJob(deps, log);
    await cardReconcileJob(deps, log);
  });
  worker.every(JOB_PAYOUT_RECONCILE, config.payoutReconcileEveryMs, async () => {
    await payoutReconcileJob(deps, log);
  });
  // The home's aggregates: deltas the triggers wrote, folded into stats_daily (a read sums both,
  // so this only keeps stats_deltas small). Small transactions, with a turn of the event loop
  // between them, so the requests' writes go in between instead of waiting for the whole fold.
  worker.every('stats.fold', 60_000, async () => {
    while ((await store.write((tx) => foldStatsDeltas(tx, store.engine))) === STATS_FOLD_BATCH) await new Promise<void>((r) => setImmediate(r));
  });
  worker.every(JOB_PURGE, 3_600_000, () => purgeExpired(store, config));
  return worker;
}

export const JOB_PURGE = 'maintenance.purge';

// Idempotency keys older than IDEMPOTENCY_RETENTION, and events (with their finished deliveries)
// older than EVENT_RETENTION, by the store's clock. Run hourly by the worker.
export async function purgeExpired(store: Store, config: Config): Promise<void> {
  const nowMs = store.clock.nowMs();
  await store.write(async (tx) => {
    // Bounded per round so a huge backlog never holds the writer for long.
    const idem = tx.selectFrom('idempotency_keys').select('key').where('created_at_ms', '<', nowMs - config.idempotencyRetentionMs).limit(10_000);
    await tx.deleteFrom('idempotency_keys').where('created_at_ms', '<', nowMs - config.idempotencyRetentionMs).where('key', 'in', idem).execute();
    const events = tx.selectFrom('events').select('id').where('id', '<', idFloor('event', nowMs - config.eventRetentionMs)).limit(10_000);
    await tx.deleteFrom('webhook_deliveries').where('event_id', 'in', events).where('status', '!=', 'pending').execute();
    await tx.deleteFrom('events').where('id', 'in', events).execute();
  });
}

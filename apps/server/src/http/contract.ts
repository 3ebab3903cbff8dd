import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { PROVIDER_CALLBACKS_PREFIX } from '../plugins/rate-limit.js';
import { ApiError, ERROR_STATUS, type ErrorCode } from '../errors.js';

// What each route can answer: its statuses (with the error codes behind each) and the response
// headers of each status. Derived in one place from what the plugins do to a route (parsing,
// validation, keys, the admin session, rate limits, idempotency) plus the codes the route's own
// service throws (`config.throws`), so a new route is described right without a hand list.
// The OpenAPI document declares exactly this (plugins/openapi.ts), and with `checkContract` on
// (every test app) a response whose status or headers it does not declare is recorded as a
// violation, so the test suites check the document against what the server really sends.

export type ResponseHeader =
  | 'X-Correlation-Id'
  | 'Retry-After'
  | 'RateLimit-Limit'
  | 'RateLimit-Remaining'
  | 'RateLimit-Reset'
  | 'Idempotent-Replayed'
  | 'Set-Cookie';

declare module 'fastify' {
  interface FastifyContextConfig {
    // Error codes the route's own handler or service can answer, beyond those the plugins
    // produce (routeContract derives those).
    throws?: ErrorCode[];
    // Response headers the handler sets itself, by status (e.g. the admin Set-Cookie).
    sets?: Record<number, ResponseHeader[]>;
    // false: the route writes nothing to the store, so it never meets a full write queue.
    writes?: boolean;
    // Filled in for every documented route when it is registered.
    contract?: RouteContract;
  }
}

export interface StatusContract {
  codes: ErrorCode[]; // empty for a success
  headers: ResponseHeader[];
}

export interface RouteContract {
  operationId: string;
  responses: Map<number, StatusContract>;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const RATE_LIMIT_HEADERS: ResponseHeader[] = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];

// Stored for an Idempotency-Key and answered again on a replay (see ApiError.storable).
const replayable = (code: ErrorCode) => new ApiError(code, '').storable;

type RouteLike = Pick<RouteOptions, 'method' | 'url' | 'schema' | 'config'>;

export function routeContract(route: RouteLike): RouteContract | null {
  const schema = (route.schema ?? {}) as Record<string, unknown> & { hide?: boolean; operationId?: string; response?: Record<string, unknown> };
  if (schema.hide || !schema.operationId) return null;
  const config = (route.config ?? {}) as { auth?: string; idempotent?: boolean; writes?: boolean; rateLimit?: unknown; throws?: ErrorCode[]; sets?: Record<number, ResponseHeader[]> };
  const method = String(Array.isArray(route.method) ? route.method[0] : route.method).toUpperCase();
  const admin = route.url.startsWith('/admin/');
  // Signing in, and asking whether one is signed in (GET /admin/session/status answers 200 either way).
  const signIn = admin && ((method === 'POST' && route.url === '/admin/session') || ((method === 'GET' || method === 'HEAD') && route.url === '/admin/session/status'));
  const takesBody = BODY_METHODS.has(method);
  const keyAuth = config.auth === 'secret' || config.auth === 'publishable' || config.auth === 'checkout';
  const rateLimited = keyAuth || config.rateLimit !== undefined;
  // The idempotency preHandler scopes keys to an API key's account or to a signed-in admin.
  const idempotent = takesBody && config.idempotent !== false && (keyAuth || (admin && !signIn));

  const codes = new Set<ErrorCode>(['INTERNAL_ERROR']);
  // Malformed JSON on any route that reads a body; any schema refuses what it does not match.
  if (takesBody || schema.body || schema.querystring || schema.params || schema.headers) codes.add('VALIDATION_ERROR');
  if (takesBody) {
    codes.add('PAYLOAD_TOO_LARGE');
    codes.add('UNSUPPORTED_MEDIA_TYPE');
  }
  // A write meets a full write queue (store/index.ts, WRITE_QUEUE_MAX_PENDING).
  if (takesBody && config.writes !== false) codes.add('SERVICE_UNAVAILABLE');
  if (keyAuth) for (const c of ['AUTHENTICATION_REQUIRED', 'INVALID_API_KEY', 'PERMISSION_DENIED'] as const) codes.add(c);
  // Requests without a valid key count against their address's anonymous limit, and admin
  // requests refused without a valid session too (plugins/rate-limit.ts).
  if (!route.url.startsWith(PROVIDER_CALLBACKS_PREFIX + '/')) codes.add('RATE_LIMITED');
  if (admin) {
    codes.add('PERMISSION_DENIED'); // an API key sent to /admin, or a mutation without its CSRF token
    if (!signIn) codes.add('AUTHENTICATION_REQUIRED');
  }
  if (idempotent) {
    codes.add('IDEMPOTENCY_KEY_IN_USE');
    codes.add('IDEMPOTENCY_KEY_REUSED');
  }
  const serviceCodes = new Set<ErrorCode>(config.throws ?? []);
  // A path parameter names an object, which may not exist (for this account and mode).
  if (schema.params || route.url.includes('/:')) serviceCodes.add('NOT_FOUND');
  for (const c of serviceCodes) codes.add(c);

  const responses = new Map<number, StatusContract>();
  const headersOf = (status: number, statusCodes: ErrorCode[]): ResponseHeader[] => {
    const headers: ResponseHeader[] = ['X-Correlation-Id'];
    // The per-key limiter runs once the key is known: a 401 never carries its headers.
    // Every 429 carries the headers of the limit it hit.
    if (status === 429 || (rateLimited && !(keyAuth && status === 401))) headers.push(...RATE_LIMIT_HEADERS);
    if (status === 429 || status === 503 || statusCodes.includes('IDEMPOTENCY_KEY_IN_USE')) headers.push('Retry-After');
    const success = status < 400;
    if (idempotent && (success || statusCodes.some((c) => serviceCodes.has(c) && replayable(c)))) headers.push('Idempotent-Replayed');
    for (const h of config.sets?.[status] ?? []) if (!headers.includes(h)) headers.push(h);
    return headers;
  };
  for (const status of Object.keys(schema.response ?? {}).map(Number).filter((s) => s >= 200 && s < 300)) {
    responses.set(status, { codes: [], headers: headersOf(status, []) });
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const statusCodes = byStatus.get(status) as ErrorCode[];
    responses.set(status, { codes: statusCodes, headers: headersOf(status, statusCodes) });
  }
  return { operationId: schema.operationId, responses };
}

// Every documented route gets its contract when it is registered; returns them by operationId
// for the document. Must be added before the routes are.
export function registerContracts(app: FastifyInstance): Map<string, RouteContract> {
  const contracts = new Map<string, RouteContract>();
  app.addHook('onRoute', (route) => {
    const contract = routeContract(route);
    if (!contract) return;
    route.config ??= {} as never;
    (route.config as { contract?: RouteContract }).contract = contract;
    contracts.set(contract.operationId, contract);
  });
  return contracts;
}

// Headers a route must declare when it sends them (lower-case, as Node keeps them).
const CHECKED_HEADERS: Array<[string, ResponseHeader]> = [
  ['retry-after', 'Retry-After'],
  ['ratelimit-limit', 'RateLimit-Limit'],
  ['ratelimit-remaining', 'RateLimit-Remaining'],
  ['ratelimit-reset', 'RateLimit-Reset'],
  ['idempotent-replayed', 'Idempotent-Replayed'],
  ['set-cookie', 'Set-Cookie'],
];

// What a response broke of its route's contract (empty when it kept it).
export function contractViolations(req: FastifyRequest, reply: FastifyReply): string[] {
  const contract = req.routeOptions.config?.contract;
  if (!contract) return [];
  const where = `${contract.operationId} (${req.method} ${req.url.split('?')[0]})`;
  const declared = contract.responses.get(reply.statusCode);
  if (!declared) return [`${where} answered ${reply.statusCode}, which it does not declare (declared: ${[...contract.responses.keys()].join(', ')})`];
  const out: string[] = [];
  if (reply.getHeader('x-correlation-id') === undefined) out.push(`${where} ${reply.statusCode}: no X-Correlation-Id`);
  for (const [name, header] of CHECKED_HEADERS) {
    if (reply.getHeader(name) !== undefined && !declared.headers.includes(header)) out.push(`${where} ${reply.statusCode} sent ${header}, which it does not declare`);
  }
  return out;
}

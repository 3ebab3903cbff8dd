import { STATUS_CODES, maxHeaderSize, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, StoredResponse, errorBody } from '../errors.js';
import { PATTERN_MESSAGES } from '../http/common.js';
import { ulid } from '../domain/ids.js';
import { responseHeaders } from '../http/headers.js';
import { chargeAdminRefusal } from './rate-limit.js';
import type { Clock } from '../clock.js';

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  parentSchema?: { properties?: Record<string, unknown>; required?: unknown; minProperties?: unknown };
}

function dotted(instancePath: string, extra?: unknown): string {
  const parts = instancePath.split('/').filter(Boolean);
  if (typeof extra === 'string') parts.push(extra);
  return parts.join('.');
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string', integer: 'an integer', number: 'a number', boolean: 'true or false', object: 'an object', array: 'an array', null: 'null',
};
const FORMAT_NAMES: Record<string, string> = {
  'date-time': 'an ISO-8601 date and time (e.g. 2026-01-31T12:00:00Z)', date: 'a date as YYYY-MM-DD', email: 'a valid email address', uri: 'a valid URL', url: 'a valid URL', uuid: 'a UUID',
};

const typeNames = (types: string[]) => {
  const names = [...new Set(types.flatMap((t) => t.split(',')))].map((t) => TYPE_NAMES[t] ?? t);
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}` : names[0];
};
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const isAmount = (param: string) => param === 'amount' || param === 'amountInCents';

// Every message is a sentence: it ends with a period, as the services' own messages do.
const sentence = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`);

// One validation failure, in words a developer reads once and fixes. `param` is dotted; the
// body itself (param '') is "The body".
function describe(e: AjvError, param: string, all: AjvError[], whyRequired: Record<string, string>): string {
  return sentence(phrase(e, param, all, whyRequired));
}

function phrase(e: AjvError, param: string, all: AjvError[], whyRequired: Record<string, string>): string {
  const p = e.params;
  if (param === '') {
    if (e.keyword === 'type') return 'The body must be a JSON object';
    if (e.keyword === 'minProperties') {
      // `reason` says why a change is made (admin updates): it is not a change to make.
      const fields = Object.keys(e.parentSchema?.properties ?? {}).filter((f) => f !== 'reason');
      return fields.length > 0 ? `Send at least one of ${fields.join(', ')}.` : 'Send at least one field to change.';
    }
  }
  const subject = param || 'The body';
  switch (e.keyword) {
    case 'required': return whyRequired[param] ? `${subject} is required: ${whyRequired[param]}` : `${subject} is required`;
    case 'type': return isAmount(param) ? `${param} must be a positive integer` : `${subject} must be ${typeNames([String(p.type)])}`;
    case 'anyOf': case 'oneOf': {
      // A union of plain types (`string` or `null`): name them; otherwise say which field.
      const branches = all.filter((b) => b.keyword === 'type' && b.instancePath === e.instancePath).map((b) => String(b.params.type));
      return branches.length > 0 ? `${subject} must be ${typeNames(branches)}` : `${subject} does not match any of the accepted shapes`;
    }
    case 'minimum': return isAmount(param) ? `${param} must be a positive integer` : `${subject} must be at least ${String(p.limit)}`;
    case 'exclusiveMinimum': return isAmount(param) ? `${param} must be a positive integer` : `${subject} must be greater than ${String(p.limit)}`;
    case 'maximum': return `${subject} must be at most ${String(p.limit)}`;
    case 'exclusiveMaximum': return `${subject} must be less than ${String(p.limit)}`;
    case 'multipleOf': return p.multipleOf === 0.01 ? `${subject} must have at most two decimal places` : `${subject} must be a multiple of ${String(p.multipleOf)}`;
    case 'minLength': return p.limit === 1 ? `${subject} must not be empty` : `${subject} must be at least ${plural(Number(p.limit), 'character')} long`;
    case 'maxLength': return `${subject} must be at most ${plural(Number(p.limit), 'character')} long`;
    case 'pattern': return `${subject} ${PATTERN_MESSAGES.get(String(p.pattern)) ?? `is not in the expected format (${String(p.pattern)})`}`;
    case 'format': return `${subject} must be ${FORMAT_NAMES[String(p.format)] ?? `a valid ${String(p.format)}`}`;
    case 'enum': return `${subject} must be one of: ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'const': return `${subject} must be ${String(p.allowedValue)}`;
    case 'minItems': return `${subject} must have at least ${plural(Number(p.limit), 'item')}`;
    case 'maxItems': return `${subject} must have at most ${plural(Number(p.limit), 'item')}`;
    case 'uniqueItems': return `${subject} must not contain the same item twice`;
    case 'minProperties': return `${subject} must have at least ${plural(Number(p.limit), 'key')}`;
    case 'maxProperties': return `${subject} must have at most ${plural(Number(p.limit), 'key')}`;
    case 'propertyNames': {
      const inner = all.find((b) => b !== e && b.instancePath === e.instancePath && b.params.propertyName === undefined && b.keyword === 'maxLength');
      return inner ? `Keys of ${subject} must be at most ${plural(Number(inner.params.limit), 'character')} long` : `${subject} has a key that is not accepted`;
    }
    default: return `${subject} is not valid`;
  }
}

// No body at all is told what `{}` would be: the first required field is missing (a bare
// `POST /admin/settlement-runs` is told its `reason` is required), or an update must change
// something, rather than that "the body must be a JSON object". A body that is there but not an
// object (`[]`, `null`) is still told that.
function missingBody(e: AjvError, context: string | undefined, bodyAbsent: boolean): AjvError | null {
  if (!bodyAbsent || context !== 'body' || e.keyword !== 'type' || e.instancePath !== '' || !e.parentSchema) return null;
  const { required, minProperties } = e.parentSchema;
  if (Array.isArray(required) && typeof required[0] === 'string') return { keyword: 'required', instancePath: '', params: { missingProperty: required[0] } };
  if (typeof minProperties === 'number' && minProperties > 0) return { keyword: 'minProperties', instancePath: '', params: { limit: minProperties }, parentSchema: e.parentSchema };
  return null;
}

// HTTP header names as people write them (Ajv sees them lowercased).
const headerName = (name: string) => name.split('-').map((w) => (w === 'csrf' ? 'CSRF' : w.charAt(0).toUpperCase() + w.slice(1))).join('-');

// Turns a schema validation failure into the envelope: names the field, and names every unknown
// field (we refuse what we do not understand rather than drop it).
// `facts` are what only the request knows (see ValidationFailure).
export function validationError(errors: AjvError[], context: string | undefined, facts: { bodyAbsent?: boolean; whyRequired?: Record<string, string> } = {}): ApiError {
  const where = context === 'querystring' ? 'query parameter' : context === 'params' ? 'path parameter' : context === 'headers' ? 'header' : 'field';
  const name = (param: string) => (context === 'headers' ? headerName(param) : param);
  const unknown = errors.filter((e) => e.keyword === 'additionalProperties').map((e) => name(dotted(e.instancePath, e.params.additionalProperty)));
  const details = errors.map((e) => ({
    param: name(dotted(e.instancePath, e.params.missingProperty ?? e.params.additionalProperty)),
    issue: e.keyword,
  }));
  if (unknown.length > 0) {
    return new ApiError('VALIDATION_ERROR', `Unknown ${where}${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}.`, { param: unknown[0], details });
  }
  // A union's own error says more than its first branch's.
  const first = missingBody(errors[0], context, facts.bodyAbsent === true) ?? errors.find((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf') ?? errors[0];
  const param = name(dotted(first.instancePath, first.params.missingProperty));
  return new ApiError('VALIDATION_ERROR', describe(first, param, errors, facts.whyRequired ?? {}), { param: param || undefined, details: details.length > 1 ? details : undefined });
}

// Fastify's own errors that a client can cause (node_modules/fastify/lib/errors.js, reviewed
// code by code for 5.x): each gets the envelope and the status of its code. The rest of that
// list is raised while the app is being built (registration, plugins, schemas) or by our own
// code misusing the reply: those are bugs, answered INTERNAL_ERROR.
const FRAMEWORK_CODES: Record<string, () => ApiError> = {
  FST_ERR_CTP_INVALID_JSON_BODY: () => new ApiError('VALIDATION_ERROR', 'The body is not valid JSON.'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new ApiError('VALIDATION_ERROR', 'The body is empty; send a JSON object.'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new ApiError('VALIDATION_ERROR', 'The Content-Length header does not match the length of the body.', { param: 'Content-Length' }),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new ApiError('PAYLOAD_TOO_LARGE', 'The body is larger than the limit.'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => unsupportedMediaType(),
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: () => unsupportedMediaType(),
  FST_ERR_ROUTE_MISSING_CONTENT: () => new ApiError('VALIDATION_ERROR', 'The body is empty; send a JSON object.'),
  FST_ERR_BAD_URL: () => new ApiError('VALIDATION_ERROR', 'The URL path is malformed: a "%" must be followed by two hexadecimal digits of valid UTF-8.'),
  FST_ERR_MAX_PARAM_LENGTH: () => new ApiError('VALIDATION_ERROR', `A path parameter is longer than ${MAX_PARAM_LENGTH} characters.`),
  FST_ERR_HANDLER_TIMEOUT: () => new ApiError('SERVICE_UNAVAILABLE', 'The request took too long; it may be retried with the same Idempotency-Key.'),
};

// Router limit on one path segment; ids are at most 64 characters, so anything this long is
// not one of ours.
export const MAX_PARAM_LENGTH = 200;

export const unsupportedMediaType = () => new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.', { param: 'Content-Type' });

// Fastify's validation error, with what the onError hook of registerErrorHandling adds from the
// request: whether it had no body at all, and why the route requires some fields.
interface ValidationFailure {
  validation?: AjvError[];
  validationContext?: string;
  bodyAbsent?: boolean;
  whyRequired?: Record<string, string>;
}

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as FastifyError & ValidationFailure;
  if (e?.validation) return validationError(e.validation, e.validationContext, { bodyAbsent: e.bodyAbsent, whyRequired: e.whyRequired });
  if (e?.code && FRAMEWORK_CODES[e.code]) return FRAMEWORK_CODES[e.code]();
  if (e instanceof SyntaxError && e.statusCode === 400) return new ApiError('VALIDATION_ERROR', 'The body is not valid JSON.');
  // Any other 4xx raised below us (the body stream, a plugin's static files): the closest code,
  // never a 500 for a client's mistake.
  switch (e?.statusCode) {
    case 404: return new ApiError('NOT_FOUND', 'No such route.');
    case 408: return new ApiError('REQUEST_TIMEOUT', 'The request was not received in time.');
    case 413: return new ApiError('PAYLOAD_TOO_LARGE', 'The body is larger than the limit.');
    case 415: return unsupportedMediaType();
    case 431: return new ApiError('REQUEST_HEADERS_TOO_LARGE', 'The request headers are too large.');
  }
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) return new ApiError('VALIDATION_ERROR', 'The request is malformed.');
  return new ApiError('INTERNAL_ERROR', 'Something went wrong on our side. Quote the correlation id to support.');
}

// Hook the idempotency plugin provides so a refused operation answers the same on replay.
// Stores a refusal as its Idempotency-Key's answer; answers null, or what the request must
// answer instead when another request with the key committed first.
export type StoreErrorHook = (statusCode: number, body: string) => Promise<StoredResponse | ApiError | null>;

export async function sendError(req: FastifyRequest, reply: FastifyReply, err: unknown): Promise<FastifyReply> {
  if (err instanceof StoredResponse) {
    return reply.code(err.statusCode).header('idempotent-replayed', 'true').type('application/json; charset=utf-8').send(err.body);
  }
  const apiError = chargeAdminRefusal(req, toApiError(err));
  if (apiError.statusCode >= 500) {
    req.log.error({ err, code: apiError.code }, 'request failed');
  } else {
    req.log.info({ code: apiError.code, param: apiError.param }, 'request refused');
  }
  const body = errorBody(apiError, req.id);
  if (apiError.storable && req.storeIdempotentError) {
    let instead: StoredResponse | ApiError | null = null;
    try {
      instead = await req.storeIdempotentError(apiError.statusCode, body);
    } catch (storeErr) {
      req.log.warn({ err: storeErr }, 'could not store idempotent error response');
    }
    if (instead instanceof StoredResponse) {
      return reply.code(instead.statusCode).header('idempotent-replayed', 'true').type('application/json; charset=utf-8').send(instead.body);
    }
    if (instead) {
      if (instead.headers) reply.headers(instead.headers);
      return reply.code(instead.statusCode).type('application/json; charset=utf-8').send(errorBody(instead, req.id));
    }
  }
  if (apiError.headers) reply.headers(apiError.headers);
  return reply.code(apiError.statusCode).type('application/json; charset=utf-8').send(body);
}

export function registerErrorHandling(app: FastifyInstance): void {
  // Path patterns of every route, to tell an unknown path (404) from a known one with the wrong
  // method (405, with Allow).
  const patterns: Array<{ regex: RegExp; method: string }> = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const source = '^' + route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+') + '/?$';
    for (const method of methods) if (method !== 'HEAD') patterns.push({ regex: new RegExp(source), method });
  });

  app.addHook('onRequest', (req, reply, done) => {
    // For an answer the HTTP parser has to give in the middle of a request's body.
    rememberCorrelationId(req, reply);
    // RFC 9112 3.2: an HTTP/1.1 request without Host is a 400 (Node's own bare 400 is off).
    if (req.headers.host === undefined && req.raw.httpVersion === '1.1') {
      return done(new ApiError('VALIDATION_ERROR', 'An HTTP/1.1 request must carry a Host header.', { param: 'Host' }));
    }
    done();
  });

  // What a validation message needs from the request, added to the failure here (onError hooks
  // run before the error handler, in every scope):
  // - Fastify validates a request without a body as `null`, as it would a JSON `null`; only the
  //   request tells them apart (missingBody).
  // - A route that requires a reason says why (its audit spec's reasonHint): a reason the schema
  //   finds missing is told the same words as a blank one the audit hook refuses.
  app.addHook('onError', (req, _reply, err, done) => {
    const failure = err as ValidationFailure;
    if (failure.validation) {
      if (req.body === undefined) failure.bodyAbsent = true;
      const audit = req.routeOptions.config?.audit;
      if (audit && !('exempt' in audit) && audit.reasonHint) failure.whyRequired = { reason: audit.reasonHint };
    }
    done();
  });

  app.setErrorHandler(async (err, req, reply) => sendError(req, reply, err));

  app.setNotFoundHandler(async (req, reply) => {
    const path = req.url.split('?')[0];
    const allowed = [...new Set(patterns.filter((p) => p.regex.test(path)).map((p) => p.method))];
    if (allowed.length > 0) {
      return sendError(req, reply, new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use ${allowed.join(', ')}.`, { headers: { allow: allowed.join(', ') } }));
    }
    return sendError(req, reply, new ApiError('NOT_FOUND', `No such route: ${req.method} ${path}.`));
  });
}

// Fastify's `frameworkErrors` option: errors found while routing, before any hook runs (a bad
// percent-encoding, an over-long path parameter). The request has no route, so no onSend hook
// adds our headers: they are set here.
export function frameworkErrors(error: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  reply.headers(responseHeaders(req.url, req.id));
  void sendError(req, reply, error);
}

// Correlation id of the request a raw response belongs to, for errors the HTTP parser finds in
// the middle of a body (see clientErrorHandler).
const correlationIds = new WeakMap<ServerResponse, string>();

export function rememberCorrelationId(req: FastifyRequest, reply: FastifyReply): void {
  correlationIds.set(reply.raw, req.id);
}

// What the HTTP parser reports (llhttp codes, and Node's own timeouts) as our envelope.
export function clientErrorToApiError(err: NodeJS.ErrnoException & { reason?: string }): ApiError {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError('REQUEST_TIMEOUT', 'The request was not received in time.');
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError('REQUEST_HEADERS_TOO_LARGE', `The request line and headers are larger than ${maxHeaderSize / 1024} KiB.`);
    default: {
      // llhttp's reasons are short, fixed texts ("Invalid character in chunk size") about the
      // framing, never the request's content.
      const reason = typeof err.reason === 'string' && /^[\x20-\x7E]{1,100}$/.test(err.reason) ? ` (${err.reason.replace(/\.$/, '')})` : '';
      return new ApiError('VALIDATION_ERROR', `The request is not valid HTTP/1.1${reason}.`);
    }
  }
}

// Fastify's `clientErrorHandler`: the HTTP parser refused the bytes (headers over the limit,
// a malformed request line or chunked body, a timeout), so there is no request to answer through
// Fastify. The answer is written on the socket as raw HTTP, in the envelope, and the connection
// closed (the parser cannot find the next request in what follows).
export function clientErrorHandler(log: FastifyBaseLogger, clock: Clock) {
  return (err: NodeJS.ErrnoException & { reason?: string }, socket: Socket): void => {
    // A reset connection has nobody left to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
    // Node detaches a response from its socket once it has finished, so `inFlight` is gone when
    // a request was answered before its body ended (a 401 without reading the body) and the
    // body then times out: the latest response on the socket says whether it was.
    const latest = latestResponses.get(socket);
    if (inFlight?.headersSent || (latest?.headersSent && !latest.req.complete)) {
      // This request has had its answer (or part of it is on the wire): a second one would be
      // an answer nobody asked for, or corrupt the first.
      socket.destroy();
      return;
    }
    const apiError = clientErrorToApiError(err);
    const correlationId = (inFlight && correlationIds.get(inFlight)) || 'req_' + ulid(clock.nowMs());
    log.info({ correlationId, code: apiError.code, parserError: err.code }, 'request refused by the HTTP parser');
    writeRawError(socket, apiError, correlationId);
  };
}

// An answer in the envelope written straight on the socket, then the connection closed.
function writeRawError(socket: Socket, apiError: ApiError, correlationId: string): void {
  const body = errorBody(apiError, correlationId);
  const headers = {
    ...responseHeaders('', correlationId),
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  };
  if (socket.writable) {
    const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.end(`HTTP/1.1 ${apiError.statusCode} ${STATUS_CODES[apiError.statusCode]}\r\n${head}\r\n${body}`);
  }
  // Whatever the client still sends is not read; the socket goes once the answer is out.
  socket.destroySoon();
}

// The latest response of each connection, still there once it has finished (see
// clientErrorHandler).
const latestResponses = new WeakMap<Socket, ServerResponse>();

// Requests Node's HTTP server would answer by itself, outside Fastify and the envelope:
// - CONNECT (Node closes the connection without a word): 405 in the envelope.
// - An Expect other than 100-continue (Node answers a bare 417): the expectation is ignored, as
//   RFC 9110 10.1.1 allows, and the request is handled like any other.
// (An HTTP/1.1 request without Host, which Node would answer with a bare 400, is refused by the
// onRequest hook in registerErrorHandling: Node's own check is off, see app.ts.)
// It also remembers each connection's latest response, so that a timeout in the body of a request
// already answered closes the connection instead of answering it twice (clientErrorHandler).
export function answerWhatNodeWould(server: Server, log: FastifyBaseLogger, clock: Clock): void {
  // Every request, routed or not (a bad URL is answered before any Fastify hook runs).
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    latestResponses.set(req.socket, res);
  });
  server.on('connect', (req: IncomingMessage, socket: Socket) => {
    const correlationId = 'req_' + ulid(clock.nowMs());
    log.info({ correlationId, code: 'METHOD_NOT_ALLOWED' }, 'CONNECT refused');
    writeRawError(socket, new ApiError('METHOD_NOT_ALLOWED', 'CONNECT is not supported: this is an HTTP API, not a proxy.'), correlationId);
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    server.emit('request', req, res);
  });
}

import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, StoredResponse, errorBody } from '../errors.js';
import { PATTERN_MESSAGES } from '../http/common.js';

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  parentSchema?: { properties?: Record<string, unknown> };
}

function dotted(instancePath: string, extra?: unknown): string {
  const parts = instancePath.split('/').filter(Boolean);
  if (typeof extra === 'string') parts.push(extra);
  return parts.join('.');
}

function describe(e: AjvError, param: string): string {
  switch (e.keyword) {
    case 'required': return `${param} is required`;
    case 'type': return param === 'amount' || param === 'amountInCents' ? `${param} must be a positive integer` : `${param} must be ${e.params.type}`;
    case 'minimum': case 'exclusiveMinimum':
      return param === 'amount' || param === 'amountInCents' ? `${param} must be a positive integer` : `${param} ${e.message}`;
    case 'enum': return `${param} must be one of: ${(e.params.allowedValues as unknown[]).join(', ')}`;
    case 'const': return `${param} must be ${String(e.params.allowedValue)}`;
    case 'pattern': return `${param} ${PATTERN_MESSAGES.get(String(e.params.pattern)) ?? 'has an invalid format'}`;
    case 'minProperties': {
      // `reason` says why a change is made (admin updates): it is not a change to make.
      const fields = Object.keys(e.parentSchema?.properties ?? {}).filter((f) => f !== 'reason');
      return fields.length > 0 ? `Send at least one of ${fields.join(', ')}.` : `${param || 'body'} ${e.message ?? 'is invalid'}`;
    }
    case 'format': return `${param} must be a valid ${e.params.format}`;
    default: return `${param || 'body'} ${e.message ?? 'is invalid'}`;
  }
}

// Turns a schema validation failure into the envelope: names the field, and names every unknown
// field (we refuse what we do not understand rather than drop it).
export function validationError(errors: AjvError[], context: string | undefined): ApiError {
  const where = context === 'querystring' ? 'query parameter' : context === 'params' ? 'path parameter' : context === 'headers' ? 'header' : 'field';
  const unknown = errors.filter((e) => e.keyword === 'additionalProperties').map((e) => dotted(e.instancePath, e.params.additionalProperty));
  const details = errors.map((e) => ({
    param: dotted(e.instancePath, e.params.missingProperty ?? e.params.additionalProperty),
    issue: e.keyword,
  }));
  if (unknown.length > 0) {
    return new ApiError('VALIDATION_ERROR', `Unknown ${where}${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`, { param: unknown[0], details });
  }
  const first = errors[0];
  const param = dotted(first.instancePath, first.params.missingProperty);
  const label = context === 'headers' ? param : param;
  return new ApiError('VALIDATION_ERROR', describe(first, label || 'body'), { param: param || undefined, details: details.length > 1 ? details : undefined });
}

const FRAMEWORK_CODES: Record<string, (e: FastifyError) => ApiError> = {
  FST_ERR_CTP_INVALID_JSON_BODY: () => new ApiError('VALIDATION_ERROR', 'Body is not valid JSON.'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new ApiError('VALIDATION_ERROR', 'Body is empty; send a JSON object.'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new ApiError('VALIDATION_ERROR', 'Content-Length does not match the body.'),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new ApiError('PAYLOAD_TOO_LARGE', 'Body is larger than the limit.'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.'),
  FST_ERR_CTP_INVALID_TYPE: () => new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.'),
  FST_ERR_BAD_URL: () => new ApiError('NOT_FOUND', 'No such route.'),
  FST_ERR_ASYNC_CONSTRAINT: () => new ApiError('NOT_FOUND', 'No such route.'),
};

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (e?.validation) return validationError(e.validation, e.validationContext);
  if (e?.code && FRAMEWORK_CODES[e.code]) return FRAMEWORK_CODES[e.code](e);
  if (e instanceof SyntaxError && (e as FastifyError).statusCode === 400) return new ApiError('VALIDATION_ERROR', 'Body is not valid JSON.');
  if (e?.statusCode === 413) return new ApiError('PAYLOAD_TOO_LARGE', 'Body is larger than the limit.');
  if (e?.statusCode === 415) return new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.');
  if (e?.statusCode === 400) return new ApiError('VALIDATION_ERROR', 'The request is malformed.');
  return new ApiError('INTERNAL_ERROR', 'Something went wrong on our side. Quote the correlation id to support.');
}

// Hook the idempotency plugin provides so a refused operation answers the same on replay.
export type StoreErrorHook = (statusCode: number, body: string) => Promise<void>;

export async function sendError(req: FastifyRequest, reply: FastifyReply, err: unknown): Promise<FastifyReply> {
  if (err instanceof StoredResponse) {
    return reply.code(err.statusCode).header('idempotent-replayed', 'true').type('application/json; charset=utf-8').send(err.body);
  }
  const apiError = toApiError(err);
  if (apiError.statusCode >= 500) {
    req.log.error({ err, code: apiError.code }, 'request failed');
  } else {
    req.log.info({ code: apiError.code, param: apiError.param }, 'request refused');
  }
  const body = errorBody(apiError, req.id);
  if (apiError.storable && req.storeIdempotentError) {
    try {
      await req.storeIdempotentError(apiError.statusCode, body);
    } catch (storeErr) {
      req.log.warn({ err: storeErr }, 'could not store idempotent error response');
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

  app.setErrorHandler(async (err, req, reply) => sendError(req, reply, err));

  app.setNotFoundHandler(async (req, reply) => {
    const path = req.url.split('?')[0];
    const allowed = [...new Set(patterns.filter((p) => p.regex.test(path)).map((p) => p.method))];
    if (allowed.length > 0) {
      return sendError(req, reply, new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use ${allowed.join(', ')}.`, { headers: { allow: allowed.join(', ') } }));
    }
    return sendError(req, reply, new ApiError('NOT_FOUND', `No such route: ${req.method} ${path}`));
  });
}

import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { Type, type TSchema } from 'typebox';

declare module 'fastify' {
  interface FastifyContextConfig {
    // The route's body may be left out (or sent empty): it is then validated, and handled, as `{}`.
    // Set by the route for an optional body; implied for a mutating route that declares none.
    bodyOptional?: boolean;
  }
}

// What a route that declares no query parameters accepts: none.
export const NoQuery = Type.Object({}, { additionalProperties: false });
// What a mutating route that declares no body accepts: no body, an empty one, or `{}`.
export const NoBody = Type.Object({}, { additionalProperties: false });

export const MUTATING_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

// Routes that serve pages and their assets (the docs, the back office, the hosted checkout and
// its script), not the API: a page's
// URL carries the page's own state in its query string.
const PAGES = ['/v1/docs', '/backoffice', '/checkout', '/v1/checkout.js'];
const isPage = (url: string) => PAGES.some((p) => url === p || url.startsWith(`${p}/`));

function closed(schema: TSchema): boolean {
  return (schema as { additionalProperties?: unknown }).additionalProperties === false;
}

// Rules every route follows, applied here once instead of by each route remembering them:
// - Query parameters: a route's querystring schema refuses unknown parameters (and a route
//   with none refuses any), so a misspelt `?limt=5` is a VALIDATION_ERROR naming it, never
//   silently ignored.
// - Bodies: a mutating route without a body schema takes no body (`[]` or `{"x":1}` are
//   refused, not ignored); an optional body, left out, is `{}`.
// A route that breaks the first rule cannot be registered (the app fails to start).
export function registerRouteRules(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (isPage(route.url)) return;
    const schema = (route.schema ??= {}) as Record<string, TSchema | undefined>;
    if (!schema.querystring) schema.querystring = NoQuery;
    else if (!closed(schema.querystring)) throw new Error(`${String(route.method)} ${route.url}: its querystring schema must set additionalProperties: false`);

    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => MUTATING_METHODS.has(m))) return;
    route.config ??= {} as never;
    const config = route.config as { bodyOptional?: boolean };
    if (!schema.body) {
      schema.body = NoBody;
      config.bodyOptional = true;
    }
    if (config.bodyOptional) route.preValidation = [...([] as unknown[]).concat(route.preValidation ?? []), emptyBodyIsEmptyObject] as RouteOptions['preValidation'];
  });
}

// Runs before validation, so the schema (and the idempotency fingerprint after it) sees `{}`:
// a POST without a body and one with `{}` are the same request.
function emptyBodyIsEmptyObject(req: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  if (req.body === undefined) req.body = {};
  done();
}

// Whether the route's body schema is the implied NoBody (the OpenAPI document shows no body).
export const takesNoBody = (schema: unknown) => schema === NoBody;

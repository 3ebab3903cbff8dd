import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';

// Route handler types come from the route's own TypeBox schemas (params, querystring, headers,
// body), through the type provider: a route names its schemas once and writes no generics, so
// the handler's types cannot drift from what the validator lets through. A named schema the
// document references by `$ref` is given with `refTo(Schema)` (http/common.ts), which keeps its
// static type; `ref('Name')` types as unknown and is for responses, which need no inference.
// Type-only: at run time withTypeProvider returns the instance itself.
export type TypedApp = ReturnType<typeof typed>;

export function typed(app: FastifyInstance) {
  return app.withTypeProvider<TypeBoxTypeProvider>();
}

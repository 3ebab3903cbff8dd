import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

// Compiled response serializers and request validators, kept by the process for the next app.
//
// Why: an app compiles every route's response serializer (fast-json-stringify, which also checks
// each schema against the JSON Schema meta-schema) and request validator (Ajv) as it starts. A
// CPU profile of six test apps built in one process: about 2.4 s of CPU each after the first, of
// which 1.8 s serializers and 0.4 s validators. Production builds one app per process, so it pays
// that once; the test suites build over a hundred apps, a fresh one per file, engine or
// configuration, and paid it every time.
//
// A compiled function depends only on its inputs' content: the route's schema, the shared
// schemas it refers to by $id, and the compiler's options. So the key is that content (JSON),
// not object identity (Fastify clones the shared schemas for each app): an app whose schemas
// differ in any way compiles its own. Bounded: at most MAX_SCHEMA_SETS sets of shared schemas,
// the oldest dropped first (the suites use one).

const MAX_SCHEMA_SETS = 4;

// Shared schemas' JSON -> (the route's schema and options' JSON -> compiled function).
class Compiled<F> {
  private readonly sets = new Map<string, Map<string, F>>();

  forSet(sharedJson: string): Map<string, F> {
    let set = this.sets.get(sharedJson);
    if (!set) {
      if (this.sets.size >= MAX_SCHEMA_SETS) this.sets.delete(this.sets.keys().next().value as string);
      set = new Map();
      this.sets.set(sharedJson, set);
    }
    return set;
  }
}

type RouteSchemaInfo = { schema?: unknown; method: string; url: string; httpStatus?: string };
type Serializer = (data: unknown) => string;
const serializers = new Compiled<Serializer>();

// Fastify's own serializer factory (`schemaController.compilersFactory.buildSerializer`), with
// what it compiles kept (see above).
export function cachedSerializerFactory() {
  const build = SerializerSelector();
  return (externalSchemas: unknown, serializerOpts: unknown) => {
    const shared = (externalSchemas ?? {}) as Record<string, unknown>;
    const compiled = serializers.forSet(JSON.stringify([shared, serializerOpts ?? null]));
    return (info: RouteSchemaInfo) => {
      const key = JSON.stringify(info.schema);
      let fn = compiled.get(key);
      if (!fn) {
        // Only the shared schemas this one refers to, directly or through others: fast-json-stringify
        // checks every shared schema it is given against the meta-schema, for every route (a third
        // of an app's start), and the others cannot change what it generates.
        const compile = build(referencedSchemas(info.schema, shared), serializerOpts as never) as unknown as (info: RouteSchemaInfo) => Serializer;
        fn = compile(info);
        compiled.set(key, fn);
      }
      return fn;
    };
  };
}

// The same for validators: `compile(schema)` is the app's own compiler (its Ajv instances, made
// with `sharedSchemas` added); kept per route schema and part (body, querystring, params...).
const validators = new Compiled<unknown>();

export function cachedValidatorCompiler<V>(sharedSchemas: readonly unknown[], compile: (schema: Record<string, unknown>, httpPart: string | undefined) => V) {
  const compiled = validators.forSet(JSON.stringify(sharedSchemas));
  return ({ schema, httpPart }: { schema: unknown; httpPart?: string }): V => {
    const key = `${httpPart ?? ''}\n${JSON.stringify(schema)}`;
    let fn = compiled.get(key) as V | undefined;
    if (!fn) {
      fn = compile(schema as Record<string, unknown>, httpPart);
      compiled.set(key, fn);
    }
    return fn;
  };
}

// The shared schemas `schema` reaches through `$ref`s ("Payment", "Payment#/properties/x"),
// following refs inside them too.
export function referencedSchemas(schema: unknown, shared: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      stack.push(...(node as unknown[]));
    } else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string') {
          const id = v.split('#')[0];
          if (id && id in shared && !(id in out)) {
            out[id] = shared[id];
            stack.push(shared[id]);
          }
        } else if (v && typeof v === 'object') {
          stack.push(v);
        }
      }
    }
  }
  return out;
}

// The OpenAPI 3.0 rendering of the 3.1 document (issue 28), for the generators that read only
// 3.0 (OpenAPI Generator before 7, and others). Made from the very document /v1/openapi.json
// serves, so from the same TypeBox schemas; the 3.1 document stays the reference. What 3.0 lacks
// is written the 3.0 way, and nothing else changes:
// - `anyOf: [X, {type: 'null'}]` is X with `nullable: true` (a `$ref` is wrapped in `allOf`,
//   as a `$ref` takes no siblings in 3.0);
// - `const` is an `enum` of one; `examples` is `example` (the first);
// - a numeric `exclusiveMinimum`/`exclusiveMaximum` is the bound with the boolean flag;
// - `propertyNames` and `info.license.identifier` (3.1 only) are left out: the 3.1 document
//   keeps them, and the server enforces them whatever a client was generated from;
// - the discriminator property of a discriminated oneOf's branches is a plain string that says
//   its value: OpenAPI Generator 5 flattens a oneOf into one class, and the last branch's enum
//   of one refused the other branches' answers (`type` "percentage" is not one of ["amount"]).

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON tree
type Json = Record<string, any>;

// The type of the component a $ref names (3.0 wants a `type` beside `nullable`); set per document.
let components: Json = {};
const refType = (ref: string): string | undefined => {
  const target = components[ref.replace('#/components/schemas/', '')] as Json | undefined;
  return typeof target?.type === 'string' ? target.type : target?.oneOf || target?.anyOf || target?.properties ? 'object' : undefined;
};

const isNullSchema = (s: unknown): boolean => !!s && typeof s === 'object' && (s as Json).type === 'null' && Object.keys(s).length === 1;

function schema30(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(schema30);
  if (!node || typeof node !== 'object') return node;
  const s = node as Json;
  // A nullable X: anyOf/oneOf of X and null.
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = s[key] as unknown[] | undefined;
    if (Array.isArray(branches) && branches.length === 2 && branches.some(isNullSchema)) {
      const { [key]: _drop, ...rest } = s;
      const other = schema30(branches.find((b) => !isNullSchema(b))) as Json;
      const base = other.$ref ? { type: refType(String(other.$ref)), allOf: [other] } : other;
      return schema30Keywords({ ...base, ...rest, nullable: true });
    }
  }
  if (Array.isArray(s.type)) {
    const types = (s.type as string[]).filter((t) => t !== 'null');
    if (types.length !== 1) throw new Error(`no 3.0 rendering for type ${JSON.stringify(s.type)}`);
    return schema30Keywords({ ...s, type: types[0], ...(types.length < s.type.length ? { nullable: true } : {}) });
  }
  return schema30Keywords(s);
}

function schema30Keywords(s: Json): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries<unknown>(s)) {
    switch (key) {
      case 'const': out.enum = [value]; break;
      case 'examples': if (Array.isArray(value) && value.length > 0) out.example = (value as unknown[])[0]; break;
      case 'exclusiveMinimum': if (typeof value === 'number') { out.minimum = value; out.exclusiveMinimum = true; } else out[key] = value; break;
      case 'exclusiveMaximum': if (typeof value === 'number') { out.maximum = value; out.exclusiveMaximum = true; } else out[key] = value; break;
      case 'propertyNames': case '$schema': case '$id': break;
      case 'properties': out.properties = Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, schema30(v)])); break;
      case 'discriminator': out[key] = value; break;
      default: out[key] = value !== null && typeof value === 'object' ? schema30(value) : value;
    }
  }
  if (out.type === 'null') throw new Error('no 3.0 rendering for a schema that is only null');
  return out;
}

// Every Schema Object of the document, wherever it sits.
function walkSchemas(node: unknown, inSchema: boolean): unknown {
  if (inSchema) return schema30(node);
  if (Array.isArray(node)) return node.map((v) => walkSchemas(v, false));
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries<unknown>(node as Json)) {
    if (key === 'schema') out[key] = walkSchemas(value, true);
    else if (key === 'schemas') out[key] = Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, schema30(v)]));
    else if (key === 'examples' && Array.isArray(value)) out.example = (value as unknown[])[0];
    else out[key] = walkSchemas(value, false);
  }
  return out;
}

export function toOpenApi30(doc31: Json): Json {
  const { openapi: _version, jsonSchemaDialect: _dialect, webhooks: _webhooks, info, ...rest } = doc31;
  const { license, summary: _summary, ...infoRest } = (info ?? {}) as Json;
  const license30 = license ? (({ identifier: _identifier, ...l }: Json) => l)(license as Json) : undefined;
  components = ((rest.components as Json | undefined)?.schemas ?? {}) as Json;
  const out = walkSchemas(rest, false) as Json;
  const schemas30 = ((out.components as Json | undefined)?.schemas ?? {}) as Json;
  for (const schema of Object.values<Json>(schemas30)) {
    const discriminator = schema.discriminator as { propertyName: string; mapping?: Record<string, string> } | undefined;
    if (!discriminator || !Array.isArray(schema.oneOf)) continue;
    for (const [value, ref] of Object.entries(discriminator.mapping ?? {})) {
      const branch = schemas30[ref.replace('#/components/schemas/', '')] as Json | undefined;
      const properties = branch?.properties as Json | undefined;
      if (!properties?.[discriminator.propertyName]) continue;
      properties[discriminator.propertyName] = { type: 'string', description: `Always \`${value}\` (the discriminator of this object's oneOf).`, example: value };
    }
  }
  return {
    openapi: '3.0.3',
    info: {
      ...infoRest,
      ...(license30 ? { license: license30 } : {}),
      description: `${String(infoRest.description ?? '')}\n\nThis is the OpenAPI 3.0 rendering of [/v1/openapi.json](/v1/openapi.json) (3.1, the reference), for generators that read only 3.0.`,
    },
    ...out,
  };
}

// The API Pix contract as a validator: find the operation for a method and path, check a
// request's path and query parameters, body and OAuth scope against it, and check an answer (or a
// callback's body) against the schema the contract gives for it. Ajv over the patched document,
// with OpenAPI 3.0's query strings converted by the parameter's declared type (a query string is
// text: "2" for an integer, "true" for a boolean); nothing else is coerced, nothing dropped.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { loadPixApiContract, type Json, type JsonObject } from './patches.js';

// ajv-formats is CommonJS: its default export arrives as the module object under some loaders.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

const DOC_ID = 'pix-api.json';

/** Statuses any operation may answer with a `Problema` (the contract's "Gerais" errors, and 401). */
export const GENERAL_ERROR_STATUSES = [400, 401, 403, 404, 410, 500, 503, 504];

export interface Violation {
  /** Where: "body/valor", "path/txid", "query/cpf", "answer/201/loc/id", ... */
  propriedade: string;
  razao: string;
  valor?: string;
}

export interface Operation {
  /** "PUT /cob/{txid}": the contract's method and path template, the key faults and logs use. */
  key: string;
  method: string;
  template: string;
  segments: string[];
  scopes: string[];
  op: JsonObject;
  params: { name: string; in: 'path' | 'query' | 'header'; required: boolean; schema: JsonObject; validate: ValidateFunction }[];
  body?: { required: boolean; contentType: string; validate: ValidateFunction };
}

export interface MatchedRequest {
  operation: Operation;
  pathParams: Record<string, string>;
  query: Record<string, unknown>;
}

function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function pointer(path: string[]): string {
  return '#/' + path.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

function describe(prefix: string, errors: ErrorObject[] | null | undefined, data: unknown): Violation[] {
  return (errors ?? []).map((e) => {
    const at = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    let valor: string | undefined;
    if (at) {
      let v: unknown = data;
      for (const part of e.instancePath.split('/').slice(1)) v = (v as Record<string, unknown> | undefined)?.[part];
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') valor = String(v);
    }
    return { propriedade: at ? `${prefix}.${at}` : prefix, razao: e.message ?? e.keyword, ...(valor !== undefined ? { valor } : {}) };
  });
}

export class PixApiContract {
  readonly doc: JsonObject;
  readonly operations: Operation[] = [];
  private readonly ajv: Ajv;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor() {
    this.doc = loadPixApiContract().doc;
    this.ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true, coerceTypes: false, useDefaults: false });
    addFormats(this.ajv);
    this.ajv.addSchema(this.doc, DOC_ID);
    const paths = this.doc.paths as JsonObject;
    for (const [template, item] of Object.entries(paths)) {
      if (!isObject(item)) continue;
      const shared = Array.isArray(item.parameters) ? item.parameters : [];
      for (const method of ['get', 'put', 'post', 'patch', 'delete']) {
        const op = item[method];
        if (!isObject(op)) continue;
        const own = Array.isArray(op.parameters) ? op.parameters : [];
        const paramsAt: { at: string[]; p: JsonObject }[] = [];
        shared.forEach((p, i) => paramsAt.push(this.deref(p, ['paths', template, 'parameters', String(i)])));
        own.forEach((p, i) => paramsAt.push(this.deref(p, ['paths', template, method, 'parameters', String(i)])));
        const params = paramsAt.map(({ at, p }) => ({
          name: p.name as string,
          in: p.in as 'path' | 'query' | 'header',
          required: p.required === true || p.in === 'path',
          // The declared type, through a $ref (`revisao` is `$ref: Revisao`, an integer).
          schema: this.deref(p.schema, [...at, 'schema']).p,
          validate: this.schemaAt([...at, 'schema']),
        }));
        let body: Operation['body'];
        if (op.requestBody !== undefined) {
          const { at, p: rb } = this.deref(op.requestBody, ['paths', template, method, 'requestBody']);
          const content = rb.content as JsonObject;
          const contentType = Object.keys(content)[0];
          body = { required: rb.required === true, contentType, validate: this.schemaAt([...at, 'content', contentType, 'schema']) };
        }
        const security = Array.isArray(op.security) ? op.security : [];
        const scopes = security.flatMap((s) => (isObject(s) && Array.isArray(s.OAuth2) ? (s.OAuth2 as string[]) : []));
        this.operations.push({
          key: `${method.toUpperCase()} ${template}`,
          method: method.toUpperCase(),
          template,
          segments: template.split('/').slice(1),
          scopes,
          op,
          params,
          body,
        });
      }
    }
  }

  // A Reference Object ($ref to components/parameters, requestBodies, responses) resolved to the
  // object and the path where it lives in the document.
  private deref(node: Json, at: string[]): { at: string[]; p: JsonObject } {
    let cur = node;
    let path = at;
    for (let hops = 0; isObject(cur) && typeof cur.$ref === 'string'; hops++) {
      if (hops > 8) throw new Error(`pix-api: $ref loop at ${pointer(at)}`);
      path = cur.$ref.replace(/^#\//, '').split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
      cur = path.reduce<Json>((n, k) => (isObject(n) ? n[k] : Array.isArray(n) ? n[Number(k)] : null), this.doc);
    }
    if (!isObject(cur)) throw new Error(`pix-api: nothing at ${pointer(path)}`);
    return { at: path, p: cur };
  }

  private schemaAt(path: string[]): ValidateFunction {
    const ref = DOC_ID + pointer(path);
    let v = this.compiled.get(ref);
    if (!v) {
      v = this.ajv.compile({ $ref: ref });
      this.compiled.set(ref, v);
    }
    return v;
  }

  /** A component schema's validator ("Pix", "Devolucao", "Problema", ...). */
  schema(name: string): ValidateFunction {
    return this.schemaAt(['components', 'schemas', name]);
  }

  /** The operation a method and path (without the dialect's prefix) falls on, literal segments first. */
  match(method: string, path: string): { operation: Operation; pathParams: Record<string, string> } | undefined {
    const segs = path.split('/').slice(1);
    let best: { operation: Operation; pathParams: Record<string, string>; literals: number } | undefined;
    for (const operation of this.operations) {
      if (operation.method !== method.toUpperCase() || operation.segments.length !== segs.length) continue;
      const pathParams: Record<string, string> = {};
      let literals = 0;
      let ok = true;
      for (let i = 0; i < segs.length && ok; i++) {
        const t = operation.segments[i];
        const m = /^\{(.+)\}$/.exec(t);
        if (m) {
          try {
            pathParams[m[1]] = decodeURIComponent(segs[i]);
          } catch {
            ok = false;
          }
          if (segs[i] === '') ok = false;
        } else if (t === segs[i]) literals++;
        else ok = false;
      }
      if (ok && (!best || literals > best.literals)) best = { operation, pathParams, literals };
    }
    return best && { operation: best.operation, pathParams: best.pathParams };
  }

  /** Is there any operation on this path, whatever the method (for 405 against 404)? */
  pathExists(path: string): boolean {
    return ['GET', 'PUT', 'POST', 'PATCH', 'DELETE'].some((m) => this.match(m, path) !== undefined);
  }

  /** Check path and query parameters; the query is returned converted to the declared types. */
  checkParameters(operation: Operation, pathParams: Record<string, string>, search: URLSearchParams): { query: Record<string, unknown>; violations: Violation[] } {
    const violations: Violation[] = [];
    const query: Record<string, unknown> = {};
    for (const p of operation.params) {
      if (p.in === 'header') continue;
      let raw: string | undefined;
      if (p.in === 'path') raw = pathParams[p.name];
      else {
        const all = search.getAll(p.name);
        if (all.length > 1) violations.push({ propriedade: `query.${p.name}`, razao: 'informado mais de uma vez' });
        raw = all[0];
      }
      if (raw === undefined) {
        if (p.required) violations.push({ propriedade: `${p.in}.${p.name}`, razao: 'obrigatório' });
        continue;
      }
      const value = convert(raw, p.schema);
      if (!p.validate(value)) violations.push(...describe(`${p.in}.${p.name}`, p.validate.errors, value).map((v) => ({ ...v, valor: raw })));
      if (p.in === 'query') query[p.name] = value;
    }
    return { query, violations };
  }

  checkBody(operation: Operation, contentType: string | undefined, body: unknown, raw: string): Violation[] {
    if (!operation.body) return raw.length > 0 ? [{ propriedade: 'body', razao: 'esta operação não aceita corpo' }] : [];
    if (raw.length === 0) return operation.body.required ? [{ propriedade: 'body', razao: 'obrigatório' }] : [];
    if (!contentType || contentType.split(';')[0].trim().toLowerCase() !== operation.body.contentType) {
      return [{ propriedade: 'header.content-type', razao: `deve ser ${operation.body.contentType}`, valor: contentType ?? '' }];
    }
    if (body === undefined) return [{ propriedade: 'body', razao: 'JSON inválido' }];
    const v = operation.body.validate;
    return v(body) ? [] : describe('body', v.errors, body);
  }

  /**
   * Check an answer against what the contract declares for the operation and status: the content
   * type and the body's schema, or no body where none is declared. Statuses the contract does not
   * list for the operation are violations, except `extraStatuses`, which must carry a `Problema`:
   * the general errors the contract's error list says "any endpoint" may answer (400
   * RequisicaoInvalida, and the ConsultaInvalida 400s of the GETs, 403, 404, 410, 500, 503, 504
   * IndisponibilidadePorTempoEsgotado) and the 401 of RFC 6750 (see NOTICE).
   */
  checkAnswer(operation: Operation, status: number, contentType: string | undefined, body: unknown, extraStatuses: number[] = GENERAL_ERROR_STATUSES): Violation[] {
    const prefix = `answer.${status}`;
    const responses = operation.op.responses as JsonObject;
    const declared = responses[String(status)];
    const type = contentType?.split(';')[0].trim().toLowerCase();
    if (declared === undefined) {
      if (!extraStatuses.includes(status)) return [{ propriedade: prefix, razao: `${operation.key} não declara o status ${status}` }];
      if (type !== 'application/problem+json') return [{ propriedade: `${prefix}.content-type`, razao: 'deve ser application/problem+json', valor: type ?? '' }];
      const v = this.schema('Problema');
      return v(body) ? [] : describe(prefix, v.errors, body);
    }
    const { at, p: response } = this.deref(declared, ['paths', operation.template, operation.method.toLowerCase(), 'responses', String(status)]);
    const content = response.content;
    if (!isObject(content)) return body === undefined ? [] : [{ propriedade: prefix, razao: 'o contrato não declara corpo para esta resposta' }];
    if (!type || !(type in content)) return [{ propriedade: `${prefix}.content-type`, razao: `deve ser ${Object.keys(content).join(' ou ')}`, valor: type ?? '' }];
    const v = this.schemaAt([...at, 'content', type, 'schema']);
    return v(body) ? [] : describe(prefix, v.errors, body);
  }

  /** Check a callback's body (`POST {webhookUrl}/pix`, requestBody WebhookPixBody). */
  checkCallback(body: unknown): Violation[] {
    const v = this.schemaAt(['components', 'requestBodies', 'WebhookPixBody', 'content', 'application/json', 'schema']);
    return v(body) ? [] : describe('callback', v.errors, body);
  }
}

// A query string's text as the declared type (integers and booleans); anything that does not
// read cleanly stays a string, so the schema refuses it.
function convert(raw: string, schema: JsonObject): unknown {
  const type = schema.type;
  if (type === 'integer' && /^-?\d{1,15}$/.test(raw)) return Number(raw);
  if (type === 'number' && /^-?\d+(\.\d+)?$/.test(raw)) return Number(raw);
  if (type === 'boolean' && (raw === 'true' || raw === 'false')) return raw === 'true';
  return raw;
}

let shared: PixApiContract | undefined;

/** One contract per process: compiling its schemas takes a second or two. */
export function pixApiContract(): PixApiContract {
  shared ??= new PixApiContract();
  return shared;
}

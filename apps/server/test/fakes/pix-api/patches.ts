// The Banco Central's API Pix contract (bacen/pix-api, openapi.yaml, release 2.9.0, Apache 2.0),
// loaded from the vendored file byte for byte as upstream released it, then patched here where it
// is wrong. Each patch is listed in NOTICE beside this file, and each one asserts that what it
// fixes is still there: a new upstream release that fixes (or moves) something fails loudly here
// instead of being patched twice or silently not at all.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export const PIX_API_VERSION = '2.9.0';
/** sha256 of openapi.yaml as released upstream (tag 2.9.0, commit 0d74e5e1a2ee). */
export const PIX_API_SHA256 = '4047ae07a639dea4c13cdb60f79e2b849b4825aa6ebebbe96938b9a22d9f1ca8';

export const PIX_API_PATH = join(dirname(fileURLToPath(import.meta.url)), 'openapi.yaml');

// A JSON value walked by the patches (the parsed YAML).
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface PatchReport {
  id: string;
  /** How many places the patch changed. */
  changed: number;
}

function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// Visit every object in the document (depth first), with the key it sits under in its parent.
function walk(node: Json, visit: (obj: JsonObject, key: string | undefined) => void, key?: string): void {
  if (Array.isArray(node)) {
    for (const item of node) walk(item, visit, key);
  } else if (isObject(node)) {
    visit(node, key);
    for (const [k, v] of Object.entries(node)) walk(v, visit, k);
  }
}

function schemas(doc: JsonObject): JsonObject {
  const components = doc.components;
  if (!isObject(components) || !isObject(components.schemas)) throw new Error('pix-api: no components.schemas');
  return components.schemas;
}

function expect(id: string, changed: number, min = 1): PatchReport {
  if (changed < min) throw new Error(`pix-api patch ${id} changed ${changed} places (expected at least ${min}): has upstream fixed it? Update NOTICE and patches.ts`);
  return { id, changed };
}

// 1. The CPF (and municipality code) patterns are written as JavaScript regex literals,
//    "/^\d{11}$/": as a JSON Schema pattern the slashes are literal characters, so every real CPF
//    ("12345678909") is rejected (bacen/pix-api issue 420). Strip the slashes.
function patchRegexLiterals(doc: JsonObject): PatchReport {
  let changed = 0;
  walk(doc, (obj) => {
    const p = obj.pattern;
    if (typeof p === 'string' && p.length > 2 && p.startsWith('/') && p.endsWith('/')) {
      obj.pattern = p.slice(1, -1);
      changed++;
    }
  });
  return expect('1-regex-literals', changed);
}

// 2. Patterns are unanchored: JSON Schema's `pattern` matches anywhere in the string, so a
//    40-character txid, or "R$ 10.50 ou mais" as an amount, validates. Anchor every pattern.
function patchAnchors(doc: JsonObject): PatchReport {
  let changed = 0;
  walk(doc, (obj) => {
    const p = obj.pattern;
    if (typeof p !== 'string') return;
    const starts = p.startsWith('^');
    const ends = p.endsWith('$');
    if (starts && ends) return;
    const body = p.slice(starts ? 1 : 0, ends ? -1 : undefined);
    obj.pattern = `^(?:${body})$`;
    changed++;
  });
  return expect('2-anchors', changed);
}

// 2b. Once anchored, `allOf: [TxId (26-35), {pattern: 1-35}]` means 26 to 35 characters, but the
//    1-35 override exists for received Pix, whose txid (from a static QR code) may be 1 to 25
//    characters. Where the contract says "a txid of 1 to 35", make it exactly that.
function patchReceivedTxid(doc: JsonObject): PatchReport {
  let changed = 0;
  walk(doc, (obj) => {
    const all = obj.allOf;
    if (!Array.isArray(all) || all.length !== 2) return;
    const [a, b] = all;
    if (isObject(a) && a.$ref === '#/components/schemas/TxId' && isObject(b) && b.pattern === '^(?:[a-zA-Z0-9]{1,35})$') {
      delete obj.allOf;
      obj.type = 'string';
      obj.pattern = '^[a-zA-Z0-9]{1,35}$';
      changed++;
    }
  });
  // GET /pix?txid=, ParametrosConsultaPix.txid, Pix.txid.
  return expect('2b-received-txid', changed, 3);
}

// 3. The payload-location endpoints (`GET /{pixUrlAccessToken}`, `GET /cobv/{pixUrlAccessToken}`,
//    `GET /rec/{recUrlAccessToken}`) are served on the location's own host (their operations say
//    `servers: https://{fdqnPSPRecebedor}/...`), not under the API's base URL, yet they sit in the
//    same `paths`: `GET /cobv/{pixUrlAccessToken}` collides with `GET /cobv/{txid}` (and
//    `/rec/{recUrlAccessToken}` with `/rec/{idRec}`), so a router cannot tell them apart. Remove
//    them from the API's paths (the fake serves no payload location).
function patchPayloadLocationPaths(doc: JsonObject): PatchReport {
  const paths = doc.paths;
  if (!isObject(paths)) throw new Error('pix-api: no paths');
  let changed = 0;
  for (const p of ['/{pixUrlAccessToken}', '/cobv/{pixUrlAccessToken}', '/rec/{recUrlAccessToken}']) {
    if (p in paths) {
      delete paths[p];
      changed++;
    }
  }
  return expect('3-payload-location-paths', changed, 3);
}

// 4. `location` is `format: uri`, but every example (and every PSP) gives it without a scheme,
//    "pix.example.com/qr/v2/2353c7...": the BR Code carries it that way (field 25, no "https://").
//    A URI needs a scheme, so every real answer would fail. Drop the format, keep maxLength 77.
function patchLocationFormat(doc: JsonObject): PatchReport {
  let changed = 0;
  walk(doc, (obj, key) => {
    if (key !== 'properties') return;
    const loc = obj.location;
    if (isObject(loc) && loc.format === 'uri') {
      delete loc.format;
      changed++;
    }
  });
  return expect('4-location-format', changed);
}

// 5. `PixConsultados` (the answer of GET /pix) requires a property `cobs` it does not have (its
//    list is `pix`): copied from `CobsConsultadas`, it makes every real answer invalid.
function patchPixConsultadosRequired(doc: JsonObject): PatchReport {
  const s = schemas(doc).PixConsultados;
  if (!isObject(s) || !Array.isArray(s.required) || !s.required.includes('cobs')) return expect('5-pix-consultados-required', 0);
  s.required = s.required.filter((r) => r !== 'cobs');
  return expect('5-pix-consultados-required', 1);
}

// 6. `infoAdicionais` limits its length with `maximum: 50`, a number keyword that does nothing on
//    an array; the intent (50 items at most) is `maxItems`.
function patchArrayMaximum(doc: JsonObject): PatchReport {
  let changed = 0;
  walk(doc, (obj) => {
    if (obj.type === 'array' && typeof obj.maximum === 'number') {
      obj.maxItems = obj.maximum;
      delete obj.maximum;
      changed++;
    }
  });
  return expect('6-array-maximum', changed);
}

// 7. `WebhookCompleto` (the answer of GET /webhook/{chave}) requires `cnpj`, described as "Filtro
//    pelo CNPJ do devedor" (copied from a query filter), and has no `chave`, while its example is
//    `{webhookUrl, chave, criacao}` and PSPs answer that. Require `chave` instead of `cnpj`.
function patchWebhookCompleto(doc: JsonObject): PatchReport {
  const s = schemas(doc).WebhookCompleto;
  if (!isObject(s) || !Array.isArray(s.required) || !s.required.includes('cnpj') || !isObject(s.properties) || 'chave' in s.properties) {
    return expect('7-webhook-completo-chave', 0);
  }
  s.required = s.required.map((r) => (r === 'cnpj' ? 'chave' : r));
  s.properties.chave = { type: 'string', title: 'Chave DICT do recebedor', maxLength: 77 };
  return expect('7-webhook-completo-chave', 1);
}

export const PATCHES = [
  patchRegexLiterals,
  patchAnchors,
  patchReceivedTxid,
  patchPayloadLocationPaths,
  patchLocationFormat,
  patchPixConsultadosRequired,
  patchArrayMaximum,
  patchWebhookCompleto,
] as const;

export function readVendoredContract(): { text: string; sha256: string } {
  const text = readFileSync(PIX_API_PATH, 'utf8');
  return { text, sha256: createHash('sha256').update(text).digest('hex') };
}

/** The unpatched document, as upstream released it. */
export function loadUpstreamContract(): JsonObject {
  const { text, sha256 } = readVendoredContract();
  if (sha256 !== PIX_API_SHA256) throw new Error(`pix-api: openapi.yaml changed (sha256 ${sha256}); update PIX_API_SHA256 and NOTICE deliberately`);
  const doc = parse(text, { maxAliasCount: -1 }) as Json;
  if (!isObject(doc) || !isObject(doc.info) || doc.info.version !== PIX_API_VERSION) throw new Error(`pix-api: expected info.version ${PIX_API_VERSION}`);
  return doc;
}

let cached: { doc: JsonObject; reports: PatchReport[] } | undefined;

/** The patched contract (parsed once per process; do not mutate it). */
export function loadPixApiContract(): { doc: JsonObject; reports: PatchReport[] } {
  if (!cached) {
    const doc = loadUpstreamContract();
    const reports = PATCHES.map((patch) => patch(doc));
    cached = { doc, reports };
  }
  return cached;
}

import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';
import { unsupportedMediaType } from './errors.js';
import { findDuplicateKey } from '../http/json.js';
import { badTextError, findBadText, printable } from './input-checks.js';

// Keys that reach Object.prototype when a parsed body is merged or assigned somewhere: refused
// wherever they appear, by name, rather than hoping no code path ever merges a body.
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor']);

// Parses a JSON request body. Every rule about what a JSON body may contain lives here (and
// only here): valid JSON, no key written twice in one object, no forbidden key at any depth, and
// no text the engines cannot store (NUL, lone surrogates: see plugins/input-checks.ts). Shape (an object, which fields)
// is the route's schema's business.
export function parseJsonBody(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // V8's message quotes the body: never echoed (a card number could be in it).
    throw new ApiError('VALIDATION_ERROR', 'The body is not valid JSON.');
  }
  // A forbidden key can only be spelled literally or with \u escapes: skip the walk otherwise.
  if (text.includes('__proto__') || text.includes('constructor') || text.includes('\\u')) {
    const found = findForbiddenKey(value);
    if (found) throw new ApiError('VALIDATION_ERROR', `The key "${found.key}" is not allowed in a request body (found at ${found.path}).`, { param: found.path });
  }
  const duplicate = findDuplicateKey(text, value);
  if (duplicate !== null) {
    const param = printable(duplicate);
    throw new ApiError('VALIDATION_ERROR', `The key ${param} appears more than once in the body; send each key once.`, { param });
  }
  // Decoded JSON text holds NUL or a lone surrogate only through a \u escape (raw control
  // characters are not valid JSON; bytes that are not UTF-8 were refused by the parser below).
  if (text.includes('\\u')) {
    const bad = findBadText(value);
    if (bad) throw badTextError(bad, '');
  }
  return value;
}

// Iterative (a body may nest thousands deep within the size limit); the path is dotted like
// every other `param`.
function findForbiddenKey(root: unknown): { key: string; path: string } | null {
  const stack: Array<{ value: unknown; path: string }> = [{ value: root, path: '' }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push({ value: item, path: path ? `${path}.${i}` : String(i) }));
      continue;
    }
    for (const key of Object.keys(value)) {
      const at = path ? `${path}.${key}` : key;
      if (FORBIDDEN_KEYS.has(key)) return { key, path: at };
      stack.push({ value: (value as Record<string, unknown>)[key], path: at });
    }
  }
  return null;
}

// JSON is UTF-8 (RFC 8259 8.1). Bytes that are not (a lone surrogate encoded as ED A0 80, a stray
// FF) are refused rather than silently replaced with U+FFFD: what is stored must be what was sent.
// A BOM is kept, so JSON.parse refuses it as it always did.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
function decodeUtf8(bytes: Buffer): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ApiError('VALIDATION_ERROR', 'The body is not valid UTF-8.');
  }
}

// The body parsers of the API. An empty body is no body, whatever its Content-Type (PHP's curl
// sends an empty POST as application/x-www-form-urlencoded; many clients label every request
// JSON): routes that take no body, or an optional one, accept it, and routes that need one say
// so by validation. A body that is not empty must be JSON (application/json, any parameters);
// anything else is 415.
export function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
    if ((body as Buffer).length === 0) return done(null, undefined);
    try {
      done(null, parseJsonBody(decodeUtf8(body as Buffer)));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => {
    if ((body as Buffer).length === 0) return done(null, undefined);
    done(unsupportedMediaType(), undefined);
  });
}

import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';

// Text the engines cannot store the same way: NUL (PostgreSQL refuses it in text and jsonb, SQLite
// keeps it) and lone surrogates (not Unicode: each engine replaces them differently, so a read
// would differ from the create's answer). Refused everywhere a request carries text (path
// parameters, query strings, JSON bodies' keys and values), before anything reads the store, so
// both engines answer the same 400 naming the field.

const wellFormed = (s: string) => (s as string & { isWellFormed(): boolean }).isWellFormed();

export function badText(s: string): string | null {
  if (s.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (!wellFormed(s)) return 'must be valid Unicode (it contains a lone surrogate)';
  return null;
}

// The first string (key or value) in `root` that the engines cannot store, with its dotted path.
// Iterative: a body may nest thousands deep within the size limit.
export function findBadText(root: unknown, prefix = ''): { param: string; problem: string } | null {
  const stack: Array<{ value: unknown; path: string }> = [{ value: root, path: prefix }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      const problem = badText(value);
      if (problem) return { param: path, problem };
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push({ value: item, path: path ? `${path}.${i}` : String(i) }));
      continue;
    }
    for (const key of Object.keys(value)) {
      const at = path ? `${path}.${key}` : key;
      const problem = badText(key);
      if (problem) return { param: at, problem: `has a key that ${problem}` };
      stack.push({ value: (value as Record<string, unknown>)[key], path: at });
    }
  }
  return null;
}

// A field name as it can be shown (a key may itself be the bad text).
export function printable(s: string): string {
  return (s as string & { toWellFormed(): string }).toWellFormed().replaceAll('\u0000', '\uFFFD');
}

export function badTextError(found: { param: string; problem: string }, where: string): ApiError {
  const param = printable(found.param);
  return new ApiError('VALIDATION_ERROR', `${where ? `${where} ` : ''}${param || 'The body'} ${found.problem}.`, { param: param || undefined });
}

const decodes = (raw: string) => {
  try {
    decodeURIComponent(raw);
    return true;
  } catch {
    return false;
  }
};

// The name of the first query parameter whose name or value has an escape that is not UTF-8 (a
// surrogate, a lone byte such as %FF, a "%" without two hex digits), or null. The router refuses
// such a path (FST_ERR_BAD_URL); the query parser would keep the escape as literal text, and a
// filter would then look for it.
function badlyEscapedParameter(query: string): string | null {
  for (const pair of query.split('&')) {
    if (!pair.includes('%')) continue;
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    if (!decodes(name)) return name;
    if (eq >= 0 && !decodes(pair.slice(eq + 1))) return decodeURIComponent(name.replaceAll('+', ' '));
  }
  return null;
}

// Path parameters and query strings, checked as soon as the route is known (before the key is
// looked up or anything else reads the store). JSON bodies are checked by their parser
// (plugins/body.ts), where a cheap look at the raw text skips the walk for nearly every body.
export function registerInputChecks(app: FastifyInstance): void {
  app.addHook('onRequest', (req, _reply, done) => {
    const params = req.params as Record<string, unknown> | undefined;
    if (params) {
      for (const [name, value] of Object.entries(params)) {
        if (typeof value !== 'string') continue;
        const problem = badText(value);
        if (problem) return done(badTextError({ param: name, problem }, 'Path parameter'));
      }
    }
    // Only a query string with an escape can carry a bad escape, NUL or a lone surrogate (the
    // request line itself cannot hold either as raw bytes).
    const queryAt = req.url.indexOf('?');
    if (queryAt >= 0 && req.url.includes('%', queryAt)) {
      const badlyEscaped = badlyEscapedParameter(req.url.slice(queryAt + 1));
      if (badlyEscaped !== null) {
        const param = printable(badlyEscaped);
        return done(new ApiError('VALIDATION_ERROR', `Query parameter ${param} is malformed: a "%" must be followed by two hexadecimal digits of valid UTF-8.`, { param }));
      }
      const found = findBadText(req.query);
      if (found) return done(badTextError(found, 'Query parameter'));
    }
    done();
  });
}

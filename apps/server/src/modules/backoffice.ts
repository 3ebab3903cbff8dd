import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';

// The back office (apps/backoffice, a Vite build in its dist/) served by the instance under
// /backoffice, on the same origin as /admin, so the admin session cookie (Path=/admin,
// SameSite=Strict, HttpOnly) and the CSRF token work as they are: the page never holds a token
// anywhere but in memory.
//
// Its policy allows nothing but files of this origin: no inline script or style, no other host,
// no framing. Every path under /backoffice that is not a file is the app's index.html (the app
// routes in the browser). Files are read once at start; hashed assets are cached for a year.

export const BACKOFFICE_PATH = '/backoffice';
export const DEFAULT_BACKOFFICE_DIST = fileURLToPath(new URL('../../../backoffice/dist/', import.meta.url));

export const BACKOFFICE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};
// The build is a handful of files; a limit keeps a wrong BACKOFFICE_DIST from loading a disk.
const MAX_FILES = 200;
const MAX_TOTAL_BYTES = 20 * 1024 * 1024;

export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
  immutable: boolean;
}

export function loadDist(dir: string, what = 'back office build'): Map<string, Asset> | null {
  if (!existsSync(join(dir, 'index.html'))) return null;
  const files = new Map<string, Asset>();
  let total = 0;
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const full = join(folder, name);
      if (statSync(full).isDirectory()) {
        walk(full);
        continue;
      }
      const body = readFileSync(full);
      total += body.length;
      if (files.size >= MAX_FILES || total > MAX_TOTAL_BYTES) throw new Error(`${what} at ${dir} is larger than expected (${MAX_FILES} files, ${MAX_TOTAL_BYTES} bytes)`);
      const path = '/' + relative(dir, full).split(sep).join('/');
      files.set(path, {
        body,
        type: TYPES[extname(name)] ?? 'application/octet-stream',
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
        immutable: path.startsWith('/assets/'),
      });
    }
  };
  walk(dir);
  return files;
}

export function backofficeRoutes(app: FastifyInstance, options: { dir?: string } = {}): void {
  const dir = options.dir ?? DEFAULT_BACKOFFICE_DIST;
  const files = loadDist(dir);

  const send = (req: FastifyRequest, reply: FastifyReply, asset: Asset) => {
    reply.header('content-security-policy', BACKOFFICE_CSP);
    reply.header('cross-origin-opener-policy', 'same-origin');
    reply.header('cross-origin-resource-policy', 'same-origin');
    reply.header('cache-control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    reply.header('etag', asset.etag);
    if (req.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    return reply.type(asset.type).send(asset.body);
  };

  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    if (!files) {
      throw new ApiError('SERVICE_UNAVAILABLE', 'The back office is not built: run `npm run build -w apps/backoffice` (npm install and npm start do it for you).');
    }
    const path = req.url.split('?')[0].slice(BACKOFFICE_PATH.length) || '/';
    if (path === '/' && !req.url.split('?')[0].endsWith('/')) return reply.redirect(`${BACKOFFICE_PATH}/`, 302);
    let decoded: string;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      throw new ApiError('NOT_FOUND', 'No such file in the back office.');
    }
    const asset = files.get(decoded);
    if (asset) return send(req, reply, asset);
    // A file that is not there is a 404; any other path is a page of the app.
    if (extname(path) !== '') throw new ApiError('NOT_FOUND', 'No such file in the back office.');
    return send(req, reply, files.get('/index.html') as Asset);
  };

  const config = { auth: 'none' as const, idempotent: false };
  app.get(BACKOFFICE_PATH, { config, schema: { hide: true } }, handler);
  app.get(`${BACKOFFICE_PATH}/*`, { config, schema: { hide: true } }, handler);

  // `/admin` is the admin API's root, not a page, but it is the address an operator types: a
  // browser is sent to the back office. An API client (JSON, or anything) keeps the API's answer
  // for a path with no operation, the NOT_FOUND envelope. Not built or not, the redirect holds.
  const adminRoot = async (req: FastifyRequest, reply: FastifyReply) => {
    if (prefersHtml(req.headers.accept)) return reply.redirect(`${BACKOFFICE_PATH}/`, 303);
    throw new ApiError('NOT_FOUND', `No such route: GET ${req.url.split('?')[0]}. The admin API's operations are under /admin/...; the back office is at ${BACKOFFICE_PATH}/.`);
  };
  // (The router ignores a trailing slash: this is `/admin/` too.)
  app.get('/admin', { config, schema: { hide: true } }, adminRoot);
}

// Whether an Accept header asks for HTML before JSON: a browser's navigation
// ("text/html,...,*/*;q=0.8") does; "application/json", "*/*" or none does not.
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const q = (type: string) => {
    let best = 0;
    for (const part of accept.split(',')) {
      const [range, ...params] = part.trim().toLowerCase().split(';');
      if (range.trim() !== type) continue;
      const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const value = qParam ? Number(qParam.slice(2)) : 1;
      if (Number.isFinite(value)) best = Math.max(best, value);
    }
    return best;
  };
  const html = q('text/html');
  return html > 0 && html >= q('application/json');
}

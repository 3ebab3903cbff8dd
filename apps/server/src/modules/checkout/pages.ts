import { existsSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Store } from '../../store/index.js';
import { ApiError } from '../../errors.js';
import { loadDist, type Asset } from '../backoffice.js';
import { effectiveEmbedOrigins, frameAncestors } from '../../domain/embed-origins.js';
import { typed } from '../../http/typed.js';
import { readLogo } from '../admin/branding/service.js';

// The hosted checkout page (apps/checkout-page, its build in dist/) and the script-tag build of
// the browser library (packages/checkout), served by the instance itself so the buyer's browser
// only ever talks to this origin. Builds are read on first use and kept (so an instance started
// before the build serves it once it exists); until then the routes answer 503 in the envelope.

export const DEFAULT_CHECKOUT_PAGE_DIST = fileURLToPath(new URL('../../../../checkout-page/dist/', import.meta.url));
export const DEFAULT_CHECKOUT_JS_DIST = fileURLToPath(new URL('../../../../../packages/checkout/dist/checkout.global.js', import.meta.url));

// Nothing but this origin's own files; inline script and style refused. The QR code comes as SVG
// markup the page inserts, and may come as a data: image. frame-ancestors is the account's list.
// A live session whose card acquirer encrypts in the browser (Adyen) also allows exactly the
// acquirer's origin: its script, its styles, its secured-field frames and its calls. Nothing
// else, and never in test mode (the sandbox page talks to this instance only).
export function checkoutPageCsp(ancestors: string, acquirerOrigin: string | null = null): string {
  const also = acquirerOrigin ? ` ${acquirerOrigin}` : '';
  return [
    "default-src 'none'",
    `script-src 'self'${also}`,
    `style-src 'self'${also}`,
    `img-src 'self' data:${also}`,
    `font-src 'self'${also}`,
    `connect-src 'self'${also}`,
    ...(acquirerOrigin ? [`frame-src ${acquirerOrigin}`] : []),
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${ancestors}`,
  ].join('; ');
}

const SESSION_ID = /^cs_[0-9a-z]{26}$/;

// Any id: one that names no session gets the page, which says so.
const PageParams = Type.Object({ id: Type.String() });

export function checkoutPageRoutes(appInstance: FastifyInstance, store: Store, options: { pageDir?: string | null; scriptFile?: string | null; cardEncryption?: (owner: { accountId: string; livemode: boolean }) => Promise<{ origin: string } | null> } = {}): void {
  const app = typed(appInstance);
  const pageDir = options.pageDir ?? DEFAULT_CHECKOUT_PAGE_DIST;
  const scriptFile = options.scriptFile ?? DEFAULT_CHECKOUT_JS_DIST;
  let page: Map<string, Asset> | null = null;
  let script: Asset | null = null;
  const pageFiles = () => (page ??= loadDist(pageDir, 'checkout page build'));
  const scriptAsset = () => {
    if (!script && existsSync(scriptFile)) {
      const body = readFileSync(scriptFile);
      script = { body, type: 'text/javascript; charset=utf-8', etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`, immutable: false };
    }
    return script;
  };
  const notBuilt = (what: string, command: string) => new ApiError('SERVICE_UNAVAILABLE', `The ${what} is not built: run \`${command}\` (npm install and npm start do it for you).`);

  const send = (req: FastifyRequest, reply: FastifyReply, asset: Asset, cacheControl: string) => {
    reply.header('cache-control', cacheControl);
    reply.header('etag', asset.etag);
    if (req.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    return reply.type(asset.type).send(asset.body);
  };
  const config = { auth: 'none' as const, idempotent: false };

  // The page shell. Its policy lets only the account's embed origins frame it ('none' for an
  // id that names no session: the page then says so, unframed).
  app.get('/checkout/:id', { config, schema: { hide: true, params: PageParams } }, async (req, reply) => {
    const files = pageFiles();
    const index = files?.get('/index.html');
    if (!index) throw notBuilt('checkout page', 'npm run build -w apps/checkout-page');
    let ancestors: string[] = [];
    let acquirerOrigin: string | null = null;
    if (SESSION_ID.test(req.params.id)) {
      const row = await store.db.selectFrom('checkout_sessions').innerJoin('accounts', 'accounts.id', 'checkout_sessions.account_id')
        .select(['checkout_sessions.livemode', 'checkout_sessions.account_id', 'accounts.embed_origins']).where('checkout_sessions.id', '=', req.params.id).executeTakeFirst();
      if (row) {
        ancestors = effectiveEmbedOrigins(row.embed_origins, row.livemode === 1);
        if (row.livemode === 1 && options.cardEncryption) acquirerOrigin = (await options.cardEncryption({ accountId: row.account_id, livemode: true }))?.origin ?? null;
      }
    }
    reply.header('content-security-policy', checkoutPageCsp(frameAncestors(ancestors), acquirerOrigin));
    reply.header('referrer-policy', 'no-referrer');
    return send(req, reply, index, 'no-store');
  });

  app.get('/checkout/assets/*', { config, schema: { hide: true } }, async (req, reply) => {
    const files = pageFiles();
    if (!files) throw notBuilt('checkout page', 'npm run build -w apps/checkout-page');
    let path: string;
    try {
      path = decodeURIComponent(req.url.split('?')[0].slice('/checkout'.length));
    } catch {
      throw new ApiError('NOT_FOUND', 'No such file of the checkout page.');
    }
    const asset = path.startsWith('/assets/') ? files.get(path) : undefined;
    if (!asset) throw new ApiError('NOT_FOUND', 'No such file of the checkout page.');
    reply.header('cross-origin-resource-policy', 'same-origin');
    return send(req, reply, asset, 'public, max-age=31536000, immutable');
  });

  // A merchant's logo (admin/branding), by the SHA-256 of its bytes: a new logo is a new URL, so
  // it is cached for good. Only for this origin's pages (CORP), never sniffed as anything else,
  // and a document opened at the URL can do nothing (its own CSP, sandboxed).
  const LogoParams = Type.Object({ sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }) });
  app.get('/checkout/logos/:sha256', { config, schema: { hide: true, params: LogoParams } }, async (req, reply) => {
    const logo = await readLogo(store, req.params.sha256);
    if (!logo) throw new ApiError('NOT_FOUND', 'No such logo.');
    reply.header('content-security-policy', "default-src 'none'; sandbox");
    reply.header('x-content-type-options', 'nosniff');
    reply.header('cross-origin-resource-policy', 'same-origin');
    return send(req, reply, { body: logo.body, type: logo.type, etag: `"${req.params.sha256.slice(0, 27)}"`, immutable: true }, 'public, max-age=31536000, immutable');
  });

  // Merchants load the library from this origin with a script tag, on their own pages.
  app.get('/v1/checkout.js', { config, schema: { hide: true } }, async (req, reply) => {
    const asset = scriptAsset();
    if (!asset) throw notBuilt('checkout library', 'npm run build -w packages/checkout');
    reply.header('cross-origin-resource-policy', 'cross-origin');
    reply.header('access-control-allow-origin', '*');
    return send(req, reply, asset, 'public, max-age=300');
  });
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import scalar from '@scalar/fastify-api-reference';
import { SESSION_COOKIE } from '../modules/admin/sessions/service.js';
import { ApiError, type ErrorCode } from '../errors.js';
import { registerContracts, type ResponseHeader, type RouteContract } from '../http/contract.js';
import { takesNoBody } from './route-rules.js';
import { toOpenApi30 } from './openapi30.js';

export const API_DESCRIPTION = `Payments for Brazilian merchants: Pix and card, every mutating request idempotent.

- **Money** is always an integer number of centavos (\`1050\` = R$ 10,50).
- **Authentication**: \`Authorization: Bearer sk_test_...\` (sandbox) or \`sk_live_...\`. Publishable keys (\`pk_\`) only tokenize cards.
- **Idempotency**: send \`Idempotency-Key\` on any POST/PATCH/DELETE; a retry with the same key and body returns the stored response with \`Idempotent-Replayed: true\`.
- **Errors**: every non-2xx answer is \`{"error": {"code", "message", "correlationId", "param"?}}\`.
- **Sandbox**: \`POST /v1/sandbox/accounts\` gives you keys at once; test tokens \`tok_visa\`, \`tok_mastercard\` approve, \`tok_declined\`, \`tok_insufficient_funds\` decline, \`tok_provider_error\` fails at the provider.`;

// The docs page's icon (the back office's mark), served by the instance: without one the browser
// asks for /favicon.ico, and a 404 is an error in the page's console.
export const DOCS_FAVICON_SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#0b5394"/><text x="16" y="22" font-family="sans-serif" font-size="16" font-weight="700" text-anchor="middle" fill="#fff">R$</text></svg>';

// Runs before Scalar's bundle. The validator bundled in Scalar (zod 4) probes `new Function('')`
// once to pick a compiled fast path, and falls back when it throws. Under this page's policy
// (no 'unsafe-eval') the browser refuses it anyway, but with a CSP violation in the console. The
// constructor is wrapped to refuse it the same way (an EvalError) before the browser has to.
const DOCS_SETUP_JS = `(() => {
  const refuse = () => { throw new EvalError('code from strings is refused on this page (Content-Security-Policy)'); };
  globalThis.Function = new Proxy(Function, { construct: refuse, apply: refuse });
})();
`;

// The docs page gets its own policy (the API's `default-src 'none'` would blank it). It makes
// "the page talks only to this instance" something the browser enforces rather than a property
// of the current Scalar build: scripts, the document and try-it calls are same-origin only.
// No inline script (Scalar's start-up is served as a file); `'unsafe-inline'` styles are Scalar's
// runtime styles. Fonts are the system's (Scalar's default fonts, from fonts.scalar.com, are
// turned off): the page makes no request outside the instance and works offline.
function docsContentSecurityPolicy(publicOrigin: string | null): string {
  const connect = ["'self'", ...(publicOrigin ? [publicOrigin] : [])].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "font-src 'self' data:",
    "img-src 'self' data: blob:",
    `connect-src ${connect}`,
    "worker-src 'self' blob:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function originOf(url: string | null): string | null {
  if (!url) return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}


const ERROR_REF = '#/components/schemas/ErrorResponse';

// What each error code means, for the description of the statuses that can carry it.
const CODE_MEANING: Record<ErrorCode, string> = {
  VALIDATION_ERROR: 'the request is malformed or a field is invalid (`param` names it)',
  AUTHENTICATION_REQUIRED: 'no credentials, or malformed ones',
  INVALID_API_KEY: 'unknown or revoked API key',
  PERMISSION_DENIED: 'these credentials may not do this',
  NOT_FOUND: 'no such object for this account and mode',
  METHOD_NOT_ALLOWED: 'wrong method for this path',
  REQUEST_TIMEOUT: 'the request (its headers, then its whole body) did not arrive in time',
  IDEMPOTENCY_KEY_IN_USE: 'a request with this Idempotency-Key is still running: retry after `Retry-After`',
  INVALID_STATE: 'the object\'s state forbids it',
  PAYLOAD_TOO_LARGE: 'the body is over the limit',
  UNSUPPORTED_MEDIA_TYPE: 'send `application/json`',
  IDEMPOTENCY_KEY_REUSED: 'this Idempotency-Key was used with a different request',
  UNPROCESSABLE: 'well-formed but refused by a business rule',
  RATE_LIMITED: 'too many requests: retry after `Retry-After` seconds',
  REQUEST_HEADERS_TOO_LARGE: 'the request line and headers are over 16 KiB',
  INTERNAL_ERROR: 'our fault: quote the correlation id to support',
  PROVIDER_UNAVAILABLE: 'the payment provider is not answering; nothing was charged: retry after `Retry-After` with the same Idempotency-Key',
  SERVICE_UNAVAILABLE: 'the service cannot answer now (shutting down, its store unreachable, or more writes pending than it commits: then nothing was written; retry after `Retry-After` with the same Idempotency-Key)',
};

// Response headers, declared once and referenced by every response that carries them.
const HEADERS: Record<ResponseHeader, { description: string; schema: Record<string, unknown> }> = {
  'X-Correlation-Id': { description: 'Identifies this request in our logs and in the error envelope (`correlationId`); quote it to support. Sent on every response; a valid `X-Correlation-Id` you send is kept.', schema: { type: 'string', examples: ['req_01jc6v8x2a9m3yq0d7b4e5f6g8'] } },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', format: 'int64', minimum: 1 } },
  'RateLimit-Limit': { description: 'Requests allowed per window: per API key; per client address for sandbox sign-up, and for requests without a valid key or admin session (on their 429).', schema: { type: 'integer', format: 'int64', minimum: 0 } },
  'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer', format: 'int64', minimum: 0 } },
  'RateLimit-Reset': { description: 'Seconds until the window is full again.', schema: { type: 'integer', format: 'int64', minimum: 0 } },
  'Idempotent-Replayed': { description: '`true` when this is the stored response of an earlier request with the same Idempotency-Key (nothing was done again).', schema: { type: 'string', const: 'true' } },
  'Set-Cookie': { description: `The admin session cookie \`${SESSION_COOKIE}\` (HttpOnly, SameSite=Strict, Path=/admin; Secure over HTTPS), set at sign-in and cleared at sign-out.`, schema: { type: 'string' } },
};
const headerName = (h: ResponseHeader) => h.replace(/-/g, '');

// A JSON tree walked and rewritten in place; test/openapi*.test.ts and the redocly lint check its shape.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
type Json = Record<string, any>;

// The statuses and headers of each operation come from its contract (http/contract.ts): the
// error statuses are replaced whole, the route's own success responses get their headers.
function applyContracts(doc: Json, contracts: Map<string, RouteContract>): void {
  doc.components ??= {};
  (doc.components as Json).headers = Object.fromEntries(Object.entries(HEADERS).map(([name, h]) => [headerName(name as ResponseHeader), h]));
  for (const methods of Object.values((doc.paths ?? {}) as Record<string, Json>)) {
    for (const op of Object.values<Json>(methods)) {
      const contract = op && typeof op === 'object' ? contracts.get(op.operationId as string) : undefined;
      if (!contract) continue;
      const responses: Json = {};
      for (const [status, { codes, headers }] of contract.responses) {
        const headerRefs = Object.fromEntries(headers.map((h) => [h, { $ref: `#/components/headers/${headerName(h)}` }]));
        if (codes.length === 0) {
          responses[status] = { ...((op.responses as Json)[status] as Json), headers: headerRefs };
          continue;
        }
        responses[status] = {
          description: codes.map((c) => `${c}: ${CODE_MEANING[c]}.`).join(' '),
          headers: headerRefs,
          content: { 'application/json': { schema: { $ref: ERROR_REF } } },
        };
      }
      op.responses = responses;
    }
  }
}

// The absolute URL clients should call: PUBLIC_URL, else what this request was sent to. The
// Host header is the client's, so only a plain host[:port] is believed.
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;
export function requestOrigin(req: FastifyRequest): string {
  const host = req.host;
  const protocol = req.protocol === 'https' ? 'https' : 'http';
  if (host && HOST.test(host)) return `${protocol}://${host}`;
  const address = req.server.server.address();
  const port = address && typeof address === 'object' ? address.port : 80;
  return `${protocol}://localhost:${port}`;
}

export async function registerOpenApi(app: FastifyInstance, options: { publicUrl: string | null }): Promise<void> {
  const optionalBodyOperations = new Set<string>();
  // Paths already start with `/v1/...`: a trailing slash here would make `https://host//v1/...`.
  const publicUrl = options.publicUrl ? options.publicUrl.replace(/\/+$/, '') : null;
  const contracts = registerContracts(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Pagamentos API',
        version: '1.0.0',
        description: API_DESCRIPTION,
        license: { name: 'MIT', identifier: 'MIT' },
        contact: { name: 'Support', email: 'support@example.com' },
      },
      // Replaced per request with the instance's absolute URL (see /v1/openapi.json below).
      servers: [{ url: publicUrl ?? 'http://localhost', description: 'This instance' }],
      // Sidebar order. Every tag an operation uses must be declared here, with a description
      // (test/openapi.test.ts checks it).
      tags: [
        { name: 'Payments', description: 'Pix and card payments.' },
        { name: 'Refunds', description: 'Full or partial refunds of approved payments.' },
        { name: 'Disputes', description: 'Card chargebacks and Pix MED returns: made and moved by their source; a lost one debits the payees.' },
        { name: 'Card tokens', description: 'Single-use card tokens made in the browser with a publishable key.' },
        { name: 'Recipients', description: 'Payees (CNPJ and bank account) that split rules pay out to.' },
        { name: 'Receivables', description: 'What each payee is owed from each approved sale, and when it becomes available.' },
        { name: 'Settlements', description: 'Payouts made by the settlement runs, one per payee per run.' },
        { name: 'Balance', description: 'Pending, available and settled totals, for the merchant and per recipient.' },
        { name: 'Events', description: 'Every state change, as it happened; what webhooks deliver.' },
        { name: 'Webhook endpoints', description: 'Where we send events, signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`).' },
        { name: 'Checkout', description: 'Hosted checkout sessions: made with the secret key; the hosted page\'s own calls (`/client`) take only the session\'s client secret.' },
        { name: 'Sandbox', description: 'Sign-up and simulators that only exist in the sandbox.' },
        { name: 'Provider callbacks', description: 'Where PSPs send their notifications (one URL per connector account, with its token). Hints only: a payment moves after we read the PSP back.' },
        { name: 'Admin', description: 'Back office (`/admin/...`): an admin session cookie and CSRF token, never an API key.' },
      ],
      components: {
        securitySchemes: {
          secretKey: { type: 'http', scheme: 'bearer', description: 'Secret key: `sk_test_...` (sandbox) or `sk_live_...`. Server side only.' },
          publishableKey: { type: 'http', scheme: 'bearer', description: 'Publishable key: `pk_test_...` or `pk_live_...`. Safe in the browser; only tokenizes cards.' },
          checkoutClientSecret: { type: 'http', scheme: 'bearer', description: 'A checkout session\'s `clientSecret` (`cs_..._secret_...`): the hosted page\'s calls for that one session (load, pay, and card tokens while it is open). API keys are refused on its `/client` routes.' },
          adminSession: {
            type: 'apiKey',
            in: 'cookie',
            name: SESSION_COOKIE,
            description: `Admin session cookie set by POST /admin/session (HttpOnly, SameSite=Strict, Path=/admin). Mutating calls also send its \`csrfToken\` as X-CSRF-Token.`,
          },
        },
      },
      security: [{ secretKey: [] }],
    },
    // Shared schemas become components named by their $id (Payment, Error, ...), which is what
    // code generators turn into class names.
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (json.$id as string) || `Schema${i}` },
    // OpenAPI 3.1 is JSON Schema 2020-12: a single value stays `const` (with its type). An
    // `enum` of one becomes an enum type in generators, and one named `object` does not compile.
    convertConstToEnum: false,
    // A route that takes no body validates one against NoBody (plugins/route-rules.ts): the
    // document shows no body at all. @fastify/swagger marks every request body required; those
    // of routes with an optional body (config.bodyOptional) are marked not required below.
    transform: ({ schema, url, route }) => {
      const s = schema as { body?: unknown; operationId?: string } | undefined;
      if (!s) return { schema, url };
      if (takesNoBody(s.body)) return { schema: { ...s, body: undefined }, url };
      if (route.config?.bodyOptional && s.operationId) optionalBodyOperations.add(s.operationId);
      return { schema, url };
    },
    transformObject: (documentObject) => {
      const doc = (documentObject as { openapiObject?: { paths?: Record<string, Record<string, { operationId?: string; requestBody?: { required?: boolean } }>> } }).openapiObject;
      for (const methods of Object.values(doc?.paths ?? {})) {
        for (const op of Object.values(methods)) {
          if (op?.operationId && optionalBodyOperations.has(op.operationId) && op.requestBody) op.requestBody.required = false;
        }
      }
      applyContracts(doc as Json, contracts);
      return doc as never;
    },
  });

  // One serialized document per server URL (PUBLIC_URL, or each host the instance is reached by)
  // and version: the 3.1 reference, and its 3.0 rendering for generators that read only 3.0.
  const documents = new Map<string, string>();
  const serve = (version: '3.1' | '3.0') => async (req: FastifyRequest, reply: FastifyReply) => {
    const server = publicUrl ?? requestOrigin(req);
    const key = `${version} ${server}`;
    let text = documents.get(key);
    if (text === undefined) {
      const doc = { ...(app.swagger() as unknown as Json), servers: [{ url: server, description: 'This instance' }] };
      text = JSON.stringify(version === '3.1' ? doc : toOpenApi30(doc));
      if (documents.size >= 32) documents.clear();
      documents.set(key, text);
    }
    return reply.type('application/json; charset=utf-8').send(text);
  };
  app.get('/v1/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, serve('3.1'));
  app.get('/v1/openapi-3.0.json', { config: { auth: 'none' }, schema: { hide: true } }, serve('3.0'));

  const csp = docsContentSecurityPolicy(originOf(options.publicUrl));
  const setDocsHeaders = (reply: FastifyReply) => {
    reply.header('content-security-policy', csp);
    reply.header('x-frame-options', 'DENY');
  };
  const docsHeaders = async (_req: FastifyRequest, reply: FastifyReply) => setDocsHeaders(reply);
  // Scalar's routes in a context of their own, so the hook that rewrites the page sees only the
  // docs page. Scalar renders its start-up as an inline script; the page carries it as a file of
  // this instance instead (js/init.js), so its policy allows no inline script at all, and the
  // setup script goes in front of Scalar's bundle.
  let initScript: string | null = null;
  const INLINE_INIT = /<script type="text\/javascript">\s*(Scalar\.createApiReference\([\s\S]*?\))\s*<\/script>/;
  await app.register(async (docs) => {
    docs.addHook('onSend', async (_req, reply, payload) => {
      if (typeof payload !== 'string' || !String(reply.getHeader('content-type')).startsWith('text/html')) return payload;
      const init = INLINE_INIT.exec(payload);
      if (!init) throw new Error('the docs page has no Scalar start-up script where expected (a Scalar upgrade?)');
      initScript = init[1] + ';\n';
      return payload
        .replace(init[0], '<script src="js/init.js"></script>')
        .replace('<script src="js/scalar.js"', '<script src="js/setup.js"></script>\n    <script src="js/scalar.js"');
    });
    // Scalar 1.46 also registers /v1/docs/openapi.json and .yaml, which fail (500) when the
    // document is given as a URL: the document's one address is /v1/openapi.json.
    docs.addHook('onRequest', async (req, reply) => {
      const url = req.routeOptions.url;
      if (url === '/v1/docs/openapi.json') return reply.redirect('/v1/openapi.json', 301);
      if (url === '/v1/docs/openapi.yaml') throw new ApiError('NOT_FOUND', 'No such route: the document is JSON, at /v1/openapi.json.');
    });
    const script = (body: () => Promise<string>) => async (_req: FastifyRequest, reply: FastifyReply) =>
      reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(await body());
    const route = { config: { auth: 'none' as const }, schema: { hide: true }, onRequest: docsHeaders, logLevel: 'warn' as const };
    docs.get('/v1/docs/js/setup.js', route, script(async () => DOCS_SETUP_JS));
    docs.get('/v1/docs/favicon.svg', route, async (_req, reply) =>
      reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(DOCS_FAVICON_SVG));
    docs.get('/v1/docs/js/init.js', route, script(async () => {
      // Asked for before this process rendered the page (a cached page): render it once.
      if (initScript === null) await app.inject({ method: 'GET', url: '/v1/docs/' });
      return initScript ?? '';
    }));
    await docs.register(scalar, {
      routePrefix: '/v1/docs',
      logLevel: 'warn',
      // Scalar types its hooks as callback-style: done() says the hook is over.
      hooks: { onRequest: (_req, reply, done) => { setDocsHeaders(reply); done(); } },
      configuration: {
        pageTitle: 'Pagamentos API reference',
        title: 'Pagamentos API reference',
        // The document comes from this instance, and try-it calls go straight to this instance
        // (no third-party proxy) with the key the reader types in.
        url: '/v1/openapi.json',
        // System fonts, not fonts.scalar.com: nothing outside the instance, works offline.
        withDefaultFonts: false,
        favicon: '/v1/docs/favicon.svg',
        hideClientButton: true,
        telemetry: false,
        agent: { disabled: true },
        mcp: { disabled: true },
        showDeveloperTools: 'never',
        authentication: { preferredSecurityScheme: 'secretKey' },
      } as Record<string, unknown>,
    });
  });
}

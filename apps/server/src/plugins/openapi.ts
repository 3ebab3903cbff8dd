import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import scalar from '@scalar/fastify-api-reference';
import { SESSION_COOKIE } from '../modules/admin/sessions.js';

export const API_DESCRIPTION = `Payments for Brazilian merchants: Pix and card, every mutating request idempotent.

- **Money** is always an integer number of centavos (\`1050\` = R$ 10,50).
- **Authentication**: \`Authorization: Bearer sk_test_...\` (sandbox) or \`sk_live_...\`. Publishable keys (\`pk_\`) only tokenize cards.
- **Idempotency**: send \`Idempotency-Key\` on any POST/PATCH/DELETE; a retry with the same key and body returns the stored response with \`Idempotent-Replayed: true\`.
- **Errors**: every non-2xx answer is \`{"error": {"code", "message", "correlationId", "param"?}}\`.
- **Sandbox**: \`POST /v1/sandbox/accounts\` gives you keys at once; test tokens \`tok_visa\`, \`tok_mastercard\` approve, \`tok_declined\`, \`tok_insufficient_funds\` decline, \`tok_provider_error\` fails at the provider.`;

// The only third-party host the docs page may reach: Scalar's font files. Everything else (the
// script, the document, try-it requests) is this instance.
export const DOCS_FONT_ORIGIN = 'https://fonts.scalar.com';

// The docs page gets its own policy (the API's `default-src 'none'` would blank it). It makes
// "the page talks only to this instance" something the browser enforces rather than a property
// of the current Scalar build: scripts, the document and try-it calls are same-origin only.
// `'unsafe-inline'` is needed for Scalar's inline bootstrap script and its runtime styles.
function docsContentSecurityPolicy(publicOrigin: string | null): string {
  const connect = ["'self'", ...(publicOrigin ? [publicOrigin] : [])].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self' 'unsafe-inline'",
    "style-src 'self' 'unsafe-inline'",
    `font-src 'self' data: ${DOCS_FONT_ORIGIN}`,
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

const OPTIONAL_BODY_OPERATIONS = new Set(['redeliverEvent', 'adminDeactivateSplitRule']);

export async function registerOpenApi(app: FastifyInstance, options: { publicUrl: string | null }): Promise<void> {
  // Paths already start with `/v1/...`: a trailing slash here would make `https://host//v1/...`.
  const serverUrl = options.publicUrl ? options.publicUrl.replace(/\/+$/, '') || '/' : '/';

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Pagamentos API',
        version: '1.0.0',
        description: API_DESCRIPTION,
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
        contact: { name: 'Support', email: 'support@example.com' },
      },
      servers: [{ url: serverUrl, description: 'This instance' }],
      // Sidebar order. Every tag an operation uses must be declared here, with a description
      // (test/openapi.test.ts checks it).
      tags: [
        { name: 'Payments', description: 'Pix and card payments.' },
        { name: 'Refunds', description: 'Full or partial refunds of approved payments.' },
        { name: 'Card tokens', description: 'Single-use card tokens made in the browser with a publishable key.' },
        { name: 'Recipients', description: 'Payees (CNPJ and bank account) that split rules pay out to.' },
        { name: 'Receivables', description: 'What each payee is owed from each approved sale, and when it becomes available.' },
        { name: 'Settlements', description: 'Payouts made by the settlement runs, one per payee per run.' },
        { name: 'Balance', description: 'Pending, available and settled totals, for the merchant and per recipient.' },
        { name: 'Events', description: 'Every state change, as it happened; what webhooks deliver.' },
        { name: 'Webhook endpoints', description: 'Where we send events, signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`).' },
        { name: 'Sandbox', description: 'Sign-up and simulators that only exist in the sandbox.' },
        { name: 'Admin', description: 'Back office (`/admin/...`): an admin session cookie and CSRF token, never an API key.' },
      ],
      components: {
        securitySchemes: {
          secretKey: { type: 'http', scheme: 'bearer', description: 'Secret key: `sk_test_...` (sandbox) or `sk_live_...`. Server side only.' },
          publishableKey: { type: 'http', scheme: 'bearer', description: 'Publishable key: `pk_test_...` or `pk_live_...`. Safe in the browser; only tokenizes cards.' },
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
    // @fastify/swagger marks every request body required; these operations also take none.
    transformObject: (documentObject) => {
      const doc = (documentObject as { openapiObject?: { paths?: Record<string, Record<string, { operationId?: string; requestBody?: { required?: boolean } }>> } }).openapiObject;
      for (const methods of Object.values(doc?.paths ?? {})) {
        for (const op of Object.values(methods)) {
          if (op?.operationId && OPTIONAL_BODY_OPERATIONS.has(op.operationId) && op.requestBody) op.requestBody.required = false;
        }
      }
      return doc as never;
    },
  });

  app.get('/v1/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, async () => app.swagger());

  const csp = docsContentSecurityPolicy(originOf(options.publicUrl));
  await app.register(scalar, {
    routePrefix: '/v1/docs',
    logLevel: 'warn',
    hooks: {
      onRequest: async (_req, reply) => {
        reply.header('content-security-policy', csp);
        reply.header('x-frame-options', 'DENY');
      },
    },
    configuration: {
      pageTitle: 'Pagamentos API reference',
      title: 'Pagamentos API reference',
      // The document comes from this instance, and try-it calls go straight to this instance
      // (no third-party proxy) with the key the reader types in.
      url: '/v1/openapi.json',
      hideClientButton: true,
      telemetry: false,
      agent: { disabled: true },
      mcp: { disabled: true },
      showDeveloperTools: 'never',
      authentication: { preferredSecurityScheme: 'secretKey' },
    } as Record<string, unknown>,
  });
}

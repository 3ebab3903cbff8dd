import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import scalar from '@scalar/fastify-api-reference';

export const API_DESCRIPTION = `Payments for Brazilian merchants: Pix and card, every mutating request idempotent.

**Money** is always an integer number of centavos (\`1050\` = R$ 10,50).
**Authentication**: \`Authorization: Bearer sk_test_...\` (sandbox) or \`sk_live_...\`. Publishable keys (\`pk_\`) only tokenize cards.
**Idempotency**: send \`Idempotency-Key\` on any POST/PATCH/DELETE; a retry with the same key and body returns the stored response with \`Idempotent-Replayed: true\`.
**Errors**: every non-2xx answer is \`{"error": {"code", "message", "correlationId", "param"?}}\`.
**Sandbox**: \`POST /v1/sandbox/accounts\` gives you keys at once; test tokens \`tok_visa\`, \`tok_mastercard\` approve, \`tok_declined\`, \`tok_insufficient_funds\` decline, \`tok_provider_error\` fails at the provider.`;

export async function registerOpenApi(app: FastifyInstance, options: { publicUrl: string | null }): Promise<void> {
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
      servers: [{ url: options.publicUrl ?? '/', description: 'This instance' }],
      tags: [
        { name: 'Payments', description: 'Pix and card payments.' },
        { name: 'Card tokens', description: 'Single-use card tokens made in the browser with a publishable key.' },
        { name: 'Sandbox', description: 'Sign-up and simulators that only exist in the sandbox.' },
      ],
      components: {
        securitySchemes: {
          secretKey: { type: 'http', scheme: 'bearer', description: 'Secret key: `sk_test_...` (sandbox) or `sk_live_...`. Server side only.' },
          publishableKey: { type: 'http', scheme: 'bearer', description: 'Publishable key: `pk_test_...` or `pk_live_...`. Safe in the browser; only tokenizes cards.' },
        },
      },
      security: [{ secretKey: [] }],
    },
    // Shared schemas become components named by their $id (Payment, Error, ...), which is what
    // code generators turn into class names.
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (json.$id as string) || `Schema${i}` },
  });

  app.get('/v1/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, async () => app.swagger());

  await app.register(scalar, {
    routePrefix: '/v1/docs',
    logLevel: 'warn',
    configuration: {
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

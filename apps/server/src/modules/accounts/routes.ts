import { Type, type Static } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../store/index.js';
import { errorResponses, ref } from '../../http/common.js';
import { ApiError } from '../../errors.js';
import { RateLimiter } from '../../plugins/rate-limit.js';
import { createAccount } from './service.js';

export const SandboxAccountRequest = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Your business name (default "Sandbox merchant").' })),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
  },
  { $id: 'SandboxAccountRequest', additionalProperties: false },
);

const KeyView = Type.Object({ id: Type.String(), key: Type.String({ description: 'Shown once: store it now.' }) }, { additionalProperties: false });

export const SandboxAccount = Type.Object(
  {
    account: Type.Object({
      id: Type.String({ description: 'Prefix `acct_`.' }),
      object: Type.Literal('account'),
      name: Type.String(),
      email: Type.Union([Type.String(), Type.Null()]),
      liveEnabled: Type.Boolean(),
      createdAt: Type.String({ format: 'date-time' }),
    }, { additionalProperties: false }),
    keys: Type.Object({ secretKey: KeyView, publishableKey: KeyView }, { additionalProperties: false }),
  },
  { $id: 'SandboxAccount', additionalProperties: false, description: 'A new merchant account with its sandbox keys (shown once).' },
);

export const accountSchemas = [SandboxAccountRequest, SandboxAccount];

export function accountRoutes(app: FastifyInstance, store: Store, options: { enabled: boolean; perHour: number }): void {
  const limiter = new RateLimiter(options.perHour, 3_600_000);
  app.post<{ Body: Static<typeof SandboxAccountRequest> }>('/v1/sandbox/accounts', {
    config: { auth: 'none', idempotent: false, rateLimit: { limiter, what: 'sandbox sign-ups from this address' } },
    schema: {
      operationId: 'createSandboxAccount', tags: ['Sandbox'], summary: 'Sign up for the sandbox (no key needed)',
      description: 'Creates a merchant account and returns its `sk_test_` and `pk_test_` keys at once. Rate limited per client address; can be turned off (`SANDBOX_SIGNUP=false`). Not idempotent: the keys are shown once and never stored in clear.',
      security: [],
      body: ref('SandboxAccountRequest'),
      response: { 200: ref('SandboxAccount'), ...errorResponses(404, 413, 415) },
    },
  }, async (req) => {
    if (!options.enabled) throw new ApiError('NOT_FOUND', 'Sandbox sign-up is turned off on this instance.');
    const created = await createAccount(store, { name: req.body.name ?? 'Sandbox merchant', email: req.body.email ?? null });
    req.log.info({ accountId: created.account.id }, 'sandbox account created');
    return {
      account: created.account,
      keys: {
        secretKey: { id: created.keys.secretKey.id, key: created.keys.secretKey.key },
        publishableKey: { id: created.keys.publishableKey.id, key: created.keys.publishableKey.key },
      },
    };
  });
}

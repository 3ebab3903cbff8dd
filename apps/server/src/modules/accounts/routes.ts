import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../store/index.js';
import { constant, ref, refTo } from '../../http/common.js';
import { ApiError } from '../../errors.js';
import { RateLimiter } from '../../plugins/rate-limit.js';
import { createAccount } from './service.js';
import { typed } from '../../http/typed.js';

export const SandboxAccountRequest = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Your business name (default "Sandbox merchant").' })),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
  },
  { $id: 'SandboxAccountRequest', additionalProperties: false },
);

// A key as sign-up shows it, the one time it is shown.
export const NewApiKey = Type.Object(
  {
    id: Type.String({ description: 'Prefix `key_`: names the key (to revoke it), never authenticates.' }),
    object: constant('api_key'),
    key: Type.String({ description: 'Shown once: store it now.' }),
    livemode: constant(false, { description: 'Sign-up makes sandbox keys only.' }),
  },
  { $id: 'NewApiKey', additionalProperties: false, description: 'A new API key, shown in full this once (we keep only its hash).' },
);

export const SandboxAccount = Type.Object(
  {
    object: constant('sandbox_account'),
    livemode: constant(false),
    account: Type.Object({
      id: Type.String({ description: 'Prefix `acct_`.' }),
      object: constant('account'),
      name: Type.String(),
      email: Type.Union([Type.String(), Type.Null()]),
      liveEnabled: Type.Boolean(),
      livemode: constant(false, { description: 'An account is not in one mode; sign-up answers in the sandbox. `liveEnabled` tells whether its live keys work.' }),
      createdAt: Type.String({ format: 'date-time' }),
    }, { additionalProperties: false }),
    keys: Type.Object({ secretKey: ref('NewApiKey'), publishableKey: ref('NewApiKey') }, { additionalProperties: false }),
  },
  { $id: 'SandboxAccount', additionalProperties: false, description: 'A new merchant account with its sandbox keys (shown once).' },
);

export const accountSchemas = [SandboxAccountRequest, NewApiKey, SandboxAccount];

export function accountRoutes(appInstance: FastifyInstance, store: Store, options: { enabled: boolean; perHour: number }): void {
  const app = typed(appInstance);
  const limiter = new RateLimiter(options.perHour, 3_600_000, store.clock);
  app.post('/v1/sandbox/accounts', {
    // The body is optional: `curl -X POST .../v1/sandbox/accounts` signs up a "Sandbox merchant".
    config: { auth: 'none', idempotent: false, bodyOptional: true, rateLimit: { limiter, what: 'sandbox sign-ups from this address' }, throws: ['NOT_FOUND'] },
    schema: {
      operationId: 'createSandboxAccount', tags: ['Sandbox'], summary: 'Sign up for the sandbox (no key needed)',
      description: 'Creates a merchant account and returns its `sk_test_` and `pk_test_` keys at once. Rate limited per client address; can be turned off (`SANDBOX_SIGNUP=false`). Not idempotent: the keys are shown once and never stored in clear.',
      security: [],
      body: refTo(SandboxAccountRequest),
      response: { 200: ref('SandboxAccount') },
    },
  }, async (req) => {
    if (!options.enabled) throw new ApiError('NOT_FOUND', 'Sandbox sign-up is turned off on this instance.');
    const created = await createAccount(store, { name: req.body.name ?? 'Sandbox merchant', email: req.body.email ?? null });
    req.log.info({ accountId: created.account.id }, 'sandbox account created');
    const shown = (key: { id: string; key: string }) => ({ id: key.id, object: 'api_key' as const, key: key.key, livemode: false as const });
    return {
      object: 'sandbox_account' as const,
      livemode: false as const,
      account: created.account,
      keys: { secretKey: shown(created.keys.secretKey), publishableKey: shown(created.keys.publishableKey) },
    };
  });
}

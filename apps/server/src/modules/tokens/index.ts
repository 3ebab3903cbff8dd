import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../store/index.js';
import { constant, IdempotencyHeaders, int32, ref, refTo } from '../../http/common.js';
import { validation } from '../../errors.js';
import { cardBrand, cvcValid, expiryValid, luhnValid, TEST_CARDS } from '../../domain/card.js';
import { newId } from '../../domain/ids.js';
import { typed } from '../../http/typed.js';

export const CardRequest = Type.Object(
  {
    number: Type.String({ minLength: 12, maxLength: 23, description: 'Card number; spaces allowed. Never stored nor logged.' }),
    expMonth: int32({ minimum: 1, maximum: 12 }),
    expYear: int32({ minimum: 2000, maximum: 2100 }),
    cvc: Type.String({ minLength: 3, maxLength: 4 }),
    holderName: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { $id: 'CardRequest', additionalProperties: false, description: 'The card to tokenize. Never stored nor logged in full.' },
);

// Live mode (issue 27): the card fields encrypted in the buyer's browser with the acquirer's
// client key (Adyen's client-side encryption). We cannot read them; the token carries them to
// the acquirer. What may be shown (brand, last four, expiry) comes from the page as it is.
const ENCRYPTED = Type.String({ minLength: 10, maxLength: 10_000, pattern: '^[A-Za-z0-9+/=_$|.:-]+$', description: 'An Adyen-encrypted field (`adyenjs_...`).' });
export const EncryptedCardRequest = Type.Object(
  {
    encryptedCardNumber: ENCRYPTED,
    encryptedExpiryMonth: ENCRYPTED,
    encryptedExpiryYear: ENCRYPTED,
    encryptedSecurityCode: ENCRYPTED,
    holderName: Type.Optional(Type.String({ maxLength: 100 })),
    brand: Type.String({ minLength: 1, maxLength: 30, pattern: '^[a-z0-9_]+$', description: 'The brand the card component detected (`visa`, `mc`, `elo`, ...).' }),
    last4: Type.String({ pattern: '^[0-9]{4}$', description: 'The last four digits the card component gives (`endDigits`).' }),
    expMonth: int32({ minimum: 1, maximum: 12 }),
    expYear: int32({ minimum: 2000, maximum: 2100 }),
  },
  { $id: 'EncryptedCardRequest', additionalProperties: false, description: 'A card encrypted in the browser with the acquirer\'s client key (live mode): no card number reaches the server.' },
);

export const CreateTokenBody = Type.Object(
  { card: Type.Optional(refTo(CardRequest)), encryptedCard: Type.Optional(refTo(EncryptedCardRequest)) },
  { $id: 'CreateTokenRequest', additionalProperties: false, description: 'Exactly one of `card` (sandbox keys) or `encryptedCard` (live keys).', examples: [{ card: { number: '4242 4242 4242 4242', expMonth: 12, expYear: 2030, cvc: '123' } }] },
);

export const TokenCard = Type.Object(
  { brand: Type.String(), last4: Type.String(), expMonth: int32({ minimum: 1, maximum: 12 }), expYear: int32({ minimum: 2000, maximum: 2100 }) },
  { $id: 'TokenCard', additionalProperties: false, description: 'The tokenized card, as much of it as may be shown.' },
);

export const CardToken = Type.Object(
  {
    id: Type.String({ description: 'Prefix `tok_`; single use.' }),
    object: constant('token'),
    card: refTo(TokenCard),
    used: Type.Boolean(),
    livemode: Type.Boolean(),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'CardToken', additionalProperties: false, description: 'A single-use card token made in the browser: with a publishable key on the merchant\'s own page, or with an open checkout session\'s client secret on the hosted checkout page.' },
);

export const tokenSchemas = [CardRequest, EncryptedCardRequest, CreateTokenBody, TokenCard, CardToken];

// Browsers call /v1/tokens from the merchant's own pages with a publishable key, so it answers
// CORS for any origin (a publishable key is public by design; secret keys never belong there).
// The hosted checkout page calls it from the instance's own origin with its session's client
// secret (plugins/auth.ts): the token is then its session's account's, in its session's mode.
const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, OPTIONS',
  'access-control-allow-headers': 'authorization, content-type, idempotency-key, x-correlation-id',
  'access-control-expose-headers': 'x-correlation-id, idempotent-replayed, retry-after',
  'access-control-max-age': '600',
};

export function tokenRoutes(appInstance: FastifyInstance, _store: Store): void {
  const app = typed(appInstance);
  app.options('/v1/tokens', { config: { auth: 'none' }, schema: { hide: true } }, async (_req, reply) => reply.code(204).headers(CORS_HEADERS).send());
  app.addHook('onSend', async (req, reply, payload) => {
    if (req.routeOptions.url === '/v1/tokens') reply.headers(CORS_HEADERS);
    return payload;
  });

  app.post('/v1/tokens', {
    config: { auth: 'publishable' },
    schema: {
      operationId: 'createCardToken',
      tags: ['Card tokens'],
      summary: 'Tokenize a card (browser, publishable key)',
      description: 'Sandbox keys: checks the number (Luhn), expiry and CVC and returns a single-use `tok_` carrying only brand and last4. Live keys take no card number (VALIDATION_ERROR): the card fields arrive encrypted in the buyer\'s browser with the acquirer\'s client key (`encryptedCard`), and the token carries them to the acquirer. In the sandbox the test card numbers decide the outcome of the payment (4242 4242 4242 4242 approves, 4000 0000 0000 0002 declines, ...). Takes a publishable key (the merchant\'s own pages), a secret key (server side), or an `open` checkout session\'s `clientSecret` (the hosted checkout page: the token is the session\'s account\'s, in its mode; PERMISSION_DENIED once the session is complete or expired).',
      security: [{ publishableKey: [] }, { checkoutClientSecret: [] }, { secretKey: [] }],
      headers: IdempotencyHeaders,
      body: refTo(CreateTokenBody),
      response: { 200: ref('CardToken') },
    },
  }, async (req) => {
    const { card, encryptedCard } = req.body;
    if ((card === undefined) === (encryptedCard === undefined)) throw validation('Send exactly one of card or encryptedCard.', 'card');
    const nowMs0 = req.ctx.clock.nowMs();
    if (encryptedCard) {
      if (!req.ctx.livemode) throw validation('encryptedCard is for live keys; the sandbox tokenizes test cards sent as card.', 'encryptedCard');
      if (!expiryValid(encryptedCard.expMonth, encryptedCard.expYear, new Date(nowMs0))) throw validation('The card has expired.', 'encryptedCard.expYear');
      const { brand, last4, expMonth, expYear, holderName, ...fields } = encryptedCard;
      const nowIso = new Date(nowMs0).toISOString();
      const token = { id: newId('token', nowMs0), object: 'token' as const, card: { brand, last4, expMonth, expYear }, used: false, livemode: true, createdAt: nowIso };
      const acquirerData = JSON.stringify({ type: 'scheme', ...fields, ...(holderName ? { holderName } : {}) });
      return req.ctx.write(async (tx) => {
        await tx.insertInto('card_tokens').values({
          id: token.id, account_id: req.ctx.accountId, livemode: 1, brand, last4, exp_month: expMonth, exp_year: expYear, test_outcome: 'approve', used_at: null, created_at: nowIso, acquirer_data: acquirerData,
        }).execute();
        return token;
      });
    }
    if (!card) throw validation('card is required.', 'card');
    if (req.ctx.livemode) throw validation('Live keys never take a card number: card fields are encrypted in the buyer\'s browser (send encryptedCard), or use the hosted checkout page, which does it.', 'card');
    const number = card.number.replace(/[\s-]/g, '');
    if (!luhnValid(number)) throw validation('The card number is not valid.', 'card.number');
    const brand = cardBrand(number);
    if (!cvcValid(card.cvc, brand)) throw validation('The CVC is not valid for this card.', 'card.cvc');
    const nowMs = req.ctx.clock.nowMs();
    if (!expiryValid(card.expMonth, card.expYear, new Date(nowMs))) throw validation('The card has expired.', 'card.expYear');
    const livemode = req.ctx.livemode;
    const testOutcome = livemode ? 'approve' : TEST_CARDS[number] ?? 'approve';
    const nowIso = new Date(nowMs).toISOString();
    const token = {
      id: newId('token', nowMs),
      object: 'token' as const,
      card: { brand, last4: number.slice(-4), expMonth: card.expMonth, expYear: card.expYear },
      used: false,
      livemode,
      createdAt: nowIso,
    };
    return req.ctx.write(async (tx) => {
      await tx.insertInto('card_tokens').values({
        id: token.id, account_id: req.ctx.accountId, livemode: livemode ? 1 : 0, brand, last4: token.card.last4,
        exp_month: card.expMonth, exp_year: card.expYear, test_outcome: testOutcome, used_at: null, created_at: nowIso,
      }).execute();
      return token;
    });
  });
}

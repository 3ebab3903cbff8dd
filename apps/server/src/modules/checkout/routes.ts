import type { FastifyInstance } from 'fastify';
import { IdempotencyHeaders, ref, refTo } from '../../http/common.js';
import { typed } from '../../http/typed.js';
import { requestOrigin } from '../../plugins/openapi.js';
import type { PaymentDeps } from '../payments/service.js';
import { CheckoutPayRequest, CheckoutSessionIdParams, CreateCheckoutSessionRequest, ListCheckoutSessionsQuery, RequiredIdempotencyHeaders } from './schemas.js';
import { createCheckoutSession, expireCheckoutSession, getCheckoutSession, getClientView, listCheckoutSessions, payCheckoutSession } from './service.js';

const tags = ['Checkout'];
const pageSecurity = [{ checkoutClientSecret: [] }];

export function checkoutRoutes(appInstance: FastifyInstance, deps: PaymentDeps): void {
  const app = typed(appInstance);
  const publicUrl = deps.config.publicUrl ? deps.config.publicUrl.replace(/\/+$/, '') : null;

  app.post('/v1/checkout/sessions', {
    schema: {
      operationId: 'createCheckoutSession', tags, summary: 'Create a checkout session',
      description: 'A hosted checkout for one sale. Send the buyer to `url`, or give `id` and `clientSecret` to the browser library (`PagamentosCheckout.open`, served at /v1/checkout.js). The session ends with at most one approved payment (`complete`, event `checkout_session.completed`) or expires at `expiresAt` (`expired`, event `checkout_session.expired`; a pending Pix made in it expires with it).',
      headers: IdempotencyHeaders,
      body: refTo(CreateCheckoutSessionRequest),
      response: { 200: ref('CheckoutSession') },
    },
  }, (req) => createCheckoutSession(deps, req.ctx, req.body, publicUrl ?? requestOrigin(req)));

  app.get('/v1/checkout/sessions', {
    schema: {
      operationId: 'listCheckoutSessions', tags, summary: 'List checkout sessions',
      description: 'Newest first, with cursors (`startingAfter`, `endingBefore`), a creation range and a `status` filter.',
      querystring: ListCheckoutSessionsQuery,
      response: { 200: ref('CheckoutSessionList') },
    },
  }, (req) => listCheckoutSessions(deps, req.ctx, req.query));

  app.get('/v1/checkout/sessions/:id', {
    schema: {
      operationId: 'getCheckoutSession', tags, summary: 'Fetch a checkout session',
      description: 'A session past its `expiresAt` reads `expired` (its pending Pix expires with it), unless a card payment is still being confirmed.',
      params: CheckoutSessionIdParams,
      response: { 200: ref('CheckoutSession') },
    },
  }, (req) => getCheckoutSession(deps, req.ctx, req.params.id));

  app.post('/v1/checkout/sessions/:id/expire', {
    config: { throws: ['INVALID_STATE'] },
    schema: {
      operationId: 'expireCheckoutSession', tags, summary: 'Expire a checkout session now',
      description: 'An `open` session becomes `expired` at once (event `checkout_session.expired`), and its pending Pix expires with it. Only an open session: INVALID_STATE when it is `complete` or already `expired`, or while a card payment of it is being confirmed (retry in a few seconds).',
      headers: IdempotencyHeaders,
      params: CheckoutSessionIdParams,
      response: { 200: ref('CheckoutSession') },
    },
  }, (req) => expireCheckoutSession(deps, req.ctx, req.params.id));

  app.get('/v1/checkout/sessions/:id/client', {
    config: { auth: 'checkout' },
    schema: {
      operationId: 'getCheckoutSessionClientView', tags, security: pageSecurity, summary: 'The hosted page loads its session',
      description: 'For the hosted checkout page: authorized by the session\'s `clientSecret` only (`Authorization: Bearer cs_..._secret_...`); API keys are refused (PERMISSION_DENIED). What the page shows and needs: amount, merchant name, methods, and the latest payment (with its Pix BR Code and QR). Poll it to follow a payment. The page tokenizes the card with POST /v1/tokens and this same client secret.',
      params: CheckoutSessionIdParams,
      response: { 200: ref('CheckoutSessionClientView') },
    },
  }, (req) => getClientView(deps, req.ctx, req.params.id));

  app.post('/v1/checkout/sessions/:id/client/pay', {
    config: { auth: 'checkout', throws: ['INVALID_STATE', 'UNPROCESSABLE', 'PROVIDER_UNAVAILABLE'] },
    schema: {
      operationId: 'payCheckoutSession', tags, security: pageSecurity, summary: 'The hosted page pays its session',
      description: 'For the hosted checkout page, authorized by the session\'s `clientSecret`; an `Idempotency-Key` is required (one per attempt). A card (`cardToken` from POST /v1/tokens) or Pix. INVALID_STATE when the session is not open or a payment of it is pending or approved; a second Pix request while its Pix is pending answers that same Pix. A declined card may be followed by another attempt.',
      headers: RequiredIdempotencyHeaders,
      params: CheckoutSessionIdParams,
      body: refTo(CheckoutPayRequest),
      response: { 200: ref('CheckoutSessionClientView') },
    },
  }, (req) => payCheckoutSession(deps, req.ctx, req.params.id, req.body));
}

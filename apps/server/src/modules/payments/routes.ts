import type { FastifyInstance } from 'fastify';
import { IdempotencyHeaders, ref, refTo } from '../../http/common.js';
import { typed } from '../../http/typed.js';
import { CreatePaymentBody, ListPaymentsQuery, PaymentIdParams } from './schemas.js';
import { cancelPayment, createPayment, getPayment, listPayments, sandboxPayPix, type PaymentDeps } from './service.js';
import { capturePayment } from './live-card.js';

const tags = ['Payments'];

export function paymentRoutes(appInstance: FastifyInstance, deps: PaymentDeps): void {
  const app = typed(appInstance);
  app.post('/v1/payments', {
    config: { throws: ['UNPROCESSABLE', 'PROVIDER_UNAVAILABLE'] },
    schema: {
      operationId: 'createPayment', tags, summary: 'Create a payment',
      description: 'Creates a Pix or card payment. Answers 200 with `status: "pending"`; the provider confirms asynchronously (card: `approved`/`declined` a moment later; Pix: when paid, or `expired`).',
      headers: IdempotencyHeaders,
      body: refTo(CreatePaymentBody),
      response: { 200: ref('Payment') },
    },
  }, (req) => createPayment(deps, req.ctx, req.body));

  app.get('/v1/payments', {
    schema: {
      operationId: 'listPayments', tags, summary: 'List payments',
      description: 'Newest first, with cursors (`startingAfter`, `endingBefore`) and filters.',
      querystring: ListPaymentsQuery,
      response: { 200: ref('PaymentList') },
    },
  }, (req) => listPayments(deps, req.ctx, req.query));

  app.get('/v1/payments/:id', {
    schema: {
      operationId: 'getPayment', tags, summary: 'Fetch a payment',
      params: PaymentIdParams,
      response: { 200: ref('Payment') },
    },
  }, (req) => getPayment(deps, req.ctx, req.params.id));

  app.post('/v1/payments/:id/cancel', {
    config: { throws: ['INVALID_STATE'] },
    schema: {
      operationId: 'cancelPayment', tags, summary: 'Cancel a pending payment',
      description: 'Only a `pending` payment can be canceled (INVALID_STATE otherwise).',
      headers: IdempotencyHeaders,
      params: PaymentIdParams,
      response: { 200: ref('Payment') },
    },
  }, (req) => cancelPayment(deps, req.ctx, req.params.id));

  app.post('/v1/payments/:id/capture', {
    config: { throws: ['INVALID_STATE'] },
    schema: {
      operationId: 'capturePayment', tags, summary: 'Capture an authorized card payment (manual capture)',
      description: 'Only a `requires_capture` payment (a live card on an acquirer account with manual capture) can be captured, for its whole amount. The acquirer confirms captures asynchronously: the answer has `capture.status: "processing"`; the payment becomes `approved` (event `payment.approved`) when the acquirer confirms, or `failed` (`capture_failed`, the authorization given back) when it cannot. A repeat while processing answers the payment as it is.',
      headers: IdempotencyHeaders,
      params: PaymentIdParams,
      response: { 200: ref('Payment') },
    },
  }, (req) => capturePayment(deps, req.ctx, req.params.id));

  app.post('/v1/sandbox/payments/:id/pay', {
    config: { throws: ['INVALID_STATE'] },
    schema: {
      operationId: 'sandboxPayPixPayment', tags: ['Sandbox'], summary: 'Simulate the payer paying a Pix (sandbox only)',
      description: 'Moves a pending Pix payment to `approved`, as the payer\'s bank would. Sandbox keys only.',
      headers: IdempotencyHeaders,
      params: PaymentIdParams,
      response: { 200: ref('Payment') },
    },
  }, (req) => sandboxPayPix(deps, req.ctx, req.params.id));
}

import type { FastifyInstance } from 'fastify';
import { errorResponses, IdempotencyHeaders, ref } from '../http/common.js';

// The bench's ceiling: the same stack (plugins, auth, validation, serialization, logging) with
// no store work, so `npm run bench` can say what fraction of it the real routes reach.
// Registered only with BENCH_CEILING=true.
const FIXED = {
  id: 'pay_00000000000000000000000000', object: 'payment', status: 'pending', amount: 1050, currency: 'BRL', method: 'credit_card',
  description: null, metadata: {}, customer: null, installments: 1, card: { brand: 'visa', last4: '4242' }, pix: null, failure: null,
  amountRefunded: 0, feeAmount: null, netAmount: null, livemode: false, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z',
};

export function benchCeilingRoutes(app: FastifyInstance): void {
  app.post('/v1/_bench/noop', {
    config: { idempotent: false },
    schema: { hide: true, headers: IdempotencyHeaders, body: ref('CreatePaymentRequest'), response: { 200: ref('Payment'), ...errorResponses() } },
  }, async () => FIXED);
  app.get('/v1/_bench/noop/:id', { schema: { hide: true, response: { 200: ref('Payment'), ...errorResponses() } } }, async () => FIXED);
}

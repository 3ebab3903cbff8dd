import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { IdempotencyHeaders, ref } from '../http/common.js';
import type { Store } from '../store/index.js';
import { insertKey } from '../plugins/idempotency.js';

// The bench's ceiling: the same stack (plugins, auth, validation, serialization, logging) with
// no store work, so `npm run bench` can say what fraction of it the real routes reach.
// Registered only with BENCH_CEILING=true.
//
// The durable ceiling adds the least any acknowledged keyed POST must do: one row (its
// idempotency key and the response) written through the group commit and fsync'd before the
// answer. What a payment create costs beyond it is the create's own work.
const FIXED = {
  id: 'pay_00000000000000000000000000', object: 'payment', status: 'pending', amount: 1050, currency: 'BRL', method: 'credit_card',
  description: null, metadata: {}, customer: null, installments: 1, card: { brand: 'visa', last4: '4242' }, pix: null, failure: null,
  amountRefunded: 0, feeAmount: null, netAmount: null, livemode: false, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z',
};

const FIXED_JSON = JSON.stringify(FIXED);

export function benchCeilingRoutes(app: FastifyInstance, store: Store): void {
  const postSchema = { hide: true, headers: IdempotencyHeaders, body: ref('CreatePaymentRequest'), response: { 200: ref('Payment') } };
  app.post('/v1/_bench/noop', { config: { idempotent: false }, schema: postSchema }, async () => FIXED);
  app.post('/v1/_bench/durable', { config: { idempotent: false }, schema: postSchema }, async (req) => {
    const auth = req.auth as NonNullable<typeof req.auth>;
    // The row the idempotency plugin stores with a create's effects, in a namespace of its own
    // (it never answers a real request's key), and never the same key twice.
    await store.write((tx) => insertKey(tx, auth, `_bench_durable:${randomUUID()}`, '', 200, FIXED_JSON));
    return FIXED;
  });
  app.get('/v1/_bench/noop/:id', { schema: { hide: true, response: { 200: ref('Payment') } } }, async () => FIXED);
}

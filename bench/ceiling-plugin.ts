// The bench's ceiling routes, added to a server started as production runs it with
// `cli.ts serve --plugin bench/ceiling-plugin.ts` (the product ships no such routes).
//
// They run on the same instance as the real routes, after them, so every hook applies: the
// auth, the rate limit, body validation against the same CreatePaymentRequest schema, the
// serialization of the same Payment schema, the request log line. What they skip is the work
// of a payment itself, so `npm run bench` can say what fraction of the stack the real routes
// reach.
//
//   POST /v1/_bench/noop       no store work (idempotent: false, so no key lookup either)
//   POST /v1/_bench/durable    the least any acknowledged keyed POST does: the key's lookup, then
//                              its row (key, fingerprint, the response bytes) written through the
//                              idempotent write, group-committed and fsync'd before the answer.
//                              An Idempotency-Key is required; the bench sends a fresh one each.
//   GET  /v1/_bench/noop/:id   no store work
//
// Only public contracts are used: Fastify's instance, the schema ids of the OpenAPI document
// and `req.ctx.write`, the one write every mutating route makes (docs/idempotency.md).
import type { FastifyInstance, FastifyRequest } from 'fastify';

export const FIXED = {
  id: 'pay_00000000000000000000000000', object: 'payment', status: 'pending', amount: 1050, currency: 'BRL', method: 'credit_card',
  description: null, metadata: {}, customer: null, installments: 1, card: { brand: 'visa', last4: '4242' }, pix: null, failure: null,
  nextAction: null, returnUrl: null, capture: null, amountRefunded: 0, feeAmount: null, netAmount: null, livemode: false, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z',
};

// The request context the server's idempotency plugin gives every authenticated request.
interface WithWrite { ctx: { write<T>(op: (tx: unknown) => Promise<T>): Promise<T> } }

const KEY = { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' };
const body = { $ref: 'CreatePaymentRequest' };
const response = { 200: { $ref: 'Payment' } };

export default function ceilingRoutes(app: FastifyInstance): void {
  app.post('/v1/_bench/noop', {
    config: { idempotent: false },
    schema: { hide: true, headers: { type: 'object', properties: { 'idempotency-key': KEY } }, body, response },
  }, async () => FIXED);

  app.post('/v1/_bench/durable', {
    schema: { hide: true, headers: { type: 'object', required: ['idempotency-key'], properties: { 'idempotency-key': KEY } }, body, response },
  }, async (req: FastifyRequest) => (req as FastifyRequest & WithWrite).ctx.write(async () => FIXED));

  app.get('/v1/_bench/noop/:id', { schema: { hide: true, response } }, async () => FIXED);
}

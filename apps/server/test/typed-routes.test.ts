import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { Type } from 'typebox';
import { refTo } from '../src/http/common.js';
import { typed } from '../src/http/typed.js';

// Handler types come from the route's schemas (http/typed.ts). This file is type-checked with
// the rest (`npm run typecheck`): each @ts-expect-error below fails the typecheck the day the
// inference is lost (a type gone to `unknown` or `any` makes it an unused directive).
// A named schema, referenced by $ref as the app's routes do.
const RefundBody = Type.Object(
  { paymentId: Type.String(), amount: Type.Optional(Type.Integer({ minimum: 1 })) },
  { $id: 'TypedRoutesRefundBody', additionalProperties: false },
);

test('handler types are inferred from the TypeBox schemas, $ref bodies included', async () => {
  const app = typed(Fastify());
  // The $ref needs the named schema registered, as the app does with its shared list.
  app.addSchema(RefundBody);
  app.post('/refunds/:id', {
    schema: {
      params: Type.Object({ id: Type.String() }),
      querystring: Type.Object({ expand: Type.Optional(Type.Boolean()) }),
      body: refTo(RefundBody),
    },
  }, (req) => {
    const paymentId: string = req.body.paymentId;
    const amount: number | undefined = req.body.amount;
    // @ts-expect-error: the schema has no such field
    void req.body.nope;
    // @ts-expect-error: a string param is not a number
    const id: number = req.params.id;
    // @ts-expect-error: an optional boolean is not a string
    const expand: string = req.query.expand;
    return { paymentId, amount, id, expand };
  });
  const res = await app.inject({ method: 'POST', url: '/refunds/r1', payload: { paymentId: 'pay_1', amount: 5 } });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { paymentId: 'pay_1', amount: 5, id: 'r1' });
  // And the schema still validates: the types describe what the validator lets through.
  const bad = await app.inject({ method: 'POST', url: '/refunds/r1', payload: { paymentId: 'pay_1', amount: 0 } });
  assert.equal(bad.statusCode, 400);
  await app.close();
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cachedSerializerFactory, cachedValidatorCompiler, referencedSchemas } from '../src/http/compile-cache.js';

// http/compile-cache.ts: what an app compiles is kept for the process's next app with the same
// schemas, and only for that.

const shared = () => ({
  Money: { $id: 'Money', type: 'integer' },
  Payment: { $id: 'Payment', type: 'object', properties: { id: { type: 'string' }, amount: { $ref: 'Money' } } },
  PaymentList: { $id: 'PaymentList', type: 'object', properties: { data: { type: 'array', items: { $ref: 'Payment#' } } } },
  Unrelated: { $id: 'Unrelated', type: 'object', properties: { x: { type: 'string' } } },
});

test('a serializer is compiled once per schema content and shared schemas, and works as compiled', () => {
  const info = (schema: unknown) => ({ schema, method: 'GET', url: '/x', httpStatus: '200' });
  // Two apps: the same content in other objects (Fastify clones the shared schemas per app).
  const a = cachedSerializerFactory()(shared(), undefined);
  const b = cachedSerializerFactory()(shared(), undefined);
  const fa = a(info({ $ref: 'PaymentList#' }));
  const fb = b(info({ $ref: 'PaymentList#' }));
  assert.equal(fb, fa, 'the second app got the first app\'s function');
  assert.equal(fa({ data: [{ id: 'pay_1', amount: 100, extra: 'dropped' }] }), '{"data":[{"id":"pay_1","amount":100}]}');
  // Other shared schemas (here Money is a string): compiled again, and the output says so.
  const other = shared() as Record<string, Record<string, unknown>>;
  other.Money = { $id: 'Money', type: 'string' };
  const fc = cachedSerializerFactory()(other, undefined)(info({ $ref: 'PaymentList#' }));
  assert.notEqual(fc, fa);
  assert.equal(fc({ data: [{ id: 'pay_1', amount: 100 }] }), '{"data":[{"id":"pay_1","amount":"100"}]}');
});

test('a validator is compiled once per part, schema content and shared schemas', () => {
  let compiled = 0;
  const compile = () => {
    compiled += 1;
    return () => true;
  };
  const one = cachedValidatorCompiler([shared()], compile);
  const two = cachedValidatorCompiler([shared()], compile);
  const v1 = one({ schema: { type: 'object' }, httpPart: 'body' });
  assert.equal(two({ schema: { type: 'object' }, httpPart: 'body' }), v1);
  assert.equal(compiled, 1);
  two({ schema: { type: 'object' }, httpPart: 'querystring' });
  two({ schema: { type: 'object', required: ['a'] }, httpPart: 'body' });
  cachedValidatorCompiler([shared(), { $id: 'More' }], compile)({ schema: { type: 'object' }, httpPart: 'body' });
  assert.equal(compiled, 4);
});

test('referencedSchemas follows refs through the shared schemas, fragments included, and leaves the rest out', () => {
  assert.deepEqual(Object.keys(referencedSchemas({ $ref: 'PaymentList#' }, shared())).sort(), ['Money', 'Payment', 'PaymentList']);
  assert.deepEqual(Object.keys(referencedSchemas({ anyOf: [{ $ref: 'Payment#/properties/id' }] }, shared())).sort(), ['Money', 'Payment']);
  assert.deepEqual(referencedSchemas({ type: 'string' }, shared()), {});
});

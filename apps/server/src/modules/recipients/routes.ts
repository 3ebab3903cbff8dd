import type { FastifyInstance } from 'fastify';
import type { TSchema } from 'typebox';
import type { Store } from '../../store/index.js';
import { IdempotencyHeaders, ref, refTo } from '../../http/common.js';
import { CreateRecipientBody, ListRecipientsQuery, Recipient, RecipientIdParams, RecipientList, UpdateRecipientBody } from './schemas.js';
import { createRecipient, getRecipient, listRecipients, updateRecipient } from './service.js';
import { typed } from '../../http/typed.js';

const tags = ['Recipients'];

// Named schemas referenced by `ref(...)` below; registered with the app's shared list.
export const recipientSchemas: TSchema[] = [CreateRecipientBody, UpdateRecipientBody, Recipient, RecipientList];

export function recipientRoutes(appInstance: FastifyInstance, store: Store): void {
  const app = typed(appInstance);
  app.post('/v1/recipients', {
    schema: {
      operationId: 'createRecipient', tags, summary: 'Register a recipient',
      description: 'Registers a payee (CNPJ and bank account) of this merchant account, to be referenced by split rules. The CNPJ may be numeric or alphanumeric; its check digits are verified and it is stored canonical. Each invalid field is a VALIDATION_ERROR naming it in `param`.',
      headers: IdempotencyHeaders,
      body: refTo(CreateRecipientBody),
      response: { 200: ref('Recipient') },
    },
  }, (req) => createRecipient(req.ctx, req.body));

  app.get('/v1/recipients', {
    schema: {
      operationId: 'listRecipients', tags, summary: 'List recipients',
      description: 'Newest first, with cursors (`startingAfter`, `endingBefore`), a creation range and filters: `document` (exact CNPJ, punctuation ignored) and `name` (exact, case-sensitive).',
      querystring: ListRecipientsQuery,
      response: { 200: ref('RecipientList') },
    },
  }, (req) => listRecipients(store, req.ctx, req.query));

  app.get('/v1/recipients/:id', {
    schema: {
      operationId: 'getRecipient', tags, summary: 'Fetch a recipient',
      params: RecipientIdParams,
      response: { 200: ref('Recipient') },
    },
  }, (req) => getRecipient(store, req.ctx, req.params.id));

  app.patch('/v1/recipients/:id', {
    schema: {
      operationId: 'updateRecipient', tags, summary: 'Update a recipient',
      description: 'Changes `name`, `bankAccount` (replaced whole, validated as on create) and/or `metadata` (replaced whole). Send at least one field. The `document` cannot change. A change writes a `recipient.updated` event; a request that changes nothing returns the recipient unchanged.',
      headers: IdempotencyHeaders,
      params: RecipientIdParams,
      body: refTo(UpdateRecipientBody),
      response: { 200: ref('Recipient') },
    },
  }, (req) => updateRecipient(req.ctx, req.params.id, req.body));
}

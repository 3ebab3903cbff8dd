import { createHash } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { constant, ref } from '../../http/common.js';
import { ApiError, validation } from '../../errors.js';
import { newId } from '../../domain/ids.js';
import { hashToken } from '../../providers/accounts.js';
import type { PaymentDeps } from './common.js';
import { enqueueSyncs } from './live-pix.js';
import { enqueuePayoutSyncs } from '../settlements/pix-payouts.js';
import { completeCardAction, storeCardNotifications } from './live-card.js';

// The PSPs' callbacks (`POST {webhookUrl}/pix`, the standard's `{pix: [...]}`). The URL carries
// an unguessable token per connector account (only its SHA-256 is stored). The raw notification
// is stored once (deduplicated by its bytes), its hints become sync jobs in the same write, and
// the answer is 200 at once: the sync job reads the truth from the PSP before anything moves. A
// forged or replayed callback can approve nothing.
//
// Mutual TLS: when this process terminates TLS itself, a callback whose client certificate did
// not verify is refused; behind a proxy, the proxy checks it (docs/providers.md).

const TOKEN = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$', description: 'The connector account\'s callback token.' });
export const ProviderCallbackBody = Type.Object({}, { $id: 'ProviderCallbackBody', additionalProperties: true, examples: [{ pix: [{ endToEndId: 'E12345678202611281200abcdef123456', txid: 'pg01m8h1x4wgg0j8q8jhm8tj4cf9', valor: '10.50', horario: '2026-11-28T12:00:00.000Z' }] }], description: 'The standard\'s callback: `{pix: [{endToEndId, txid, valor, horario, ...}]}`. Only read for which charges to read back.' });
export const ProviderCallbackAck = Type.Object({ object: constant('provider_callback'), livemode: Type.Boolean({ description: 'Whether the connector account serves live mode (production).' }), received: Type.Boolean() }, { $id: 'ProviderCallbackAck', additionalProperties: false, description: 'Stored (or already stored): the PSP may stop retrying.' });
export const AdyenNotificationBody = Type.Object({}, { $id: 'AdyenNotificationBody', additionalProperties: true, examples: [{ live: 'false', notificationItems: [{ NotificationRequestItem: { eventCode: 'AUTHORISATION', success: 'true', pspReference: 'QFQTPCQ8HXSKGK82', merchantReference: 'pay_01jc6v8x2a9m3yq0d7b4e5f6g8', merchantAccountCode: 'LojaECOM', amount: { value: 2500, currency: 'BRL' }, eventDate: '2026-11-28T12:00:00+01:00', additionalData: { hmacSignature: 'base64...' } } }] }], description: 'Adyen\'s standard notification (Webhooks-v1.json): `{live, notificationItems: [{NotificationRequestItem}]}`, each item signed with the connector account\'s HMAC key.' });
export const providerCallbackSchemas = [ProviderCallbackBody, ProviderCallbackAck, AdyenNotificationBody];

export function providerCallbackRoutes(app: FastifyInstance, deps: PaymentDeps): void {
  const handler = async (req: { params: unknown; body: unknown; raw: { socket: unknown } }) => {
    const socket = req.raw.socket as Partial<TLSSocket>;
    if (socket.encrypted && !socket.authorized) throw new ApiError('PERMISSION_DENIED', 'A client certificate the PSP\'s CA signed is required.');
    const { token } = req.params as { token: string };
    const account = await deps.store.db.selectFrom('connector_accounts').select(['id', 'environment', 'method']).where('webhook_token_hash', '=', hashToken(token)).executeTakeFirst();
    if (!account || account.method !== 'pix') throw new ApiError('NOT_FOUND', 'No such callback.');
    const body = JSON.stringify(req.body ?? {});
    const bodyHash = createHash('sha256').update(body).digest('hex');
    const connector = deps.connectors.pixConnector('pix_api');
    const hints = connector.parseNotification(req.body);
    // A sent Pix (a payout, issue 26) is notified on the same webhook: its hints too.
    const payoutHints = deps.connectors.payoutConnectors().map((c) => c.parseNotification(req.body));
    const nowMs = deps.clock.nowMs();
    await deps.store.write(async (tx) => {
      // Stored once by the unique (account, body hash): a duplicate, even one racing this one
      // from another connection, inserts nothing and queues no second sync.
      const inserted = await tx.insertInto('provider_notifications').values({ id: newId('notification', nowMs), connector_account_id: account.id, body_hash: bodyHash, body, received_at: new Date(nowMs).toISOString() })
        .onConflict((oc) => oc.columns(['connector_account_id', 'body_hash']).doNothing()).executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return;
      await enqueueSyncs(tx, account.id, hints, nowMs);
      for (const h of payoutHints) await enqueuePayoutSyncs(tx, account.id, h, nowMs);
    });
    deps.kickWorker();
    return { object: 'provider_callback' as const, livemode: account.environment === 'production', received: true };
  };
  const schema = (suffix: string) => ({
    operationId: `providerCallback${suffix}`, tags: ['Provider callbacks'], security: [],
    summary: suffix ? 'PSP callback (Pix)' : 'PSP callback',
    description: 'Where a PSP sends its API Pix callbacks (registered by the back office\'s "register the webhook"). The token in the path is per connector account. Answers 200 at once; the payment moves only after a read-back from the PSP.',
    params: Type.Object({ token: TOKEN }, { additionalProperties: false }),
    body: ref('ProviderCallbackBody'),
    response: { 200: ref('ProviderCallbackAck') },
  });
  app.post('/v1/provider-callbacks/:token', { config: { auth: 'none', idempotent: false, throws: ['PERMISSION_DENIED'] } as never, schema: schema('') }, handler);
  app.post('/v1/provider-callbacks/:token/pix', { config: { auth: 'none', idempotent: false, throws: ['PERMISSION_DENIED'] } as never, schema: schema('Pix') }, handler);

  // Adyen's notifications (issue 27). Every item's HMAC must verify with the connector
  // account's key (and name its merchant account): one that does not makes the whole batch a
  // 401 (counted in http_requests_total by route and status), and nothing of it is stored, so
  // Adyen retries it. A batch that verifies is stored raw once (by its bytes), each item once,
  // each item's payment queued for a sync, and the answer is `[accepted]` at once.
  app.post('/v1/provider-callbacks/:token/adyen', {
    config: { auth: 'none', idempotent: false, throws: ['PERMISSION_DENIED'] } as never,
    schema: {
      operationId: 'providerCallbackAdyen', tags: ['Provider callbacks'], security: [],
      summary: 'Adyen notification',
      description: 'Where Adyen sends its standard notifications (the URL an operator enters in Adyen\'s Customer Area). Every item must carry a valid HMAC signature (PERMISSION_DENIED otherwise, and nothing is stored). Answers `[accepted]` at once; payments and refunds move when the stored items are applied.',
      params: Type.Object({ token: TOKEN }, { additionalProperties: false }),
      body: ref('AdyenNotificationBody'),
      response: { 200: { description: '`[accepted]`', content: { 'text/plain': { schema: Type.String() } } } },
    },
  }, async (req, reply) => {
    const { token } = req.params as { token: string };
    const row = await deps.store.db.selectFrom('connector_accounts').selectAll().where('webhook_token_hash', '=', hashToken(token)).executeTakeFirst();
    if (!row || row.method !== 'card') throw new ApiError('NOT_FOUND', 'No such callback.');
    const resolved = deps.connectors.openedCard(row);
    const batch = resolved.connector.verifyNotifications(resolved.account, req.body);
    if (batch.rejected > 0 || batch.accepted.length === 0) {
      req.log.warn({ connectorAccountId: row.id, rejected: batch.rejected }, 'adyen notification refused: an item\'s HMAC signature did not verify');
      throw new ApiError('PERMISSION_DENIED', 'A notification item\'s HMAC signature did not verify.');
    }
    const body = JSON.stringify(req.body ?? {});
    const bodyHash = createHash('sha256').update(body).digest('hex');
    const nowMs = deps.clock.nowMs();
    await deps.store.write(async (tx) => {
      await tx.insertInto('provider_notifications').values({ id: newId('notification', nowMs), connector_account_id: row.id, body_hash: bodyHash, body, received_at: new Date(nowMs).toISOString() })
        .onConflict((oc) => oc.columns(['connector_account_id', 'body_hash']).doNothing()).execute();
      await storeCardNotifications(tx, row.id, batch.accepted, nowMs);
    });
    deps.kickWorker();
    return reply.type('text/plain').send('[accepted]');
  });

  // The buyer back from 3-D Secure (the returnUrl sent with the authorization). Completes the
  // payment at the acquirer, then shows where it stands (pt-BR first).
  app.get('/v1/payments/:id/card-return', {
    config: { auth: 'none', idempotent: false, throws: ['PROVIDER_UNAVAILABLE', 'INVALID_STATE'] } as never,
    // A page for the buyer, not an API operation (as the hosted checkout page).
    schema: {
      hide: true,
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
      querystring: Type.Object({ redirectResult: Type.Optional(Type.String({ minLength: 1, maxLength: 20_000 })) }, { additionalProperties: false }),
    },
  }, async (req, reply) => {
    const { id } = req.params as { id: string };
    const { redirectResult } = req.query as { redirectResult?: string };
    if (!redirectResult) throw validation('redirectResult is required: this is where the acquirer sends the buyer back after 3-D Secure.', 'redirectResult');
    const row = await completeCardAction(deps, id, redirectResult);
    // A merchant on its own pages (create's returnUrl): the buyer goes there, with the payment's
    // id and where it stands (a hint: the merchant fetches the payment to trust it).
    if (row.return_url) {
      const target = new URL(row.return_url);
      target.searchParams.set('paymentId', row.id);
      target.searchParams.set('status', row.status);
      return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(target.toString(), 303);
    }
    const words: Record<string, [string, string]> = {
      approved: ['Pagamento aprovado', 'Payment approved'],
      declined: ['Pagamento recusado', 'Payment declined'],
      failed: ['Pagamento não concluído', 'Payment failed'],
      requires_action: ['Aguardando a confirmação do banco', 'Waiting for the bank'],
      requires_capture: ['Pagamento autorizado', 'Payment authorized'],
      pending: ['Aguardando a confirmação do banco', 'Waiting for the bank'],
    };
    const [pt, en] = words[row.status] ?? ['Pagamento encerrado', 'Payment closed'];
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(`<!doctype html><html lang="pt-BR"><meta charset="utf-8"><title>${pt}</title><h1 data-status="${row.status}">${pt}</h1><p lang="en">${en}</p></html>`);
  });
}

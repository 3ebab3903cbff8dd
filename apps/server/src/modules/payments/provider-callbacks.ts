import { createHash } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { constant, ref } from '../../http/common.js';
import { ApiError } from '../../errors.js';
import { newId } from '../../domain/ids.js';
import { hashToken } from '../../providers/accounts.js';
import type { PaymentDeps } from './common.js';
import { enqueueSyncs } from './live-pix.js';
import { enqueuePayoutSyncs } from '../settlements/pix-payouts.js';

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
export const providerCallbackSchemas = [ProviderCallbackBody, ProviderCallbackAck];

export function providerCallbackRoutes(app: FastifyInstance, deps: PaymentDeps): void {
  const handler = async (req: { params: unknown; body: unknown; raw: { socket: unknown } }) => {
    const socket = req.raw.socket as Partial<TLSSocket>;
    if (socket.encrypted && !socket.authorized) throw new ApiError('PERMISSION_DENIED', 'A client certificate the PSP\'s CA signed is required.');
    const { token } = req.params as { token: string };
    const account = await deps.store.db.selectFrom('connector_accounts').select(['id', 'environment']).where('webhook_token_hash', '=', hashToken(token)).executeTakeFirst();
    if (!account) throw new ApiError('NOT_FOUND', 'No such callback.');
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
}

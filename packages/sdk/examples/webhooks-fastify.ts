import Fastify from 'fastify';
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from 'pagamentos';

export function webhookApp(secret: string, onEvent: (event: WebhookEvent) => Promise<void>) {
  const app = Fastify();
  app.register(async (scope) => {
    // In this scope only, keep JSON bodies as raw bytes: the signature covers the exact bytes sent.
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    scope.post('/webhooks', async (req, reply) => {
      let event: WebhookEvent;
      try {
        event = await verifyWebhook(req.body as Buffer, req.headers, secret);
      } catch (err) {
        if (err instanceof WebhookVerificationError) return reply.code(400).send(err.message);
        throw err;
      }
      await onEvent(event);
      return reply.code(200).send();
    });
  });
  return app;
}

import express from 'express';
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from 'pagamentos';

export function webhookApp(secret: string, onEvent: (event: WebhookEvent) => Promise<void>) {
  const app = express();
  // express.raw, not express.json: the signature covers the exact bytes sent.
  app.post('/webhooks', express.raw({ type: 'application/json' }), async (req, res) => {
    let event: WebhookEvent;
    try {
      event = await verifyWebhook(req.body as Buffer, req.headers, secret);
    } catch (err) {
      if (err instanceof WebhookVerificationError) return void res.status(400).send(err.message);
      throw err;
    }
    await onEvent(event); // e.g. if (event.type === 'payment.approved') ship(event.data.object.id)
    res.sendStatus(200);
  });
  return app;
}

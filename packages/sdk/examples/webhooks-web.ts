// Cloudflare Workers, Deno, Bun, Next.js route handlers: anything with Web Request/Response.
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from 'pagamentos';

export function webhookHandler(secret: string, onEvent: (event: WebhookEvent) => Promise<void>) {
  return async (request: Request): Promise<Response> => {
    let event: WebhookEvent;
    try {
      event = await verifyWebhook(request, secret); // reads the raw body and the headers itself
    } catch (err) {
      if (err instanceof WebhookVerificationError) return new Response(err.message, { status: 400 });
      throw err;
    }
    await onEvent(event);
    return new Response(null, { status: 200 });
  };
}

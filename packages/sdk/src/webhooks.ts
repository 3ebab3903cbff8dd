// Webhook verification and signing, Standard Webhooks (standardwebhooks.com): the signature is
// `v1,` + base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{raw body}" keyed with the
// base64 bytes after `whsec_`. WebCrypto only, so it runs in Node, Deno, Bun, Workers and
// browsers alike.
import { WebhookVerificationError } from './errors.js';
import type { CheckoutSession, Dispute, Event, EventListParams, Payment, Receivable, Recipient, Refund, Settlement, WebhookEndpoint } from './types.js';

// Every event type the API sends, from the generated types: the OpenAPI document's enum of the
// events list's `type` filter. The union below is built from it, so a type the server adds
// arrives with `npm run generate`, never left out by hand.
type DocumentEventType = NonNullable<EventListParams['type']>;

/** What a `webhook.test` event carries. */
export type WebhookTestObject = { object: 'webhook_test'; endpointId: string; message: string };

// The object an event type carries, by its family (the part before the dot).
type ObjectOf<T extends string> =
  T extends `payment.${string}` ? Payment
    : T extends `refund.${string}` ? Refund
      : T extends `dispute.${string}` ? Dispute
      : T extends `recipient.${string}` ? Recipient
        : T extends `receivable.${string}` ? Receivable
          : T extends `settlement.${string}` ? Settlement
            : T extends `checkout_session.${string}` ? CheckoutSession
              : T extends `webhook_endpoint.${string}` ? WebhookEndpoint
                : T extends 'webhook.test' ? WebhookTestObject
                  : never;

// One member per event type (distributes over a union of types).
type EventOf<T extends string> = T extends string ? Omit<Event, 'type' | 'data'> & { type: T; data: { object: ObjectOf<T> } } : never;

// Checked when this package compiles: every event type of the document has a known object. A
// type of a new family (`invoice.created`) breaks the build here, naming it, until ObjectOf
// maps its family; test/openapi.test.ts proves it with such a document.
type Untyped = { [T in DocumentEventType]: [ObjectOf<T>] extends [never] ? T : never }[DocumentEventType];
type NoneLeft<T extends never> = T;
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- read by the compiler, which is the check
type EveryEventTypeIsTyped = NoneLeft<Untyped>;

export type PaymentEvent = EventOf<Extract<DocumentEventType, `payment.${string}`>>;
export type RefundEvent = EventOf<Extract<DocumentEventType, `refund.${string}`>>;
export type DisputeEvent = EventOf<Extract<DocumentEventType, `dispute.${string}`>>;
export type RecipientEvent = EventOf<Extract<DocumentEventType, `recipient.${string}`>>;
export type ReceivableEvent = EventOf<Extract<DocumentEventType, `receivable.${string}`>>;
export type SettlementEvent = EventOf<Extract<DocumentEventType, `settlement.${string}`>>;
export type CheckoutSessionEvent = EventOf<Extract<DocumentEventType, `checkout_session.${string}`>>;
export type WebhookEndpointEvent = EventOf<Extract<DocumentEventType, `webhook_endpoint.${string}`>>;
export type WebhookTestEvent = EventOf<Extract<DocumentEventType, 'webhook.test'>>;

/** Every event a webhook delivers, discriminated on `type`: `if (e.type === 'payment.approved') e.data.object.amount`. */
export type WebhookEvent = EventOf<DocumentEventType>;
export type WebhookEventType = WebhookEvent['type'];

/** The raw body as received: a string, bytes (Buffer is a Uint8Array), or the Web Request itself. */
export type WebhookPayload = string | Uint8Array | ArrayBuffer | Request;
/** Fetch Headers, Node's req.headers, or any record; names are looked up case-insensitively. */
export type WebhookHeaders = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far the webhook-timestamp may be from now, either way. Default 300. */
  toleranceSeconds?: number;
  /** "Now", for tests. Default: the clock. */
  nowSeconds?: number;
}

export const DEFAULT_TOLERANCE_SECONDS = 300;
const PREFIX = 'whsec_';
const encoder = new TextEncoder();

function fail(code: string, message: string): never {
  throw new WebhookVerificationError({ code, message });
}

function isRequest(value: unknown): value is Request {
  return typeof value === 'object' && value !== null && typeof (value as Request).arrayBuffer === 'function' && typeof (value as Request).headers === 'object' && typeof (value as Request).method === 'string';
}

async function rawBytes(payload: unknown): Promise<Uint8Array> {
  const bytes = await readBytes(payload);
  // A delivery always has a body: an empty one is a body read elsewhere first (a stream already
  // drained by a parser), not a delivery to check a signature against.
  if (bytes.length === 0) {
    fail('WEBHOOK_RAW_BODY_REQUIRED', 'The body is empty: pass the raw request body as received. Was it already consumed (by a body parser, or a stream read earlier)?');
  }
  return bytes;
}

async function readBytes(payload: unknown): Promise<Uint8Array> {
  if (typeof payload === 'string') return encoder.encode(payload);
  if (payload instanceof Uint8Array) return payload;
  if (payload instanceof ArrayBuffer) return new Uint8Array(payload);
  if (isRequest(payload)) {
    if (payload.bodyUsed) fail('WEBHOOK_RAW_BODY_REQUIRED', 'The Request body was already read: pass the raw body you read (the exact text or bytes) instead of the Request.');
    return new Uint8Array(await payload.clone().arrayBuffer());
  }
  if (payload === undefined || payload === null) fail('WEBHOOK_RAW_BODY_REQUIRED', 'No payload: pass the raw request body (string, Buffer/Uint8Array) or the Web Request.');
  return fail(
    'WEBHOOK_RAW_BODY_REQUIRED',
    'The payload is a parsed object, not the raw body: signatures cover the exact bytes sent, which re-serializing changes. ' +
      "Read the body raw (Express: express.raw({ type: 'application/json' }); Fastify: a string content-type parser; Web: the Request itself or await request.text()).",
  );
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(' ') : value;
  }
  return undefined;
}

function base64ToBytes(text: string): Uint8Array | undefined {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function bytesToBase64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function secretKey(secret: unknown): Promise<CryptoKey> {
  if (typeof secret !== 'string' || !secret.startsWith(PREFIX)) {
    fail('WEBHOOK_INVALID_SECRET', `The signing secret must start with ${PREFIX} (the secret of the webhook endpoint, not your API key).`);
  }
  const bytes = base64ToBytes(secret.slice(PREFIX.length));
  if (!bytes || bytes.length === 0) fail('WEBHOOK_INVALID_SECRET', `The signing secret is not ${PREFIX} followed by base64.`);
  return crypto.subtle.importKey('raw', bytes as BufferSource, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

async function hmac(key: CryptoKey, id: string, timestamp: string, body: Uint8Array): Promise<Uint8Array> {
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const content = new Uint8Array(prefix.length + body.length);
  content.set(prefix);
  content.set(body, prefix.length);
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, content));
}

// Constant time in the contents: every byte is compared whatever the earlier ones were.
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

/**
 * Verifies a webhook and returns its event. `payload` is the raw body (or the Web Request, whose
 * headers are then used when `headers` is omitted); `secret` one `whsec_` secret or several
 * (any may match). Throws a WebhookVerificationError whose `code` says what failed.
 */
export function verifyWebhook(request: Request, secret: string | string[], options?: VerifyOptions): Promise<WebhookEvent>;
export function verifyWebhook(payload: WebhookPayload, headers: WebhookHeaders | undefined, secret: string | string[], options?: VerifyOptions): Promise<WebhookEvent>;
export async function verifyWebhook(payload: WebhookPayload, ...rest: unknown[]): Promise<WebhookEvent> {
  const shifted = typeof rest[0] === 'string' || Array.isArray(rest[0]);
  const headers = (shifted ? undefined : rest[0]) as WebhookHeaders | undefined;
  const secret = (shifted ? rest[0] : rest[1]) as string | string[];
  const options = ((shifted ? rest[1] : rest[2]) ?? {}) as VerifyOptions;

  const body = await rawBytes(payload);
  const secrets = Array.isArray(secret) ? secret : [secret];
  if (secrets.length === 0) fail('WEBHOOK_INVALID_SECRET', 'No signing secret given.');
  const keys = await Promise.all(secrets.map(secretKey));
  const source = headers ?? (isRequest(payload) ? payload.headers : undefined);
  if (!source) fail('WEBHOOK_MISSING_HEADER', 'No headers given: pass the request headers (Headers, req.headers or a record).');

  const id = header(source, 'webhook-id');
  const timestamp = header(source, 'webhook-timestamp');
  const signatures = header(source, 'webhook-signature');
  const missing = [!id && 'webhook-id', !timestamp && 'webhook-timestamp', !signatures && 'webhook-signature'].filter(Boolean);
  if (missing.length > 0) fail('WEBHOOK_MISSING_HEADER', `Missing header${missing.length > 1 ? 's' : ''} ${missing.join(', ')}: is this request a webhook from Pagamentos, and does your framework pass its headers on?`);

  if (!/^[0-9]{1,15}$/.test(timestamp!)) fail('WEBHOOK_INVALID_TIMESTAMP', 'The webhook-timestamp header is not a Unix time in seconds.');
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const age = now - Number(timestamp);
  if (age > tolerance) fail('WEBHOOK_TIMESTAMP_TOO_OLD', `The webhook-timestamp is ${age} s old, over the ${tolerance} s tolerance: a stale or replayed delivery (or a wrong clock here).`);
  if (-age > tolerance) fail('WEBHOOK_TIMESTAMP_TOO_NEW', `The webhook-timestamp is ${-age} s in the future, over the ${tolerance} s tolerance (check this machine's clock).`);

  const candidates = signatures!.split(' ').filter((s) => s.startsWith('v1,')).map((s) => base64ToBytes(s.slice(3))).filter((b): b is Uint8Array => b !== undefined);
  let matched = false;
  for (const key of keys) {
    const expected = await hmac(key, id!, timestamp!, body);
    for (const candidate of candidates) if (timingSafeEqual(candidate, expected)) matched = true;
  }
  if (!matched) fail('WEBHOOK_SIGNATURE_MISMATCH', candidates.length === 0 ? 'The webhook-signature header has no v1 signature.' : 'No signature matches the secret: a wrong secret, or a body changed on the way (parsed and re-serialized?).');

  try {
    return JSON.parse(new TextDecoder().decode(body)) as WebhookEvent;
  } catch {
    return fail('WEBHOOK_INVALID_PAYLOAD', 'The signature matches but the body is not JSON.');
  }
}

// A type, not an interface: usable wherever a header record (or HeadersInit) is expected.
export type SignedWebhookHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/**
 * Signs a payload as the API does, for your own tests: returns the three headers to send with
 * it. Several secrets give several signatures (as during a rotation).
 */
export async function signWebhook(payload: string | Uint8Array, secret: string | string[], options: { id?: string; timestampSeconds?: number } = {}): Promise<SignedWebhookHeaders> {
  const id = options.id ?? 'msg_' + Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
  const timestamp = String(options.timestampSeconds ?? Math.floor(Date.now() / 1000));
  const body = typeof payload === 'string' ? encoder.encode(payload) : payload;
  const keys = await Promise.all((Array.isArray(secret) ? secret : [secret]).map(secretKey));
  const signatures = await Promise.all(keys.map(async (key) => 'v1,' + bytesToBase64(await hmac(key, id, timestamp, body))));
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signatures.join(' ') };
}

/** `client.webhooks`: the same functions as the standalone exports. */
export class Webhooks {
  readonly verify = verifyWebhook;
  readonly sign = signWebhook;
}

// The messages between the hosted checkout page (apps/checkout-page, in the iframe) and this
// library (on the merchant's page). Both sides post with an exact target origin, never '*', and
// both drop anything whose origin, source, type prefix or session id is not the expected one.
// The page imports this file too, so the two sides cannot drift apart.

export const MESSAGE_PREFIX = 'pagamentos:checkout:';

// Page -> library.
export type PageMessage =
  // The page's script runs (cancels the library's fallback to redirect).
  | { type: 'pagamentos:checkout:ready'; sessionId: string }
  // The session is loaded and drawn (the library hides its spinner).
  | { type: 'pagamentos:checkout:loaded'; sessionId: string }
  // A payment is in flight (true) or not (false): no closing while true.
  | { type: 'pagamentos:checkout:busy'; sessionId: string; busy: boolean }
  // The session's payment is approved.
  | { type: 'pagamentos:checkout:success'; sessionId: string; paymentId: string; status: string }
  // The page cannot go on (expired session, unknown session, wrong secret).
  | { type: 'pagamentos:checkout:error'; sessionId: string; code: string; message: string }
  // The buyer asked to close from inside the page (Esc inside the iframe, or a close button there).
  | { type: 'pagamentos:checkout:close'; sessionId: string }
  // The page's content is this many CSS pixels tall: the modal follows it (up to the screen).
  | { type: 'pagamentos:checkout:resize'; sessionId: string; height: number };

export type PageMessageType = PageMessage['type'];

const TYPES: ReadonlySet<string> = new Set<PageMessageType>([
  'pagamentos:checkout:ready',
  'pagamentos:checkout:loaded',
  'pagamentos:checkout:busy',
  'pagamentos:checkout:success',
  'pagamentos:checkout:error',
  'pagamentos:checkout:close',
  'pagamentos:checkout:resize',
]);

// A height the modal may take from the page: whole pixels, within reason.
export const MAX_PAGE_HEIGHT_PX = 10_000;

// A message of the protocol for this session, or null for anything else.
export function readPageMessage(data: unknown, sessionId: string): PageMessage | null {
  if (typeof data !== 'object' || data === null) return null;
  const m = data as Record<string, unknown>;
  if (typeof m.type !== 'string' || !TYPES.has(m.type) || m.sessionId !== sessionId) return null;
  if (m.type === 'pagamentos:checkout:busy' && typeof m.busy !== 'boolean') return null;
  if (m.type === 'pagamentos:checkout:success' && (typeof m.paymentId !== 'string' || typeof m.status !== 'string')) return null;
  if (m.type === 'pagamentos:checkout:resize' && !(Number.isInteger(m.height) && (m.height as number) > 0 && (m.height as number) <= MAX_PAGE_HEIGHT_PX)) return null;
  if (m.type === 'pagamentos:checkout:error' && (typeof m.code !== 'string' || typeof m.message !== 'string')) return null;
  return m as unknown as PageMessage;
}

export const SESSION_ID = /^cs_[A-Za-z0-9]{8,64}$/;

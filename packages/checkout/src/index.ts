// PagamentosCheckout.open(): the hosted checkout page of a checkout session in a modal (an
// overlay with an iframe) or, in redirect mode, by sending the buyer to it.
//
// Why it is built this way:
// - Styles are set through element.style (the CSSOM), never a <style> tag or a style attribute
//   in markup, so the library works under a merchant's strict CSP (no 'unsafe-inline').
// - The page in the iframe and this library talk by postMessage with exact target origins; this
//   side drops any message whose origin is not the checkout's, whose source is not our iframe,
//   whose type is not ours or whose session is another one (see protocol.ts).
// - Focus: the rest of the merchant's page is made inert while the modal is open, and two
//   sentinels around the dialog send Tab back in, so the trap holds even though focus travels
//   through a cross-origin iframe we cannot look into. Focus goes back where it was on close.
// - While the page reports a payment in flight, neither Esc nor the close button closes it.
import { readPageMessage, SESSION_ID, type PageMessage } from './protocol.js';

export type CheckoutLocale = 'pt-BR' | 'en';
export type CheckoutMode = 'modal' | 'redirect';

export interface CheckoutSuccess {
  sessionId: string;
  paymentId: string;
  status: string;
}

export interface CheckoutFailure {
  // 'checkout_already_open' | 'checkout_session_expired' | 'checkout_session_unavailable' | ...
  code: string;
  message: string;
}

export interface OpenOptions {
  sessionId: string;
  // The session's clientSecret (from your server's POST /v1/checkout/sessions): the page is
  // authorized by it, never by the id alone.
  clientSecret: string;
  onSuccess?: (result: CheckoutSuccess) => void;
  // The buyer closed the modal without paying.
  onCancel?: () => void;
  onError?: (error: CheckoutFailure) => void;
  locale?: CheckoutLocale;
  mode?: CheckoutMode;
  // The payment service's origin, e.g. https://pagamentos.example. The script served at
  // /v1/checkout.js knows it from its own src; the ESM build needs it.
  baseUrl?: string;
  // How long the page may take to start in the iframe before the library falls back to
  // redirect mode (the iframe is blocked, or the network is down). Default 15 000.
  loadTimeoutMs?: number;
}

export interface CheckoutHandle {
  // Closes the modal (a no-op once closed; safe to call any number of times). A programmatic
  // close is the merchant's decision, so it works even while a payment is in flight; confirm
  // the payment from your server either way.
  close(): void;
  destroy(): void;
  readonly closed: boolean;
}

const DEFAULT_LOAD_TIMEOUT_MS = 15_000;
const TEXT = {
  'pt-BR': { dialog: 'Pagamento', frame: 'Pagamento seguro', close: 'Fechar', loading: 'Carregando o pagamento…', open: 'Já existe um pagamento aberto.' },
  en: { dialog: 'Payment', frame: 'Secure payment', close: 'Close', loading: 'Loading the payment…', open: 'A checkout is already open.' },
} as const;

// The script-tag build learns the service's origin from its own src (/v1/checkout.js).
let scriptBase: string | undefined;
try {
  const src = typeof document !== 'undefined' ? (document.currentScript as HTMLScriptElement | null)?.src : undefined;
  if (src) scriptBase = new URL(src).origin;
} catch {
  scriptBase = undefined;
}

let current: CheckoutHandle | null = null;

function baseOrigin(options: OpenOptions): string {
  const base = options.baseUrl ?? scriptBase;
  if (!base) throw new Error('PagamentosCheckout: pass baseUrl (the payment service origin) or load the library from <service>/v1/checkout.js');
  return new URL(base).origin;
}

function pageUrl(origin: string, options: OpenOptions, embed: boolean, fullscreen = false): string {
  const url = new URL(`/checkout/${options.sessionId}`, origin);
  if (embed) {
    url.searchParams.set('embed', '1');
    url.searchParams.set('parentOrigin', window.location.origin);
    // The page cannot see the screen it is on through the frame: it is told it fills a phone's.
    if (fullscreen) url.searchParams.set('layout', 'fullscreen');
  }
  if (options.locale) url.searchParams.set('locale', options.locale);
  url.hash = options.clientSecret;
  return url.toString();
}

function style(el: HTMLElement, props: Record<string, string>): void {
  for (const [k, v] of Object.entries(props)) el.style.setProperty(k, v);
}

const closedHandle: CheckoutHandle = { close() {}, destroy() {}, closed: true };

export function open(options: OpenOptions): CheckoutHandle {
  if (!options || typeof options.sessionId !== 'string' || !SESSION_ID.test(options.sessionId)) {
    throw new TypeError('PagamentosCheckout.open: sessionId must be a checkout session id (cs_…)');
  }
  if (typeof options.clientSecret !== 'string' || !options.clientSecret.startsWith(`${options.sessionId}_secret_`)) {
    throw new TypeError("PagamentosCheckout.open: clientSecret must be the session's clientSecret (cs_…_secret_…)");
  }
  const origin = baseOrigin(options);
  const text = TEXT[options.locale === 'en' ? 'en' : 'pt-BR'];

  if (options.mode === 'redirect') {
    window.location.assign(pageUrl(origin, options, false));
    return closedHandle;
  }
  if (current && !current.closed) {
    options.onError?.({ code: 'checkout_already_open', message: text.open });
    return current;
  }

  const doc = document;
  const restoreFocus = doc.activeElement as HTMLElement | null;
  const { sessionId } = options;
  let busy = false;
  let loaded = false;
  let succeeded = false;
  let closed = false;

  // The dialog.
  const overlay = doc.createElement('div');
  overlay.setAttribute('role', 'dialog');
  overlay.setAttribute('aria-modal', 'true');
  overlay.setAttribute('aria-label', text.dialog);
  overlay.dataset.pagamentosCheckout = sessionId;
  style(overlay, {
    position: 'fixed', inset: '0', 'z-index': '2147483647', display: 'flex', 'align-items': 'center', 'justify-content': 'center',
    background: 'rgba(15, 23, 42, 0.6)', margin: '0', padding: '0',
  });
  const sentinel = () => {
    const s = doc.createElement('div');
    s.tabIndex = 0;
    style(s, { position: 'absolute', width: '1px', height: '1px', overflow: 'hidden', opacity: '0' });
    return s;
  };
  const startSentinel = sentinel();
  const endSentinel = sentinel();

  // On a phone (up to 480 px wide) the dialog is the whole screen; wider, a card whose height
  // follows the page's content (its `resize` messages), up to the screen less a margin.
  const phone = window.matchMedia?.('(max-width: 480px)').matches ?? window.innerWidth <= 480;
  const box = doc.createElement('div');
  style(box, {
    position: 'relative', width: phone ? '100vw' : 'min(100vw, 480px)', height: phone ? '100dvh' : 'min(calc(100dvh - 48px), 560px)', background: '#ffffff', 'border-radius': phone ? '0' : '12px',
    overflow: 'hidden', 'box-shadow': '0 20px 60px rgba(0, 0, 0, 0.35)',
  });
  box.dataset.layout = phone ? 'fullscreen' : 'card';
  const fitHeight = (contentPx: number) => {
    if (!phone) style(box, { height: `min(calc(100dvh - 48px), ${contentPx}px)` });
  };

  const closeButton = doc.createElement('button');
  closeButton.type = 'button';
  closeButton.setAttribute('aria-label', text.close);
  closeButton.textContent = '×';
  style(closeButton, {
    position: 'absolute', top: '6px', right: '6px', width: '40px', height: '40px', border: '0', 'border-radius': '20px', background: '#f1f5f9',
    color: '#0f172a', font: '600 24px/40px system-ui, sans-serif', cursor: 'pointer', 'z-index': '2', padding: '0',
  });

  const spinner = doc.createElement('div');
  spinner.setAttribute('role', 'status');
  style(spinner, { position: 'absolute', inset: '0', display: 'flex', 'align-items': 'center', 'justify-content': 'center', background: '#ffffff', 'z-index': '1' });
  const ring = doc.createElement('div');
  style(ring, { width: '36px', height: '36px', border: '4px solid #cbd5e1', 'border-top-color': '#0f766e', 'border-radius': '50%' });
  // Web Animations instead of @keyframes: no stylesheet needed, so no CSP exception either.
  ring.animate?.([{ transform: 'rotate(0deg)' }, { transform: 'rotate(360deg)' }], { duration: 800, iterations: Infinity });
  const loadingText = doc.createElement('span');
  loadingText.textContent = text.loading;
  style(loadingText, { position: 'absolute', width: '1px', height: '1px', overflow: 'hidden', clip: 'rect(0 0 0 0)', 'white-space': 'nowrap' });
  spinner.append(ring, loadingText);

  const iframe = doc.createElement('iframe');
  iframe.title = text.frame;
  iframe.src = pageUrl(origin, options, true, phone);
  iframe.setAttribute('allow', 'clipboard-write');
  iframe.referrerPolicy = 'no-referrer';
  style(iframe, { width: '100%', height: '100%', border: '0', display: 'block' });

  box.append(closeButton, spinner, iframe);
  overlay.append(startSentinel, box, endSentinel);

  // Everything else on the merchant's page is inert while the dialog is open.
  const madeInert: HTMLElement[] = [];
  for (const child of Array.from(doc.body.children)) {
    if (child instanceof HTMLElement && !child.inert) {
      child.inert = true;
      madeInert.push(child);
    }
  }
  const html = doc.documentElement;
  const saved = { html: html.style.overflow, body: doc.body.style.overflow };
  html.style.overflow = 'hidden';
  doc.body.style.overflow = 'hidden';
  doc.body.append(overlay);

  const setBusy = (value: boolean) => {
    busy = value;
    closeButton.disabled = value;
    closeButton.setAttribute('aria-disabled', String(value));
    style(closeButton, { opacity: value ? '0.4' : '1', cursor: value ? 'not-allowed' : 'pointer' });
  };

  const teardown = () => {
    if (closed) return;
    closed = true;
    window.clearTimeout(fallbackTimer);
    window.removeEventListener('message', onMessage);
    doc.removeEventListener('keydown', onKeydown, true);
    overlay.remove();
    for (const el of madeInert) el.inert = false;
    html.style.overflow = saved.html;
    doc.body.style.overflow = saved.body;
    if (current === handle) current = null;
    if (restoreFocus && restoreFocus.isConnected && typeof restoreFocus.focus === 'function') restoreFocus.focus();
  };

  // The buyer closes (Esc, the close button, or the page's own close): not while paying.
  const userClose = () => {
    if (busy || closed) return;
    teardown();
    if (!succeeded) options.onCancel?.();
  };

  const onKeydown = (e: KeyboardEvent) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      userClose();
    }
  };

  const onMessage = (e: MessageEvent) => {
    if (e.origin !== origin || e.source !== iframe.contentWindow) return;
    const m: PageMessage | null = readPageMessage(e.data, sessionId);
    if (!m || closed) return;
    switch (m.type) {
      case 'pagamentos:checkout:ready':
        window.clearTimeout(fallbackTimer);
        break;
      case 'pagamentos:checkout:loaded':
        window.clearTimeout(fallbackTimer);
        if (!loaded) {
          loaded = true;
          spinner.remove();
          // Into the page: its first field is the next Tab stop.
          iframe.focus();
        }
        break;
      case 'pagamentos:checkout:busy':
        setBusy(m.busy);
        break;
      case 'pagamentos:checkout:success':
        setBusy(false);
        if (!succeeded) {
          succeeded = true;
          options.onSuccess?.({ sessionId, paymentId: m.paymentId, status: m.status });
        }
        break;
      case 'pagamentos:checkout:error':
        options.onError?.({ code: m.code, message: m.message });
        break;
      case 'pagamentos:checkout:close':
        userClose();
        break;
      case 'pagamentos:checkout:resize':
        fitHeight(m.height);
        break;
    }
  };

  startSentinel.addEventListener('focus', () => iframe.focus());
  endSentinel.addEventListener('focus', () => closeButton.focus());
  closeButton.addEventListener('click', userClose);
  doc.addEventListener('keydown', onKeydown, true);
  window.addEventListener('message', onMessage);

  // No word from the page in time (blocked from framing, offline): the hosted page itself. The
  // page's ready or loaded message clears this timer, as teardown does.
  const fallbackTimer = window.setTimeout(() => {
    if (closed) return;
    teardown();
    window.location.assign(pageUrl(origin, options, false));
  }, options.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS);

  const handle: CheckoutHandle = {
    close: teardown,
    destroy: teardown,
    get closed() {
      return closed;
    },
  };
  current = handle;
  closeButton.focus();
  return handle;
}

export type { PageMessage } from './protocol.js';

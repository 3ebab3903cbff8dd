// The hosted checkout page. URL: /checkout/<session id>[?embed=1&parentOrigin=<origin>][&locale=en]
// #<client secret>. The secret travels in the fragment, so it never reaches a server log or a
// Referer; every call of the page carries it as its bearer.
//
// Embedded (in packages/checkout's iframe) the page reports to its parent with postMessage, to
// the exact parentOrigin only (the browser drops the message if the parent is anything else),
// and listens to no message at all. Alone (redirect mode) it goes back to successUrl/cancelUrl.
//
// Everything is drawn with createElement/textContent: no innerHTML, so nothing from the session
// (merchant name, description) can become markup. The Pix QR (an SVG from the server) is shown
// as an <img> data: URL, where an SVG cannot run scripts.
import './styles.css';
import { api, ApiFailure, serverNow, type SessionView } from './api';
import { mountCard, type MountedCard } from './acquirer';
import { BRAND_NAMES, brandOf, cvcLength, cvcValid, digitsOf, formatExpiry, groupNumber, luhnValid, maxDigits, parseExpiry } from './card';
import { messages, money, pickLocale } from './i18n';
import { SESSION_ID, type PageMessage } from '../../../packages/checkout/src/protocol';

const POLL_FIRST_MS = 2000;
const POLL_STEADY_FOR_MS = 30_000; // every 2 s for the first 30 s, then backing off
const POLL_MAX_MS = 10_000;
const REDIRECT_DELAY_MS = 2500;

const sessionId = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() ?? '');
// Back from the buyer's bank (3-D Secure): the acquirer sent the buyer to our return route, which
// completed the payment and sent them here, without the fragment. Before leaving, the page kept
// its secret and its query in this tab's sessionStorage (this origin only, this tab only); they
// are dropped once the session is paid.
const RETURN_KEY = `pagamentos:checkout:${sessionId}`;
function readReturn(): { secret: string; search: string } | null {
  try {
    const kept = JSON.parse(sessionStorage.getItem(RETURN_KEY) ?? 'null') as { secret?: unknown; search?: unknown } | null;
    return kept && typeof kept.secret === 'string' && typeof kept.search === 'string' ? { secret: kept.secret, search: kept.search } : null;
  } catch {
    return null;
  }
}
// Storage may be refused (a framed page with third-party storage blocked): then the buyer comes
// back to a page that cannot read its session, as if the link were incomplete.
function keepReturn(value: { secret: string; search: string } | null): void {
  try {
    if (value) sessionStorage.setItem(RETURN_KEY, JSON.stringify(value));
    else sessionStorage.removeItem(RETURN_KEY);
  } catch {
    // nothing kept
  }
}
const returned = location.hash ? null : readReturn();
const params = new URLSearchParams(returned?.search ?? location.search);
const locale = pickLocale(params.get('locale'));
const t = messages(locale);
const secret = location.hash.slice(1) || (returned?.secret ?? '');
const embedded = params.get('embed') === '1' && window.parent !== window;
const parentOrigin = (() => {
  const raw = params.get('parentOrigin');
  if (!embedded || !raw) return null;
  try {
    const origin = new URL(raw).origin;
    return origin === raw && /^https?:/.test(origin) ? origin : null;
  } catch {
    return null;
  }
})();

type Distribute<T> = T extends unknown ? Omit<T, 'sessionId'> : never;
function post(message: Distribute<PageMessage>): void {
  if (!parentOrigin) return;
  window.parent.postMessage({ ...message, sessionId }, parentOrigin);
}

document.documentElement.lang = locale;
document.title = t.title;
// Alone (redirect mode) the page is drawn as the modal's card on a tinted background.
document.documentElement.classList.toggle('standalone', !embedded);
post({ type: 'pagamentos:checkout:ready' });
// A phone: the modal is full-screen there, and a Pix is paid by copying its code (the QR code is
// on the very screen that would have to scan it).
// In the modal the frame is 480 px wide on any screen: the library says when it fills a phone's.
const phone = () => (embedded ? params.get('layout') === 'fullscreen' : window.matchMedia('(max-width: 480px)').matches);

// ---------------------------------------------------------------------------------------------
// Tiny DOM helper.
type Attrs = Record<string, string | number | boolean | undefined | ((e: Event) => void)>;
// An event listener that does its work asynchronously: the DOM ignores a listener's return value,
// so the promise is dropped on purpose (`void`); each such handler catches its own failures.
const detached = <A extends unknown[]>(handler: (...args: A) => Promise<void>) => (...args: A): void => {
  void handler(...args);
};

function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Array<Node | string | null | false>): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.slice(2).toLowerCase(), v);
    else if (k === 'class') el.className = String(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== false) el.append(c);
  return el;
}

const app = document.getElementById('app') as HTMLElement;
// The modal's height follows the content: the page says how tall it is whenever that changes.
if (embedded && typeof ResizeObserver === 'function') {
  let last = 0;
  new ResizeObserver(() => {
    const height = Math.ceil(app.getBoundingClientRect().height);
    if (height > 0 && height !== last) {
      last = height;
      post({ type: 'pagamentos:checkout:resize', height });
    }
  }).observe(app);
}
const status = h('p', { id: 'status', class: 'status', role: 'status', 'aria-live': 'polite' });
const content = h('div', { class: 'content' });
let view: SessionView | null = null;
let busy = false;
let pollTimer = 0;
let countdownTimer = 0;

function say(text: string): void {
  status.textContent = text;
}

function setBusy(value: boolean): void {
  if (busy === value) return;
  busy = value;
  app.setAttribute('aria-busy', String(value));
  post({ type: 'pagamentos:checkout:busy', busy: value });
}

let onResize: (() => void) | null = null;
function stopTimers(): void {
  window.clearTimeout(pollTimer);
  window.clearInterval(countdownTimer);
  if (onResize) window.removeEventListener('resize', onResize);
  onResize = null;
}

function focusHeading(): void {
  content.querySelector<HTMLElement>('h2')?.focus();
}

// Esc inside the iframe would never reach the merchant's page: pass it on (the library ignores
// it while a payment is in flight).
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && embedded && !busy) post({ type: 'pagamentos:checkout:close' });
});

// ---------------------------------------------------------------------------------------------
function header(v: SessionView): HTMLElement {
  // The merchant's accent (checked for WCAG AA contrast against white when it was set), through
  // the CSSOM: the page's CSP allows no inline style.
  if (v.accentColor && /^#[0-9a-f]{6}$/i.test(v.accentColor)) document.documentElement.style.setProperty('--accent', v.accentColor);
  return h('header', { class: 'summary' },
    h('p', { class: 'merchant' },
      // Decorative: the name beside it says whose it is. Served by this instance (img-src 'self').
      v.logoUrl ? h('img', { class: 'logo', src: v.logoUrl, alt: '', width: 40, height: 40 }) : null,
      h('span', {}, v.merchantName)),
    h('h1', { class: 'amount' }, money(v.amount, v.currency, locale)),
    v.description ? h('p', { class: 'description' }, v.description) : null,
    v.livemode ? null : h('p', { class: 'sandbox' }, t.sandbox),
  );
}

function backButton(): HTMLElement | null {
  if (embedded) return h('button', { type: 'button', class: 'secondary', onclick: () => post({ type: 'pagamentos:checkout:close' }) }, t.back);
  return null;
}

function cancelLink(v: SessionView): HTMLElement | null {
  if (embedded || !v.cancelUrl) return null;
  return h('a', { class: 'cancel', href: v.cancelUrl }, t.cancel);
}

function lockIcon(): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('width', '14');
  svg.setAttribute('height', '14');
  svg.setAttribute('aria-hidden', 'true');
  const path = document.createElementNS(ns, 'path');
  path.setAttribute('d', 'M4 7V5a4 4 0 1 1 8 0v2h1v8H3V7h1zm2 0h4V5a2 2 0 1 0-4 0v2z');
  path.setAttribute('fill', 'currentColor');
  svg.append(path);
  return svg;
}

function footer(v: SessionView): HTMLElement {
  return h('footer', { class: 'secure' }, lockIcon(), h('span', {}, t.secureBy(v.platformName)));
}

function draw(...nodes: Array<Node | null>): void {
  content.replaceChildren(...nodes.filter((n): n is Node => n !== null));
}

// ---------------------------------------------------------------------------------------------
// States.
function showUnavailable(): void {
  stopTimers();
  setBusy(false);
  app.replaceChildren(h('section', { class: 'result' }, h('h1', { tabindex: -1 }, t.unavailableTitle), h('p', {}, t.unavailableBody), backButton()), status);
  post({ type: 'pagamentos:checkout:error', code: 'checkout_session_unavailable', message: t.unavailableBody });
  post({ type: 'pagamentos:checkout:loaded' });
}

function showSuccess(v: SessionView): void {
  stopTimers();
  setBusy(false);
  keepReturn(null);
  const paymentId = v.payment?.id ?? '';
  const redirect = !embedded && v.successUrl ? v.successUrl : null;
  draw(h('section', { class: 'result success' },
    h('h2', { tabindex: -1 }, t.successTitle),
    h('p', {}, t.successBody),
    h('p', { class: 'payment-id' }, h('span', {}, t.paymentId), h('code', { 'data-payment-id': paymentId }, paymentId)),
    redirect ? h('a', { class: 'button', href: redirect }, t.continue) : backButton(),
  ), footer(v));
  say(t.successTitle);
  focusHeading();
  post({ type: 'pagamentos:checkout:success', paymentId, status: v.payment?.status ?? 'approved' });
  if (redirect) window.setTimeout(() => location.assign(redirect), REDIRECT_DELAY_MS);
}

// This page load's own card attempt: its 3-D Secure redirect is followed without a click.
let attempted = false;
function showBankAction(v: SessionView, url: string): void {
  stopTimers();
  setBusy(false);
  const go = () => {
    // The way back (see RETURN_KEY); then the bank's page, in this same frame or tab.
    keepReturn({ secret, search: returned?.search ?? location.search });
    say(t.toBankNow);
    location.assign(url);
  };
  draw(h('section', { class: 'result bank' },
    h('h2', { tabindex: -1 }, t.bankTitle),
    h('p', {}, t.bankBody),
    h('button', { type: 'button', class: 'pay', onclick: go }, t.toBank),
  ), footer(v));
  focusHeading();
  if (attempted) {
    attempted = false;
    go();
  } else say(t.bankTitle);
}

function showExpired(v: SessionView): void {
  stopTimers();
  setBusy(false);
  const cancel = !embedded && v.cancelUrl ? h('a', { class: 'button', href: v.cancelUrl }, t.back) : backButton();
  draw(h('section', { class: 'result expired' }, h('h2', { tabindex: -1 }, t.expiredTitle), h('p', {}, t.expiredBody), cancel), footer(v));
  say(t.expiredTitle);
  focusHeading();
  post({ type: 'pagamentos:checkout:error', code: 'checkout_session_expired', message: t.expiredBody });
}

// The state a session view calls for.
function render(v: SessionView, failure?: string): void {
  view = v;
  const p = v.payment;
  if (v.status === 'complete' || p?.status === 'approved' || p?.status === 'requires_capture') return showSuccess(v);
  if (v.status === 'expired' || Date.parse(v.expiresAt) <= serverNow()) return showExpired(v);
  if (p && p.method === 'pix' && p.status === 'pending' && p.pix) {
    if (!pixDeferred) return showPix(v);
    setBusy(false);
    return showForm(v, failure);
  }
  // A live card whose bank asks for 3-D Secure: to the bank (at once after this page's own
  // attempt; with a button otherwise, e.g. after the buyer came back without finishing).
  if (p && p.method === 'credit_card' && p.status === 'requires_action' && p.nextAction) return showBankAction(v, p.nextAction.url);
  // Its Pix expired before the session (the Pix expiry is shorter): say so, and offer a new one.
  if (p && p.method === 'pix' && p.status === 'expired' && !pixDeferred) return showPixExpired(v);
  if (p && p.status === 'pending') {
    // A card payment still being processed (a reload while paying): wait for it.
    setBusy(true);
    say(t.processing);
    return schedulePoll(0);
  }
  setBusy(false);
  const declined = p && (p.status === 'declined' || p.status === 'failed') ? (p.status === 'declined' ? t.declined : t.failed) : undefined;
  showForm(v, failure ?? declined);
}

// ---------------------------------------------------------------------------------------------
// Polling with backoff: every 2 s for 30 s, then slower up to every 10 s; a failed poll waits longer.
let pollStartedAt = 0;
let pollDelay = POLL_FIRST_MS;
function schedulePoll(delayMs = POLL_FIRST_MS): void {
  window.clearTimeout(pollTimer);
  if (delayMs === 0 || pollStartedAt === 0) {
    pollStartedAt = Date.now();
    pollDelay = POLL_FIRST_MS;
  }
  pollTimer = window.setTimeout(poll, delayMs);
}

async function poll(): Promise<void> {
  try {
    const v = await api.session(sessionId, secret);
    const before = view?.payment;
    view = v;
    const p = v.payment;
    const stillWaiting = v.status === 'open' && p && p.status === 'pending' && p.id === before?.id && Date.parse(v.expiresAt) > serverNow();
    if (stillWaiting) {
      if (Date.now() - pollStartedAt > POLL_STEADY_FOR_MS) pollDelay = Math.min(POLL_MAX_MS, Math.round(pollDelay * 1.5));
      pollTimer = window.setTimeout(poll, pollDelay);
      return;
    }
    pollStartedAt = 0;
    if (pixDeferred && v.status === 'open' && p?.method === 'pix' && p.status !== 'approved') {
      // The kept Pix expired while the buyer types a card: only its note goes.
      content.querySelector('.pix-kept')?.remove();
      return;
    }
    render(v);
  } catch (e) {
    if (e instanceof ApiFailure && (e.status === 401 || e.status === 404)) return showUnavailable();
    pollDelay = Math.min(POLL_MAX_MS, pollDelay * 2);
    pollTimer = window.setTimeout(poll, pollDelay);
  }
}

// A pay call refused because the session is gone (401/404) or moved on (409: paid in another tab,
// expired): shows what it is now and says true; false for anything the buyer may retry.
async function sessionMovedOn(err: unknown): Promise<boolean> {
  if (!(err instanceof ApiFailure)) return false;
  if (err.status === 401 || err.status === 404) {
    showUnavailable();
    return true;
  }
  if (err.status !== 409) return false;
  try {
    render(await api.session(sessionId, secret));
  } catch {
    showUnavailable();
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// The form: method choice, card fields, Pix start.
let chosen: 'credit_card' | 'pix' | null = null;
// The buyer went from a Pix code to the card form: the Pix stays valid (and watched) meanwhile.
let pixDeferred = false;
const pendingPix = (v: SessionView) => v.payment?.method === 'pix' && v.payment.status === 'pending' && v.payment.pix ? v.payment : null;

function backToPix(): void {
  pixDeferred = false;
  chosen = 'pix';
  say('');
  if (view) render(view);
}
// Kept across a declined attempt: the buyer retypes the card, not their name.
let holderName = '';

function showForm(v: SessionView, failure?: string): void {
  stopTimers();
  if (!chosen || !v.methods.includes(chosen)) chosen = v.methods[0] ?? 'credit_card';
  const body = h('div', { class: 'method-body' });
  const drawMethod = () => body.replaceChildren(chosen === 'pix' ? pixStart(v) : cardForm(v, failure));
  const choice = v.methods.length > 1
    ? h('fieldset', { class: 'methods' },
      h('legend', {}, t.method),
      ...v.methods.map((m) => h('label', { class: 'method' },
        h('input', {
          type: 'radio', name: 'method', value: m, checked: m === chosen,
          onchange: () => {
            chosen = m;
            failure = undefined;
            say('');
            if (m === 'pix' && pendingPix(v)) return backToPix();
            drawMethod();
          },
        }),
        h('span', {}, m === 'pix' ? t.pix : t.card),
      )))
    : null;
  drawMethod();
  const kept = pendingPix(v);
  const keptNote = kept && pixDeferred
    ? h('div', { class: 'pix-kept' },
      h('p', {}, t.pixKept(Math.max(1, Math.ceil((Math.min(Date.parse(kept.pix!.expiresAt), Date.parse(v.expiresAt)) - serverNow()) / 60_000)))),
      h('button', { type: 'button', class: 'secondary', onclick: backToPix }, t.backToPix))
    : null;
  draw(keptNote, choice, body, cancelLink(v), footer(v));
  // Watched while the buyer types a card: paid in the bank app meanwhile, the page says so.
  if (keptNote) schedulePoll(0);
  if (failure) {
    say(failure);
    content.querySelector<HTMLInputElement>('#card-number')?.focus();
  }
}

function field(id: string, label: string, input: HTMLInputElement | HTMLSelectElement, extra?: Node, note?: HTMLElement): HTMLElement {
  input.id = id;
  const error = h('p', { class: 'field-error', id: `${id}-error`, hidden: true });
  input.setAttribute('aria-describedby', note ? `${note.id} ${id}-error` : `${id}-error`);
  return h('div', { class: 'field' }, h('label', { for: id }, label), extra ? h('div', { class: 'with-extra' }, input, extra) : input, note ?? null, error);
}

function setFieldError(form: HTMLElement, id: string, message: string | null): boolean {
  const input = form.querySelector<HTMLInputElement>(`#${id}`)!;
  const error = form.querySelector<HTMLElement>(`#${id}-error`)!;
  error.textContent = message ?? '';
  error.hidden = !message;
  if (message) input.setAttribute('aria-invalid', 'true');
  else input.removeAttribute('aria-invalid');
  return !message;
}

function cardForm(v: SessionView, failure?: string): HTMLElement {
  if (v.cardEncryption) return encryptedCardForm(v, failure);
  const amount = money(v.amount, v.currency, locale);
  const number = h('input', { type: 'text', inputmode: 'numeric', autocomplete: 'cc-number', required: true, spellcheck: 'false', placeholder: '0000 0000 0000 0000' });
  const brand = h('span', { class: 'brand', 'data-brand': 'unknown' });
  const expiry = h('input', { type: 'text', inputmode: 'numeric', autocomplete: 'cc-exp', required: true, placeholder: t.expiryPlaceholder, maxlength: 5 });
  const cvc = h('input', { type: 'text', inputmode: 'numeric', autocomplete: 'cc-csc', required: true, maxlength: 4 });
  const holder = h('input', { type: 'text', autocomplete: 'cc-name', required: true, spellcheck: 'false' });
  holder.value = holderName;
  const installments = v.installments > 1
    ? h('select', {}, ...v.installmentPlans.map((plan) => h('option', { value: plan.count },
      t.installment(plan.count, plan.groups.map((g) => ({ times: g.times, amount: money(g.amount, v.currency, locale) })), money(plan.total, v.currency, locale)))))
    : null;
  // The total beside the installments: what the buyer is charged in all, whichever they choose.
  const installmentsTotal = h('p', { class: 'installments-total', id: 'card-installments-total' });
  const showTotal = () => {
    const plan = v.installmentPlans.find((x) => x.count === Number(installments?.value ?? 1));
    installmentsTotal.textContent = plan ? t.installmentsTotal(plan.count, money(plan.total, v.currency, locale)) : '';
  };
  installments?.addEventListener('change', showTotal);
  showTotal();
  const error = h('p', { class: 'form-error', id: 'form-error', role: 'alert', hidden: !failure }, failure ?? '');
  const submit = h('button', { type: 'submit', class: 'pay' }, t.pay(amount));

  // Grouping as the buyer types, keeping the caret after the same digit.
  number.addEventListener('input', () => {
    const caretDigits = digitsOf(number.value.slice(0, number.selectionStart ?? number.value.length)).length;
    const b = brandOf(digitsOf(number.value));
    const digits = digitsOf(number.value).slice(0, maxDigits(b));
    number.value = groupNumber(digits);
    let pos = 0;
    for (let seen = 0; pos < number.value.length && seen < caretDigits; pos++) if (/\d/.test(number.value[pos])) seen++;
    number.setSelectionRange(pos, pos);
    brand.textContent = BRAND_NAMES[b];
    brand.dataset.brand = b;
    cvc.maxLength = cvcLength(b);
  });
  expiry.addEventListener('input', () => {
    const deleting = expiry.value.length < (expiry.dataset.last ?? '').length;
    expiry.value = deleting ? expiry.value : formatExpiry(expiry.value);
    expiry.dataset.last = expiry.value;
  });
  cvc.addEventListener('input', () => {
    cvc.value = digitsOf(cvc.value).slice(0, cvc.maxLength);
  });

  const form = h('form', { class: 'card-form', novalidate: true, 'aria-describedby': 'form-error' },
    field('card-number', t.number, number, brand),
    h('div', { class: 'row' }, field('card-expiry', t.expiry, expiry), field('card-cvc', t.cvc, cvc)),
    field('card-holder', t.holder, holder),
    installments ? field('card-installments', t.installments, installments, undefined, installmentsTotal) : null,
    error,
    submit,
  );

  let submitting = false;
  form.addEventListener('submit', detached(async (e: SubmitEvent) => {
    e.preventDefault();
    // A second click (or Enter) while the first is on its way does nothing.
    if (submitting || busy) return;
    const digits = digitsOf(number.value);
    const b = brandOf(digits);
    const exp = parseExpiry(expiry.value);
    const checks = [
      setFieldError(form, 'card-number', luhnValid(digits) ? null : t.errNumber),
      setFieldError(form, 'card-expiry', exp ? null : t.errExpiry),
      setFieldError(form, 'card-cvc', cvcValid(cvc.value, b) ? null : t.errCvc(cvcLength(b))),
      setFieldError(form, 'card-holder', holder.value.trim().length >= 2 ? null : t.errHolder),
    ];
    if (checks.includes(false)) {
      error.textContent = t.fixErrors;
      error.hidden = false;
      form.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
      return;
    }
    submitting = true;
    // A card paid now replaces a kept Pix (the service cancels it in the same step).
    pixDeferred = false;
    holderName = holder.value;
    error.hidden = true;
    submit.disabled = true;
    submit.textContent = t.processing;
    for (const el of form.querySelectorAll('input')) el.readOnly = true;
    if (installments) installments.disabled = true;
    content.querySelectorAll<HTMLInputElement>('input[name="method"]').forEach((r) => (r.disabled = true));
    setBusy(true);
    say(t.processing);
    try {
      const token = await api.token(secret, { number: digits, expMonth: exp!.month, expYear: exp!.year, cvc: cvc.value, holderName: holder.value.trim() });
      const next = await api.pay(sessionId, secret, { method: 'credit_card', cardToken: token.id, ...(installments ? { installments: Number(installments.value) } : {}) });
      view = next;
      if (next.payment?.status === 'pending' && next.status === 'open') {
        schedulePoll(0);
        return;
      }
      render(next);
    } catch (err) {
      setBusy(false);
      if (await sessionMovedOn(err)) return;
      const message = err instanceof ApiFailure && err.status === 400 && err.param?.startsWith('card') ? (err.param === 'card.number' ? t.errNumber : err.param === 'card.cvc' ? t.errCvc(cvcLength(b)) : t.errExpiry) : err instanceof ApiFailure && err.status === 0 ? t.network : t.failed;
      showForm(v, message);
    }
  }));
  return form;
}

// ---------------------------------------------------------------------------------------------
// Live card at an acquirer: the acquirer's own card fields (acquirer.ts), our holder name and
// installments; only what they encrypted is sent (POST /v1/tokens with encryptedCard).
function installmentsField(v: SessionView): { select: HTMLSelectElement; node: HTMLElement } | null {
  if (v.installments <= 1) return null;
  const select = h('select', {}, ...v.installmentPlans.map((plan) => h('option', { value: plan.count },
    t.installment(plan.count, plan.groups.map((g) => ({ times: g.times, amount: money(g.amount, v.currency, locale) })), money(plan.total, v.currency, locale)))));
  const total = h('p', { class: 'installments-total', id: 'card-installments-total' });
  const showTotal = () => {
    const plan = v.installmentPlans.find((x) => x.count === Number(select.value));
    total.textContent = plan ? t.installmentsTotal(plan.count, money(plan.total, v.currency, locale)) : '';
  };
  select.addEventListener('change', showTotal);
  showTotal();
  return { select, node: field('card-installments', t.installments, select, undefined, total) };
}

function encryptedCardForm(v: SessionView, failure?: string): HTMLElement {
  const enc = v.cardEncryption!;
  const secured = h('div', { class: 'secured-fields', id: 'card-secured' });
  const holder = h('input', { type: 'text', autocomplete: 'cc-name', required: true, spellcheck: 'false' });
  holder.value = holderName;
  const installments = installmentsField(v);
  const error = h('p', { class: 'form-error', id: 'form-error', role: 'alert', hidden: !failure }, failure ?? '');
  const submit = h('button', { type: 'submit', class: 'pay', disabled: true }, t.pay(money(v.amount, v.currency, locale)));
  const form = h('form', { class: 'card-form', novalidate: true, 'aria-describedby': 'form-error' },
    h('fieldset', { class: 'secured' }, h('legend', {}, t.secureFields), secured),
    field('card-holder', t.holder, holder),
    installments?.node ?? null,
    error,
    submit,
  );
  let card: MountedCard | null = null;
  mountCard(secured, enc, locale).then((mounted) => {
    card = mounted;
    submit.disabled = false;
  }, () => {
    error.textContent = t.secureFieldsUnavailable;
    error.hidden = false;
  });
  let submitting = false;
  form.addEventListener('submit', detached(async (e: SubmitEvent) => {
    e.preventDefault();
    if (submitting || busy || !card) return;
    const encrypted = card.encrypted();
    const holderOk = setFieldError(form, 'card-holder', holder.value.trim().length >= 2 ? null : t.errHolder);
    if (!encrypted || !holderOk) {
      if (!encrypted) card.showValidation();
      error.textContent = t.fixErrors;
      error.hidden = false;
      return;
    }
    submitting = true;
    pixDeferred = false;
    holderName = holder.value;
    error.hidden = true;
    submit.disabled = true;
    submit.textContent = t.processing;
    holder.readOnly = true;
    if (installments) installments.select.disabled = true;
    content.querySelectorAll<HTMLInputElement>('input[name="method"]').forEach((r) => (r.disabled = true));
    setBusy(true);
    say(t.processing);
    try {
      const token = await api.encryptedToken(secret, { ...encrypted, holderName: holder.value.trim() });
      const next = await api.pay(sessionId, secret, { method: 'credit_card', cardToken: token.id, ...(installments ? { installments: Number(installments.select.value) } : {}) });
      view = next;
      attempted = true;
      if (next.payment?.status === 'pending' && next.status === 'open') {
        schedulePoll(0);
        return;
      }
      render(next);
    } catch (err) {
      setBusy(false);
      if (await sessionMovedOn(err)) return;
      showForm(v, err instanceof ApiFailure && err.status === 0 ? t.network : t.failed);
    }
  }));
  return form;
}

// ---------------------------------------------------------------------------------------------
// Pix.
// The button that asks the service for a Pix (a first one, or a new one after one expired), and
// the line that says why it failed, if it does.
function pixButton(label: string): { button: HTMLButtonElement; notice: HTMLElement } {
  const button = h('button', { type: 'button', class: 'pay' }, label);
  const notice = h('p', { class: 'notice' });
  let starting = false;
  button.addEventListener('click', detached(async () => {
    if (starting) return;
    starting = true;
    pixDeferred = false;
    button.disabled = true;
    say(t.loading);
    try {
      render(await api.pay(sessionId, secret, { method: 'pix' }));
    } catch (err) {
      if (await sessionMovedOn(err)) return;
      starting = false;
      button.disabled = false;
      notice.textContent = err instanceof ApiFailure && err.status === 0 ? t.network : t.failed;
      say(notice.textContent);
    }
  }));
  return { button, notice };
}

function pixStart(_v: SessionView): HTMLElement {
  const { button, notice } = pixButton(t.pixStart);
  return h('div', { class: 'pix-start' }, h('p', {}, t.pixIntro), notice, button);
}

// The Pix expired unpaid while the session is still open: announced (the status line is the
// aria-live region), with a button for a new code, and the way back to the other method if the
// session offers one.
function showPixExpired(v: SessionView): void {
  stopTimers();
  setBusy(false);
  const { button, notice } = pixButton(t.pixRenew);
  const other = v.methods.length > 1
    ? h('button', { type: 'button', class: 'secondary', onclick: () => {
      chosen = v.methods.find((m) => m !== 'pix') ?? null;
      say('');
      showForm(v);
    } }, t.otherMethod)
    : null;
  draw(h('section', { class: 'result pix-expired' },
    h('h2', { tabindex: -1 }, t.pixExpiredTitle),
    h('p', {}, t.pixExpiredBody),
    notice,
    button,
    other,
  ), cancelLink(v), footer(v));
  say(t.pixExpiredTitle);
  focusHeading();
}

function remaining(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const m = Math.floor(total / 60);
  const s = total % 60;
  return m >= 60 ? `${Math.floor(m / 60)}:${String(m % 60).padStart(2, '0')}:${String(s).padStart(2, '0')}` : `${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`;
}

function showPix(v: SessionView): void {
  stopTimers();
  setBusy(false);
  const pix = v.payment!.pix!;
  // The payment's own expiry, and never later than the session's: a reload counts from the
  // server's time, so it does not start over.
  const expiresAtMs = Math.min(Date.parse(pix.expiresAt), Date.parse(v.expiresAt));
  const code = h('textarea', { id: 'pix-code', readonly: true, rows: 1, spellcheck: 'false' });
  code.value = pix.copyPaste;
  const copied = h('span', { class: 'copied' });
  const onPhone = phone();
  const copy = h('button', {
    type: 'button', class: onPhone ? 'pay' : 'secondary',
    onclick: detached(async () => {
      try {
        await navigator.clipboard.writeText(pix.copyPaste);
        copied.textContent = t.pixCopied;
      } catch {
        code.select();
        copied.textContent = document.execCommand?.('copy') ? t.pixCopied : t.pixCopyFailed;
      }
      say(copied.textContent);
    }),
  }, t.pixCopy);
  const timer = h('p', { class: 'countdown', role: 'timer', 'aria-live': 'off' });
  const tick = () => {
    const left = expiresAtMs - serverNow();
    timer.textContent = t.pixExpiresIn(remaining(left));
    timer.dataset.remainingSeconds = String(Math.max(0, Math.floor(left / 1000)));
    if (left <= 0) {
      window.clearInterval(countdownTimer);
      // Ask the server what it is now (paid at the last second, or expired).
      schedulePoll(0);
    }
  };
  const qr = h('img', { class: 'qr', alt: t.pixQrAlt, width: 240, height: 240, src: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(pix.qrCodeSvg)}` });
  const codeField = h('div', { class: 'field' }, h('label', { for: 'pix-code' }, t.pixCopyLabel), code);
  const actions = h('div', { class: 'actions' }, copy, copied);
  const toCard = v.methods.includes('credit_card')
    ? h('button', { type: 'button', class: 'secondary wide', onclick: () => {
      pixDeferred = true;
      chosen = 'credit_card';
      say('');
      showForm(v);
      // From the foot of the Pix screen to the top of the form: the note that the Pix stays
      // valid, in view, then the card number.
      window.scrollTo(0, 0);
      content.querySelector<HTMLInputElement>('#card-number')?.focus({ preventScroll: true });
    } }, t.payByCard)
    : null;
  // On a phone the code comes first and copying it is the main action; the QR code follows (to
  // pay from another device). Elsewhere, the QR code first.
  draw(h('section', { class: onPhone ? 'pix phone' : 'pix' },
    h('h2', { tabindex: -1 }, onPhone ? t.pixPhoneTitle : t.pixScan),
    ...(onPhone ? [timer, codeField, actions, qr] : [qr, timer, codeField, actions]),
    h('p', { class: 'waiting' }, t.pixWaiting),
    toCard,
  ), cancelLink(v), footer(v));
  // The copia e cola box is as tall as its lines: every line whole, none cut in half.
  const fitCode = () => {
    code.style.height = 'auto';
    code.style.height = `${code.scrollHeight + code.offsetHeight - code.clientHeight}px`;
  };
  fitCode();
  onResize = fitCode;
  window.addEventListener('resize', fitCode);
  tick();
  countdownTimer = window.setInterval(tick, 1000);
  say(t.pixWaiting);
  focusHeading();
  schedulePoll(0);
}

// ---------------------------------------------------------------------------------------------
async function start(): Promise<void> {
  app.replaceChildren(status);
  say(t.loading);
  if (!SESSION_ID.test(sessionId) || !secret.startsWith(`${sessionId}_secret_`)) return showUnavailable();
  let v: SessionView;
  try {
    v = await api.session(sessionId, secret);
  } catch {
    return showUnavailable();
  }
  app.replaceChildren(header(v), status, content);
  app.setAttribute('aria-busy', 'false');
  say('');
  render(v);
  post({ type: 'pagamentos:checkout:loaded' });
}

void start();

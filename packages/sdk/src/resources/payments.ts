import { APIResource, segment, type APIPromise, type RequestOptions } from '../core.js';
import type { PagePromise } from '../pagination.js';
import type { Payment, PaymentCreateParams, PaymentListParams, PaymentNextAction } from '../types.js';

/** How {@link Payments.waitForOutcome} polls. */
export interface WaitOptions {
  /** Gives up (throws) after this long; default 30 000 ms. */
  timeoutMs?: number;
  /** Between two reads; default 1000 ms. */
  intervalMs?: number;
  /** Stops waiting (throws the signal's reason). */
  signal?: AbortSignal;
}

export class Payments extends APIResource {
  /** Creates a payment: shape B `{ amountInCents, method, cardToken }` (card or Pix), or shape A `{ amount, currency, method: 'pix' }`. Answers `status: 'pending'`. */
  create(params: PaymentCreateParams, options?: RequestOptions): APIPromise<Payment> {
    return this.client.request({ method: 'POST', path: '/v1/payments', body: params }, options);
  }

  retrieve(id: string, options?: RequestOptions): APIPromise<Payment> {
    return this.client.request({ method: 'GET', path: `/v1/payments/${segment(id)}` }, options);
  }

  /** Newest first; await it for a page, or `for await` it for every payment. */
  list(params: PaymentListParams = {}, options?: RequestOptions): PagePromise<Payment, PaymentListParams> {
    return this.client.list('/v1/payments', params, options);
  }

  /** Cancels a pending payment (409 INVALID_STATE otherwise). */
  cancel(id: string, options?: RequestOptions): APIPromise<Payment> {
    return this.client.request({ method: 'POST', path: `/v1/payments/${segment(id)}/cancel` }, options);
  }

  /**
   * Captures a `requires_capture` payment (an acquirer account with manual capture), for its
   * whole amount. The answer has `capture.status: 'processing'`; the payment becomes `approved`
   * when the acquirer confirms (event `payment.approved`), or `failed` (`capture_failed`).
   */
  capture(id: string, options?: RequestOptions): APIPromise<Payment> {
    return this.client.request({ method: 'POST', path: `/v1/payments/${segment(id)}/capture` }, options);
  }

  /**
   * Reads the payment until it leaves `pending`: a card payment is decided (or needs its buyer:
   * `requires_action` with `nextAction`, or is authorized: `requires_capture`) a moment after
   * create. Resolves with the payment; throws an `Error` after `timeoutMs`.
   */
  async waitForOutcome(id: string, wait: WaitOptions = {}, options?: RequestOptions): Promise<Payment> {
    const deadline = Date.now() + (wait.timeoutMs ?? 30_000);
    for (;;) {
      wait.signal?.throwIfAborted();
      const payment = await this.retrieve(id, options);
      if (payment.status !== 'pending') return payment;
      if (Date.now() >= deadline) throw new Error(`payment ${id} is still pending after ${wait.timeoutMs ?? 30_000} ms`);
      await new Promise((resolve) => setTimeout(resolve, Math.min(wait.intervalMs ?? 1000, Math.max(0, deadline - Date.now()))));
    }
  }

  /**
   * Performs a payment's next action, if it has one: calls `navigate` with where to send the
   * buyer (their bank's 3-D Secure page; on your server, e.g. `(url) => res.redirect(303, url)`),
   * or, in a browser without `navigate`, goes there. Returns the action performed, or null when
   * the payment needs nothing from its buyer. The buyer comes back to the payment's `returnUrl`
   * (see {@link Payments.retrieveReturned}).
   */
  handleNextAction(payment: Payment, navigate?: (url: string, action: PaymentNextAction) => void): PaymentNextAction | null {
    const action = payment.status === 'requires_action' ? payment.nextAction : null;
    if (!action) return null;
    if (navigate) navigate(action.url, action);
    else {
      const location = (globalThis as { location?: { assign(url: string): void } }).location;
      if (!location) throw new TypeError('handleNextAction needs a navigate function outside a browser (e.g. (url) => res.redirect(303, url))');
      location.assign(action.url);
    }
    return action;
  }

  /**
   * The payment a buyer came back with, from the URL of your `returnUrl` page as it was
   * requested (`paymentId` and `status` were added to its query). The status in the URL is a
   * hint anyone could forge: this reads the payment itself.
   */
  retrieveReturned(url: string | URL, options?: RequestOptions): APIPromise<Payment> {
    const id = new URL(url, 'http://return.invalid').searchParams.get('paymentId');
    if (!id || !/^pay_[A-Za-z0-9]+$/.test(id)) throw new TypeError('the return URL carries no paymentId');
    return this.retrieve(id, options);
  }
}

import { createHash } from 'node:crypto';
import type { Clock } from '../../clock.js';
import type { CardAuthorization, CardAuthorizeInput, CardConnector, CardModification, CardModificationInput, CardNotificationBatch, OpenedCardAccount } from '../connector.js';
import { AdyenClient } from './client.js';
import { toAuthorization, toModification, verifyBatch } from './transformers.js';

// Adyen's Checkout API (v71) as the card port. Every POST carries an Idempotency-Key derived
// from our ids (the payment's, the refund's), so a repeat after a lost answer is the same
// authorization or modification at Adyen, answered as the first time. Modifications (capture,
// refund, cancel) are only `received`: their outcome comes by notification (CAPTURE, REFUND,
// CANCELLATION, ... with `success`).

const enc = encodeURIComponent;

export class AdyenConnector implements CardConnector {
  readonly name = 'adyen';
  private readonly client: AdyenClient;

  constructor(clock: Clock) {
    this.client = new AdyenClient(clock);
  }

  async authorize(account: OpenedCardAccount, input: CardAuthorizeInput): Promise<CardAuthorization> {
    const body = {
      merchantAccount: account.settings.merchantAccount,
      reference: input.reference,
      amount: { currency: 'BRL', value: input.amountCents },
      paymentMethod: input.paymentMethod,
      returnUrl: input.returnUrl,
      ...(input.installments > 1 ? { installments: { value: input.installments } } : {}),
      // Manual capture per payment (Adyen's AdditionalDataCommon.manualCapture), whatever the
      // merchant account's capture delay in the Customer Area.
      ...(input.manualCapture ? { additionalData: { manualCapture: 'true' } } : {}),
      channel: 'Web',
      shopperInteraction: 'Ecommerce',
      // 3-D Secure 2 through a redirect (our page is no Adyen Web component host yet).
      authenticationData: { threeDSRequestData: { nativeThreeDS: 'disabled' } },
    };
    return toAuthorization(await this.client.post(account, '/payments', body, input.idempotencyKey));
  }

  async completeAction(account: OpenedCardAccount, input: { details: Record<string, string>; paymentData?: string }): Promise<CardAuthorization> {
    const body = { details: input.details, ...(input.paymentData ? { paymentData: input.paymentData } : {}) };
    // /payments/details takes no Idempotency-Key of ours that would help: the same details
    // answer the same result at Adyen.
    return toAuthorization(await this.client.post(account, '/payments/details', body, `details-${hashOf(JSON.stringify(body))}`));
  }

  async capture(account: OpenedCardAccount, input: CardModificationInput & { amountCents: number }): Promise<CardModification> {
    return toModification(await this.client.post(account, `/payments/${enc(input.paymentPspReference)}/captures`, { merchantAccount: account.settings.merchantAccount, reference: input.reference, amount: { currency: 'BRL', value: input.amountCents } }, input.idempotencyKey));
  }

  async refund(account: OpenedCardAccount, input: CardModificationInput & { amountCents: number }): Promise<CardModification> {
    return toModification(await this.client.post(account, `/payments/${enc(input.paymentPspReference)}/refunds`, { merchantAccount: account.settings.merchantAccount, reference: input.reference, amount: { currency: 'BRL', value: input.amountCents } }, input.idempotencyKey));
  }

  async cancel(account: OpenedCardAccount, input: CardModificationInput): Promise<CardModification> {
    return toModification(await this.client.post(account, `/payments/${enc(input.paymentPspReference)}/cancels`, { merchantAccount: account.settings.merchantAccount, reference: input.reference }, input.idempotencyKey));
  }

  async cancelByReference(account: OpenedCardAccount, input: { paymentReference: string; reference: string; idempotencyKey: string }): Promise<CardModification> {
    return toModification(await this.client.post(account, '/cancels', { merchantAccount: account.settings.merchantAccount, paymentReference: input.paymentReference, reference: input.reference }, input.idempotencyKey));
  }

  verifyNotifications(account: OpenedCardAccount, body: unknown): CardNotificationBatch {
    return verifyBatch(account.secrets.hmacKey, account.settings.merchantAccount, body);
  }
}

function hashOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 40);
}

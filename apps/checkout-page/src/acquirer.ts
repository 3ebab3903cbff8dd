// The card fields of a live payment at Adyen: Adyen Web's card component, loaded from the one
// origin the session names (the connector account's clientOrigin; the page's CSP allows it and
// no other, in live mode only), mounted into the form. It encrypts the number, expiry and CVC
// with the account's client key in this browser; the page only ever holds what it encrypted,
// plus what may be shown (brand, last four, expiry). Nothing here reads a card number.
import type { CardEncryptionView, EncryptedCard } from './api';

interface AdyenFieldValid { fieldType?: string; valid?: boolean; endDigits?: string; expiryDate?: string }
interface AdyenCardComponent {
  mount(target: HTMLElement): AdyenCardComponent;
  readonly isValid: boolean;
  readonly data: { paymentMethod?: Record<string, unknown> };
  showValidation?(): void;
}
interface AdyenCheckoutInstance {
  create(type: 'card', options: { onBrand?: (e: { brand?: string }) => void; onFieldValid?: (e: AdyenFieldValid) => void; hasHolderName?: boolean; styles?: object }): AdyenCardComponent;
}
type AdyenCheckoutFactory = (config: { environment: string; clientKey: string; locale: string; analytics?: { enabled: boolean } }) => Promise<AdyenCheckoutInstance>;

export interface MountedCard {
  isValid(): boolean;
  showValidation(): void;
  // The encrypted fields and what may be shown, or null while a field is missing.
  encrypted(): Omit<EncryptedCard, 'holderName'> | null;
}

let loading: Promise<AdyenCheckoutFactory> | null = null;

function loadAdyenWeb(enc: CardEncryptionView): Promise<AdyenCheckoutFactory> {
  loading ??= new Promise<AdyenCheckoutFactory>((resolve, reject) => {
    // Only from the named origin (the CSP would refuse any other anyway).
    if (new URL(enc.scriptUrl).origin !== enc.origin) return reject(new Error('acquirer script outside its origin'));
    const script = document.createElement('script');
    script.src = enc.scriptUrl;
    script.async = true;
    script.addEventListener('load', () => {
      const factory = (window as unknown as { AdyenCheckout?: AdyenCheckoutFactory }).AdyenCheckout;
      if (typeof factory === 'function') resolve(factory);
      else reject(new Error('AdyenCheckout missing'));
    });
    script.addEventListener('error', () => reject(new Error('acquirer script not loaded')));
    document.head.append(script);
  }).catch((error: unknown) => {
    loading = null;
    throw error;
  });
  return loading;
}

// "03/30" or "03/2030" -> { month: 3, year: 2030 }.
function parseExpiry(value: string | undefined): { month: number; year: number } | null {
  const m = /^(\d{1,2})\s*\/\s*(\d{2}|\d{4})$/.exec(value?.trim() ?? '');
  if (!m) return null;
  const month = Number(m[1]);
  const year = m[2].length === 2 ? 2000 + Number(m[2]) : Number(m[2]);
  return month >= 1 && month <= 12 ? { month, year } : null;
}

export async function mountCard(target: HTMLElement, enc: CardEncryptionView, locale: string): Promise<MountedCard> {
  const AdyenCheckout = await loadAdyenWeb(enc);
  const checkout = await AdyenCheckout({ environment: enc.environment, clientKey: enc.clientKey, locale: locale === 'en' ? 'en-US' : 'pt-BR', analytics: { enabled: false } });
  let brand = 'unknown';
  let last4: string | null = null;
  let expiry: { month: number; year: number } | null = null;
  const card = checkout.create('card', {
    hasHolderName: false,
    onBrand: (e) => {
      if (e.brand && /^[a-z0-9_]{1,30}$/.test(e.brand)) brand = e.brand;
    },
    onFieldValid: (e) => {
      if (e.fieldType === 'encryptedCardNumber') last4 = e.valid && e.endDigits && /^\d{4}$/.test(e.endDigits) ? e.endDigits : null;
      if (e.fieldType === 'encryptedExpiryDate') expiry = e.valid ? parseExpiry(e.expiryDate) : null;
    },
  }).mount(target);
  return {
    isValid: () => card.isValid,
    showValidation: () => card.showValidation?.(),
    encrypted() {
      const pm = card.data.paymentMethod ?? {};
      const field = (k: string) => (typeof pm[k] === 'string' ? pm[k] : null);
      const number = field('encryptedCardNumber');
      const month = field('encryptedExpiryMonth');
      const year = field('encryptedExpiryYear');
      const cvc = field('encryptedSecurityCode');
      if (!card.isValid || !number || !month || !year || !cvc || !last4 || !expiry) return null;
      return { encryptedCardNumber: number, encryptedExpiryMonth: month, encryptedExpiryYear: year, encryptedSecurityCode: cvc, brand, last4, expMonth: expiry.month, expYear: expiry.year };
    },
  };
}

import type { CardSettings, ConnectorEnvironment } from '../connector.js';

// Adyen's client-side encryption on the hosted checkout page (issue 27). In live mode the page
// never sees a card number: Adyen Web's card component (its secured fields) encrypts the number,
// expiry and CVC with the connector account's client key, and the page sends only what it
// encrypted (`encryptedCard` to POST /v1/tokens). Adyen's library cannot be bundled (Adyen
// serves it, per client key, from its own origin), so the page loads it from exactly one origin,
// the account's `clientOrigin`, and its Content-Security-Policy allows that origin and no other,
// in live mode only (modules/checkout/pages.ts). Tests point `clientOrigin` at the fake Adyen's
// loopback origin, which serves a stand-in with the same interface.

// The Adyen Web release the page loads (its script path under the origin).
export const ADYEN_WEB_VERSION = '5.68.0';

export function adyenDefaultClientOrigin(environment: ConnectorEnvironment): string {
  return environment === 'production' ? 'https://checkoutshopper-live.adyen.com' : 'https://checkoutshopper-test.adyen.com';
}

export interface CardClientEncryption {
  acquirer: 'adyen';
  // Adyen Web's `environment`.
  environment: 'live' | 'test';
  clientKey: string;
  // The only origin the page may load the acquirer's code from (and talk to, and frame).
  origin: string;
  scriptUrl: string;
}

export function adyenClientEncryption(settings: CardSettings, environment: ConnectorEnvironment): CardClientEncryption | null {
  if (!settings.clientKey) return null;
  const origin = settings.clientOrigin ?? adyenDefaultClientOrigin(environment);
  return {
    acquirer: 'adyen',
    environment: environment === 'production' ? 'live' : 'test',
    clientKey: settings.clientKey,
    origin,
    scriptUrl: `${origin}/checkoutshopper/sdk/${ADYEN_WEB_VERSION}/adyen.js`,
  };
}

import type { PixDialect } from './standard.js';

// Efí (formerly Gerencianet), which follows the standard closely (efipay/sdk-node-apis-efi,
// src/constants/endpoints.js): the token is asked with a JSON body at `/oauth/token`, the
// standard's paths live under `/v2`, and the scopes come with the application (none asked).
// Base URLs: https://pix.api.efipay.com.br (production), https://pix-h.api.efipay.com.br
// (homologation).
export const efiDialect: PixDialect = {
  name: 'efi',
  tokenUrl: (settings) => `${settings.baseUrl.replace(/\/+$/, '')}/oauth/token`,
  tokenRequest: () => ({ contentType: 'application/json', body: JSON.stringify({ grant_type: 'client_credentials' }) }),
  path: (p) => `/v2${p}`,
  defaultScopes: undefined,
};

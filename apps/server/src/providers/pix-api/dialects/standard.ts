import type { ConnectorSettings } from '../../connector.js';

// What a PSP does differently from the standard (as ACBr's ACBrPIXCD has a small file per PSP).
// The standard itself is the first dialect; each field says where a PSP may differ.
export interface PixDialect {
  readonly name: 'standard' | 'efi';
  // The token endpoint when the account does not name one.
  tokenUrl(settings: ConnectorSettings): string;
  // The body and content type of the client-credentials request.
  tokenRequest(scopes: string | undefined): { contentType: string; body: string };
  // Where the standard's paths (`/cob/{txid}`) live under the base URL.
  path(standardPath: string): string;
  defaultScopes: string | undefined;
}

export const standardDialect: PixDialect = {
  name: 'standard',
  tokenUrl: (settings) => `${settings.baseUrl.replace(/\/+$/, '')}/oauth/token`,
  tokenRequest: (scopes) => ({
    contentType: 'application/x-www-form-urlencoded',
    body: new URLSearchParams({ grant_type: 'client_credentials', ...(scopes ? { scope: scopes } : {}) }).toString(),
  }),
  path: (p) => p,
  defaultScopes: 'cob.write cob.read pix.write pix.read webhook.write webhook.read',
};

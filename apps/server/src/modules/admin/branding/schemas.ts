import { Type, type Static } from 'typebox';
import { always, constant, int32, nullableRef } from '../../../http/common.js';
import { optionalReason } from '../shared/schemas.js';

// A merchant's look on the hosted checkout: display name, logo and accent color.
export const MAX_DISPLAY_NAME_LENGTH = 60;
export const MAX_LOGO_BYTES = 64 * 1024;
export const LOGO_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;
export type LogoType = (typeof LOGO_TYPES)[number];
// A logo of MAX_LOGO_BYTES is ~87 KB in base64: within the service's body limit (BODY_LIMIT_BYTES,
// 100 KiB by default), so a logo a little over the limit is refused with its size; a body over
// BODY_LIMIT_BYTES gets PAYLOAD_TOO_LARGE.
const ONE_PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

// Named components, not inline objects (issue 28: generators invent names for inline ones).
export const CheckoutLogo = Type.Object({
  contentType: Type.String({ description: '`image/png`, `image/jpeg` or `image/webp`.' }),
  bytes: int32({ minimum: 0, maximum: MAX_LOGO_BYTES, description: 'Size of the image file.' }),
  sha256: Type.String({ description: 'Hex; names the URL, so a new logo has a new URL.' }),
  url: Type.String({ description: 'Where the instance serves it (`/checkout/logos/<sha256>`), to the hosted page only (same origin).' }),
}, { $id: 'CheckoutLogo', additionalProperties: false, description: 'The logo of an account\'s hosted checkout.' });

export const CheckoutLogoUpload = Type.Object({
  contentType: Type.String({ maxLength: 64, examples: [...LOGO_TYPES], description: 'PNG, JPEG or WebP (no SVG: an image format with scripts is not taken). Must match the file\'s own signature.' }),
  dataBase64: Type.String({ maxLength: 1024 * 1024, description: `The image file, base64. At most ${MAX_LOGO_BYTES / 1024} KiB decoded.` }),
}, { $id: 'CheckoutLogoUpload', additionalProperties: false, description: 'A logo to upload: its type and the file, base64.' });

export const CheckoutBranding = Type.Object(
  {
    object: constant('checkout_branding'),
    accountId: Type.String({ description: '`acct_...`' }),
    displayName: Type.Union([Type.String(), Type.Null()], { description: 'Shown as the merchant on the hosted checkout; null: the account\'s name.' }),
    accentColor: Type.Union([Type.String(), Type.Null()], { description: '`#rrggbb`, the pay button and highlights; null: the platform\'s teal.' }),
    logo: nullableRef(CheckoutLogo),
    updatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Null: never set.' }),
    livemode: always(false, 'Branding belongs to the account, both modes: always false.'),
  },
  { $id: 'CheckoutBranding', additionalProperties: false, description: 'How an account\'s hosted checkout looks.' },
);
export type CheckoutBranding = Static<typeof CheckoutBranding>;

export const UpdateCheckoutBrandingRequest = Type.Object(
  {
    // Shapes are checked by the service (branding/service.ts), each with its own message: a
    // nullable union's validator can only say "must be null".
    displayName: Type.Optional(Type.Union([Type.String({ maxLength: MAX_DISPLAY_NAME_LENGTH }), Type.Null()], { description: `1-${MAX_DISPLAY_NAME_LENGTH} characters, or null for the account's name.` })),
    accentColor: Type.Optional(Type.Union([Type.String({ maxLength: 7, examples: ['#1d4ed8'] }), Type.Null()], { description: '`#rrggbb` with a contrast of at least 4.5:1 against white (WCAG AA for normal text: it is the pay button\'s background under white text, and the color of text on the page); null for the default.' })),
    logo: Type.Optional(nullableRef(CheckoutLogoUpload, { description: 'A new logo, or null to remove it.' })),
    reason: optionalReason,
  },
  {
    $id: 'UpdateCheckoutBrandingRequest',
    additionalProperties: false,
    minProperties: 1,
    description: 'Only the fields sent change; null clears one.',
    examples: [{ displayName: 'Loja Exemplo', accentColor: '#1d4ed8', logo: { contentType: 'image/png', dataBase64: ONE_PIXEL_PNG } }],
  },
);
export type UpdateCheckoutBrandingRequest = Static<typeof UpdateCheckoutBrandingRequest>;

export const brandingSchemas = [CheckoutLogo, CheckoutLogoUpload, CheckoutBranding, UpdateCheckoutBrandingRequest];

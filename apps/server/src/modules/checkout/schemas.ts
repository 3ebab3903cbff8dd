import { Type, type Static, type TSchema } from 'typebox';
import { cents, constant, int32, ListQueryBase, listOf, nullableRef, ref, refTo, stringEnum } from '../../http/common.js';
import { Customer, CustomerRequest, MAX_AMOUNT_CENTS, PaymentPix } from '../payments/schemas.js';
import { validation } from '../../errors.js';

export const CHECKOUT_METHODS = ['credit_card', 'pix'] as const;
export type CheckoutMethod = (typeof CHECKOUT_METHODS)[number];
export const CHECKOUT_STATUSES = ['open', 'complete', 'expired'] as const;
export type CheckoutStatus = (typeof CHECKOUT_STATUSES)[number];

export const MIN_EXPIRES_IN_SECONDS = 300;
export const MAX_EXPIRES_IN_SECONDS = 86_400;
export const DEFAULT_EXPIRES_IN_SECONDS = 3600;

const methodsField = Type.Array(stringEnum([...CHECKOUT_METHODS]), {
  minItems: 1, maxItems: 2, uniqueItems: true,
  description: 'What the buyer may pay with, in the order the page offers them. Default both: `["credit_card", "pix"]`.',
});
const redirectUrl = (what: string) => Type.String({
  minLength: 8, maxLength: 2048, format: 'uri', pattern: '^https?://',
  description: `Redirect mode: where the hosted page sends the buyer ${what} (http or https).`,
});

export const CreateCheckoutSessionRequest = Type.Object(
  {
    amount: cents({ minimum: 1, maximum: MAX_AMOUNT_CENTS, description: 'Amount in centavos (1050 = R$ 10,50).', examples: [1050] }),
    currency: Type.Optional(constant('BRL', { description: 'Only BRL. Defaults to BRL.' })),
    methods: Type.Optional(methodsField),
    description: Type.Optional(Type.String({ maxLength: 500, description: 'Shown to the buyer on the page, and copied to the payment.' })),
    metadata: Type.Optional(ref('Metadata')),
    customer: Type.Optional(refTo(CustomerRequest)),
    installments: Type.Optional(int32({ minimum: 1, maximum: 12, description: 'The most installments the buyer may choose for a card, 1-12 (default 1: no choice offered).' })),
    successUrl: Type.Optional(redirectUrl('after paying')),
    cancelUrl: Type.Optional(redirectUrl('when they give up')),
    expiresInSeconds: Type.Optional(int32({ minimum: MIN_EXPIRES_IN_SECONDS, maximum: MAX_EXPIRES_IN_SECONDS, description: `Seconds until the session expires, ${MIN_EXPIRES_IN_SECONDS}-${MAX_EXPIRES_IN_SECONDS} (default ${DEFAULT_EXPIRES_IN_SECONDS}). A Pix made in the session expires with it.` })),
  },
  {
    $id: 'CreateCheckoutSessionRequest',
    additionalProperties: false,
    description: 'A hosted checkout for one sale: the buyer pays it on the page at `url` (or in a modal opened by /v1/checkout.js).',
    examples: [{ amount: 1050, description: 'Pedido 1234', methods: ['credit_card', 'pix'], installments: 3 }],
  },
);
export type CreateCheckoutSessionRequest = Static<typeof CreateCheckoutSessionRequest>;

export const CheckoutSession = Type.Object(
  {
    id: Type.String({ description: 'Prefix `cs_`.', examples: ['cs_01jc6v8x2a9m3yq0d7b4e5f6g8'] }),
    object: constant('checkout_session'),
    status: stringEnum([...CHECKOUT_STATUSES], { description: '`open` until its payment is approved (`complete`) or it expires (`expired`).' }),
    amount: cents({ description: 'Centavos.' }),
    currency: constant('BRL'),
    methods: Type.Array(stringEnum([...CHECKOUT_METHODS])),
    description: Type.Union([Type.String(), Type.Null()]),
    metadata: ref('Metadata'),
    customer: nullableRef(Customer),
    installments: int32({ minimum: 1, maximum: 12, description: 'The most installments the buyer may choose.' }),
    successUrl: Type.Union([Type.String(), Type.Null()]),
    cancelUrl: Type.Union([Type.String(), Type.Null()]),
    url: Type.String({ description: 'The hosted page, with the client secret in its fragment (never sent to a server by the browser). Redirect the buyer there, or open it with /v1/checkout.js.' }),
    clientSecret: Type.Union([Type.String(), Type.Null()], { description: 'Authorizes the hosted page\'s calls for this session only; give it to the browser that opens the checkout, nowhere else. Null once the session is no longer open.' }),
    paymentId: Type.Union([Type.String(), Type.Null()], { description: 'The session\'s latest payment (`pay_`); when `complete`, the approved one. Confirm it from your server before you ship.' }),
    expiresAt: Type.String({ format: 'date-time' }),
    livemode: Type.Boolean(),
    createdAt: Type.String({ format: 'date-time' }),
    completedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    expiredAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'CheckoutSession', additionalProperties: false, description: 'A hosted checkout: at most one approved payment, whatever the buyer clicks.' },
);
export type CheckoutSession = Static<typeof CheckoutSession>;
export const CheckoutSessionList = listOf('CheckoutSession', 'CheckoutSessionList');

export const CheckoutSessionClientPayment = Type.Object(
  {
    id: Type.String({ description: 'Prefix `pay_`.' }),
    method: stringEnum([...CHECKOUT_METHODS]),
    status: Type.String({ description: 'The payment\'s status (`pending`, `approved`, `declined`, ...).' }),
    failureMessage: Type.Union([Type.String(), Type.Null()], { description: 'Why it was declined or failed, to show the buyer.' }),
    pix: nullableRef(PaymentPix, { description: 'The BR Code to pay, and when it expires (the page counts down to it).' }),
    nextAction: Type.Union([ref('PaymentNextAction'), Type.Null()], { description: 'A `requires_action` card payment: where the page sends the buyer (3-D Secure).' }),
  },
  { $id: 'CheckoutSessionClientPayment', additionalProperties: false, description: 'The session\'s latest payment, as the buyer may see it.' },
);

// A named component, not an inline object (issue 28).
export const InstallmentGroup = Type.Object(
  { times: int32({ minimum: 1, maximum: 12, description: 'How many installments of this amount.' }), amount: cents({ description: 'Centavos.' }) },
  { $id: 'InstallmentGroup', additionalProperties: false, description: 'Installments of one amount: "2 × R$ 39,98".' },
);

export const InstallmentPlan = Type.Object(
  {
    count: int32({ minimum: 1, maximum: 12, description: 'How many installments.' }),
    amounts: Type.Array(cents(), { description: 'Each installment in centavos, in billing order: they sum exactly to `total`, differ by at most one centavo, and the first ones carry the centavos left over.' }),
    groups: Type.Array(refTo(InstallmentGroup), { description: 'The same amounts grouped (at most two groups, the larger first): "2 × R$ 39,98 + 2 × R$ 39,97".' }),
    total: cents({ description: 'Centavos: always the amount of the sale.' }),
  },
  { $id: 'InstallmentPlan', additionalProperties: false, description: 'A card sale in installments, as the buyer is billed: R$ 159,90 in 4 is 2 × R$ 39,98 + 2 × R$ 39,97.' },
);

export const CheckoutCardEncryption = Type.Object(
  {
    acquirer: constant('adyen'),
    environment: stringEnum(['live', 'test'], { description: 'Adyen Web\'s `environment`.' }),
    clientKey: Type.String({ description: 'The connector account\'s public client key.' }),
    origin: Type.String({ description: 'The only origin the page loads the acquirer\'s code from (its CSP allows it, live only).' }),
    scriptUrl: Type.String({ description: 'Adyen Web, under `origin`.' }),
  },
  { $id: 'CheckoutCardEncryption', additionalProperties: false, description: 'Live mode with a card acquirer: the page encrypts the card fields in the buyer\'s browser with the acquirer\'s library and client key, and sends only what it encrypted (`encryptedCard`).' },
);

export const CheckoutSessionClientView = Type.Object(
  {
    id: Type.String({ description: 'Prefix `cs_`.' }),
    object: constant('checkout_session.client'),
    status: stringEnum([...CHECKOUT_STATUSES]),
    amount: cents({ description: 'Centavos.' }),
    currency: constant('BRL'),
    description: Type.Union([Type.String(), Type.Null()]),
    merchantName: Type.String({ description: 'The account\'s checkout display name, else its name.' }),
    logoUrl: Type.Union([Type.String(), Type.Null()], { description: 'The merchant\'s logo, served by this instance (`/checkout/logos/<sha256>`).' }),
    accentColor: Type.Union([Type.String(), Type.Null()], { description: '`#rrggbb` (WCAG AA against white, checked when set), or null for the default.' }),
    platformName: Type.String({ description: 'The payment platform\'s name (PLATFORM_NAME), shown as "Pagamento seguro · <name>".' }),
    methods: Type.Array(stringEnum([...CHECKOUT_METHODS])),
    installments: int32({ minimum: 1, maximum: 12, description: 'The most installments the buyer may choose.' }),
    installmentPlans: Type.Array(ref('InstallmentPlan'), { description: 'What each choice of 1 to `installments` installments really bills, to the centavo.' }),
    expiresAt: Type.String({ format: 'date-time' }),
    livemode: Type.Boolean(),
    successUrl: Type.Union([Type.String(), Type.Null()]),
    cancelUrl: Type.Union([Type.String(), Type.Null()]),
    payment: Type.Union([ref('CheckoutSessionClientPayment'), Type.Null()]),
    cardEncryption: Type.Union([ref('CheckoutCardEncryption'), Type.Null()], { description: 'Live card payments at an acquirer: how the page encrypts the card (null: the sandbox, which takes test cards as they are typed).' }),
  },
  { $id: 'CheckoutSessionClientView', additionalProperties: false, description: 'What the hosted page needs of its session: no metadata, no customer, no secret, no key (the page tokenizes the card with the session\'s own client secret).' },
);
export type CheckoutSessionClientView = Static<typeof CheckoutSessionClientView>;

export const CheckoutCardPayRequest = Type.Object(
  {
    method: constant('credit_card'),
    cardToken: Type.String({ pattern: '^tok_[A-Za-z0-9_]{1,64}$', description: 'A `tok_` made by POST /v1/tokens with this session\'s `clientSecret`.' }),
    installments: Type.Optional(int32({ minimum: 1, maximum: 12, description: 'At most the session\'s `installments` (default 1).' })),
  },
  { $id: 'CheckoutCardPayRequest', additionalProperties: false, examples: [{ method: 'credit_card', cardToken: 'tok_01jc6v8x2a9m3yq0d7b4e5f6g8' }] },
);
export const CheckoutPixPayRequest = Type.Object(
  { method: constant('pix') },
  { $id: 'CheckoutPixPayRequest', additionalProperties: false, examples: [{ method: 'pix' }] },
);
type PayShapes = Static<typeof CheckoutCardPayRequest> | Static<typeof CheckoutPixPayRequest>;
export const CheckoutPayRequest = Type.Unsafe<PayShapes>({
  $id: 'CheckoutPayRequest',
  oneOf: [ref('CheckoutCardPayRequest'), ref('CheckoutPixPayRequest')],
  discriminator: { propertyName: 'method', mapping: { credit_card: '#/components/schemas/CheckoutCardPayRequest', pix: '#/components/schemas/CheckoutPixPayRequest' } },
  description: 'A card (`cardToken`, optional `installments`) or Pix.',
  examples: [{ method: 'credit_card', cardToken: 'tok_01jc6v8x2a9m3yq0d7b4e5f6g8', installments: 1 }, { method: 'pix' }],
});
export type CheckoutPayRequest = PayShapes;

// The pay request's fields without its shape rule (see http/shapes.ts), and the rule in code.
export const CheckoutPayFields = Type.Object(
  {
    method: stringEnum([...CHECKOUT_METHODS]),
    cardToken: Type.Optional(CheckoutCardPayRequest.properties.cardToken),
    installments: Type.Optional(CheckoutCardPayRequest.properties.installments),
  },
  { additionalProperties: false },
);
export function checkPayShape(body: Static<typeof CheckoutPayFields>): void {
  if (body.method === 'credit_card') {
    if (body.cardToken === undefined) throw validation('cardToken is required to pay by card.', 'cardToken');
  } else {
    if (body.cardToken !== undefined) throw validation('cardToken is not accepted for pix.', 'cardToken');
    if (body.installments !== undefined) throw validation('installments only applies to credit_card.', 'installments');
  }
}

export const ListCheckoutSessionsQuery = Type.Object(
  { ...ListQueryBase, status: Type.Optional(stringEnum([...CHECKOUT_STATUSES], { description: 'Only sessions in this status.' })) },
  { additionalProperties: false },
);
export type ListCheckoutSessionsQuery = Static<typeof ListCheckoutSessionsQuery>;

export const CheckoutSessionIdParams = Type.Object({ id: Type.String({ maxLength: 64, description: 'Checkout session id (`cs_...`).' }) }, { additionalProperties: false });

// The pay route requires a key: the page makes one per attempt, so a retried request never pays twice.
export const RequiredIdempotencyHeaders = Type.Object({
  'idempotency-key': Type.String({
    minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$',
    description: 'Required here: one per payment attempt (the page makes a random one), reused by its retries.',
  }),
});

export const checkoutSchemas: TSchema[] = [
  CreateCheckoutSessionRequest, CheckoutSession, CheckoutSessionList, CheckoutSessionClientPayment, InstallmentGroup, InstallmentPlan, CheckoutCardEncryption, CheckoutSessionClientView,
  CheckoutCardPayRequest, CheckoutPixPayRequest, CheckoutPayRequest,
];

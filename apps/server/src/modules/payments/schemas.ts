import { Type, type Static } from 'typebox';
import { ListQueryBase, listOf, ref, refTo, nullableRef, stringEnum, constant, cents, int32 } from '../../http/common.js';
import { PAYMENT_STATUSES } from '../../domain/states.js';

export const MAX_AMOUNT_CENTS = 1_000_000_000; // R$ 10.000.000,00 per payment

const amountField = (description: string) => cents({ minimum: 1, maximum: MAX_AMOUNT_CENTS, description, examples: [1050] });

// The request's customer and the answer's are two components: one name for both made OpenAPI
// Generator keep only one of them, and the request's checks vanished (issue 28).
export const CustomerRequest = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
    document: Type.Optional(Type.String({ pattern: '^[0-9A-Za-z.\\-/ ]{11,20}$', description: 'CPF or CNPJ. Stored; shown back masked.' })),
  },
  { $id: 'CustomerRequest', additionalProperties: false, description: 'Who pays (optional).' },
);

// The fields of both shapes, each typed as in the request schemas below.
const fields = {
  amount: amountField('Shape A: amount in centavos (1050 = R$ 10,50). Send exactly one of `amount` / `amountInCents`.'),
  amountInCents: amountField('Shape B: amount in centavos. Send exactly one of `amount` / `amountInCents`.'),
  currency: constant('BRL', { description: 'Only BRL. Defaults to BRL.' }),
  cardToken: Type.String({ pattern: '^tok_[A-Za-z0-9_]{1,64}$', description: 'A `tok_` from POST /v1/tokens (or a sandbox test token such as `tok_visa`). Required for `credit_card`, refused for `pix`.' }),
  installments: int32({ minimum: 1, maximum: 12, description: 'Card only, 1-12 (default 1).' }),
  description: Type.String({ maxLength: 500 }),
  metadata: ref('Metadata'),
  customer: refTo(CustomerRequest),
  pixExpiresInSeconds: int32({ minimum: 60, maximum: 7 * 86_400, description: 'Pix only: seconds until the BR Code expires (default 3600).' }),
  returnUrl: Type.String({ minLength: 10, maxLength: 2000, pattern: '^https?://[^\\s]+$', description: 'Card only: your page the buyer comes back to after 3-D Secure (the acquirer sends them to us first; we complete the payment, then redirect to this URL with `paymentId` and `status` added to its query; fetch the payment to trust its status). https; plain http only to localhost/127.0.0.1 with test keys. Omitted: a page of ours shows the result.', examples: ['https://loja.example/pedido/123/retorno'] }),
};
const optional = {
  currency: Type.Optional(fields.currency),
  description: Type.Optional(fields.description),
  metadata: Type.Optional(fields.metadata),
  customer: Type.Optional(fields.customer),
};
const pix = { method: constant('pix'), pixExpiresInSeconds: Type.Optional(fields.pixExpiresInSeconds), ...optional };
const card = { method: constant('credit_card'), cardToken: fields.cardToken, installments: Type.Optional(fields.installments), returnUrl: Type.Optional(fields.returnUrl), ...optional };

// The two shapes times the two methods: four exact request types, so a generated client can only
// build a valid one (exactly one of amount/amountInCents; cardToken and installments only with
// credit_card, pixExpiresInSeconds only with pix).
export const PixPaymentRequest = Type.Object(
  { amount: fields.amount, ...pix },
  { $id: 'PixPaymentRequest', additionalProperties: false, description: 'Shape A, Pix: `{amount, currency, method: "pix"}`.', examples: [{ amount: 1050, currency: 'BRL', method: 'pix' }] },
);
export const PixPaymentInCentsRequest = Type.Object(
  { amountInCents: fields.amountInCents, ...pix },
  { $id: 'PixPaymentInCentsRequest', additionalProperties: false, description: 'Shape B, Pix: `{amountInCents, method: "pix"}`.', examples: [{ amountInCents: 1050, method: 'pix' }] },
);
export const CardPaymentRequest = Type.Object(
  { amountInCents: fields.amountInCents, ...card },
  { $id: 'CardPaymentRequest', additionalProperties: false, description: 'Shape B, card: `{amountInCents, method: "credit_card", cardToken}`.', examples: [{ amountInCents: 2500, method: 'credit_card', cardToken: 'tok_visa' }] },
);
export const CardPaymentWithAmountRequest = Type.Object(
  { amount: fields.amount, ...card },
  { $id: 'CardPaymentWithAmountRequest', additionalProperties: false, description: 'Shape A, card: `{amount, currency, method: "credit_card", cardToken}`.', examples: [{ amount: 2500, currency: 'BRL', method: 'credit_card', cardToken: 'tok_visa', installments: 3, returnUrl: 'https://loja.example/pedido/123/retorno' }] },
);
type Shapes = Static<typeof PixPaymentRequest> | Static<typeof PixPaymentInCentsRequest> | Static<typeof CardPaymentRequest> | Static<typeof CardPaymentWithAmountRequest>;

export const CreatePaymentBody = Type.Unsafe<Shapes>({
  $id: 'CreatePaymentRequest',
  oneOf: [ref('PixPaymentRequest'), ref('PixPaymentInCentsRequest'), ref('CardPaymentRequest'), ref('CardPaymentWithAmountRequest')],
  description: 'Two shapes are accepted, for either method. Shape A: `{amount, currency, method}`. Shape B: `{amountInCents, method, cardToken}`. Amounts are integer centavos in both.',
  examples: [
    { amount: 1050, currency: 'BRL', method: 'pix' },
    { amountInCents: 2500, method: 'credit_card', cardToken: 'tok_visa' },
  ],
});
export type CreatePaymentBody = Shapes;

// Every field of every shape, typed, with the shape rules left out: what a body that matches
// no shape is checked against for a precise field error, before checkPaymentShape (the same
// rules in code) says which shape rule it breaks.
export const CreatePaymentFields = Type.Object(
  {
    amount: Type.Optional(fields.amount),
    amountInCents: Type.Optional(fields.amountInCents),
    method: stringEnum(['pix', 'credit_card'], { description: 'Payment method.' }),
    cardToken: Type.Optional(fields.cardToken),
    installments: Type.Optional(fields.installments),
    pixExpiresInSeconds: Type.Optional(fields.pixExpiresInSeconds),
    returnUrl: Type.Optional(fields.returnUrl),
    ...optional,
  },
  { additionalProperties: false },
);
export type CreatePaymentFields = Static<typeof CreatePaymentFields>;

export const paymentRequestSchemas = [CustomerRequest, PixPaymentRequest, PixPaymentInCentsRequest, CardPaymentRequest, CardPaymentWithAmountRequest, CreatePaymentBody];

export const Customer = Type.Object(
  {
    name: Type.Optional(Type.String()),
    email: Type.Optional(Type.String()),
    document: Type.Optional(Type.String({ description: 'Masked.' })),
  },
  { $id: 'Customer', additionalProperties: false, description: 'Who paid, as sent (the document masked).' },
);
export const PaymentCard = Type.Object(
  { brand: Type.String(), last4: Type.String() },
  { $id: 'PaymentCard', additionalProperties: false, description: 'The card a payment was made with.' },
);
export const PaymentPix = Type.Object(
  {
    copyPaste: Type.String({ description: 'BR Code "copia e cola" (EMV, br.gov.bcb.pix).' }),
    qrCodeSvg: Type.String({ description: 'The same BR Code as a QR code, SVG.' }),
    expiresAt: Type.String({ format: 'date-time' }),
    txid: Type.Union([Type.String({ pattern: '^[a-zA-Z0-9]{26,35}$' }), Type.Null()], { description: 'Live Pix: the charge\'s txid at the PSP (API Pix `cob`), derived from the payment id; what the PSP\'s statements and portal show. Null in the sandbox.' }),
    endToEndId: Type.Union([Type.String({ pattern: '^[a-zA-Z0-9]{32}$' }), Type.Null()], { description: 'Live Pix, once paid: the end-to-end id (E2EID) of the Pix that paid it, as the payer\'s bank shows it; refunds are devoluções of this Pix. Null until paid, and in the sandbox.' }),
  },
  { $id: 'PaymentPix', additionalProperties: false, description: 'What the payer needs to pay a Pix payment, and, for a live Pix, its identifiers in the Pix system.' },
);
export const PaymentFailure = Type.Object(
  { code: Type.String(), message: Type.String() },
  { $id: 'PaymentFailure', additionalProperties: false, description: 'Why a payment was declined or failed.' },
);
export const PaymentNextAction = Type.Object(
  {
    type: constant('redirect', { description: '`redirect`: send the buyer to `url` (their bank\'s 3-D Secure page); they come back to the payment\'s return URL, and the payment is decided then.' }),
    url: Type.String({ description: 'Where to send the buyer.' }),
    method: stringEnum(['GET', 'POST'], { description: 'How: a plain navigation (GET) or a form post (POST).' }),
    expiresAt: Type.String({ format: 'date-time', description: 'A payment whose action is not completed by then expires.' }),
    returnUrl: Type.Union([Type.String(), Type.Null()], { description: 'Where the buyer lands once the action is done: the payment\'s `returnUrl` (with `paymentId` and `status` added to its query), or null: a page of ours shows the result.' }),
  },
  { $id: 'PaymentNextAction', additionalProperties: false, description: 'What the buyer must do before a `requires_action` payment is decided (3-D Secure).' },
);
export const PaymentCapture = Type.Object(
  {
    method: constant('manual', { description: 'The acquirer account captures on request: the payment waits in `requires_capture` once authorized.' }),
    status: stringEnum(['pending', 'processing', 'succeeded', 'failed'], { description: '`pending`: not asked yet (POST /v1/payments/{id}/capture); `processing`: asked, the acquirer has not said how it ended; `succeeded`: captured (the payment is `approved`); `failed`: the acquirer could not capture (the payment is `failed`, its authorization given back).' }),
  },
  { $id: 'PaymentCapture', additionalProperties: false, description: 'A live card payment with manual capture: where its capture stands.' },
);
export const paymentPartSchemas = [Customer, PaymentCard, PaymentPix, PaymentFailure, PaymentNextAction, PaymentCapture];

export const Payment = Type.Object(
  {
    id: Type.String({ description: 'Prefix `pay_`.', examples: ['pay_01jc6v8x2a9m3yq0d7b4e5f6g8'] }),
    object: constant('payment'),
    status: stringEnum([...PAYMENT_STATUSES], { description: '`pending` at creation; a live card payment may then need its buyer (`requires_action`, with `nextAction`), and with manual capture waits authorized in `requires_capture` until captured; then `approved`, `declined`, `failed`, `canceled` or `expired`; an approved payment may become `partially_refunded` or `refunded`.' }),
    amount: cents({ description: 'Centavos.' }),
    currency: constant('BRL'),
    method: stringEnum(['pix', 'credit_card']),
    description: Type.Union([Type.String(), Type.Null()]),
    metadata: ref('Metadata'),
    customer: nullableRef(Customer),
    installments: Type.Union([int32({ minimum: 1, maximum: 12 }), Type.Null()]),
    card: nullableRef(PaymentCard),
    pix: nullableRef(PaymentPix),
    failure: nullableRef(PaymentFailure),
    nextAction: nullableRef(PaymentNextAction),
    returnUrl: Type.Union([Type.String(), Type.Null()], { description: 'Card: the page the buyer comes back to after 3-D Secure, as sent on create; null if none was sent.' }),
    capture: nullableRef(PaymentCapture, { description: 'Live cards on an acquirer account with manual capture: the capture; null when captures are automatic (and in the sandbox).' }),
    amountRefunded: cents(),
    feeAmount: Type.Union([cents(), Type.Null()], { description: 'Processing fee in centavos, once approved.' }),
    netAmount: Type.Union([cents(), Type.Null()], { description: 'amount - feeAmount, once approved.' }),
    livemode: Type.Boolean(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Payment', additionalProperties: false, description: 'A Pix or card payment.' },
);
export type Payment = Static<typeof Payment>;

export const PaymentList = listOf('Payment', 'PaymentList');

export const ListPaymentsQuery = Type.Object(
  {
    ...ListQueryBase,
    status: Type.Optional(stringEnum([...PAYMENT_STATUSES])),
    method: Type.Optional(stringEnum(['pix', 'credit_card'])),
  },
  { additionalProperties: false },
);
export type ListPaymentsQuery = Static<typeof ListPaymentsQuery>;

export const PaymentIdParams = Type.Object({ id: Type.String({ maxLength: 64, description: 'Payment id (`pay_...`).' }) }, { additionalProperties: false });

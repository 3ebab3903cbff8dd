import { Type, type Static } from 'typebox';
import { ListQueryBase, listOf, ref, constant, refTo, BankAccount, PixKey } from '../../http/common.js';

// The shape and lengths live here; the rules a schema cannot say well (CNPJ check digits, the
// digit/hyphen/check-digit layout of an account) are checked by the domain validators in the
// service, so every refusal still names its field.

// 14 characters canonical, 18 with the usual punctuation (12.ABC.345/01DE-35).
const documentField = (description: string) => Type.String({
  minLength: 14,
  maxLength: 18,
  pattern: '^[0-9A-Za-z./ -]+$',
  description,
  examples: ['11.222.333/0001-81', '12ABC34501DE35'],
});

const nameField = () => Type.String({ minLength: 1, maxLength: 200, description: 'Legal name of the payee (razão social), 1-200 characters.', examples: ['Loja Exemplo Ltda'] });

export const CreateRecipientBody = Type.Object(
  {
    name: nameField(),
    document: documentField('CNPJ of the payee: 14 characters, numeric or (since July 2026) alphanumeric, the last two being check digits. Punctuation (`.`, `/`, `-`) is ignored and letters are uppercased; stored and returned canonical (14 characters, no punctuation).'),
    bankAccount: refTo(BankAccount),
    pixKey: Type.Optional(refTo(PixKey, { description: 'Where payouts by Pix go, preferred to the bank account when given.' })),
    metadata: Type.Optional(ref('Metadata')),
  },
  {
    $id: 'CreateRecipientRequest',
    additionalProperties: false,
    description: 'A payee that split rules can reference. The same CNPJ may be registered more than once (e.g. with another bank account).',
    examples: [
      { name: 'Loja Exemplo Ltda', document: '11.222.333/0001-81', bankAccount: { bankCode: '341', agency: '0001', account: '12345-6', accountType: 'checking' } },
    ],
  },
);
export type CreateRecipientBody = Static<typeof CreateRecipientBody>;

export const UpdateRecipientBody = Type.Object(
  {
    name: Type.Optional(nameField()),
    bankAccount: Type.Optional(refTo(BankAccount)),
    pixKey: Type.Optional(Type.Union([refTo(PixKey), Type.Null()], { description: 'Replaces the Pix key; `null` removes it (payouts then go to the bank account).' })),
    metadata: Type.Optional(ref('Metadata', { description: 'Replaces the whole metadata map (send `{}` to clear it); keys are not merged.' })),
  },
  {
    $id: 'UpdateRecipientRequest',
    additionalProperties: false,
    minProperties: 1,
    description: 'Send at least one field. `bankAccount` is replaced whole (all four fields, validated as on create) and `metadata` is replaced whole. The `document` cannot change: register a new recipient instead.',
    examples: [{ bankAccount: { bankCode: '001', agency: '1234-5', account: '98765-X', accountType: 'savings' } }],
  },
);
export type UpdateRecipientBody = Static<typeof UpdateRecipientBody>;

export const Recipient = Type.Object(
  {
    id: Type.String({ description: 'Prefix `rcp_`.', examples: ['rcp_01jc6v8x2a9m3yq0d7b4e5f6g8'] }),
    object: constant('recipient'),
    name: Type.String(),
    document: Type.String({ description: 'CNPJ, canonical: 14 characters, uppercase, no punctuation.', examples: ['11222333000181'] }),
    bankAccount: refTo(BankAccount),
    pixKey: Type.Union([refTo(PixKey), Type.Null()], { description: 'Where payouts by Pix go (preferred to the bank account); null: the bank account.' }),
    metadata: ref('Metadata'),
    livemode: Type.Boolean(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Recipient', additionalProperties: false, description: 'A registered payee of split rules, with the bank account it is paid out to.' },
);
export type Recipient = Static<typeof Recipient>;

export const RecipientList = listOf('Recipient', 'RecipientList');

export const ListRecipientsQuery = Type.Object(
  {
    ...ListQueryBase,
    document: Type.Optional(documentField('Only recipients with this CNPJ (punctuation ignored, compared canonical). An invalid CNPJ is a VALIDATION_ERROR.')),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only recipients whose name is exactly this (case-sensitive; no prefix or partial match).' })),
  },
  { additionalProperties: false },
);
export type ListRecipientsQuery = Static<typeof ListRecipientsQuery>;

export const RecipientIdParams = Type.Object({ id: Type.String({ maxLength: 64, description: 'Recipient id (`rcp_...`).' }) }, { additionalProperties: false });

// pt-BR first; English with ?locale=en. Every word the buyer sees is here.
export type Locale = 'pt-BR' | 'en';

const ptBR = {
  title: 'Pagamento',
  sandbox: 'Ambiente de testes: nenhum valor real é cobrado.',
  loading: 'Carregando o pagamento…',
  method: 'Forma de pagamento',
  card: 'Cartão de crédito',
  pix: 'Pix',
  number: 'Número do cartão',
  expiry: 'Validade (MM/AA)',
  expiryPlaceholder: 'MM/AA',
  cvc: 'Código de segurança (CVC)',
  holder: 'Nome impresso no cartão',
  installments: 'Parcelas',
  // "À vista (R$ 159,90)", "3x de R$ 53,30", "4x: 2 de R$ 39,98 + 2 de R$ 39,97": what is billed, to the centavo.
  installment: (n: number, groups: Array<{ times: number; amount: string }>, total: string) => (n === 1
    ? `À vista (${total})`
    : groups.length === 1 ? `${n}x de ${groups[0].amount}` : `${n}x: ${groups.map((g) => `${g.times} de ${g.amount}`).join(' + ')}`),
  installmentsTotal: (n: number, total: string) => (n === 1 ? `Total: ${total} à vista` : `Total: ${total} em ${n} parcelas, sem juros`),
  secure: 'Pagamento seguro',
  secureBy: (platform: string) => `Pagamento seguro · ${platform}`,
  pixPhoneTitle: 'Copie o código e pague no app do seu banco',
  payByCard: 'Pagar com cartão',
  pixKept: (minutes: number) => `Seu código Pix continua válido por mais ${minutes} min.`,
  backToPix: 'Voltar ao código Pix',
  pay: (amount: string) => `Pagar ${amount}`,
  processing: 'Processando o pagamento…',
  errNumber: 'Confira o número do cartão.',
  errExpiry: 'Confira a validade: mês/ano, e o cartão não pode estar vencido.',
  errCvc: (n: number) => `O código de segurança tem ${n} dígitos.`,
  errHolder: 'Informe o nome como está no cartão.',
  fixErrors: 'Corrija os campos indicados.',
  declined: 'Pagamento recusado. Confira os dados ou tente outro cartão.',
  failed: 'Não foi possível concluir o pagamento. Tente novamente.',
  network: 'Sem conexão com o serviço de pagamento. Tente novamente.',
  pixStart: 'Gerar código Pix',
  pixIntro: 'Você vai receber um QR Code para pagar no app do seu banco.',
  pixScan: 'Escaneie o QR Code com o app do seu banco',
  pixQrAlt: 'QR Code Pix para pagamento',
  pixCopyLabel: 'Pix copia e cola',
  pixCopy: 'Copiar código',
  pixCopied: 'Código copiado.',
  pixCopyFailed: 'Não foi possível copiar; selecione o código e copie.',
  pixExpiresIn: (t: string) => `Expira em ${t}`,
  pixWaiting: 'Aguardando o pagamento…',
  pixExpiredTitle: 'Pix expirou — gere um novo código',
  pixExpiredBody: 'O código Pix expirou antes de ser pago. Nada foi cobrado.',
  pixRenew: 'Gerar novo código Pix',
  otherMethod: 'Escolher outra forma de pagamento',
  successTitle: 'Pagamento aprovado',
  successBody: 'Obrigado! Seu pagamento foi aprovado.',
  paymentId: 'Identificador do pagamento',
  expiredTitle: 'Pagamento expirado',
  expiredBody: 'Esta sessão de pagamento expirou. Volte à loja para começar de novo.',
  unavailableTitle: 'Pagamento indisponível',
  unavailableBody: 'Não foi possível abrir este pagamento. O link está incompleto ou não é mais válido.',
  back: 'Voltar à loja',
  cancel: 'Cancelar e voltar à loja',
  continue: 'Continuar',
  redirecting: 'Redirecionando para a loja…',
};

export type Messages = typeof ptBR;

const en: Messages = {
  title: 'Payment',
  sandbox: 'Test mode: no real money is charged.',
  loading: 'Loading the payment…',
  method: 'Payment method',
  card: 'Credit card',
  pix: 'Pix',
  number: 'Card number',
  expiry: 'Expiry (MM/YY)',
  expiryPlaceholder: 'MM/YY',
  cvc: 'Security code (CVC)',
  holder: 'Name on card',
  installments: 'Installments',
  installment: (n, groups, total) => (n === 1
    ? `Single payment (${total})`
    : groups.length === 1 ? `${n} × ${groups[0].amount}` : `${n}: ${groups.map((g) => `${g.times} × ${g.amount}`).join(' + ')}`),
  installmentsTotal: (n, total) => (n === 1 ? `Total: ${total}, single payment` : `Total: ${total} in ${n} installments, no interest`),
  secure: 'Secure payment',
  secureBy: (platform) => `Secure payment · ${platform}`,
  pixPhoneTitle: "Copy the code and pay in your bank's app",
  payByCard: 'Pay by card',
  pixKept: (minutes) => `Your Pix code stays valid for ${minutes} more min.`,
  backToPix: 'Back to the Pix code',
  pay: (amount) => `Pay ${amount}`,
  processing: 'Processing the payment…',
  errNumber: 'Check the card number.',
  errExpiry: 'Check the expiry: month/year, and the card must not be expired.',
  errCvc: (n) => `The security code has ${n} digits.`,
  errHolder: 'Enter the name as printed on the card.',
  fixErrors: 'Fix the highlighted fields.',
  declined: 'Payment declined. Check the details or try another card.',
  failed: 'The payment could not be completed. Please try again.',
  network: 'Could not reach the payment service. Please try again.',
  pixStart: 'Get a Pix code',
  pixIntro: "You'll get a QR code to pay in your bank's app.",
  pixScan: "Scan the QR code with your bank's app",
  pixQrAlt: 'Pix QR code for the payment',
  pixCopyLabel: 'Pix copy and paste code',
  pixCopy: 'Copy code',
  pixCopied: 'Code copied.',
  pixCopyFailed: 'Could not copy; select the code and copy it.',
  pixExpiresIn: (t) => `Expires in ${t}`,
  pixWaiting: 'Waiting for the payment…',
  pixExpiredTitle: 'Pix expired — get a new code',
  pixExpiredBody: 'The Pix code expired before it was paid. Nothing was charged.',
  pixRenew: 'Get a new Pix code',
  otherMethod: 'Choose another payment method',
  successTitle: 'Payment approved',
  successBody: 'Thank you! Your payment was approved.',
  paymentId: 'Payment id',
  expiredTitle: 'Payment expired',
  expiredBody: 'This checkout session has expired. Go back to the store to start again.',
  unavailableTitle: 'Payment unavailable',
  unavailableBody: 'This payment could not be opened. The link is incomplete or no longer valid.',
  back: 'Back to the store',
  cancel: 'Cancel and go back to the store',
  continue: 'Continue',
  redirecting: 'Taking you back to the store…',
};

export function pickLocale(param: string | null): Locale {
  return param && /^en/i.test(param) ? 'en' : 'pt-BR';
}

export function messages(locale: Locale): Messages {
  return locale === 'en' ? en : ptBR;
}

export function money(amountInCents: number, currency: string, locale: Locale): string {
  return new Intl.NumberFormat(locale, { style: 'currency', currency }).format(amountInCents / 100);
}

// Two languages, pt-BR first. Amounts are always shown in reais (R$) and typed by operators in
// the language's own notation ("1.234,56" in pt-BR, "1,234.56" in English); money travels as
// integer centavos and is never a float.

export type Lang = 'pt-BR' | 'en';

const pt = {
  'app.title': 'Backoffice',
  'app.skip': 'Pular para o conteúdo',
  'nav.label': 'Navegação principal',
  'nav.accounts': 'Contas',
  'nav.payments': 'Pagamentos',
  'nav.settlementRuns': 'Liquidações',
  'nav.auditLog': 'Auditoria',
  'lang.switch': 'English',
  'lang.switchLabel': 'Switch to English',
  'session.signOut': 'Sair',
  'session.role.admin': 'administrador',
  'session.role.viewer': 'leitura',
  'signIn.title': 'Entrar no backoffice',
  'signIn.email': 'E-mail',
  'signIn.password': 'Senha',
  'signIn.submit': 'Entrar',
  'signIn.expired': 'Sua sessão expirou. Entre de novo para voltar a esta página.',
  'signIn.signedOut': 'Você saiu.',
  'common.loading': 'Carregando…',
  'common.none': 'Nenhum',
  'common.empty': 'Nada encontrado.',
  'common.next': 'Próxima página',
  'common.previous': 'Página anterior',
  'common.search': 'Buscar',
  'common.clear': 'Limpar',
  'common.cancel': 'Cancelar',
  'common.confirm': 'Confirmar',
  'common.save': 'Salvar',
  'common.reason': 'Motivo',
  'common.reasonHelp': 'Fica registrado na auditoria.',
  'common.reasonRequired': 'Informe o motivo.',
  'common.reasonOptional': 'Motivo (opcional)',
  'common.yes': 'Sim',
  'common.no': 'Não',
  'common.id': 'ID',
  'common.createdAt': 'Criado em',
  'common.status': 'Situação',
  'common.amount': 'Valor',
  'common.method': 'Meio',
  'common.mode': 'Modo',
  'common.live': 'Produção',
  'common.sandbox': 'Sandbox',
  'common.account': 'Conta',
  'common.details': 'Detalhes',
  'common.error': 'Não foi possível concluir',
  'common.notFound': 'Página não encontrada.',
  'common.any': 'Qualquer',
  'method.pix': 'Pix',
  'method.credit_card': 'Cartão de crédito',
  'accounts.title': 'Contas de lojistas',
  'accounts.search': 'Buscar por nome, e-mail ou ID',
  'accounts.name': 'Nome',
  'accounts.email': 'E-mail',
  'accounts.live': 'Produção',
  'accounts.liveOn': 'Ativo',
  'accounts.liveOff': 'Não ativado',
  'account.overview': 'Visão geral',
  'account.recipients': 'Recebedores',
  'account.splitRules': 'Regras de divisão',
  'account.tabs': 'Seções da conta',
  'account.keys': 'Chaves de API',
  'account.keysHelp': 'Só o prefixo e os últimos caracteres: as chaves ficam guardadas com hash.',
  'account.key.kind': 'Tipo',
  'account.key.secret': 'Secreta',
  'account.key.publishable': 'Publicável',
  'account.key.display': 'Chave',
  'account.key.revokedAt': 'Revogada em',
  'account.fees': 'Tarifas e prazo de liquidação',
  'account.fee.percent': 'Percentual',
  'account.fee.fixed': 'Fixo',
  'account.fee.delay': 'Prazo (dias)',
  'account.liveMode': 'Modo produção',
  'account.embedOrigins': 'Origens do checkout embutido',
  'account.embedOriginsHelp': 'Sites que podem abrir o checkout hospedado num modal (frame-ancestors da página). Altere pela API de administração.',
  'account.liveEnabled': 'O modo produção está ativo: as chaves sk_live_ funcionam.',
  'account.liveDisabled': 'O modo produção não está ativo: as chaves sk_live_ são recusadas.',
  'account.activateLive': 'Ativar modo produção',
  'account.activateLive.confirm': 'A conta passará a receber dinheiro real. Esta ação fica registrada na auditoria.',
  'account.activateLive.done': 'Modo produção ativado.',
  'account.payout': 'Conta de repasse',
  'account.payout.help': 'Onde o lojista recebe a parte dele das vendas. Sem ela, as liquidações do lojista ficam retidas; ao cadastrá-la, as retidas seguem para pagamento.',
  'account.payout.none': 'Nenhuma conta de repasse cadastrada: as liquidações do lojista ficam retidas.',
  'account.payout.set': 'Cadastrar conta de repasse',
  'account.payout.change': 'Alterar conta de repasse',
  'account.payout.confirm': 'O dinheiro do lojista passará a ser pago nesta conta, inclusive as liquidações retidas. Esta ação fica registrada na auditoria.',
  'account.payout.done': 'Conta de repasse salva.',
  'bank.code': 'Banco (código)',
  'bank.codeHelp': 'Código COMPE, 3 dígitos (ex.: 341).',
  'bank.agency': 'Agência',
  'bank.account': 'Conta com dígito',
  'bank.accountHelp': 'Número, hífen e dígito (ex.: 12345-6).',
  'bank.accountType': 'Tipo de conta',
  'bank.type.checking': 'Conta corrente',
  'bank.type.savings': 'Poupança',
  'bank.type.payment': 'Conta de pagamento',
  'hold.no_payout_bank_account': 'Retida: sem conta de repasse',
  'recipients.title': 'Recebedores',
  'recipients.readOnly': 'Somente leitura; documentos mascarados.',
  'recipients.name': 'Razão social',
  'recipients.document': 'CNPJ',
  'recipients.bank': 'Banco / agência / conta',
  'rules.title': 'Regras de divisão',
  'rules.order': 'Ordem',
  'rules.priority': 'Prioridade',
  'rules.shares': 'Divisão',
  'rules.conditions': 'Condições',
  'rules.description': 'Descrição',
  'rules.active': 'Ativa',
  'rules.inactive': 'Inativa',
  'rules.new': 'Nova regra',
  'rules.edit': 'Editar',
  'rules.moveUp': 'Subir',
  'rules.moveDown': 'Descer',
  'rules.moveUpLabel': 'Subir a regra {n}',
  'rules.moveDownLabel': 'Descer a regra {n}',
  'rules.moveTitle': 'Mudar a ordem: regra {n} para a posição {m}',
  'rules.moveConfirm': 'A ordem decide qual regra se aplica às próximas vendas, e portanto quem recebe. Esta ação fica registrada na auditoria.',
  'rules.activate': 'Ativar',
  'rules.deactivate': 'Desativar',
  'rules.activateTitle': 'Ativar a regra {n}',
  'rules.activateConfirm': 'A regra passa a dividir as próximas vendas aprovadas. Esta ação fica registrada na auditoria.',
  'rules.deactivateTitle': 'Desativar a regra {n}',
  'rules.deactivateConfirm': 'A regra deixa de se aplicar às próximas vendas; os recebíveis existentes não mudam.',
  'rules.empty': 'Esta conta não tem regras neste modo.',
  'rules.help': 'A primeira regra ativa, na ordem, cujas condições casam com a venda e cujas partes cabem no valor líquido se aplica.',
  'rules.cond.method': 'meio {v}',
  'rules.cond.min': 'a partir de {v}',
  'rules.cond.max': 'até {v}',
  'rules.cond.all': 'todas as vendas',
  'rules.share.percentage': '{v} do líquido',
  'rules.share.amount': '{v} fixo',
  'rules.modeLabel': 'Modo das regras',
  'preview.title': 'Simular uma venda',
  'preview.help': 'Calculado pelo servidor com o mesmo código de uma venda aprovada agora.',
  'preview.amount': 'Valor da venda (R$)',
  'preview.submit': 'Simular',
  'preview.rule': 'Regra aplicada',
  'preview.noRule': 'Nenhuma regra se aplica: o lojista recebe todo o líquido.',
  'preview.fee': 'Tarifa',
  'preview.net': 'Líquido',
  'preview.receivables': 'Recebíveis',
  'preview.payee': 'Recebedor',
  'payee.merchant': 'Lojista',
  'payee.recipient': 'Recebedor',
  'form.newTitle': 'Nova regra de divisão',
  'form.editTitle': 'Editar regra de divisão',
  'form.priorityHelp': 'Menor roda primeiro (0 a 1.000.000).',
  'form.conditions': 'Condições (opcionais)',
  'form.method': 'Meio de pagamento',
  'form.minAmount': 'Valor mínimo (R$)',
  'form.maxAmount': 'Valor máximo (R$)',
  'form.shares': 'Partes dos recebedores',
  'form.share': 'Parte {n}',
  'form.recipient': 'Recebedor',
  'form.kind': 'Tipo',
  'form.kind.percentage': 'Percentual do líquido',
  'form.kind.amount': 'Valor fixo',
  'form.value.percentage': 'Percentual (%)',
  'form.value.amount': 'Valor (R$)',
  'form.addShare': 'Adicionar parte',
  'form.removeShare': 'Remover a parte {n}',
  'form.save': 'Salvar',
  'form.saveHelp': 'Salvar guarda a regra sem ativá-la.',
  'form.saveActivate': 'Salvar e ativar',
  'form.saveActive': 'Salvar (ativa: requer motivo)',
  'form.saveActiveHelp': 'Esta regra está ativa: ao salvar, a alteração vale já para as próximas vendas. Por isso pede um motivo.',
  'form.saveActiveTitle': 'Salvar a regra ativa',
  'form.saveActiveConfirm': 'A regra está ativa: a alteração se aplica às próximas vendas aprovadas e muda quem recebe. Esta ação fica registrada na auditoria.',
  'form.saved': 'Regra salva.',
  'form.percentageRequired': 'Informe o percentual.',
  'form.invalidPercentage': 'Percentual inválido: maior que 0 e até 100, com até duas casas decimais (12,5).',
  'money.required': 'Informe o valor.',
  'money.invalid': 'Valor inválido: use só dígitos, ponto e vírgula, como em 1.234,56.',
  'money.ambiguous': 'Valor ambíguo: em português a vírgula separa os centavos (até 2 dígitos) e o ponto separa os milhares (grupos de 3), como em 1.234,56.',
  'money.decimals': 'No máximo dois dígitos de centavos, como em 10,50.',
  'money.grouping': 'O ponto separa os milhares em grupos de três dígitos, como em 1.234.567,89.',
  'money.positive': 'O valor deve ser maior que zero.',
  'form.noRecipients': 'Esta conta não tem recebedores neste modo: cadastre-os pela API pública (POST /v1/recipients).',
  'payments.title': 'Pagamentos',
  'payments.id': 'ID do pagamento',
  'payments.accountId': 'ID da conta',
  'payments.from': 'Criado a partir de',
  'payments.to': 'Criado até',
  'payments.refunded': 'Reembolsado',
  'payment.title': 'Pagamento {id}',
  'payment.fee': 'Tarifa',
  'payment.net': 'Líquido',
  'payment.receivables': 'Recebíveis',
  'payment.refunds': 'Reembolsos',
  'payment.events': 'Eventos',
  'payment.availableOn': 'Disponível em',
  'payment.settlement': 'Liquidação',
  'payment.eventType': 'Tipo',
  'payment.failure': 'Por que não foi aprovado',
  'status.pending': 'Pendente',
  'status.approved': 'Aprovado',
  'status.declined': 'Recusado',
  'status.failed': 'Falhou',
  'status.canceled': 'Cancelado',
  'status.expired': 'Expirado',
  'status.partially_refunded': 'Parcialmente reembolsado',
  'status.refunded': 'Reembolsado',
  'status.settled': 'Liquidado',
  'status.paid': 'Pago',
  'status.held': 'Retida',
  'status.succeeded': 'Concluído',
  'status.running': 'Em andamento',
  'status.completed': 'Concluída',
  'status.active': 'Ativa',
  'status.inactive': 'Inativa',
  'runs.title': 'Liquidações',
  'runs.start': 'Iniciar liquidação',
  'runs.startTitle': 'Iniciar uma liquidação',
  'runs.startConfirm': 'Todos os recebíveis pendentes disponíveis até a data viram repasses aos recebedores. Esta ação move dinheiro e fica registrada na auditoria.',
  'runs.date': 'Data (opcional; padrão: hoje)',
  'runs.runDate': 'Data',
  'runs.trigger': 'Origem',
  'runs.trigger.admin': 'Manual',
  'runs.trigger.schedule': 'Agendada',
  'runs.settlements': 'Repasses',
  'runs.receivables': 'Recebíveis',
  'runs.total': 'Total',
  'run.title': 'Liquidação {id}',
  'run.inProgress': 'A liquidação está em andamento; esta página se atualiza sozinha.',
  'run.perPayee': 'Repasses por recebedor',
  'run.failed': 'Repasses com falha',
  'run.noFailed': 'Nenhum repasse falhou.',
  'run.failure': 'Motivo (falha ou retenção)',
  'run.bank': 'Conta bancária',
  'audit.title': 'Auditoria',
  'audit.help': 'Cada alteração feita no backoffice ou na API administrativa, gravada na mesma transação da alteração.',
  'audit.when': 'Quando',
  'audit.who': 'Quem',
  'audit.action': 'Ação',
  'audit.object': 'Objeto',
  'audit.objectType': 'Tipo de objeto',
  'audit.objectId': 'ID do objeto',
  'audit.actorEmail': 'E-mail de quem fez',
  'audit.reason': 'Motivo',
  'audit.origin': 'Origem',
  'audit.changes': 'Antes e depois',
  'audit.before': 'Antes',
  'audit.after': 'Depois',
  'audit.showChanges': 'Ver alterações ({n})',
  'audit.noChanges': 'Nenhum campo mudou.',
} as const;

export type MessageKey = keyof typeof pt;

const en: Record<MessageKey, string> = {
  'app.title': 'Back office',
  'app.skip': 'Skip to content',
  'nav.label': 'Main navigation',
  'nav.accounts': 'Accounts',
  'nav.payments': 'Payments',
  'nav.settlementRuns': 'Settlement runs',
  'nav.auditLog': 'Audit log',
  'lang.switch': 'Português',
  'lang.switchLabel': 'Mudar para português',
  'session.signOut': 'Sign out',
  'session.role.admin': 'admin',
  'session.role.viewer': 'viewer',
  'signIn.title': 'Sign in to the back office',
  'signIn.email': 'Email',
  'signIn.password': 'Password',
  'signIn.submit': 'Sign in',
  'signIn.expired': 'Your session expired. Sign in again to return to this page.',
  'signIn.signedOut': 'You signed out.',
  'common.loading': 'Loading…',
  'common.none': 'None',
  'common.empty': 'Nothing found.',
  'common.next': 'Next page',
  'common.previous': 'Previous page',
  'common.search': 'Search',
  'common.clear': 'Clear',
  'common.cancel': 'Cancel',
  'common.confirm': 'Confirm',
  'common.save': 'Save',
  'common.reason': 'Reason',
  'common.reasonHelp': 'Kept in the audit log.',
  'common.reasonRequired': 'Give a reason.',
  'common.reasonOptional': 'Reason (optional)',
  'common.yes': 'Yes',
  'common.no': 'No',
  'common.id': 'ID',
  'common.createdAt': 'Created',
  'common.status': 'Status',
  'common.amount': 'Amount',
  'common.method': 'Method',
  'common.mode': 'Mode',
  'common.live': 'Live',
  'common.sandbox': 'Sandbox',
  'common.account': 'Account',
  'common.details': 'Details',
  'common.error': 'Could not complete',
  'common.notFound': 'Page not found.',
  'common.any': 'Any',
  'method.pix': 'Pix',
  'method.credit_card': 'Credit card',
  'accounts.title': 'Merchant accounts',
  'accounts.search': 'Search by name, email or ID',
  'accounts.name': 'Name',
  'accounts.email': 'Email',
  'accounts.live': 'Live',
  'accounts.liveOn': 'Active',
  'accounts.liveOff': 'Not activated',
  'account.overview': 'Overview',
  'account.recipients': 'Recipients',
  'account.splitRules': 'Split rules',
  'account.tabs': 'Account sections',
  'account.keys': 'API keys',
  'account.keysHelp': 'Only the prefix and the last characters: keys are stored hashed.',
  'account.key.kind': 'Kind',
  'account.key.secret': 'Secret',
  'account.key.publishable': 'Publishable',
  'account.key.display': 'Key',
  'account.key.revokedAt': 'Revoked',
  'account.fees': 'Fees and settlement delay',
  'account.fee.percent': 'Percentage',
  'account.fee.fixed': 'Fixed',
  'account.fee.delay': 'Delay (days)',
  'account.liveMode': 'Live mode',
  'account.embedOrigins': 'Embedded checkout origins',
  'account.embedOriginsHelp': 'Sites that may open the hosted checkout in a modal (the page\'s frame-ancestors). Change them through the admin API.',
  'account.liveEnabled': 'Live mode is active: sk_live_ keys work.',
  'account.liveDisabled': 'Live mode is not active: sk_live_ keys are refused.',
  'account.activateLive': 'Activate live mode',
  'account.activateLive.confirm': 'The account will take real money. This action is kept in the audit log.',
  'account.activateLive.done': 'Live mode activated.',
  'account.payout': 'Payout bank account',
  'account.payout.help': 'Where the merchant is paid its own share of sales. Without it the merchant\'s settlements are held; once it is set, the held ones go to payout.',
  'account.payout.none': 'No payout bank account yet: the merchant\'s settlements are held.',
  'account.payout.set': 'Set payout bank account',
  'account.payout.change': 'Change payout bank account',
  'account.payout.confirm': 'The merchant\'s money will be paid to this account, held settlements included. This action is kept in the audit log.',
  'account.payout.done': 'Payout bank account saved.',
  'bank.code': 'Bank (code)',
  'bank.codeHelp': 'COMPE code, 3 digits (e.g. 341).',
  'bank.agency': 'Branch',
  'bank.account': 'Account with check digit',
  'bank.accountHelp': 'Number, hyphen and check digit (e.g. 12345-6).',
  'bank.accountType': 'Account type',
  'bank.type.checking': 'Checking',
  'bank.type.savings': 'Savings',
  'bank.type.payment': 'Payment account',
  'hold.no_payout_bank_account': 'Held: no payout bank account',
  'recipients.title': 'Recipients',
  'recipients.readOnly': 'Read-only; documents masked.',
  'recipients.name': 'Legal name',
  'recipients.document': 'CNPJ',
  'recipients.bank': 'Bank / branch / account',
  'rules.title': 'Split rules',
  'rules.order': 'Order',
  'rules.priority': 'Priority',
  'rules.shares': 'Split',
  'rules.conditions': 'Conditions',
  'rules.description': 'Description',
  'rules.active': 'Active',
  'rules.inactive': 'Inactive',
  'rules.new': 'New rule',
  'rules.edit': 'Edit',
  'rules.moveUp': 'Move up',
  'rules.moveDown': 'Move down',
  'rules.moveUpLabel': 'Move up rule {n}',
  'rules.moveDownLabel': 'Move down rule {n}',
  'rules.moveTitle': 'Change the order: rule {n} to position {m}',
  'rules.moveConfirm': 'The order decides which rule applies to the next sales, and so who gets paid. This action is kept in the audit log.',
  'rules.activate': 'Activate',
  'rules.deactivate': 'Deactivate',
  'rules.activateTitle': 'Activate rule {n}',
  'rules.activateConfirm': 'The rule will split the next approved sales. This action is kept in the audit log.',
  'rules.deactivateTitle': 'Deactivate rule {n}',
  'rules.deactivateConfirm': 'The rule stops applying to new sales; existing receivables do not change.',
  'rules.empty': 'This account has no rules in this mode.',
  'rules.help': 'The first active rule, in order, whose conditions match the sale and whose shares fit in the net value applies.',
  'rules.cond.method': 'method {v}',
  'rules.cond.min': 'from {v}',
  'rules.cond.max': 'up to {v}',
  'rules.cond.all': 'every sale',
  'rules.share.percentage': '{v} of net',
  'rules.share.amount': '{v} fixed',
  'rules.modeLabel': 'Rules mode',
  'preview.title': 'Preview a sale',
  'preview.help': 'Computed by the server with the same code as a sale approved now.',
  'preview.amount': 'Sale amount (R$)',
  'preview.submit': 'Preview',
  'preview.rule': 'Rule applied',
  'preview.noRule': 'No rule applies: the merchant receives the whole net value.',
  'preview.fee': 'Fee',
  'preview.net': 'Net',
  'preview.receivables': 'Receivables',
  'preview.payee': 'Payee',
  'payee.merchant': 'Merchant',
  'payee.recipient': 'Recipient',
  'form.newTitle': 'New split rule',
  'form.editTitle': 'Edit split rule',
  'form.priorityHelp': 'Lower runs first (0 to 1,000,000).',
  'form.conditions': 'Conditions (optional)',
  'form.method': 'Payment method',
  'form.minAmount': 'Minimum amount (R$)',
  'form.maxAmount': 'Maximum amount (R$)',
  'form.shares': 'Recipient shares',
  'form.share': 'Share {n}',
  'form.recipient': 'Recipient',
  'form.kind': 'Kind',
  'form.kind.percentage': 'Percentage of net',
  'form.kind.amount': 'Fixed amount',
  'form.value.percentage': 'Percentage (%)',
  'form.value.amount': 'Amount (R$)',
  'form.addShare': 'Add a share',
  'form.removeShare': 'Remove share {n}',
  'form.save': 'Save',
  'form.saveHelp': 'Save keeps the rule without activating it.',
  'form.saveActivate': 'Save and activate',
  'form.saveActive': 'Save (active: needs a reason)',
  'form.saveActiveHelp': 'This rule is active: once saved, the change applies to the next sales at once. That is why it asks for a reason.',
  'form.saveActiveTitle': 'Save the active rule',
  'form.saveActiveConfirm': 'The rule is active: the change applies to the next approved sales and changes who gets paid. This action is kept in the audit log.',
  'form.saved': 'Rule saved.',
  'form.percentageRequired': 'Enter the percentage.',
  'form.invalidPercentage': 'Invalid percentage: above 0 and up to 100, with at most two decimals (12.5).',
  'money.required': 'Enter the amount.',
  'money.invalid': 'Invalid amount: use only digits, commas and a period, as in 1,234.56.',
  'money.ambiguous': 'Ambiguous amount: in English a period separates the cents (up to 2 digits) and a comma separates the thousands (groups of 3), as in 1,234.56.',
  'money.decimals': 'At most two digits of cents, as in 10.50.',
  'money.grouping': 'A comma separates the thousands in groups of three digits, as in 1,234,567.89.',
  'money.positive': 'The amount must be above zero.',
  'form.noRecipients': 'This account has no recipients in this mode: register them through the public API (POST /v1/recipients).',
  'payments.title': 'Payments',
  'payments.id': 'Payment ID',
  'payments.accountId': 'Account ID',
  'payments.from': 'Created from',
  'payments.to': 'Created until',
  'payments.refunded': 'Refunded',
  'payment.title': 'Payment {id}',
  'payment.fee': 'Fee',
  'payment.net': 'Net',
  'payment.receivables': 'Receivables',
  'payment.refunds': 'Refunds',
  'payment.events': 'Events',
  'payment.availableOn': 'Available on',
  'payment.settlement': 'Settlement',
  'payment.eventType': 'Type',
  'payment.failure': 'Why it was not approved',
  'status.pending': 'Pending',
  'status.approved': 'Approved',
  'status.declined': 'Declined',
  'status.failed': 'Failed',
  'status.canceled': 'Canceled',
  'status.expired': 'Expired',
  'status.partially_refunded': 'Partially refunded',
  'status.refunded': 'Refunded',
  'status.settled': 'Settled',
  'status.paid': 'Paid',
  'status.held': 'Held',
  'status.succeeded': 'Succeeded',
  'status.running': 'Running',
  'status.completed': 'Completed',
  'status.active': 'Active',
  'status.inactive': 'Inactive',
  'runs.title': 'Settlement runs',
  'runs.start': 'Start a settlement run',
  'runs.startTitle': 'Start a settlement run',
  'runs.startConfirm': 'Every pending receivable available by the date becomes a payout to its payee. This action moves money and is kept in the audit log.',
  'runs.date': 'Date (optional; default: today)',
  'runs.runDate': 'Date',
  'runs.trigger': 'Trigger',
  'runs.trigger.admin': 'Manual',
  'runs.trigger.schedule': 'Scheduled',
  'runs.settlements': 'Settlements',
  'runs.receivables': 'Receivables',
  'runs.total': 'Total',
  'run.title': 'Settlement run {id}',
  'run.inProgress': 'The run is in progress; this page updates by itself.',
  'run.perPayee': 'Settlements per payee',
  'run.failed': 'Failed payouts',
  'run.noFailed': 'No payout failed.',
  'run.failure': 'Reason (failure or hold)',
  'run.bank': 'Bank account',
  'audit.title': 'Audit log',
  'audit.help': 'Every change made in the back office or the admin API, written in the same transaction as the change.',
  'audit.when': 'When',
  'audit.who': 'Who',
  'audit.action': 'Action',
  'audit.object': 'Object',
  'audit.objectType': 'Object type',
  'audit.objectId': 'Object ID',
  'audit.actorEmail': 'Email of who did it',
  'audit.reason': 'Reason',
  'audit.origin': 'From',
  'audit.changes': 'Before and after',
  'audit.before': 'Before',
  'audit.after': 'After',
  'audit.showChanges': 'Show changes ({n})',
  'audit.noChanges': 'No field changed.',
};

const MESSAGES: Record<Lang, Record<MessageKey, string>> = { 'pt-BR': pt, en };

export function translate(lang: Lang, key: MessageKey, params: Record<string, string | number> = {}): string {
  return MESSAGES[lang][key].replace(/\{(\w+)\}/g, (_, name: string) => String(params[name] ?? `{${name}}`));
}

// The operator's language choice is kept across reloads in localStorage: a preference, not a
// secret (the session stays in its HttpOnly cookie; nothing else is stored in the browser).
export const LANG_STORAGE_KEY = 'backoffice.lang';

function storedLang(): Lang | null {
  try {
    const value = typeof localStorage === 'undefined' ? null : localStorage.getItem(LANG_STORAGE_KEY);
    return value === 'pt-BR' || value === 'en' ? value : null;
  } catch {
    return null; // storage disabled: the browser's language decides
  }
}

export function rememberLang(lang: Lang): void {
  try {
    localStorage.setItem(LANG_STORAGE_KEY, lang);
  } catch { /* storage disabled: the choice lasts until the page is reloaded */ }
}

export function initialLang(): Lang {
  const stored = storedLang();
  if (stored) return stored;
  const preferred = typeof navigator === 'undefined' ? [] : navigator.languages ?? [navigator.language];
  for (const tag of preferred) {
    if (tag.toLowerCase().startsWith('pt')) return 'pt-BR';
    if (tag.toLowerCase().startsWith('en')) return 'en';
  }
  return 'pt-BR';
}

const numberLocale = (lang: Lang) => (lang === 'pt-BR' ? 'pt-BR' : 'en-US');

// R$ in both languages: "R$ 1.234,56" / "R$1,234.56".
export function formatMoney(lang: Lang, cents: number): string {
  return new Intl.NumberFormat(numberLocale(lang), { style: 'currency', currency: 'BRL' }).format(cents / 100);
}

export function formatPercent(lang: Lang, percentage: number): string {
  return `${new Intl.NumberFormat(numberLocale(lang), { maximumFractionDigits: 2 }).format(percentage)}%`;
}

export function formatDateTime(lang: Lang, iso: string): string {
  return new Intl.DateTimeFormat(numberLocale(lang), { dateStyle: 'short', timeStyle: 'medium', timeZone: 'America/Sao_Paulo' }).format(new Date(iso));
}

export function formatDate(lang: Lang, ymd: string): string {
  return new Intl.DateTimeFormat(numberLocale(lang), { dateStyle: 'short', timeZone: 'UTC' }).format(new Date(`${ymd}T00:00:00Z`));
}

// Typed amount to centavos, without floats, in the language's own notation and nothing else:
// pt-BR "1.234,56" (a period only between groups of exactly three digits, a comma before at most
// two digits of cents), English "1,234.56" (the reverse). "R$" in front and spaces around are
// ignored. An amount that only makes sense in the other notation ("10.50" in pt-BR) is refused
// as ambiguous rather than read one way or the other: read as pt-BR it would be R$ 1.050,00, a
// typo that pays 100 times the share.
export type MoneyProblem = 'required' | 'invalid' | 'ambiguous' | 'decimals' | 'grouping';
export type MoneyParse = { ok: true; cents: number } | { ok: false; problem: MoneyProblem };

const NOTATION: Record<Lang, { thousands: string; decimal: string }> = {
  'pt-BR': { thousands: '.', decimal: ',' },
  en: { thousands: ',', decimal: '.' },
};

function parseIn(notation: { thousands: string; decimal: string }, s: string): MoneyParse {
  const parts = s.split(notation.decimal);
  if (parts.length > 2) return { ok: false, problem: 'invalid' };
  const [whole, cents] = parts;
  if (cents !== undefined && !/^\d{1,2}$/.test(cents)) return { ok: false, problem: /^\d{3,}$/.test(cents) ? 'decimals' : 'invalid' };
  let digits: string;
  if (/^\d+$/.test(whole)) digits = whole;
  else if (new RegExp(`^\\d{1,3}(\\${notation.thousands}\\d{3})+$`).test(whole)) digits = whole.split(notation.thousands).join('');
  else return { ok: false, problem: whole === '' ? 'invalid' : 'grouping' };
  const value = Number(digits) * 100 + (cents === undefined ? 0 : Number(cents.padEnd(2, '0')));
  return Number.isSafeInteger(value) ? { ok: true, cents: value } : { ok: false, problem: 'invalid' };
}

export function parseMoney(lang: Lang, text: string): MoneyParse {
  const s = text.trim().replace(/^R\$\s*/, '');
  if (s === '') return { ok: false, problem: 'required' };
  if (!/^[\d.,]+$/.test(s)) return { ok: false, problem: 'invalid' };
  const own = parseIn(NOTATION[lang], s);
  if (own.ok) return own;
  const other = parseIn(NOTATION[lang === 'pt-BR' ? 'en' : 'pt-BR'], s);
  return other.ok ? { ok: false, problem: 'ambiguous' } : own;
}

export const MONEY_PROBLEM_MESSAGE: Record<MoneyProblem, MessageKey> = {
  required: 'money.required',
  invalid: 'money.invalid',
  ambiguous: 'money.ambiguous',
  decimals: 'money.decimals',
  grouping: 'money.grouping',
};

// Centavos as the operator would type them back ("1234,56").
export function moneyInput(lang: Lang, cents: number): string {
  const whole = Math.trunc(cents / 100);
  const frac = String(cents % 100).padStart(2, '0');
  return `${whole}${lang === 'pt-BR' ? ',' : '.'}${frac}`;
}

// "12,5" or "12.5" → 12.5, at most two decimals, 0 < p <= 100. Either separator is fine: with at
// most three whole digits and two decimals, neither can be a thousands separator.
export function parsePercentage(text: string): number | null {
  const s = text.replace(/\s|%/g, '').replace(',', '.');
  if (!/^\d{1,3}(\.\d{1,2})?$/.test(s)) return null;
  const p = Number(s);
  return p > 0 && p <= 100 ? p : null;
}

export function percentageInput(lang: Lang, p: number): string {
  return lang === 'pt-BR' ? String(p).replace('.', ',') : String(p);
}

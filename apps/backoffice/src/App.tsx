import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { call, client, mutationHeaders, setCsrfToken, setSessionExpiredHandler } from './api/client';
import { AppContext, useApp, type AdminSession, type Permission } from './context';
import { initialLang, rememberLang, translate, type Lang, type MessageKey } from './i18n';
import { Link, match, navigate, useLocation } from './router';
import { SignIn } from './screens/SignIn';
import { Accounts } from './screens/Accounts';
import { AccountDetail } from './screens/AccountDetail';
import { Recipients } from './screens/Recipients';
import { DailyStatement } from './screens/DailyStatement';
import { SplitRules } from './screens/SplitRules';
import { SplitRuleForm } from './screens/SplitRuleForm';
import { Payments } from './screens/Payments';
import { PaymentDetail } from './screens/PaymentDetail';
import { SettlementRuns } from './screens/SettlementRuns';
import { SettlementRunDetail } from './screens/SettlementRunDetail';
import { AuditLog } from './screens/AuditLog';
import { Home } from './screens/Home';
import { SearchResults } from './screens/Search';
import { Settlements } from './screens/Settlements';
import { Disputes } from './screens/Disputes';
import { ConnectorAccountDetail, ConnectorAccountForm, ConnectorAccounts, PixReceived } from './screens/ConnectorAccounts';
import { AdyenConnectorForm } from './screens/AdyenConnectorForm';

// Screens and the permission each needs. A route the role lacks is not in the navigation and
// does not render (it reads as "not found"): the UI shows nothing a role cannot use.
interface Route {
  pattern: string;
  permission: Permission;
  render: (params: Record<string, string>) => ComponentChildren;
}

const ROUTES: Route[] = [
  { pattern: '/home', permission: 'payments:view', render: () => <Home /> },
  { pattern: '/search', permission: 'payments:view', render: () => <SearchResults /> },
  { pattern: '/settlements', permission: 'settlement_runs:view', render: () => <Settlements /> },
  { pattern: '/accounts', permission: 'accounts:view', render: () => <Accounts /> },
  { pattern: '/accounts/:id', permission: 'accounts:view', render: (p) => <AccountDetail id={p.id} /> },
  { pattern: '/accounts/:id/recipients', permission: 'recipients:view', render: (p) => <Recipients accountId={p.id} /> },
  { pattern: '/accounts/:id/statement', permission: 'settlement_runs:view', render: (p) => <DailyStatement accountId={p.id} /> },
  { pattern: '/accounts/:id/split-rules', permission: 'split_rules:view', render: (p) => <SplitRules accountId={p.id} /> },
  { pattern: '/accounts/:id/split-rules/new', permission: 'split_rules:create', render: (p) => <SplitRuleForm accountId={p.id} /> },
  { pattern: '/accounts/:id/split-rules/:ruleId/edit', permission: 'split_rules:update', render: (p) => <SplitRuleForm accountId={p.id} ruleId={p.ruleId} /> },
  { pattern: '/payments', permission: 'payments:view', render: () => <Payments /> },
  { pattern: '/payments/:id', permission: 'payments:view', render: (p) => <PaymentDetail id={p.id} /> },
  { pattern: '/disputes', permission: 'payments:view', render: () => <Disputes /> },
  { pattern: '/settlement-runs', permission: 'settlement_runs:view', render: () => <SettlementRuns /> },
  { pattern: '/settlement-runs/:id', permission: 'settlement_runs:view', render: (p) => <SettlementRunDetail id={p.id} /> },
  { pattern: '/audit-log', permission: 'audit_log:view', render: () => <AuditLog /> },
  { pattern: '/accounts/:id/connectors', permission: 'connector_accounts:view', render: (p) => <ConnectorAccounts accountId={p.id} /> },
  { pattern: '/accounts/:id/connectors/new', permission: 'connector_accounts:manage', render: (p) => <ConnectorAccountForm accountId={p.id} /> },
  { pattern: '/accounts/:id/connectors/new-adyen', permission: 'connector_accounts:manage', render: (p) => <AdyenConnectorForm accountId={p.id} /> },
  { pattern: '/connector-accounts', permission: 'connector_accounts:view', render: () => <ConnectorAccounts /> },
  { pattern: '/connector-accounts/new', permission: 'connector_accounts:manage', render: () => <ConnectorAccountForm /> },
  { pattern: '/connector-accounts/new-adyen', permission: 'connector_accounts:manage', render: () => <AdyenConnectorForm /> },
  { pattern: '/connector-accounts/:id', permission: 'connector_accounts:view', render: (p) => <ConnectorAccountDetail id={p.id} /> },
  { pattern: '/pix-received', permission: 'connector_accounts:view', render: () => <PixReceived /> },
];

const NAV: Array<{ href: string; label: MessageKey; permission: Permission }> = [
  { href: '/home', label: 'nav.home', permission: 'payments:view' },
  { href: '/accounts', label: 'nav.accounts', permission: 'accounts:view' },
  { href: '/payments', label: 'nav.payments', permission: 'payments:view' },
  { href: '/disputes', label: 'nav.disputes', permission: 'payments:view' },
  { href: '/settlement-runs', label: 'nav.settlementRuns', permission: 'settlement_runs:view' },
  { href: '/settlements', label: 'nav.settlements', permission: 'settlement_runs:view' },
  { href: '/connector-accounts', label: 'nav.connectors', permission: 'connector_accounts:view' },
  { href: '/audit-log', label: 'nav.auditLog', permission: 'audit_log:view' },
];

export function App() {
  const [lang, setLang] = useState<Lang>(initialLang);
  // undefined: asking the server whether a session exists (a reload keeps the cookie).
  const [session, setSession] = useState<AdminSession | null | undefined>(undefined);
  const [notice, setNotice] = useState<'expired' | 'signedOut' | null>(null);

  useEffect(() => {
    document.documentElement.lang = lang;
  }, [lang]);

  useEffect(() => {
    setSessionExpiredHandler(() => {
      setCsrfToken('');
      setSession(null);
      setNotice('expired');
    });
    // The status answers "not signed in" with a 200: the first load makes no failing request.
    call(client.GET('/admin/session/status'), { expireOn401: false }).then(({ session: s }) => {
      if (!s) return setSession(null);
      setCsrfToken(s.csrfToken);
      setSession(s);
    }, () => setSession(null));
  }, []);

  const toggleLang = () => {
    const next = lang === 'pt-BR' ? 'en' : 'pt-BR';
    rememberLang(next);
    setLang(next);
  };

  if (session === undefined) return <main id="main"><p role="status">{translate(lang, 'common.loading')}</p></main>;
  if (session === null) {
    return <SignIn lang={lang} notice={notice} onLang={toggleLang} onSignedIn={(s) => {
      setCsrfToken(s.csrfToken);
      setNotice(null);
      setSession(s);
    }} />;
  }
  const signOut = async () => {
    try {
      await call(client.DELETE('/admin/session', { params: { header: mutationHeaders() } }));
    } finally {
      setCsrfToken('');
      setSession(null);
      setNotice('signedOut');
    }
  };
  return (
    <AppContext.Provider value={{ session, lang }}>
      {/* void: signOut resets the session whether the server answers or not. */}
      <Shell onSignOut={() => void signOut()} onLang={toggleLang} />
    </AppContext.Provider>
  );
}

function Shell({ onSignOut, onLang }: { onSignOut: () => void; onLang: () => void }) {
  const { t, can, session, lang } = useApp();
  const location = useLocation();
  useEffect(() => {
    if (location.path === '/') navigate(can('payments:view') ? '/home' : '/accounts', { replace: true });
  }, [location.path]);
  let content: ComponentChildren = null;
  for (const route of ROUTES) {
    const params = match(route.pattern, location.path);
    if (!params) continue;
    content = can(route.permission) ? route.render(params) : null;
    break;
  }
  return (
    <>
      <a class="skip" href="#main">{t('app.skip')}</a>
      <header class="top">
        <span class="brand">{t('app.title')}</span>
        <nav aria-label={t('nav.label')}>
          <ul>
            {NAV.filter((n) => can(n.permission)).map((n) => (
              <li key={n.href}>
                <Link href={n.href} aria-current={location.path === n.href || location.path.startsWith(`${n.href}/`) ? 'page' : undefined}>{t(n.label)}</Link>
              </li>
            ))}
          </ul>
        </nav>
        {can('payments:view') ? <HeaderSearch /> : null}
        <div class="who">
          <span>{session.admin.email} <span class="muted">({t(`session.role.${session.admin.role}` as MessageKey)})</span></span>
          <button type="button" class="link" lang={lang === 'pt-BR' ? 'en' : 'pt-BR'} aria-label={t('lang.switchLabel')} onClick={onLang}>{t('lang.switch')}</button>
          <button type="button" class="secondary" onClick={onSignOut}>{t('session.signOut')}</button>
        </div>
      </header>
      <main id="main" key={location.path}>
        {content ?? <NotFound />}
      </main>
    </>
  );
}

function NotFound() {
  const { t } = useApp();
  return <><h1>{t('common.notFound')}</h1></>;
}

// One box for anything: an id, a CNPJ, an e-mail, last four digits + amount (screens/Search.tsx).
function HeaderSearch() {
  const { t } = useApp();
  const [q, setQ] = useState(() => new URLSearchParams(window.location.search).get('q') ?? '');
  return (
    <form role="search" class="header-search" aria-label={t('search.label')} onSubmit={(e) => {
      e.preventDefault();
      if (q.trim()) navigate(`/search?q=${encodeURIComponent(q.trim())}`);
    }}>
      <label for="global-search" class="sr-only">{t('search.label')}</label>
      <input id="global-search" type="search" placeholder={t('search.placeholder')} value={q} onInput={(e) => setQ((e.target as HTMLInputElement).value)} />
      <button type="submit" class="secondary">{t('search.go')}</button>
    </form>
  );
}

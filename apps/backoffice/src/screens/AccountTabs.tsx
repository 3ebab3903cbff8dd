import { call, client } from '../api/client';
import { useLoad } from '../components';
import { useApp } from '../context';
import { Link, useLocation } from '../router';

// The sections of a merchant account, as links (each is its own page and URL).
export function AccountTabs({ accountId }: { accountId: string }) {
  const { t, can } = useApp();
  const { path } = useLocation();
  const tabs = [
    { href: `/accounts/${accountId}`, label: t('account.overview'), show: can('accounts:view') },
    { href: `/accounts/${accountId}/recipients`, label: t('account.recipients'), show: can('recipients:view') },
    { href: `/accounts/${accountId}/split-rules`, label: t('account.splitRules'), show: can('split_rules:view') },
    { href: `/accounts/${accountId}/statement`, label: t('account.statement'), show: can('settlement_runs:view') },
    { href: `/accounts/${accountId}/connectors`, label: t('account.connectors'), show: can('connector_accounts:view') },
  ];
  // Whose screen this is, on every screen of the account: an operator changing payees sees the
  // merchant's name before anything else.
  const account = useLoad(() => call(client.GET('/admin/accounts/{id}', { params: { path: { id: accountId } } })), [accountId]);
  return (
    <>
    <nav class="breadcrumb" aria-label={t('breadcrumb.label')}>
      <ol>
        <li><Link href="/accounts">{t('nav.accounts')}</Link></li>
        <li><Link href={`/accounts/${accountId}`} aria-current={path === `/accounts/${accountId}` ? 'page' : undefined}><strong data-merchant-name>{account.data?.name ?? accountId}</strong></Link> <code class="small muted">{accountId}</code></li>
      </ol>
    </nav>
    <nav class="tabs" aria-label={t('account.tabs')}>
      <ul>
        {tabs.filter((x) => x.show).map((x) => (
          <li key={x.href}><Link href={x.href} aria-current={path === x.href ? 'page' : undefined}>{x.label}</Link></li>
        ))}
      </ul>
    </nav>
    </>
  );
}

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
  ];
  return (
    <nav class="tabs" aria-label={t('account.tabs')}>
      <ul>
        {tabs.filter((x) => x.show).map((x) => (
          <li key={x.href}><Link href={x.href} aria-current={path === x.href ? 'page' : undefined}>{x.label}</Link></li>
        ))}
      </ul>
    </nav>
  );
}

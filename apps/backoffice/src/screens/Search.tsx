import { useEffect } from 'preact/hooks';
import { call, client, type Schemas } from '../api/client';
import { Loaded, Page, StatusBadge, useLoad } from '../components';
import { useApp } from '../context';
import { Link, navigate, useLocation } from '../router';
import type { MessageKey } from '../i18n';

// Results of the header's search box (GET /admin/search): an id opens its screen at once; any
// other query lists what it found, each with its merchant's name.

type Result = Schemas['AdminSearchResult'];

export function hrefOf(r: Result): string | null {
  switch (r.type) {
    case 'payment': return `/payments/${r.id}`;
    case 'refund': case 'receivable': return r.parentId ? `/payments/${r.parentId}` : null;
    case 'account': return `/accounts/${r.id}`;
    case 'recipient': return r.accountId ? `/accounts/${r.accountId}/recipients` : null;
    case 'split_rule': return r.accountId ? `/accounts/${r.accountId}/split-rules` : null;
    case 'settlement': return r.parentId ? `/settlement-runs/${r.parentId}` : null;
    case 'settlement_run': return `/settlement-runs/${r.id}`;
    default: return r.accountId ? `/accounts/${r.accountId}` : null;
  }
}

export function SearchResults() {
  const { t, money, dateTime } = useApp();
  const q = useLocation().query.get('q') ?? '';
  const found = useLoad(() => (q ? call(client.GET('/admin/search', { params: { query: { q } } })) : Promise.resolve(null)), [q]);
  useEffect(() => {
    const d = found.data;
    if (d && d.interpretedAs === 'id' && d.data.length === 1) {
      const href = hrefOf(d.data[0]);
      if (href) navigate(href, { replace: true });
    }
  }, [found.data]);
  return (
    <Page title={t('search.title')}>
      <Loaded state={found}>{(d) => d === null ? <p>{t('search.help')}</p> : (
        <>
          <p role="status">{t('search.summary', { n: d.data.length, q: d.query, as: t(`search.as.${d.interpretedAs}` as MessageKey) })}</p>
          <table>
            <caption class="sr-only">{t('search.title')}</caption>
            <thead><tr><th scope="col">{t('search.type')}</th><th scope="col">{t('common.id')}</th><th scope="col">{t('search.what')}</th><th scope="col">{t('common.account')}</th><th scope="col" class="num">{t('common.amount')}</th><th scope="col">{t('common.status')}</th><th scope="col">{t('common.createdAt')}</th></tr></thead>
            <tbody>
              {d.data.length === 0 ? <tr><td colSpan={7}>{t('common.empty')}</td></tr> : d.data.map((r) => {
                const href = hrefOf(r);
                return (
                  <tr key={r.id} data-result-type={r.type}>
                    <td>{t(`search.type.${r.type}` as MessageKey)}</td>
                    <td>{href ? <Link href={href}><code>{r.id}</code></Link> : <code>{r.id}</code>}</td>
                    <td>{r.label}</td>
                    <td>{r.accountId ? <Link href={`/accounts/${r.accountId}`}>{r.accountName ?? r.accountId}</Link> : '—'}</td>
                    <td class="num">{r.amount === null ? '—' : money(r.amount)}</td>
                    <td>{r.status ? <StatusBadge status={r.status} /> : '—'}</td>
                    <td>{r.createdAt ? dateTime(r.createdAt) : '—'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </>
      )}</Loaded>
    </Page>
  );
}

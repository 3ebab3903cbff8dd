import { useState } from 'preact/hooks';
import { call, client } from '../api/client';
import { Page, Paged, useCursor, useLoad } from '../components';
import { useApp } from '../context';
import { Link, navigate, queryString, useLocation } from '../router';

export function Accounts() {
  const { t, dateTime } = useApp();
  const { query } = useLocation();
  const search = query.get('search') ?? '';
  const [text, setText] = useState(search);
  const cursor = useCursor(search);
  const accounts = useLoad(() => call(client.GET('/admin/accounts', { params: { query: { limit: 20, search: search || undefined, startingAfter: cursor.after } } })), [search, cursor.after]);
  return (
    <Page title={t('accounts.title')}>
      <form role="search" class="filters" onSubmit={(e) => {
        e.preventDefault();
        navigate(`/accounts${queryString({ search: text.trim() })}`);
      }}>
        <div class="field">
          <label for="account-search">{t('accounts.search')}</label>
          <input id="account-search" type="search" value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} />
        </div>
        <button type="submit">{t('common.search')}</button>
      </form>
      <Paged state={accounts} cursor={cursor}>{(rows) => (
        <>
          <table>
            <caption class="sr-only">{t('accounts.title')}</caption>
            <thead><tr><th scope="col">{t('accounts.name')}</th><th scope="col">{t('common.id')}</th><th scope="col">{t('accounts.email')}</th><th scope="col">{t('accounts.live')}</th><th scope="col">{t('common.createdAt')}</th></tr></thead>
            <tbody>
              {rows.length === 0 ? <tr><td colSpan={5}>{t('common.empty')}</td></tr> : rows.map((a) => (
                <tr key={a.id}>
                  <td><Link href={`/accounts/${a.id}`}>{a.name}</Link></td>
                  <td><code>{a.id}</code></td>
                  <td>{a.email ?? '—'}</td>
                  <td>{a.liveEnabled ? t('accounts.liveOn') : t('accounts.liveOff')}</td>
                  <td>{dateTime(a.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}</Paged>
    </Page>
  );
}

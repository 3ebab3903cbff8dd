import { call, client } from '../api/client';
import { Page, Paged, useCursor, useLoad } from '../components';
import { useApp } from '../context';
import { AccountTabs } from './AccountTabs';

// Read-only: recipients are registered by the merchant through the public API.
export function Recipients({ accountId }: { accountId: string }) {
  const { t, dateTime } = useApp();
  const cursor = useCursor(accountId);
  const recipients = useLoad(() => call(client.GET('/admin/accounts/{id}/recipients', { params: { path: { id: accountId }, query: { limit: 50, startingAfter: cursor.after } } })), [accountId, cursor.after]);
  return (
    <Page title={t('recipients.title')}>
      <AccountTabs accountId={accountId} />
      <p class="hint">{t('recipients.readOnly')}</p>
      <Paged state={recipients} cursor={cursor}>{(rows) => (
        <>
          <table>
            <thead><tr><th scope="col">{t('recipients.name')}</th><th scope="col">{t('common.id')}</th><th scope="col">{t('recipients.document')}</th><th scope="col">{t('recipients.bank')}</th><th scope="col">{t('common.mode')}</th><th scope="col">{t('common.createdAt')}</th></tr></thead>
            <tbody>
              {rows.length === 0 ? <tr><td colSpan={6}>{t('common.empty')}</td></tr> : rows.map((r) => (
                <tr key={r.id}>
                  <td>{r.name}</td>
                  <td><code>{r.id}</code></td>
                  <td><code>{r.document}</code></td>
                  <td>{r.bankAccount.bankCode} / {r.bankAccount.agency} / {r.bankAccount.account}</td>
                  <td>{r.livemode ? t('common.live') : t('common.sandbox')}</td>
                  <td>{dateTime(r.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}</Paged>
    </Page>
  );
}

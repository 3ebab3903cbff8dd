import { useState } from 'preact/hooks';
import { call, client } from '../api/client';
import { Loaded, Page, useLoad } from '../components';
import { useApp } from '../context';
import { Link, navigate, queryString, useLocation } from '../router';
import { AccountTabs } from './AccountTabs';

// The daily statement of one payee (issue 26): the settlements paid to the merchant itself or
// to one of its recipients on one São Paulo day, with the Pix end-to-end id the payee's bank
// shows, and the total. What GET /v1/settlements/daily-statement answers the merchant, through
// GET /admin/settlements/daily-statement. The choice lives in the URL (shareable, reloadable);
// a blank day is today in São Paulo, by the server's clock.
export function DailyStatement({ accountId }: { accountId: string }) {
  const { t, money, date, dateTime } = useApp();
  const { query } = useLocation();
  const chosen = { recipientId: query.get('recipientId') ?? '', date: query.get('date') ?? '', livemode: query.get('livemode') === 'true' };
  const [form, setForm] = useState({ recipientId: chosen.recipientId, date: chosen.date, mode: chosen.livemode ? 'live' : 'test' });
  const recipients = useLoad(() => call(client.GET('/admin/accounts/{id}/recipients', { params: { path: { id: accountId }, query: { limit: 100 } } })), [accountId]);
  const statement = useLoad(() => call(client.GET('/admin/settlements/daily-statement', {
    params: { query: { accountId, recipientId: chosen.recipientId || undefined, date: chosen.date || undefined, livemode: chosen.livemode } },
  })), [accountId, chosen.recipientId, chosen.date, chosen.livemode]);
  const live = form.mode === 'live';
  const payees = (recipients.data?.data ?? []).filter((r) => r.livemode === live);
  const nameOf = (id: string) => recipients.data?.data.find((r) => r.id === id)?.name ?? id;
  return (
    <Page title={t('statement.title')}>
      <AccountTabs accountId={accountId} />
      <p class="hint" id="statement-help">{t('statement.help')}</p>
      <form class="filters" aria-describedby="statement-help" noValidate onSubmit={(e) => {
        e.preventDefault();
        const recipientId = payees.some((r) => r.id === form.recipientId) ? form.recipientId : '';
        navigate(`/accounts/${accountId}/statement${queryString({ recipientId, date: form.date, livemode: live ? 'true' : undefined })}`);
      }}>
        <div class="field">
          <label for="st-mode">{t('common.mode')}</label>
          <select id="st-mode" value={form.mode} onChange={(e) => setForm({ ...form, mode: (e.target as HTMLSelectElement).value, recipientId: '' })}>
            <option value="test">{t('common.sandbox')}</option>
            <option value="live">{t('common.live')}</option>
          </select>
        </div>
        <div class="field">
          <label for="st-payee">{t('statement.payee')}</label>
          <select id="st-payee" value={form.recipientId} onChange={(e) => setForm({ ...form, recipientId: (e.target as HTMLSelectElement).value })}>
            <option value="">{t('statement.merchantItself')}</option>
            {payees.map((r) => <option key={r.id} value={r.id}>{r.name} ({r.id})</option>)}
          </select>
        </div>
        <div class="field">
          <label for="st-date">{t('statement.date')}</label>
          <input id="st-date" type="date" value={form.date} aria-describedby="st-date-help" onInput={(e) => setForm({ ...form, date: (e.target as HTMLInputElement).value })} />
          <p id="st-date-help" class="hint">{t('statement.dateHelp')}</p>
        </div>
        <button type="submit">{t('statement.show')}</button>
      </form>
      <Loaded state={statement}>{(s) => (
        <section aria-labelledby="statement-title" data-statement-date={s.date}>
          <h2 id="statement-title">
            {t('statement.of', { date: date(s.date) })}: {s.payee.type === 'merchant' ? t('statement.merchantItself') : `${t('payee.recipient')} ${nameOf(s.payee.id)}`}
            {s.livemode ? ` · ${t('common.live')}` : ` · ${t('common.sandbox')}`}
          </h2>
          <table>
            <caption class="sr-only">{t('statement.of', { date: date(s.date) })}</caption>
            <thead><tr><th scope="col">{t('common.id')}</th><th scope="col" class="num">{t('common.amount')}</th><th scope="col">{t('statement.endToEndId')}</th><th scope="col">{t('statement.paidAt')}</th></tr></thead>
            <tbody>
              {s.data.length === 0 ? <tr><td colSpan={4}>{t('statement.none')}</td></tr> : s.data.map((i) => (
                <tr key={i.settlementId} data-settlement={i.settlementId}>
                  <td><Link href={`/search?q=${i.settlementId}`}><code>{i.settlementId}</code></Link></td>
                  <td class="num">{money(i.amount)}</td>
                  <td data-e2e>{i.endToEndId ? <code>{i.endToEndId}</code> : '—'}</td>
                  <td>{dateTime(i.paidAt)}</td>
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr><th scope="row">{t('statement.total', { count: s.count })}</th><td class="num" data-total={s.total}><strong>{money(s.total)}</strong></td><td colSpan={2} /></tr>
            </tfoot>
          </table>
        </section>
      )}</Loaded>
    </Page>
  );
}

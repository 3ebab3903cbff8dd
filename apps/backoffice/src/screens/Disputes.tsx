import { useState } from 'preact/hooks';
import { call, client } from '../api/client';
import { Page, Paged, StatusBadge, useCursor, useLoad } from '../components';
import { useApp } from '../context';
import { Link, navigate, queryString, useLocation } from '../router';

const STATUSES = ['needs_response', 'under_review', 'won', 'lost'] as const;
const KINDS = ['card_chargeback', 'pix_med'] as const;

// Disputes of every account (issue 27): card chargebacks and Pix MED returns, newest first, each
// with its deadline (respond by) and a link to its payment. Read-only: the acquirer's
// notifications move them, and evidence is submitted at the acquirer.
export function Disputes() {
  const { t, money, dateTime } = useApp();
  const { query } = useLocation();
  const filters = { accountId: query.get('accountId') ?? '', status: query.get('status') ?? '', kind: query.get('kind') ?? '' };
  const [form, setForm] = useState(filters);
  const cursor = useCursor(JSON.stringify(filters));
  const params = {
    accountId: filters.accountId || undefined,
    status: (filters.status || undefined) as (typeof STATUSES)[number] | undefined,
    kind: (filters.kind || undefined) as (typeof KINDS)[number] | undefined,
  };
  const list = useLoad(() => call(client.GET('/admin/disputes', { params: { query: { limit: 20, ...params, startingAfter: cursor.after } } })), [JSON.stringify(filters), cursor.after]);
  const set = (name: keyof typeof form) => (e: Event) => setForm({ ...form, [name]: (e.target as HTMLInputElement).value });
  return (
    <Page title={t('disputes.title')}>
      <p class="muted">{t('disputes.help')}</p>
      <form role="search" class="filters" noValidate onSubmit={(e) => {
        e.preventDefault();
        navigate(`/disputes${queryString({ accountId: form.accountId.trim(), status: form.status, kind: form.kind })}`);
      }}>
        <div class="field"><label for="d-account">{t('payments.accountId')}</label><input id="d-account" value={form.accountId} onInput={set('accountId')} /></div>
        <div class="field">
          <label for="d-status">{t('common.status')}</label>
          <select id="d-status" value={form.status} onChange={set('status')}>
            <option value="">{t('common.any')}</option>
            {STATUSES.map((s) => <option key={s} value={s}>{t(`status.${s}`)}</option>)}
          </select>
        </div>
        <div class="field">
          <label for="d-kind">{t('disputes.kind')}</label>
          <select id="d-kind" value={form.kind} onChange={set('kind')}>
            <option value="">{t('common.any')}</option>
            {KINDS.map((k) => <option key={k} value={k}>{t(`disputes.kind.${k}`)}</option>)}
          </select>
        </div>
        <button type="submit">{t('common.search')}</button>
      </form>
      <Paged state={list} cursor={cursor}>{(rows) => (
        <table>
          <caption class="sr-only">{t('disputes.title')}</caption>
          <thead><tr>
            <th scope="col">{t('common.id')}</th><th scope="col">{t('disputes.payment')}</th><th scope="col">{t('common.account')}</th><th scope="col">{t('disputes.kind')}</th>
            <th scope="col" class="num">{t('common.amount')}</th><th scope="col">{t('common.status')}</th><th scope="col">{t('disputes.respondBy')}</th><th scope="col">{t('disputes.reason')}</th>
          </tr></thead>
          <tbody>
            {rows.length === 0 ? <tr><td colSpan={8}>{t('common.empty')}</td></tr> : rows.map((d) => (
              <tr key={d.id} data-dispute={d.id}>
                <td><code>{d.id}</code></td>
                <td><Link href={`/payments/${d.paymentId}`} data-payment-link><code>{d.paymentId}</code></Link></td>
                <td><Link href={`/accounts/${d.accountId}`} data-merchant-name>{d.accountName}</Link></td>
                <td>{t(`disputes.kind.${d.kind}`)}</td>
                <td class="num">{money(d.amount)}{d.amountDebited > 0 ? <><br /><span class="small muted">{t('disputes.debited')}: {money(d.amountDebited)}</span></> : null}</td>
                <td><StatusBadge status={d.status} /></td>
                <td data-respond-by>{d.respondBy ? dateTime(d.respondBy) : <span class="muted">{t('disputes.noDeadline')}</span>}</td>
                <td>{d.reason ?? ''}{d.reasonCode ? <span class="small muted"> ({d.reasonCode})</span> : null}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}</Paged>
    </Page>
  );
}

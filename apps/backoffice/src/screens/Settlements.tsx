import { useState } from 'preact/hooks';
import { call, client } from '../api/client';
import { Page, Paged, StatusBadge, useCursor, useLoad } from '../components';
import { useApp } from '../context';
import { Link, navigate, queryString, useLocation } from '../router';
import { AmountRange, amountRangeErrors, focusFirstInvalid, moneyInput } from './filters';

const STATUSES = ['held', 'pending', 'processing', 'paid', 'failed'] as const;

// Every settlement of every run, filtered, with a CSV export of what the filters match.
export function Settlements() {
  const { t, money, date, lang } = useApp();
  const { query } = useLocation();
  const filters = { accountId: query.get('accountId') ?? '', status: query.get('status') ?? '', dateGte: query.get('dateGte') ?? '', dateLte: query.get('dateLte') ?? '', amountGte: query.get('amountGte') ?? '', amountLte: query.get('amountLte') ?? '' };
  const [form, setForm] = useState({ ...filters, min: filters.amountGte ? moneyInput(lang, Number(filters.amountGte)) : '', max: filters.amountLte ? moneyInput(lang, Number(filters.amountLte)) : '' });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const cursor = useCursor(JSON.stringify(filters));
  const params = {
    accountId: filters.accountId || undefined, status: (filters.status || undefined) as (typeof STATUSES)[number] | undefined,
    dateGte: filters.dateGte || undefined, dateLte: filters.dateLte || undefined,
    amountGte: filters.amountGte ? Number(filters.amountGte) : undefined, amountLte: filters.amountLte ? Number(filters.amountLte) : undefined,
  };
  const list = useLoad(() => call(client.GET('/admin/settlements', { params: { query: { limit: 20, ...params, startingAfter: cursor.after } } })), [JSON.stringify(filters), cursor.after]);
  const set = (name: keyof typeof form) => (e: Event) => setForm({ ...form, [name]: (e.target as HTMLInputElement).value });
  return (
    <Page title={t('settlements.title')}>
      <form role="search" class="filters" noValidate onSubmit={(e) => {
        e.preventDefault();
        const { errors: errs, min, max } = amountRangeErrors(lang, form.min, form.max);
        setErrors(errs);
        if (focusFirstInvalid(errs, ['s-min', 's-max'])) return;
        navigate(`/settlements${queryString({ accountId: form.accountId.trim(), status: form.status, dateGte: form.dateGte, dateLte: form.dateLte, amountGte: min, amountLte: max })}`);
      }}>
        <div class="field"><label for="s-account">{t('payments.accountId')}</label><input id="s-account" value={form.accountId} onInput={set('accountId')} /></div>
        <div class="field">
          <label for="s-status">{t('common.status')}</label>
          <select id="s-status" value={form.status} onChange={set('status')}>
            <option value="">{t('common.any')}</option>
            {STATUSES.map((s) => <option key={s} value={s}>{t(`status.${s}`)}</option>)}
          </select>
        </div>
        <div class="field"><label for="s-from">{t('settlements.dateFrom')}</label><input id="s-from" type="date" value={form.dateGte} onInput={set('dateGte')} /></div>
        <div class="field"><label for="s-to">{t('settlements.dateTo')}</label><input id="s-to" type="date" value={form.dateLte} onInput={set('dateLte')} /></div>
        <AmountRange prefix="s" min={form.min} max={form.max} errors={errors} onMin={set('min')} onMax={set('max')} />
        <button type="submit">{t('common.search')}</button>
      </form>
      <p><a href={`/admin/settlements.csv${queryString(params)}`} download>{t('export.csv')}</a> <span class="muted small">{t('export.help')}</span></p>
      <Paged state={list} cursor={cursor}>{(rows) => (
        <table>
          <caption class="sr-only">{t('settlements.title')}</caption>
          <thead><tr><th scope="col">{t('common.id')}</th><th scope="col">{t('runs.runDate')}</th><th scope="col">{t('preview.payee')}</th><th scope="col">{t('common.account')}</th><th scope="col" class="num">{t('common.amount')}</th><th scope="col">{t('common.status')}</th></tr></thead>
          <tbody>
            {rows.length === 0 ? <tr><td colSpan={6}>{t('common.empty')}</td></tr> : rows.map((s) => (
              <tr key={s.id}>
                <td><Link href={`/search?q=${s.id}`}><code>{s.id}</code></Link></td>
                <td>{date(s.settlementDate)}</td>
                <td>{s.payee.type === 'merchant' ? <>{t('payee.merchant')}: {s.accountName}</> : <>{t('payee.recipient')}: <code>{s.payee.id}</code></>}</td>
                <td><Link href={`/accounts/${s.accountId}`} data-merchant-name>{s.accountName}</Link><br /><code class="small muted">{s.accountId}</code></td>
                <td class="num">{money(s.amount)}</td>
                <td><StatusBadge status={s.status} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}</Paged>
    </Page>
  );
}

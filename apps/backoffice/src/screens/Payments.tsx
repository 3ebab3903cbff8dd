import { useState } from 'preact/hooks';
import { call, client, type Schemas } from '../api/client';
import { Page, Paged, StatusBadge, useCursor, useLoad } from '../components';
import { useApp } from '../context';
import { Link, navigate, queryString, useLocation } from '../router';
import { AmountRange, amountRangeErrors, focusFirstInvalid, moneyInput } from './filters';

const STATUSES = ['pending', 'approved', 'declined', 'failed', 'canceled', 'expired', 'partially_refunded', 'refunded'] as const;
type Status = (typeof STATUSES)[number];

// A São Paulo calendar day to the instant it starts (UTC-3 all year since 2019).
const dayStart = (ymd: string) => new Date(`${ymd}T00:00:00-03:00`).toISOString();
const dayEnd = (ymd: string) => new Date(`${ymd}T23:59:59.999-03:00`).toISOString();

export function Payments() {
  const { t, money, dateTime, lang } = useApp();
  const { query } = useLocation();
  const filters = { id: query.get('id') ?? '', accountId: query.get('accountId') ?? '', status: query.get('status') ?? '', method: query.get('method') ?? '', from: query.get('from') ?? '', to: query.get('to') ?? '', amountGte: query.get('amountGte') ?? '', amountLte: query.get('amountLte') ?? '' };
  const [form, setForm] = useState({ ...filters, min: filters.amountGte ? moneyInput(lang, Number(filters.amountGte)) : '', max: filters.amountLte ? moneyInput(lang, Number(filters.amountLte)) : '' });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const cursor = useCursor(JSON.stringify(filters));
  const params = {
    id: filters.id || undefined,
    accountId: filters.accountId || undefined,
    status: (filters.status || undefined) as Status | undefined,
    method: (filters.method || undefined) as 'pix' | 'credit_card' | undefined,
    amountGte: filters.amountGte ? Number(filters.amountGte) : undefined,
    amountLte: filters.amountLte ? Number(filters.amountLte) : undefined,
    createdGte: filters.from ? dayStart(filters.from) : undefined,
    createdLte: filters.to ? dayEnd(filters.to) : undefined,
  };
  const payments = useLoad(() => call(client.GET('/admin/payments', { params: { query: { limit: 20, ...params, startingAfter: cursor.after } } })), [JSON.stringify(filters), cursor.after]);
  const set = (name: keyof typeof form) => (e: Event) => setForm({ ...form, [name]: (e.target as HTMLInputElement).value });
  return (
    <Page title={t('payments.title')}>
      <form role="search" class="filters" noValidate onSubmit={(e) => {
        e.preventDefault();
        const { errors: errs, min, max } = amountRangeErrors(lang, form.min, form.max);
        setErrors(errs);
        if (focusFirstInvalid(errs, ['p-min', 'p-max'])) return;
        navigate(`/payments${queryString({ id: form.id.trim(), accountId: form.accountId.trim(), status: form.status, method: form.method, from: form.from, to: form.to, amountGte: min, amountLte: max })}`);
      }}>
        <div class="field"><label for="f-id">{t('payments.id')}</label><input id="f-id" value={form.id} onInput={set('id')} /></div>
        <div class="field"><label for="f-account">{t('payments.accountId')}</label><input id="f-account" value={form.accountId} onInput={set('accountId')} /></div>
        <div class="field">
          <label for="f-status">{t('common.status')}</label>
          <select id="f-status" value={form.status} onChange={set('status')}>
            <option value="">{t('common.any')}</option>
            {STATUSES.map((s) => <option key={s} value={s}>{t(`status.${s}`)}</option>)}
          </select>
        </div>
        <div class="field">
          <label for="f-method">{t('common.method')}</label>
          <select id="f-method" value={form.method} onChange={set('method')}>
            <option value="">{t('common.any')}</option>
            <option value="credit_card">{t('method.credit_card')}</option>
            <option value="pix">{t('method.pix')}</option>
          </select>
        </div>
        <div class="field"><label for="f-from">{t('payments.from')}</label><input id="f-from" type="date" value={form.from} onInput={set('from')} /></div>
        <div class="field"><label for="f-to">{t('payments.to')}</label><input id="f-to" type="date" value={form.to} onInput={set('to')} /></div>
        <AmountRange prefix="p" min={form.min} max={form.max} errors={errors} onMin={set('min')} onMax={set('max')} />
        <button type="submit">{t('common.search')}</button>
      </form>
      <p><a href={`/admin/payments.csv${queryString(params)}`} download>{t('export.csv')}</a> <span class="muted small">{t('export.help')}</span></p>
      <Paged state={payments} cursor={cursor}>{(rows) => (
        <>
          <PaymentTable rows={rows} money={money} dateTime={dateTime} />
        </>
      )}</Paged>
    </Page>
  );
}

function PaymentTable({ rows, money, dateTime }: { rows: Schemas['AdminPaymentSummary'][]; money: (c: number) => string; dateTime: (iso: string) => string }) {
  const { t } = useApp();
  return (
    <table>
      <caption class="sr-only">{t('payments.title')}</caption>
      <thead><tr><th scope="col">{t('common.id')}</th><th scope="col">{t('common.account')}</th><th scope="col">{t('common.amount')}</th><th scope="col">{t('payments.refunded')}</th><th scope="col">{t('common.method')}</th><th scope="col">{t('common.status')}</th><th scope="col">{t('common.mode')}</th><th scope="col">{t('common.createdAt')}</th></tr></thead>
      <tbody>
        {rows.length === 0 ? <tr><td colSpan={8}>{t('common.empty')}</td></tr> : rows.map((p) => (
          <tr key={p.id}>
            <td><Link href={`/payments/${p.id}`}><code>{p.id}</code></Link></td>
            <td><Link href={`/accounts/${p.accountId}`} data-merchant-name>{p.accountName}</Link><br /><code class="small muted">{p.accountId}</code></td>
            <td class="num">{money(p.amount)}</td>
            <td class="num">{money(p.amountRefunded)}</td>
            <td>{t(`method.${p.method}`)}</td>
            <td><StatusBadge status={p.status} /></td>
            <td>{p.livemode ? t('common.live') : t('common.sandbox')}</td>
            <td>{dateTime(p.createdAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

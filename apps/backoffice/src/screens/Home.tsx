import { useState } from 'preact/hooks';
import { call, client, type Schemas } from '../api/client';
import { Loaded, Page, useLoad } from '../components';
import { useApp } from '../context';
import { Link, navigate, queryString, useLocation } from '../router';

// The home: what the business did over a period, from GET /admin/stats (daily aggregates, cheap
// at any number of payments). Charts are inline SVG drawn here (no CDN, no chart library); each
// has a text title and, next to it, the same figures as a table for keyboard and screen-reader
// users.

type Stats = Schemas['AdminStats'];
const METHODS = ['credit_card', 'pix'] as const;

// Every day of the period, so a chart shows the days without payments too.
function daysOf(from: string, to: string): string[] {
  const days: string[] = [];
  for (let d = new Date(`${from}T00:00:00Z`); d.toISOString().slice(0, 10) <= to; d.setUTCDate(d.getUTCDate() + 1)) days.push(d.toISOString().slice(0, 10));
  return days;
}

export function Home() {
  const { t } = useApp();
  const { query } = useLocation();
  const filters = { from: query.get('from') ?? '', to: query.get('to') ?? '', accountId: query.get('accountId') ?? '', mode: query.get('mode') ?? '' };
  const [form, setForm] = useState(filters);
  const accounts = useLoad(() => call(client.GET('/admin/accounts', { params: { query: { limit: 100 } } })), []);
  const stats = useLoad(() => call(client.GET('/admin/stats', {
    params: { query: { from: filters.from || undefined, to: filters.to || undefined, accountId: filters.accountId || undefined, livemode: filters.mode === '' ? undefined : filters.mode === 'live' } },
  })), [JSON.stringify(filters)]);
  const set = (name: keyof typeof form) => (e: Event) => setForm({ ...form, [name]: (e.target as HTMLInputElement).value });
  const names = new Map((accounts.data?.data ?? []).map((a) => [a.id, a.name]));
  return (
    <Page title={t('home.title')}>
      <form class="filters" aria-label={t('home.filters')} onSubmit={(e) => {
        e.preventDefault();
        navigate(`/home${queryString(form)}`);
      }}>
        <div class="field"><label for="h-from">{t('home.from')}</label><input id="h-from" type="date" value={form.from} onInput={set('from')} /></div>
        <div class="field"><label for="h-to">{t('home.to')}</label><input id="h-to" type="date" value={form.to} onInput={set('to')} /></div>
        <div class="field">
          <label for="h-account">{t('home.merchant')}</label>
          <select id="h-account" value={form.accountId} onChange={set('accountId')}>
            <option value="">{t('home.allMerchants')}</option>
            {(accounts.data?.data ?? []).map((a) => <option key={a.id} value={a.id}>{a.name} ({a.id})</option>)}
          </select>
        </div>
        <div class="field">
          <label for="h-mode">{t('common.mode')}</label>
          <select id="h-mode" value={form.mode} onChange={set('mode')}>
            <option value="">{t('home.bothModes')}</option>
            <option value="live">{t('common.live')}</option>
            <option value="test">{t('common.sandbox')}</option>
          </select>
        </div>
        <button type="submit">{t('home.apply')}</button>
      </form>
      <Loaded state={stats}>{(s) => <Dashboard s={s} names={names} />}</Loaded>
    </Page>
  );
}

function Dashboard({ s, names }: { s: Stats; names: Map<string, string> }) {
  const { t, money, date, lang } = useApp();
  const pct = (x: number | null) => (x === null ? '—' : new Intl.NumberFormat(lang, { style: 'percent', maximumFractionDigits: 1 }).format(x));
  const days = daysOf(s.from, s.to);
  const byDay = new Map(s.payments.days.map((d) => [`${d.date}|${d.method}`, d]));
  const series = (pick: (d: Stats['payments']['days'][number]) => number) => METHODS.map((m) => ({ method: m, values: days.map((d) => { const x = byDay.get(`${d}|${m}`); return x ? pick(x) : 0; }) }));
  const merchant = s.accountId ? (names.get(s.accountId) ?? s.accountId) : t('home.allMerchants');
  return (
    <>
      <p class="muted">{t('home.period', { from: date(s.from), to: date(s.to), merchant, tz: 'America/Sao_Paulo (UTC−03:00)' })}</p>
      <dl class="kpis">
        <div><dt>{t('home.volume')}</dt><dd>{money(s.payments.volume)}</dd></div>
        <div><dt>{t('home.payments')}</dt><dd>{s.payments.count.toLocaleString(lang)}</dd></div>
        <div><dt>{t('home.approvalRate')}</dt><dd>{pct(s.payments.approvalRate)}</dd></div>
        <div><dt>{t('home.refunded')}</dt><dd>{money(s.refunds.succeeded.amount)} <span class="small muted">({s.refunds.succeeded.count})</span></dd></div>
        <div><dt>{t('home.disputes')}</dt><dd>{s.disputes.count} <span class="small muted">{s.disputes.tracked ? '' : t('home.disputesUntracked')}</span></dd></div>
        <div><dt>{t('home.webhookRate')}</dt><dd>{pct(s.webhooks.successRate)}</dd></div>
      </dl>

      <h2 id="chart-volume">{t('home.volumeByDay')}</h2>
      <BarChart labelledBy="chart-volume" days={days} series={series((d) => d.volume)} format={money} />
      <h2 id="chart-count">{t('home.countByDay')}</h2>
      <BarChart labelledBy="chart-count" days={days} series={series((d) => d.count)} format={(n) => n.toLocaleString(lang)} />

      <div class="grid2">
        <section aria-labelledby="h-declines">
          <h2 id="h-declines">{t('home.declines')}</h2>
          <table>
            <caption class="sr-only">{t('home.declines')}</caption>
            <thead><tr><th scope="col">{t('home.reason')}</th><th scope="col">{t('common.status')}</th><th scope="col" class="num">{t('home.count')}</th><th scope="col" class="num">{t('common.amount')}</th></tr></thead>
            <tbody>
              {s.payments.declines.length === 0 ? <tr><td colSpan={4}>{t('home.noDeclines')}</td></tr> : s.payments.declines.map((d) => (
                <tr key={`${d.status}-${d.reason}`}><td><code>{d.reason}</code></td><td>{t(`status.${d.status}`)}</td><td class="num">{d.count}</td><td class="num">{money(d.amount)}</td></tr>
              ))}
            </tbody>
          </table>
        </section>
        <section aria-labelledby="h-settlements">
          <h2 id="h-settlements">{t('home.settlements')}</h2>
          <table>
            <caption class="sr-only">{t('home.settlements')}</caption>
            <thead><tr><th scope="col">{t('common.status')}</th><th scope="col" class="num">{t('home.count')}</th><th scope="col" class="num">{t('common.amount')}</th></tr></thead>
            <tbody>
              {(['paid', 'held', 'failed', 'pending'] as const).map((k) => (
                <tr key={k}><th scope="row">{t(`status.${k}`)}</th><td class="num">{s.settlements[k].count}</td><td class="num">{money(s.settlements[k].amount)}</td></tr>
              ))}
            </tbody>
          </table>
        </section>
        <section aria-labelledby="h-refunds">
          <h2 id="h-refunds">{t('home.refundsDisputes')}</h2>
          <table>
            <caption class="sr-only">{t('home.refundsDisputes')}</caption>
            <thead><tr><th scope="col">{t('common.status')}</th><th scope="col" class="num">{t('home.count')}</th><th scope="col" class="num">{t('common.amount')}</th></tr></thead>
            <tbody>
              {(['succeeded', 'pending', 'failed'] as const).map((k) => (
                <tr key={k}><th scope="row">{t('home.refund')} · {t(`status.${k}`)}</th><td class="num">{s.refunds[k].count}</td><td class="num">{money(s.refunds[k].amount)}</td></tr>
              ))}
              <tr><th scope="row">{t('home.disputes')}</th><td class="num">{s.disputes.count}</td><td class="num">{money(s.disputes.amount)}</td></tr>
            </tbody>
          </table>
        </section>
        <section aria-labelledby="h-webhooks">
          <h2 id="h-webhooks">{t('home.webhooks')}</h2>
          <p>{t('home.webhookSummary', { succeeded: s.webhooks.succeeded, failed: s.webhooks.failed, pending: s.webhooks.pending, rate: pct(s.webhooks.successRate) })}</p>
          {s.webhooks.failingEndpointCount === 0 ? <p>{t('home.noFailingEndpoints')}</p> : (
            <>
              <p role="status">{t('home.failingEndpoints', { n: s.webhooks.failingEndpointCount })}</p>
              <ul>
                {s.webhooks.failingEndpoints.map((e) => (
                  <li key={e.id}><code>{e.url}</code> — <Link href={`/accounts/${e.accountId}`}>{e.accountName}</Link> {e.enabled ? '' : <span class="badge badge-failed">{t('home.disabled')}</span>}</li>
                ))}
              </ul>
            </>
          )}
        </section>
      </div>
    </>
  );
}

// A stacked bar per day (one colour per method, patterns told apart by the legend and the table).
// role="img" with a title: the figures themselves are in the table under it.
function BarChart({ labelledBy, days, series, format }: { labelledBy: string; days: string[]; series: Array<{ method: (typeof METHODS)[number]; values: number[] }>; format: (n: number) => string }) {
  const { t, date } = useApp();
  const totals = days.map((_, i) => series.reduce((a, s) => a + s.values[i], 0));
  const max = Math.max(1, ...totals);
  const W = 720, H = 180, pad = 24;
  const bw = (W - pad) / days.length;
  const peak = totals.indexOf(Math.max(...totals));
  const summary = t('home.chartSummary', { total: format(totals.reduce((a, b) => a + b, 0)), peak: totals[peak] > 0 ? `${date(days[peak])} (${format(totals[peak])})` : '—' });
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H + 20}`} role="img" aria-labelledby={labelledBy} aria-describedby={`${labelledBy}-desc`} focusable="false">
        <desc id={`${labelledBy}-desc`}>{summary}</desc>
        <line x1={pad} y1={H} x2={W} y2={H} class="axis" />
        {days.map((d, i) => {
          let y = H;
          return (
            <g key={d}>
              {series.map((s) => {
                const h = (s.values[i] / max) * (H - 10);
                y -= h;
                return h > 0 ? <rect key={s.method} x={pad + i * bw + 1} y={y} width={Math.max(1, bw - 2)} height={h} class={`bar-${s.method}`}><title>{`${date(d)} · ${t(`method.${s.method}`)}: ${format(s.values[i])}`}</title></rect> : null;
              })}
            </g>
          );
        })}
        <text x={pad} y={H + 16} class="tick">{date(days[0])}</text>
        <text x={W} y={H + 16} class="tick" text-anchor="end">{date(days[days.length - 1])}</text>
        <text x={0} y={12} class="tick">{format(max)}</text>
      </svg>
      <figcaption>
        <ul class="legend">{series.map((s) => <li key={s.method}><span class={`swatch bar-${s.method}`} aria-hidden="true" />{t(`method.${s.method}`)}</li>)}</ul>
        <p class="small muted">{summary}</p>
        <details>
          <summary>{t('home.asTable')}</summary>
          <div class="table-scroll">
            <table>
              <caption class="sr-only">{t('home.asTable')}</caption>
              <thead><tr><th scope="col">{t('home.day')}</th>{series.map((s) => <th key={s.method} scope="col" class="num">{t(`method.${s.method}`)}</th>)}<th scope="col" class="num">{t('runs.total')}</th></tr></thead>
              <tbody>
                {days.map((d, i) => totals[i] === 0 ? null : (
                  <tr key={d}><th scope="row">{date(d)}</th>{series.map((s) => <td key={s.method} class="num">{format(s.values[i])}</td>)}<td class="num">{format(totals[i])}</td></tr>
                ))}
              </tbody>
            </table>
          </div>
        </details>
      </figcaption>
    </figure>
  );
}

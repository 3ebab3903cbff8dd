import { useState } from 'preact/hooks';
import { call, client, mutationHeaders } from '../api/client';
import { ConfirmDialog, Page, Paged, StatusBadge, useCursor, useLoad } from '../components';
import { useApp } from '../context';
import { Link, navigate } from '../router';

export function SettlementRuns() {
  const { t, can, money, date, dateTime } = useApp();
  const cursor = useCursor('runs');
  // Who started each run and why: the audit entries of the runs on this page (a scheduled run
  // has none: the schedule started it).
  const runs = useLoad(async () => {
    const page = await call(client.GET('/admin/settlement-runs', { params: { query: { limit: 20, startingAfter: cursor.after } } }));
    const started = await Promise.all(page.data.filter((r) => r.trigger === 'admin').map((r) => call(client.GET('/admin/audit-log', { params: { query: { objectType: 'settlement_run', objectId: r.id, action: 'settlement_run.create', limit: 1 } } })).then((a) => [r.id, a.data[0]] as const)));
    const who = new Map(started);
    return { ...page, data: page.data.map((r) => ({ ...r, startedBy: who.get(r.id)?.actor.email ?? null, why: who.get(r.id)?.reason ?? null })) };
  }, [cursor.after]);
  const [starting, setStarting] = useState(false);
  const [runDate, setRunDate] = useState('');
  return (
    <Page title={t('runs.title')} actions={can('settlement_runs:create') ? <button type="button" class="danger" onClick={() => setStarting(true)}>{t('runs.start')}</button> : null}>
      {starting ? (
        <ConfirmDialog
          title={t('runs.startTitle')}
          message={t('runs.startConfirm')}
          confirmLabel={t('runs.start')}
          reason="required"
          onClose={() => setStarting(false)}
          onConfirm={async (reason, key) => {
            const run = await call(client.POST('/admin/settlement-runs', { params: { header: mutationHeaders(key) }, body: { reason: reason ?? '', ...(runDate ? { date: runDate } : {}) } }));
            navigate(`/settlement-runs/${run.id}`);
          }}
        >
          <div class="field">
            <label for="run-date">{t('runs.date')}</label>
            <input id="run-date" type="date" value={runDate} onInput={(e) => setRunDate((e.target as HTMLInputElement).value)} />
          </div>
        </ConfirmDialog>
      ) : null}
      <Paged state={runs} cursor={cursor}>{(rows) => (
        <>
          <table>
            <caption class="sr-only">{t('runs.title')}</caption>
            <thead><tr><th scope="col">{t('common.id')}</th><th scope="col">{t('runs.runDate')}</th><th scope="col">{t('runs.trigger')}</th><th scope="col">{t('runs.startedBy')}</th><th scope="col">{t('common.status')}</th><th scope="col">{t('runs.settlements')}</th><th scope="col">{t('runs.receivables')}</th><th scope="col">{t('runs.total')}</th><th scope="col">{t('common.createdAt')}</th></tr></thead>
            <tbody>
              {rows.length === 0 ? <tr><td colSpan={9}>{t('common.empty')}</td></tr> : rows.map((r) => (
                <tr key={r.id}>
                  <td><Link href={`/settlement-runs/${r.id}`}><code>{r.id}</code></Link></td>
                  <td>{date(r.runDate)}</td>
                  <td>{t(r.trigger === 'admin' ? 'runs.trigger.admin' : 'runs.trigger.schedule')}</td>
                  <td data-started-by>{r.trigger === 'admin' ? <>{r.startedBy ?? '—'}{r.why ? <><br /><span class="small muted">{t('runs.why')}: {r.why}</span></> : null}</> : t('runs.bySchedule')}</td>
                  <td><StatusBadge status={r.status} /></td>
                  <td class="num">{r.settlementCount}</td>
                  <td class="num">{r.receivableCount}</td>
                  <td class="num">{money(r.totalAmount)}</td>
                  <td>{dateTime(r.startedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}</Paged>
    </Page>
  );
}

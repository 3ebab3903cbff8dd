import { useEffect } from 'preact/hooks';
import { allPages, call, client, type Schemas } from '../api/client';
import { Loaded, Page, StatusBadge, useLoad } from '../components';
import { useApp } from '../context';
import { Link } from '../router';

function allSettlements(id: string): Promise<Schemas['AdminSettlement'][]> {
  return allPages((startingAfter) => call(client.GET('/admin/settlement-runs/{id}/settlements', { params: { path: { id }, query: { limit: 100, startingAfter } } })));
}

export function SettlementRunDetail({ id }: { id: string }) {
  const { t, money, date } = useApp();
  const data = useLoad(async () => {
    const [run, settlements] = await Promise.all([call(client.GET('/admin/settlement-runs/{id}', { params: { path: { id } } })), allSettlements(id)]);
    return { run, settlements };
  }, [id]);
  // A run started from here is carried out by a worker: until it is completed, look again
  // every second.
  const running = data.data !== undefined && data.data.run.status !== 'completed';
  useEffect(() => {
    if (!running) return;
    const timer = setTimeout(data.reload, 1000);
    return () => clearTimeout(timer);
  }, [data.data]);
  return (
    <Page title={t('run.title', { id })}>
      <Loaded state={data}>{({ run, settlements }) => {
        const failed = settlements.filter((s) => s.status === 'failed');
        return (
          <>
            {run.status !== 'completed' && <p class="muted" aria-live="polite">{t('run.inProgress')}</p>}
            {run.status === 'completed' && settlements.some((s) => s.status === 'held') ? (
              <p role="status" class="notice warn" data-held>{t('run.held', { n: settlements.filter((s) => s.status === 'held').length, amount: money(settlements.filter((s) => s.status === 'held').reduce((a, s) => a + s.amount, 0)) })}</p>
            ) : null}
            <dl class="summary">
              <div><dt>{t('runs.runDate')}</dt><dd>{date(run.runDate)}</dd></div>
              <div><dt>{t('runs.trigger')}</dt><dd>{t(run.trigger === 'admin' ? 'runs.trigger.admin' : 'runs.trigger.schedule')}</dd></div>
              <div><dt>{t('common.status')}</dt><dd><StatusBadge status={run.status} />{run.status === 'completed' && settlements.some((s) => s.status === 'held') ? <> <span class="badge badge-held">{t('run.withHeld')}</span></> : null}</dd></div>
              <div><dt>{t('runs.settlements')}</dt><dd>{run.settlementCount}</dd></div>
              <div><dt>{t('runs.receivables')}</dt><dd>{run.receivableCount}</dd></div>
              <div><dt>{t('runs.total')}</dt><dd>{money(run.totalAmount)}</dd></div>
            </dl>
            <section aria-labelledby="per-payee">
              <h2 id="per-payee">{t('run.perPayee')}</h2>
              <SettlementTable rows={settlements} />
            </section>
            <section aria-labelledby="failed">
              <h2 id="failed">{t('run.failed')}</h2>
              {failed.length === 0 ? <p>{t('run.noFailed')}</p> : <SettlementTable rows={failed} />}
            </section>
          </>
        );
      }}</Loaded>
    </Page>
  );
}

function SettlementTable({ rows }: { rows: Schemas['AdminSettlement'][] }) {
  const { t, money } = useApp();
  return (
    <table>
      <thead><tr><th scope="col">{t('preview.payee')}</th><th scope="col">{t('common.account')}</th><th scope="col">{t('common.amount')}</th><th scope="col">{t('runs.receivables')}</th><th scope="col">{t('common.status')}</th><th scope="col">{t('run.bank')}</th><th scope="col">{t('run.failure')}</th></tr></thead>
      <tbody>
        {rows.length === 0 ? <tr><td colSpan={7}>{t('common.empty')}</td></tr> : rows.map((s) => (
          <tr key={s.id} data-payee={`${s.payee.type}:${s.payee.id}`}>
            <td>{s.payee.type === 'merchant' ? <>{t('payee.merchant')}: {s.accountName}</> : <>{t('payee.recipient')}: <code>{s.payee.id}</code></>}</td>
            <td><Link href={`/accounts/${s.accountId}`} data-merchant-name>{s.accountName}</Link><br /><code class="small muted">{s.accountId}</code></td>
            <td class="num">{money(s.amount)}</td>
            <td class="num">{s.receivableCount}</td>
            <td><StatusBadge status={s.status} /></td>
            <td>{s.bankAccount ? `${s.bankAccount.bankCode} / ${s.bankAccount.agency} / ${s.bankAccount.account}` : '—'}</td>
            <td>{s.failureReason ?? (s.holdReason ? t(`hold.${s.holdReason}`) : '—')}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

import { useEffect, useState } from 'preact/hooks';
import { allPages, call, client, mutationHeaders, type Schemas } from '../api/client';
import { ConfirmDialog, Loaded, Page, StatusBadge, useLoad } from '../components';
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
  // The settlement a retry made (or released), said once the table is drawn again.
  const [retried, setRetried] = useState<string | null>(null);
  const onRetried = (id: string) => {
    setRetried(id);
    data.reload();
  };
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
            {retried ? <p role="status" class="notice" data-retried={retried}>{t('run.retried', { id: retried })}</p> : null}
            <section aria-labelledby="per-payee">
              <h2 id="per-payee">{t('run.perPayee')}</h2>
              <SettlementTable rows={settlements} label={t('run.perPayee')} onRetried={onRetried} />
            </section>
            <section aria-labelledby="failed">
              <h2 id="failed">{t('run.failed')}</h2>
              {failed.length === 0 ? <p>{t('run.noFailed')}</p> : <SettlementTable rows={failed} label={t('run.failed')} onRetried={onRetried} />}
            </section>
          </>
        );
      }}</Loaded>
    </Page>
  );
}

// Where a payout goes, never in full: the payout's own masked destination once sent, else the
// masked Pix key, else the bank account with only its last digits.
function destination(s: Schemas['AdminSettlement']): string {
  if (s.payout) return s.payout.destination;
  if (s.pixKey) return `Pix ${s.pixKey.type} ${s.pixKey.key}`;
  if (s.bankAccount) return `${s.bankAccount.bankCode} ag. ${s.bankAccount.agency} c/c ***${s.bankAccount.account.slice(-4)}`;
  return '—';
}

const RETRYABLE_HOLDS = ['insufficient_psp_balance', 'psp_balance_unavailable'];

function SettlementTable({ rows, label, onRetried }: { rows: Schemas['AdminSettlement'][]; label: string; onRetried: (id: string) => void }) {
  const { t, can, money } = useApp();
  const [retrying, setRetrying] = useState<Schemas['AdminSettlement'] | null>(null);
  const mayRetry = can('settlements:retry');
  const retryable = (s: Schemas['AdminSettlement']) => s.status === 'failed' || (s.status === 'held' && s.holdReason !== null && RETRYABLE_HOLDS.includes(s.holdReason));
  return (
    <>
      {retrying ? (
        <ConfirmDialog
          title={t('run.retryTitle', { id: retrying.id })}
          message={t(retrying.status === 'failed' ? 'run.retryFailed' : 'run.retryHeld')}
          confirmLabel={t('run.retry')}
          reason="required"
          onClose={() => setRetrying(null)}
          onConfirm={async (reason, key) => {
            const made = await call(client.POST('/admin/settlements/{id}/retry', { params: { path: { id: retrying.id }, header: mutationHeaders(key) }, body: { reason: reason ?? '' } }));
            onRetried(made.id);
          }}
        />
      ) : null}
      <div class="table-scroll" tabIndex={0} role="region" aria-label={label}>
        <table>
          <thead><tr><th scope="col">{t('preview.payee')}</th><th scope="col">{t('common.account')}</th><th scope="col">{t('common.amount')}</th><th scope="col">{t('runs.receivables')}</th><th scope="col">{t('common.status')}</th><th scope="col">{t('run.destination')}</th><th scope="col">{t('run.reference')}</th><th scope="col">{t('run.failure')}</th>{mayRetry ? <th scope="col">{t('run.actions')}</th> : null}</tr></thead>
          <tbody>
            {rows.length === 0 ? <tr><td colSpan={mayRetry ? 9 : 8}>{t('common.empty')}</td></tr> : rows.map((s) => (
              <tr key={s.id} data-payee={`${s.payee.type}:${s.payee.id}`} data-settlement={s.id}>
                <td>{s.payee.type === 'merchant' ? <>{t('payee.merchant')}: {s.accountName}</> : <>{t('payee.recipient')}: <code>{s.payee.id}</code></>}</td>
                <td><Link href={`/accounts/${s.accountId}`} data-merchant-name>{s.accountName}</Link><br /><code class="small muted">{s.accountId}</code></td>
                <td class="num">{money(s.amount)}</td>
                <td class="num">{s.receivableCount}</td>
                <td><StatusBadge status={s.status} /></td>
                <td data-destination>{destination(s)}</td>
                <td data-reference>{s.payout ? <><span class="small muted">{t('run.idEnvio')}</span> <code>{s.payout.reference}</code>{s.payout.endToEndId ? <><br /><span class="small muted">{t('run.e2e')}</span> <code>{s.payout.endToEndId}</code></> : null}</> : '—'}</td>
                <td data-reason>{s.failureReason ? <>{s.failureCode ? <><code>{s.failureCode}</code>: </> : null}{s.failureReason}</> : (s.holdReason ? t(`hold.${s.holdReason}`) : '—')}</td>
                {mayRetry ? (
                  <td>{retryable(s) ? <button type="button" aria-label={t('run.retryLabel', { id: s.id })} onClick={() => setRetrying(s)}>{t('run.retry')}</button> : null}</td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

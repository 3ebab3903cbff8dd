import { call, client } from '../api/client';
import { Loaded, Page, StatusBadge, useLoad } from '../components';
import { useApp } from '../context';
import { Link } from '../router';

export function PaymentDetail({ id }: { id: string }) {
  const { t, money, dateTime, date } = useApp();
  const payment = useLoad(() => call(client.GET('/admin/payments/{id}', { params: { path: { id } } })), [id]);
  return (
    <Page title={t('payment.title', { id })}>
      <Loaded state={payment}>{(p) => (
        <>
          <dl class="summary">
            <div><dt>{t('common.status')}</dt><dd><StatusBadge status={p.status} /></dd></div>
            <div><dt>{t('common.amount')}</dt><dd>{money(p.amount)}</dd></div>
            <div><dt>{t('payment.fee')}</dt><dd>{p.feeAmount === null ? '—' : money(p.feeAmount)}</dd></div>
            <div><dt>{t('payment.net')}</dt><dd>{p.netAmount === null ? '—' : money(p.netAmount)}</dd></div>
            <div><dt>{t('payments.refunded')}</dt><dd>{money(p.amountRefunded)}</dd></div>
            <div><dt>{t('common.method')}</dt><dd>{t(`method.${p.method}`)}{p.card ? ` · ${p.card.brand} •••• ${p.card.last4}` : ''}</dd></div>
            <div><dt>{t('common.account')}</dt><dd><Link href={`/accounts/${p.accountId}`} data-merchant-name>{p.accountName}</Link> <code class="small muted">{p.accountId}</code></dd></div>
            <div><dt>{t('common.mode')}</dt><dd>{p.livemode ? t('common.live') : t('common.sandbox')}</dd></div>
            <div><dt>{t('common.createdAt')}</dt><dd>{dateTime(p.createdAt)}</dd></div>
          </dl>

          {p.failure ? (
            // Why the payment was declined or failed, as the provider answered (a code and words, never card data).
            <section aria-labelledby="failure-title" class="failure" data-failure-code={p.failure.code}>
              <h2 id="failure-title">{t('payment.failure')}</h2>
              <p><code>{p.failure.code}</code>: {p.failure.message}</p>
            </section>
          ) : null}

          <section aria-labelledby="rcv-title">
            <h2 id="rcv-title">{t('payment.receivables')}</h2>
            <table>
              <thead><tr><th scope="col">{t('preview.payee')}</th><th scope="col">{t('common.amount')}</th><th scope="col">{t('common.status')}</th><th scope="col">{t('payment.availableOn')}</th><th scope="col">{t('payment.settlement')}</th></tr></thead>
              <tbody>
                {p.receivables.length === 0 ? <tr><td colSpan={5}>{t('common.empty')}</td></tr> : p.receivables.map((r) => (
                  <tr key={r.id} data-payee={`${r.payee.type}:${r.payee.id}`} data-amount={r.amount}>
                    <td>{r.payee.type === 'merchant' ? <>{t('payee.merchant')}: {p.accountName}</> : <>{t('payee.recipient')}: <code>{r.payee.id}</code></>}</td>
                    <td class="num">{money(r.amount)}</td>
                    <td><StatusBadge status={r.status} /></td>
                    <td>{date(r.availableOn)}</td>
                    <td>{r.settlementId ? <code>{r.settlementId}</code> : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>

          <section aria-labelledby="ref-title">
            <h2 id="ref-title">{t('payment.refunds')}</h2>
            <table>
              <thead><tr><th scope="col">{t('common.id')}</th><th scope="col">{t('common.amount')}</th><th scope="col">{t('common.status')}</th><th scope="col">{t('common.createdAt')}</th></tr></thead>
              <tbody>
                {p.refunds.length === 0 ? <tr><td colSpan={4}>{t('common.empty')}</td></tr> : p.refunds.map((r) => (
                  <tr key={r.id}><td><code>{r.id}</code></td><td class="num">{money(r.amount)}</td><td><StatusBadge status={r.status} /></td><td>{dateTime(r.createdAt)}</td></tr>
                ))}
              </tbody>
            </table>
          </section>

          {p.disputes.length > 0 ? (
            <section aria-labelledby="dsp-title">
              <h2 id="dsp-title">{t('nav.disputes')}</h2>
              <table>
                <thead><tr><th scope="col">{t('common.id')}</th><th scope="col">{t('disputes.kind')}</th><th scope="col" class="num">{t('common.amount')}</th><th scope="col">{t('common.status')}</th><th scope="col">{t('disputes.respondBy')}</th></tr></thead>
                <tbody>
                  {p.disputes.map((d) => (
                    <tr key={d.id} data-dispute={d.id}><td><code>{d.id}</code></td><td>{t(`disputes.kind.${d.kind}`)}</td><td class="num">{money(d.amount)}</td><td><StatusBadge status={d.status} /></td><td>{d.respondBy ? dateTime(d.respondBy) : t('disputes.noDeadline')}</td></tr>
                  ))}
                </tbody>
              </table>
            </section>
          ) : null}

          <section aria-labelledby="evt-title">
            <h2 id="evt-title">{t('payment.events')}</h2>
            <table>
              <thead><tr><th scope="col">{t('payment.eventType')}</th><th scope="col">{t('common.id')}</th><th scope="col">{t('common.createdAt')}</th></tr></thead>
              <tbody>
                {p.events.length === 0 ? <tr><td colSpan={3}>{t('common.empty')}</td></tr> : p.events.map((e) => (
                  <tr key={e.id}><td><code>{e.type}</code></td><td><code>{e.id}</code></td><td>{dateTime(e.createdAt)}</td></tr>
                ))}
              </tbody>
            </table>
          </section>
        </>
      )}</Loaded>
    </Page>
  );
}

import { useEffect, useRef, useState } from 'preact/hooks';
import { call, client, mutationHeaders } from '../api/client';
import { ConfirmDialog, Loaded, Page, useLoad } from '../components';
import { useApp } from '../context';
import { AccountTabs } from './AccountTabs';
import { PayoutBankAccount } from './PayoutBankAccount';
import { CheckoutBranding } from './CheckoutBranding';

export function AccountDetail({ id }: { id: string }) {
  const { t, can, money, percent, dateTime } = useApp();
  const account = useLoad(() => call(client.GET('/admin/accounts/{id}', { params: { path: { id } } })), [id]);
  const keys = useLoad(() => call(client.GET('/admin/accounts/{id}/api-keys', { params: { path: { id }, query: { limit: 100 } } })), [id]);
  const [confirming, setConfirming] = useState(false);
  const [done, setDone] = useState(false);
  // The button that opened the activation is gone once live mode is on: the focus goes to the
  // notice that says it worked, not to the page's <body>.
  const doneNotice = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (done) doneNotice.current?.focus();
  }, [done]);
  return (
    <Loaded state={account}>{(a) => (
      <Page title={a.name}>
        <AccountTabs accountId={id} />
        <dl class="summary">
          <div><dt>{t('common.id')}</dt><dd><code>{a.id}</code></dd></div>
          <div><dt>{t('accounts.email')}</dt><dd>{a.email ?? '—'}</dd></div>
          <div><dt>{t('common.createdAt')}</dt><dd>{dateTime(a.createdAt)}</dd></div>
        </dl>

        <section aria-labelledby="live-title">
          <h2 id="live-title">{t('account.liveMode')}</h2>
          <p>{a.liveEnabled ? t('account.liveEnabled') : t('account.liveDisabled')}</p>
          {done ? <p role="status" class="notice" tabIndex={-1} ref={doneNotice}>{t('account.activateLive.done')}</p> : null}
          {!a.liveEnabled && can('accounts:activate_live') ? (
            <button type="button" class="danger" onClick={() => setConfirming(true)}>{t('account.activateLive')}</button>
          ) : null}
          {confirming ? (
            <ConfirmDialog
              title={`${t('account.activateLive')}: ${a.name}`}
              message={t('account.activateLive.confirm')}
              confirmLabel={t('account.activateLive')}
              reason="required"
              onClose={() => setConfirming(false)}
              onConfirm={async (reason, key) => {
                await call(client.POST('/admin/accounts/{id}/activate-live', { params: { path: { id }, header: mutationHeaders(key) }, body: { reason: reason ?? '' } }));
                setDone(true);
                account.reload();
              }}
            />
          ) : null}
        </section>

        <PayoutBankAccount account={a} onChanged={account.reload} />

        <CheckoutBranding accountId={a.id} />

        <section aria-labelledby="embed-title">
          <h2 id="embed-title">{t('account.embedOrigins')}</h2>
          <p class="hint">{t('account.embedOriginsHelp')}</p>
          {a.embedOrigins.length === 0 ? <p>{t('common.none')}</p> : (
            <ul>{a.embedOrigins.map((o) => <li key={o}><code>{o}</code></li>)}</ul>
          )}
        </section>

        <section aria-labelledby="fees-title">
          <h2 id="fees-title">{t('account.fees')}</h2>
          <table>
            <thead><tr><th scope="col">{t('common.method')}</th><th scope="col">{t('account.fee.percent')}</th><th scope="col">{t('account.fee.fixed')}</th><th scope="col">{t('account.fee.delay')}</th></tr></thead>
            <tbody>
              {(['pix', 'credit_card'] as const).map((m) => (
                <tr key={m}>
                  <th scope="row">{t(`method.${m}`)}</th>
                  <td>{percent(a.settings.fees[m].percentBps / 100)}</td>
                  <td>{money(a.settings.fees[m].fixedCents)}</td>
                  <td>{a.settings.settlementDelayDays[m]}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>

        <section aria-labelledby="keys-title">
          <h2 id="keys-title">{t('account.keys')}</h2>
          <p class="hint">{t('account.keysHelp')}</p>
          <Loaded state={keys}>{(page) => (
            <table>
              <thead><tr><th scope="col">{t('account.key.display')}</th><th scope="col">{t('account.key.kind')}</th><th scope="col">{t('common.mode')}</th><th scope="col">{t('common.createdAt')}</th><th scope="col">{t('account.key.revokedAt')}</th></tr></thead>
              <tbody>
                {page.data.map((k) => (
                  <tr key={k.id}>
                    <td><code>{k.display}</code></td>
                    <td>{k.kind === 'secret' ? t('account.key.secret') : t('account.key.publishable')}</td>
                    <td>{k.livemode ? t('common.live') : t('common.sandbox')}</td>
                    <td>{dateTime(k.createdAt)}</td>
                    <td>{k.revokedAt ? dateTime(k.revokedAt) : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}</Loaded>
        </section>
      </Page>
    )}</Loaded>
  );
}

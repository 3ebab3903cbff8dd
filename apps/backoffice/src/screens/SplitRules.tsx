import { useEffect, useState } from 'preact/hooks';
import { call, client, mutationHeaders, type Schemas } from '../api/client';
import { ConfirmDialog, ErrorMessage, Loaded, Page, StatusBadge, useLoad } from '../components';
import { useApp } from '../context';
import { MONEY_PROBLEM_MESSAGE, parseMoney, type MessageKey } from '../i18n';
import { Link, navigate, queryString, useLocation } from '../router';
import { loadRecipients, loadRules, type Recipient, type SplitRule } from '../rules';
import { AccountTabs } from './AccountTabs';

// An account's split rules in the order they apply, with reordering and activation (each with a
// reason: both change who gets paid), deactivation and a server-side preview of a sale.

type Dialog =
  | { kind: 'activate' | 'deactivate'; rule: SplitRule; position: number }
  | { kind: 'move'; rule: SplitRule; position: number; by: -1 | 1; order: string[] };

export function SplitRules({ accountId }: { accountId: string }) {
  const { t, can } = useApp();
  const { query } = useLocation();
  const livemode = query.get('livemode') === 'true';
  const rules = useLoad(() => loadRules(accountId, livemode), [accountId, livemode]);
  const recipients = useLoad(() => loadRecipients(accountId, livemode), [accountId, livemode]);
  const account = useLoad(() => call(client.GET('/admin/accounts/{id}', { params: { path: { id: accountId } } })), [accountId]);
  const [dialog, setDialog] = useState<Dialog | null>(null);
  // After a reorder, the moved rule's same button gets the focus back once the new order is
  // drawn: the dialog gives it back to that button first, but where the browser has no
  // Element.moveBefore (Firefox, Safari) Preact moves the row with insertBefore, which drops the
  // focus. `stale` is the list the new order replaces.
  const [refocus, setRefocus] = useState<{ ruleId: string; button: 'up' | 'down'; stale: SplitRule[] | undefined } | null>(null);
  useEffect(() => {
    if (!refocus || rules.loading || rules.data === refocus.stale) return;
    document.querySelector<HTMLElement>(`tr[data-rule-id="${refocus.ruleId}"] [data-move="${refocus.button}"]`)?.focus();
    setRefocus(null);
  }, [refocus, rules.data, rules.loading]);

  // Moving asks for a reason first (a dialog): the order decides who gets paid.
  const move = (list: SplitRule[], index: number, by: -1 | 1) => {
    if (index + by < 0 || index + by >= list.length) return; // the button is aria-disabled here
    const order = list.map((r) => r.id);
    [order[index], order[index + by]] = [order[index + by], order[index]];
    setDialog({ kind: 'move', rule: list[index], position: index + 1, by, order });
  };

  const names = new Map<string, string>((recipients.data ?? []).map((r) => [r.id, r.name]));
  return (
    <Page title={t('rules.title')} actions={can('split_rules:create') ? <Link class="button" href={`/accounts/${accountId}/split-rules/new${queryString({ livemode: livemode || undefined })}`}>{t('rules.new')}</Link> : null}>
      <AccountTabs accountId={accountId} />
      <fieldset class="inline">
        <legend>{t('rules.modeLabel')}</legend>
        {[false, true].map((mode) => (
          <label key={String(mode)}>
            <input type="radio" name="mode" checked={livemode === mode} onChange={() => navigate(`/accounts/${accountId}/split-rules${queryString({ livemode: mode || undefined })}`)} />
            {mode ? t('common.live') : t('common.sandbox')}
          </label>
        ))}
      </fieldset>
      <p class="hint">{t('rules.help')}</p>
      <Loaded state={rules}>{(list) => list.length === 0 ? <p>{t('rules.empty')}</p> : (
        // Scrolls sideways inside its box on a narrow window instead of running off the page;
        // focusable, so the keyboard can scroll it too.
        <div class="table-scroll" role="region" aria-labelledby="rules-caption" tabIndex={0}>
        <table class="rules">
          <caption id="rules-caption" class="sr-only">{t('rules.title')}</caption>
          <thead><tr>
            <th scope="col">{t('rules.order')}</th><th scope="col">{t('rules.priority')}</th><th scope="col">{t('rules.shares')}</th>
            <th scope="col">{t('rules.conditions')}</th><th scope="col">{t('rules.description')}</th><th scope="col">{t('common.status')}</th>
            {can('split_rules:update') || can('split_rules:activate') || can('split_rules:deactivate') ? <th scope="col"><span class="sr-only">{t('common.details')}</span></th> : null}
          </tr></thead>
          <tbody>
            {list.map((rule, i) => (
              <tr key={rule.id} data-rule-id={rule.id}>
                <td>{i + 1}</td>
                <td>{rule.priority}</td>
                <td><Shares rule={rule} names={names} /></td>
                <td><Conditions rule={rule} /></td>
                <td>{rule.description ?? '—'}<br /><code class="muted">{rule.id}</code></td>
                <td><StatusBadge status={rule.active ? 'active' : 'inactive'} /></td>
                {can('split_rules:update') || can('split_rules:activate') || can('split_rules:deactivate') ? (
                  <td><div class="row-actions">
                    {can('split_rules:update') ? (
                      <>
                        {/* aria-disabled, not disabled, at the ends: a moved rule keeps the focus on
                            its button even when the move takes it to the top or the bottom. */}
                        <button type="button" class="secondary" data-move="up" aria-disabled={i === 0 ? 'true' : undefined} aria-label={t('rules.moveUpLabel', { n: i + 1 })} onClick={() => move(list, i, -1)}>{t('rules.moveUp')}</button>
                        <button type="button" class="secondary" data-move="down" aria-disabled={i === list.length - 1 ? 'true' : undefined} aria-label={t('rules.moveDownLabel', { n: i + 1 })} onClick={() => move(list, i, 1)}>{t('rules.moveDown')}</button>
                        <Link class="button secondary" href={`/accounts/${accountId}/split-rules/${rule.id}/edit`}>{t('rules.edit')}</Link>
                      </>
                    ) : null}
                    {/* One button that turns from Activate into Deactivate (the same element), so
                        the focus stays on it after the change. */}
                    {(rule.active ? can('split_rules:deactivate') : can('split_rules:activate')) ? (
                      <button type="button" class={rule.active ? 'secondary' : undefined} data-toggle-active onClick={() => setDialog({ kind: rule.active ? 'deactivate' : 'activate', rule, position: i + 1 })}>
                        {rule.active ? t('rules.deactivate') : t('rules.activate')}
                      </button>
                    ) : null}
                  </div></td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
        </div>
      )}</Loaded>
      {dialog?.kind === 'move' ? (
        <ConfirmDialog
          title={t('rules.moveTitle', { n: dialog.position, m: dialog.position + dialog.by })}
          message={t('rules.moveConfirm')}
          confirmLabel={t(dialog.by < 0 ? 'rules.moveUp' : 'rules.moveDown')}
          reason="required"
          onClose={() => setDialog(null)}
          onConfirm={async (reason, key) => {
            await call(client.POST('/admin/split-rules/reorder', { params: { header: mutationHeaders(key) }, body: { accountId, livemode, ruleIds: dialog.order, reason: reason ?? '' } }));
            setRefocus({ ruleId: dialog.rule.id, button: dialog.by < 0 ? 'up' : 'down', stale: rules.data });
            rules.reload();
          }}
        />
      ) : dialog ? (
        <ConfirmDialog
          title={t(dialog.kind === 'activate' ? 'rules.activateTitle' : 'rules.deactivateTitle', { n: dialog.position })}
          message={t(dialog.kind === 'activate' ? 'rules.activateConfirm' : 'rules.deactivateConfirm')}
          confirmLabel={t(dialog.kind === 'activate' ? 'rules.activate' : 'rules.deactivate')}
          reason={dialog.kind === 'activate' ? 'required' : 'optional'}
          onClose={() => setDialog(null)}
          onConfirm={async (reason, key) => {
            const params = { path: { id: dialog.rule.id }, header: mutationHeaders(key) };
            if (dialog.kind === 'activate') await call(client.POST('/admin/split-rules/{id}/activate', { params, body: { reason: reason ?? '' } }));
            else await call(client.POST('/admin/split-rules/{id}/deactivate', { params, body: reason ? { reason } : {} }));
            rules.reload();
          }}
        />
      ) : null}
      {can('split_rules:preview') ? <Preview accountId={accountId} livemode={livemode} names={names} accountName={account.data?.name ?? accountId} rules={rules.data ?? []} /> : null}
    </Page>
  );
}

export function Shares({ rule, names }: { rule: Pick<SplitRule, 'splits'>; names: Map<string, string> }) {
  const { t, money, percent } = useApp();
  return (
    <ul class="plain">
      {rule.splits.map((s) => (
        <li key={s.recipientId}>
          {names.get(s.recipientId) ?? s.recipientId}: {'percentage' in s ? t('rules.share.percentage', { v: percent(s.percentage) }) : t('rules.share.amount', { v: money(s.amount) })}
        </li>
      ))}
    </ul>
  );
}

export function Conditions({ rule }: { rule: Pick<SplitRule, 'conditions'> }) {
  const { t, money } = useApp();
  const c = rule.conditions;
  const parts: string[] = [];
  if (c.method) parts.push(t('rules.cond.method', { v: t(`method.${c.method}`) }));
  if (c.minAmount !== undefined) parts.push(t('rules.cond.min', { v: money(c.minAmount) }));
  if (c.maxAmount !== undefined) parts.push(t('rules.cond.max', { v: money(c.maxAmount) }));
  return <>{parts.length > 0 ? parts.join(', ') : t('rules.cond.all')}</>;
}

function Preview({ accountId, livemode, names, accountName, rules }: { accountId: string; livemode: boolean; names: Map<string, string>; accountName: string; rules: SplitRule[] }) {
  const { t, lang, money } = useApp();
  const [amount, setAmount] = useState('');
  const [method, setMethod] = useState<'pix' | 'credit_card'>('credit_card');
  const [invalid, setInvalid] = useState<MessageKey | null>(null);
  const [result, setResult] = useState<Schemas['SplitPreview'] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    const parsed = parseMoney(lang, amount);
    const problem = !parsed.ok ? MONEY_PROBLEM_MESSAGE[parsed.problem] : parsed.cents <= 0 ? 'money.positive' : null;
    setInvalid(problem);
    // A refused amount also clears the last answer: it was for another amount.
    if (!parsed.ok || problem) {
      setResult(null);
      return;
    }
    setError(null);
    try {
      setResult(await call(client.POST('/admin/split-rules/preview', { params: { header: mutationHeaders() }, body: { accountId, livemode, amount: parsed.cents, method } })));
    } catch (err) {
      setResult(null);
      setError(err);
    }
  };
  const position = result?.rule ? rules.findIndex((r) => r.id === result.rule?.id) + 1 : 0;
  return (
    <section aria-labelledby="preview-title" class="card">
      <h2 id="preview-title">{t('preview.title')}</h2>
      <p class="hint">{t('preview.help')}</p>
      {/* void: Preact drops a handler's promise; submit shows its own failure. */}
      <form class="filters" onSubmit={(e) => void submit(e)} noValidate>
        <div class="field">
          <label for="preview-amount">{t('preview.amount')}</label>
          <input id="preview-amount" inputMode="decimal" value={amount} aria-invalid={invalid !== null} aria-describedby={invalid ? 'preview-amount-error' : undefined} onInput={(e) => setAmount((e.target as HTMLInputElement).value)} />
          {invalid ? <p id="preview-amount-error" class="field-error">{t(invalid)}</p> : null}
        </div>
        <div class="field">
          <label for="preview-method">{t('common.method')}</label>
          <select id="preview-method" value={method} onChange={(e) => setMethod((e.target as HTMLSelectElement).value as 'pix' | 'credit_card')}>
            <option value="credit_card">{t('method.credit_card')}</option>
            <option value="pix">{t('method.pix')}</option>
          </select>
        </div>
        <button type="submit">{t('preview.submit')}</button>
      </form>
      <ErrorMessage error={error} />
      {result ? (
        <div aria-live="polite" class="preview-result">
          <p>
            <strong>{t('preview.rule')}:</strong>{' '}
            {result.rule ? <span data-preview-rule={result.rule.id}>{position > 0 ? `#${position} · ` : ''}{result.rule.description ?? result.rule.id}</span> : <span data-preview-rule="">{t('preview.noRule')}</span>}
          </p>
          <p>{t('common.amount')}: {money(result.amount)} · {t('preview.fee')}: {money(result.fee)} · {t('preview.net')}: {money(result.net)}</p>
          <table class="preview">
            <caption>{t('preview.receivables')}</caption>
            <thead><tr><th scope="col">{t('preview.payee')}</th><th scope="col" class="num">{t('common.amount')}</th></tr></thead>
            <tbody>
              {result.receivables.map((r) => (
                <tr key={`${r.payee.type}:${r.payee.id}`} data-payee={`${r.payee.type}:${r.payee.id}`} data-amount={r.amount}>
                  <td>{r.payee.type === 'merchant' ? `${t('payee.merchant')}: ${accountName}` : `${t('payee.recipient')}: ${names.get(r.payee.id) ?? r.payee.id}`}</td>
                  <td class="num">{money(r.amount)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

export type { Recipient };

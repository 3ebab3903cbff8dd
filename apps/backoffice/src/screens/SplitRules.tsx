import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, call, client, mutationHeaders, type Schemas } from '../api/client';
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
  // The inactive rule the preview shows "after" for ('' for none).
  const [previewed, setPreviewed] = useState('');
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
                    {/* An inactive rule can be previewed before it is activated: the preview
                        below compares now with after, and the focus goes to its amount. */}
                    {!rule.active && can('split_rules:preview') ? (
                      <button type="button" class="secondary" data-preview-rule-button aria-label={t('rules.previewLabel', { n: i + 1 })} onClick={() => {
                        setPreviewed(rule.id);
                        document.getElementById('preview-amount')?.focus();
                      }}>{t('rules.preview')}</button>
                    ) : null}
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
      {can('split_rules:preview') ? (
        <Preview accountId={accountId} livemode={livemode} names={names} accountName={account.data?.name ?? accountId} rules={rules.data ?? []}
          inactive={(rules.data ?? []).filter((r) => !r.active)} chosen={previewed} onChoose={setPreviewed} />
      ) : null}
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

// The rule body the editor would save (what POST and PATCH take, less the reason).
export interface RuleBody { priority: number; description: string | null; conditions: Schemas['SplitRuleConditions']; splits: Schemas['SplitShareRequest'][] }

type PreviewResult = Schemas['SplitPreview'];
type Outcome = Schemas['SplitPreviewOutcome'];

// A sale previewed by the server: what the active rules do now and, when a change is previewed
// (an inactive rule chosen here, or the rule editor's draft before saving), what they would do
// after it, side by side. The same component on the rules list and in the editor.
export function Preview({ accountId, livemode, names, accountName, rules, inactive, chosen, onChoose, change, onFieldError }: {
  accountId: string; livemode: boolean; names: Map<string, string>; accountName: string; rules: SplitRule[];
  // The rules list: inactive rules to preview as if active, and the one chosen ('' for none).
  inactive?: SplitRule[]; chosen?: string; onChoose?: (ruleId: string) => void;
  // The editor: the rule being edited (if saved) and its body, or null when a field is wrong.
  change?: { ruleId?: string; build: () => RuleBody | null };
  // A server refusal of a field of the previewed rule (`splits[0].recipientId`...).
  onFieldError?: (param: string, message: string) => void;
}) {
  const { t, lang, money } = useApp();
  const [amount, setAmount] = useState('');
  const [method, setMethod] = useState<'pix' | 'credit_card'>('credit_card');
  const [invalid, setInvalid] = useState<MessageKey | null>(null);
  const [result, setResult] = useState<PreviewResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    const parsed = parseMoney(lang, amount);
    const problem = !parsed.ok ? MONEY_PROBLEM_MESSAGE[parsed.problem] : parsed.cents <= 0 ? 'money.positive' : null;
    setInvalid(problem);
    // The editor's fields are checked as a save checks them (the focus goes to the first wrong one).
    const rule = change ? change.build() : null;
    // A refused amount or rule also clears the last answer: it was for another sale.
    if (!parsed.ok || problem || (change && !rule)) {
      setResult(null);
      return;
    }
    setError(null);
    const ruleId = change ? change.ruleId : chosen || undefined;
    try {
      setResult(await call(client.POST('/admin/split-rules/preview', {
        params: { header: mutationHeaders() },
        body: { accountId, livemode, amount: parsed.cents, method, ...(ruleId ? { ruleId } : {}), ...(rule ? { rule } : {}) },
      })));
    } catch (err) {
      setResult(null);
      if (err instanceof ApiFailure && err.body.param?.startsWith('rule.') && onFieldError) onFieldError(err.body.param.slice('rule.'.length), err.body.message);
      setError(err);
    }
  };
  const ruleLabel = (outcome: Outcome) => {
    if (outcome.rule === null) return outcome.previewedRuleApplies ? t('preview.draftRule') : t('preview.noRule');
    const position = rules.findIndex((r) => r.id === outcome.rule?.id) + 1;
    const label = `${position > 0 ? `#${position} · ` : ''}${outcome.rule.description ?? outcome.rule.id}`;
    return outcome.previewedRuleApplies && change ? `${label} · ${t('preview.editedRule')}` : outcome.previewedRuleApplies ? `${label} · ${t('preview.previewedRule')}` : label;
  };
  const receivables = (outcome: Outcome, caption: string) => (
    <table class="preview">
      <caption>{caption}</caption>
      <thead><tr><th scope="col">{t('preview.payee')}</th><th scope="col" class="num">{t('common.amount')}</th></tr></thead>
      <tbody>
        {outcome.receivables.map((r) => (
          <tr key={`${r.payee.type}:${r.payee.id}`} data-payee={`${r.payee.type}:${r.payee.id}`} data-amount={r.amount}>
            <td>{r.payee.type === 'merchant' ? `${t('payee.merchant')}: ${accountName}` : `${t('payee.recipient')}: ${names.get(r.payee.id) ?? r.payee.id}`}</td>
            <td class="num">{money(r.amount)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
  const ruleId = (outcome: Outcome) => outcome.rule?.id ?? (outcome.previewedRuleApplies ? 'draft' : '');
  return (
    <section aria-labelledby="preview-title" class="card">
      <h2 id="preview-title">{t(change ? 'preview.changeTitle' : 'preview.title')}</h2>
      <p class="hint">{t(change ? 'preview.changeHelp' : 'preview.help')}</p>
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
        {inactive && inactive.length > 0 && onChoose ? (
          <div class="field">
            <label for="preview-with">{t('preview.with')}</label>
            <select id="preview-with" value={chosen ?? ''} onChange={(e) => {
              onChoose((e.target as HTMLSelectElement).value);
              setResult(null);
            }}>
              <option value="">{t('preview.withNone')}</option>
              {inactive.map((r) => <option key={r.id} value={r.id}>{t('preview.withRule', { n: rules.findIndex((x) => x.id === r.id) + 1, name: r.description ?? r.id })}</option>)}
            </select>
          </div>
        ) : null}
        <button type="submit">{t(change ? 'preview.changeSubmit' : 'preview.submit')}</button>
      </form>
      <ErrorMessage error={error} />
      {result ? (
        <div aria-live="polite" class="preview-result">
          <p>{t('common.amount')}: {money(result.amount)} · {t('preview.fee')}: {money(result.fee)} · {t('preview.net')}: {money(result.net)}</p>
          {result.after && sameLines(result.now, result.after) ? <p class="hint" data-preview-same>{t('preview.same')}</p> : null}
          {result.after ? (
            <div class="preview-compare">
              {([['now', result.now], ['after', result.after]] as const).map(([kind, outcome]) => (
                <section key={kind} class="preview-outcome" data-outcome={kind} aria-labelledby={`preview-${kind}`}>
                  <h3 id={`preview-${kind}`}>{t(kind === 'now' ? 'preview.now' : 'preview.after')}</h3>
                  <p><strong>{t('preview.rule')}:</strong> <span data-preview-rule={ruleId(outcome)}>{ruleLabel(outcome)}</span></p>
                  {receivables(outcome, `${t('preview.receivables')} · ${t(kind === 'now' ? 'preview.now' : 'preview.after')}`)}
                </section>
              ))}
            </div>
          ) : (
            <>
              <p>
                <strong>{t('preview.rule')}:</strong>{' '}
                <span data-preview-rule={ruleId(result.now)}>{ruleLabel(result.now)}</span>
              </p>
              {receivables(result.now, t('preview.receivables'))}
            </>
          )}
        </div>
      ) : null}
    </section>
  );
}

function sameLines(a: Outcome, b: Outcome): boolean {
  const key = (o: Outcome) => o.receivables.map((r) => `${r.payee.type}:${r.payee.id}:${r.amount}`).join('|');
  return key(a) === key(b);
}

export type { Recipient };

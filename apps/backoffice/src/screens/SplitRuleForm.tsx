import { useState } from 'preact/hooks';
import { ApiFailure, call, client, mutationHeaders, newIdempotencyKey, type Schemas } from '../api/client';
import { ConfirmDialog, ErrorMessage, Loaded, Page, flash, useLoad } from '../components';
import { useApp } from '../context';
import { MONEY_PROBLEM_MESSAGE, moneyInput, parseMoney, parsePercentage, percentageInput } from '../i18n';
import { navigate, queryString, useLocation } from '../router';
import { loadRecipients, loadRules, type Recipient, type SplitRule } from '../rules';
import { AccountTabs } from './AccountTabs';
import { Preview, type RuleBody } from './SplitRules';

// Create or edit a split rule. "Save" keeps the rule without activating it (a new rule is saved
// inactive); "Save and activate" asks for a reason and activates it in the same request, as
// hyperswitch keeps saving apart from activating. An active rule has no draft: saving it changes
// who gets paid on the next sale, so its Save says so and asks for a reason too (the server
// refuses the change without one).

interface ShareDraft {
  key: number;
  recipientId: string;
  kind: 'percentage' | 'amount';
  value: string;
}

interface Draft {
  priority: string;
  description: string;
  method: '' | 'pix' | 'credit_card';
  minAmount: string;
  maxAmount: string;
  shares: ShareDraft[];
}

let shareKeys = 0;

export function SplitRuleForm({ accountId, ruleId }: { accountId: string; ruleId?: string }) {
  const { t } = useApp();
  const { query } = useLocation();
  const data = useLoad(async () => {
    const rule = ruleId ? await call(client.GET('/admin/split-rules/{id}', { params: { path: { id: ruleId } } })) : null;
    const livemode = rule ? rule.livemode : query.get('livemode') === 'true';
    const [recipients, rules, account] = await Promise.all([loadRecipients(accountId, livemode), loadRules(accountId, livemode), call(client.GET('/admin/accounts/{id}', { params: { path: { id: accountId } } }))]);
    return { rule, livemode, recipients, rules, accountName: account.name };
  }, [accountId, ruleId]);
  return (
    <Page title={ruleId ? t('form.editTitle') : t('form.newTitle')}>
      <AccountTabs accountId={accountId} />
      <Loaded state={data}>{(d) => <RuleEditor accountId={accountId} {...d} />}</Loaded>
    </Page>
  );
}

function RuleEditor({ accountId, rule, livemode, recipients, rules, accountName }: { accountId: string; rule: SplitRule | null; livemode: boolean; recipients: Recipient[]; rules: SplitRule[]; accountName: string }) {
  const { t, lang, can } = useApp();
  const [draft, setDraft] = useState<Draft>(() => initialDraft(lang, rule, rules, recipients));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  // The reason dialog: activating an inactive rule, or saving an active one.
  const [confirming, setConfirming] = useState<'activate' | 'saveActive' | null>(null);
  const live = rule?.active === true;
  const [saveKey, setSaveKey] = useState(newIdempotencyKey);
  const back = `/accounts/${accountId}/split-rules${queryString({ livemode: livemode || undefined })}`;

  // Editing a field clears its error (the next save checks it again): a corrected amount does not
  // keep saying what was wrong with the old one.
  const clearErrors = (prefix: string) => setErrors((e) => Object.fromEntries(Object.entries(e).filter(([k]) => k !== prefix && !k.startsWith(`${prefix}.`) && !k.startsWith(`${prefix}[`))));
  const update = (patch: Partial<Draft>) => {
    // (Adding or removing a share renumbers the shares: their errors go.)
    for (const name of Object.keys(patch)) clearErrors(name === 'shares' ? 'splits' : name);
    setDraft((d) => ({ ...d, ...patch }));
  };
  const updateShare = (index: number, patch: Partial<ShareDraft>) => {
    clearErrors(`splits[${index}]`);
    setDraft((d) => ({ ...d, shares: d.shares.map((s, i) => (i === index ? { ...s, ...patch } : s)) }));
  };

  // The request body from the draft, or null with field errors.
  const build = (): RuleBody | null => {
    const errs: Record<string, string> = {};
    const priority = /^\d{1,7}$/.test(draft.priority.trim()) ? Number(draft.priority.trim()) : NaN;
    if (!(priority >= 0 && priority <= 1_000_000)) errs.priority = t('form.priorityHelp');
    const conditions: Schemas['SplitRuleConditions'] = {};
    if (draft.method) conditions.method = draft.method;
    for (const field of ['minAmount', 'maxAmount'] as const) {
      if (draft[field].trim() === '') continue; // optional: no condition
      const parsed = parseMoney(lang, draft[field]);
      if (!parsed.ok) errs[field] = t(MONEY_PROBLEM_MESSAGE[parsed.problem]);
      else conditions[field] = parsed.cents;
    }
    const splits: Schemas['SplitShareRequest'][] = draft.shares.map((s, i) => {
      // No recipient is preselected: the operator picks each one.
      if (s.recipientId === '') errs[`splits[${i}].recipientId`] = t('form.recipientRequired');
      if (s.kind === 'percentage') {
        const p = parsePercentage(s.value);
        if (p === null) errs[`splits[${i}]`] = t(s.value.trim() === '' ? 'form.percentageRequired' : 'form.invalidPercentage');
        return { recipientId: s.recipientId, percentage: p ?? 0 };
      }
      const parsed = parseMoney(lang, s.value);
      if (!parsed.ok) errs[`splits[${i}]`] = t(MONEY_PROBLEM_MESSAGE[parsed.problem]);
      else if (parsed.cents <= 0) errs[`splits[${i}]`] = t('money.positive');
      return { recipientId: s.recipientId, amount: parsed.ok ? parsed.cents : 0 };
    });
    setErrors(errs);
    if (Object.keys(errs).length > 0) {
      // The focus goes to the first wrong field, once it is marked.
      setTimeout(() => document.querySelector<HTMLElement>('.rule-form [aria-invalid="true"]')?.focus(), 0);
      return null;
    }
    return { priority, description: draft.description.trim() || null, conditions, splits };
  };

  // `confirmed`: the reason and the dialog's Idempotency-Key, when saving activates the rule or
  // changes an active one.
  const save = async (confirmed: { reason: string; key: string; activate: boolean } | null) => {
    const body = build();
    if (!body) return false;
    setBusy(true);
    setFailure(null);
    const activate = confirmed?.activate ? confirmed : null;
    try {
      const key = confirmed?.key ?? saveKey;
      if (rule) {
        await call(client.PATCH('/admin/split-rules/{id}', {
          params: { path: { id: rule.id }, header: mutationHeaders(key) },
          body: { ...body, ...(activate ? { active: true } : {}), ...(confirmed ? { reason: confirmed.reason } : {}) },
        }));
      } else {
        await call(client.POST('/admin/split-rules', {
          params: { header: mutationHeaders(key) },
          body: { accountId, livemode, ...body, description: body.description ?? undefined, active: activate !== null, ...(activate ? { reason: activate.reason } : {}) },
        }));
      }
      flash(t('form.saved'));
      navigate(back);
      return true;
    } catch (err) {
      setBusy(false);
      setSaveKey(newIdempotencyKey());
      if (err instanceof ApiFailure && err.body.param) setErrors({ [err.body.param]: err.body.message });
      throw err;
    }
  };

  const fieldError = (name: string) => (errors[name] ? <p id={`${name}-error`} class="field-error">{errors[name]}</p> : null);
  const invalid = (name: string) => ({ 'aria-invalid': errors[name] ? true : undefined, 'aria-describedby': errors[name] ? `${name}-error` : undefined });

  return (
    <>
    {/* void: Preact drops a handler's promise; this one catches and shows its own failure. */}
    <form class="rule-form" noValidate onSubmit={(e) => void (async () => {
      e.preventDefault();
      // An active rule: the reason first, then the same save.
      if (live) {
        if (build()) setConfirming('saveActive');
        return;
      }
      try {
        await save(null);
      } catch (err) {
        setFailure(err);
      }
    })()}>
      <p class="hint">{t('common.mode')}: {livemode ? t('common.live') : t('common.sandbox')}</p>
      <div class="field">
        <label for="priority">{t('rules.priority')}</label>
        <input id="priority" inputMode="numeric" value={draft.priority} onInput={(e) => update({ priority: (e.target as HTMLInputElement).value })} aria-describedby={errors.priority ? 'priority-error' : 'priority-help'} aria-invalid={errors.priority ? true : undefined} />
        {errors.priority ? fieldError('priority') : <p id="priority-help" class="hint">{t('form.priorityHelp')}</p>}
      </div>
      <div class="field">
        <label for="description">{t('rules.description')}</label>
        <input id="description" maxLength={500} value={draft.description} onInput={(e) => update({ description: (e.target as HTMLInputElement).value })} />
      </div>

      <fieldset>
        <legend>{t('form.conditions')}</legend>
        <div class="field">
          <label for="cond-method">{t('form.method')}</label>
          <select id="cond-method" value={draft.method} onChange={(e) => update({ method: (e.target as HTMLSelectElement).value as Draft['method'] })}>
            <option value="">{t('common.any')}</option>
            <option value="pix">{t('method.pix')}</option>
            <option value="credit_card">{t('method.credit_card')}</option>
          </select>
        </div>
        <div class="field">
          <label for="minAmount">{t('form.minAmount')}</label>
          <input id="minAmount" inputMode="decimal" value={draft.minAmount} onInput={(e) => update({ minAmount: (e.target as HTMLInputElement).value })} {...invalid('minAmount')} />
          {fieldError('minAmount')}
        </div>
        <div class="field">
          <label for="maxAmount">{t('form.maxAmount')}</label>
          <input id="maxAmount" inputMode="decimal" value={draft.maxAmount} onInput={(e) => update({ maxAmount: (e.target as HTMLInputElement).value })} {...invalid('maxAmount')} />
          {fieldError('maxAmount')}
        </div>
      </fieldset>

      <fieldset>
        <legend>{t('form.shares')}</legend>
        {recipients.length === 0 ? <p>{t('form.noRecipients')}</p> : null}
        {draft.shares.map((share, i) => (
          <fieldset class="share" key={share.key}>
            <legend>{t('form.share', { n: i + 1 })}</legend>
            <div class="field">
              <label for={`share-${i}-recipient`}>{t('form.recipient')}</label>
              <select id={`share-${i}-recipient`} value={share.recipientId} onChange={(e) => updateShare(i, { recipientId: (e.target as HTMLSelectElement).value })} {...invalid(`splits[${i}].recipientId`)}>
                <option value="" disabled>{t('form.recipientChoose')}</option>
                {recipients.map((r) => <option key={r.id} value={r.id}>{r.name} · {r.document}</option>)}
              </select>
              {fieldError(`splits[${i}].recipientId`)}
            </div>
            <div class="field">
              <label for={`share-${i}-kind`}>{t('form.kind')}</label>
              <select id={`share-${i}-kind`} value={share.kind} onChange={(e) => updateShare(i, { kind: (e.target as HTMLSelectElement).value as ShareDraft['kind'] })}>
                <option value="percentage">{t('form.kind.percentage')}</option>
                <option value="amount">{t('form.kind.amount')}</option>
              </select>
            </div>
            <div class="field">
              <label for={`share-${i}-value`}>{share.kind === 'percentage' ? t('form.value.percentage') : t('form.value.amount')}</label>
              <input id={`share-${i}-value`} inputMode="decimal" value={share.value} onInput={(e) => updateShare(i, { value: (e.target as HTMLInputElement).value })} {...invalid(`splits[${i}]`)} />
              {fieldError(`splits[${i}]`)}
              {fieldError(`splits[${i}].percentage`)}
              {fieldError(`splits[${i}].amount`)}
            </div>
            {draft.shares.length > 1 ? (
              <button type="button" class="secondary" onClick={() => update({ shares: draft.shares.filter((_, j) => j !== i) })}>{t('form.removeShare', { n: i + 1 })}</button>
            ) : null}
          </fieldset>
        ))}
        {recipients.length > 0 && draft.shares.length < 20 ? (
          <button type="button" class="secondary" onClick={() => update({ shares: [...draft.shares, { key: ++shareKeys, recipientId: '', kind: 'percentage', value: '' }] })}>{t('form.addShare')}</button>
        ) : null}
        {fieldError('splits')}
      </fieldset>

      <ErrorMessage error={failure} />
      <p class="hint" id="save-help">{live ? t('form.saveActiveHelp') : t('form.saveHelp')}</p>
      <div class="form-actions">
        <button type="submit" class={live ? undefined : 'secondary'} disabled={busy || draft.shares.length === 0} aria-describedby="save-help">{live ? t('form.saveActive') : t('form.save')}</button>
        {!live ? (
          <button type="button" disabled={busy || draft.shares.length === 0} onClick={() => {
            if (build()) setConfirming('activate');
          }}>{t('form.saveActivate')}</button>
        ) : null}
      </div>
      {confirming ? (
        <ConfirmDialog
          title={confirming === 'activate' ? t('form.saveActivate') : t('form.saveActiveTitle')}
          message={confirming === 'activate' ? t('rules.activateConfirm') : t('form.saveActiveConfirm')}
          confirmLabel={confirming === 'activate' ? t('form.saveActivate') : t('form.save')}
          reason="required"
          onClose={() => setConfirming(null)}
          onConfirm={async (reason, key) => {
            await save({ reason: reason ?? '', key, activate: confirming === 'activate' });
          }}
        />
      ) : null}
    </form>
    {/* Before saving: what this rule, as it would be saved and active, does to a sale, beside
        what applies now (issue 29). Its own form, after the rule's: Enter in the amount previews,
        it does not save. */}
    {can('split_rules:preview') ? (
      <Preview accountId={accountId} livemode={livemode} names={new Map(recipients.map((r) => [r.id, r.name]))} accountName={accountName} rules={rules}
        change={{ ruleId: rule?.id, build }}
        onFieldError={(param, message) => {
          setErrors({ [param]: message });
          setTimeout(() => document.querySelector<HTMLElement>('.rule-form [aria-invalid="true"]')?.focus(), 0);
        }} />
    ) : null}
    </>
  );
}

function initialDraft(lang: 'pt-BR' | 'en', rule: SplitRule | null, rules: SplitRule[], recipients: Recipient[]): Draft {
  if (rule) {
    return {
      priority: String(rule.priority),
      description: rule.description ?? '',
      method: rule.conditions.method ?? '',
      minAmount: rule.conditions.minAmount !== undefined ? moneyInput(lang, rule.conditions.minAmount) : '',
      maxAmount: rule.conditions.maxAmount !== undefined ? moneyInput(lang, rule.conditions.maxAmount) : '',
      shares: rule.splits.map((s) => ({
        key: ++shareKeys,
        recipientId: s.recipientId,
        kind: 'percentage' in s ? 'percentage' : 'amount',
        value: 'percentage' in s ? percentageInput(lang, s.percentage) : moneyInput(lang, s.amount),
      })),
    };
  }
  // A new rule goes last by default.
  const last = rules.reduce((max, r) => Math.max(max, r.priority), 0);
  return {
    priority: String(rules.length === 0 ? 10 : Math.min(1_000_000, last + 10)),
    description: '',
    method: '',
    minAmount: '',
    maxAmount: '',
    shares: recipients.length > 0 ? [{ key: ++shareKeys, recipientId: '', kind: 'percentage', value: '' }] : [],
  };
}

import { useState } from 'preact/hooks';
import { ApiFailure, call, client, mutationHeaders } from '../api/client';
import { ErrorMessage, flash, Page } from '../components';
import { useApp } from '../context';
import type { MessageKey } from '../i18n';
import { Link, navigate } from '../router';
import { AccountTabs } from './AccountTabs';

// A card acquirer (issue 27): an Adyen merchant account, the platform's or one merchant's own.
// The API key and the notifications' HMAC key are typed once and sealed by the server; the
// client key is public (the hosted page encrypts card fields with it). Once created, the
// connector's screen shows the notifications URL to enter in Adyen's Customer Area.

type Field = 'name' | 'environment' | 'baseUrl' | 'merchantAccount' | 'clientKey' | 'clientOrigin' | 'captureMode' | 'apiKey' | 'hmacKey' | 'reason';
const FIELDS: Field[] = ['name', 'environment', 'baseUrl', 'merchantAccount', 'clientKey', 'clientOrigin', 'captureMode', 'apiKey', 'hmacKey', 'reason'];

export function AdyenConnectorForm({ accountId }: { accountId?: string }) {
  const { t } = useApp();
  const [values, setValues] = useState<Record<string, string>>({ environment: 'production', captureMode: 'automatic' });
  const [errors, setErrors] = useState<Partial<Record<Field, string>>>({});
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [key] = useState(() => mutationHeaders()['idempotency-key']);
  const set = (field: Field, value: string) => {
    setValues((v) => ({ ...v, [field]: value }));
    setErrors((e) => ({ ...e, [field]: undefined }));
  };
  const back = accountId ? `/accounts/${accountId}/connectors` : '/connector-accounts';

  const submit = async (e: Event) => {
    e.preventDefault();
    setFailure(null);
    const v = (f: Field) => (values[f] ?? '').trim();
    const missing: Partial<Record<Field, string>> = {};
    for (const f of ['name', 'baseUrl', 'merchantAccount', 'clientKey', 'apiKey', 'hmacKey', 'reason'] as const) if (!v(f)) missing[f] = t('connectors.required');
    if (v('hmacKey') && !/^([0-9A-Fa-f]{2}){16,128}$/.test(v('hmacKey'))) missing.hmacKey = t('adyen.hmacInvalid');
    if (Object.keys(missing).length > 0) {
      setErrors(missing);
      document.getElementById(`adyen-${FIELDS.find((f) => missing[f])}`)?.focus();
      return;
    }
    const body = {
      name: v('name'), connector: 'adyen' as const, method: 'card' as const,
      environment: v('environment') as 'production' | 'homologation',
      baseUrl: v('baseUrl'), merchantAccount: v('merchantAccount'), clientKey: v('clientKey'),
      captureMode: v('captureMode') as 'automatic' | 'manual',
      apiKey: values.apiKey ?? '', hmacKey: v('hmacKey'), reason: v('reason'),
      ...(v('clientOrigin') ? { clientOrigin: v('clientOrigin') } : {}),
      ...(accountId ? { ownerAccountId: accountId } : {}),
    };
    setBusy(true);
    try {
      const created = await call(client.POST('/admin/connector-accounts/adyen', { params: { header: mutationHeaders(key) }, body }));
      // The keys leave this page's memory with it: nothing keeps them in the browser.
      setValues({});
      flash(t('connectors.created'));
      navigate(`/connector-accounts/${created.id}${accountId ? `?account=${accountId}` : ''}`);
    } catch (err) {
      const param = err instanceof ApiFailure ? (err.body.param ?? '') as Field : undefined;
      if (err instanceof ApiFailure && param && FIELDS.includes(param)) {
        setErrors({ [param]: err.body.message });
        document.getElementById(`adyen-${param}`)?.focus();
      } else setFailure(err);
      setBusy(false);
    }
  };

  const described = (f: Field, help?: boolean) => (errors[f] ? `adyen-${f}-error` : help ? `adyen-${f}-help` : undefined);
  const note = (f: Field, help?: MessageKey) =>
    errors[f] ? <p id={`adyen-${f}-error`} class="field-error">{errors[f]}</p> : help ? <p id={`adyen-${f}-help`} class="hint">{t(help)}</p> : null;
  const text = (f: Field, label: MessageKey, opts: { help?: MessageKey; required?: boolean; password?: boolean; maxLength?: number; placeholder?: string } = {}) => (
    <div class="field">
      <label for={`adyen-${f}`}>{t(label)}{opts.required ? '' : ` ${t('connectors.optional')}`}</label>
      <input
        // Preact types <input> as a union keyed by `type` (see ConnectorAccounts.tsx).
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
        id={`adyen-${f}`} name={f} type={(opts.password ? 'password' : 'text') as 'text'} autoComplete="off" spellcheck={false}
        required={opts.required} aria-required={opts.required ? 'true' : undefined} maxLength={opts.maxLength ?? 300} placeholder={opts.placeholder}
        aria-invalid={errors[f] ? 'true' : 'false'} aria-describedby={described(f, !!opts.help)}
        value={values[f] ?? ''} onInput={(e) => set(f, (e.target as HTMLInputElement).value)}
      />
      {note(f, opts.help)}
    </div>
  );
  const select = (f: Field, label: MessageKey, options: Array<[string, MessageKey]>, help: MessageKey) => (
    <div class="field">
      <label for={`adyen-${f}`}>{t(label)}</label>
      <select id={`adyen-${f}`} name={f} value={values[f]} aria-describedby={`adyen-${f}-help`} onChange={(e) => set(f, (e.target as HTMLSelectElement).value)}>
        {options.map(([value, text]) => <option key={value} value={value}>{t(text)}</option>)}
      </select>
      <p id={`adyen-${f}-help`} class="hint">{t(help)}</p>
    </div>
  );

  return (
    <Page title={t('adyen.title')}>
      {accountId ? <AccountTabs accountId={accountId} /> : null}
      <p class="hint">{t('adyen.intro')}</p>
      <form onSubmit={(e) => void submit(e)} noValidate class="connector-form">
        <fieldset>
          <legend>{t('adyen.account')}</legend>
          {text('name', 'connectors.name', { required: true, maxLength: 100, placeholder: 'Adyen produção' })}
          {select('environment', 'connectors.environment', [['production', 'connectors.env.production'], ['homologation', 'connectors.env.homologation']], 'connectors.environmentHelp')}
          {text('baseUrl', 'adyen.baseUrl', { required: true, help: 'adyen.baseUrlHelp', placeholder: 'https://…-checkout-live.adyenpayments.com/checkout/v71' })}
          {text('merchantAccount', 'adyen.merchantAccount', { required: true, maxLength: 100, help: 'adyen.merchantAccountHelp' })}
          {text('clientKey', 'adyen.clientKey', { required: true, maxLength: 200, help: 'adyen.clientKeyHelp', placeholder: 'live_…' })}
          {text('clientOrigin', 'adyen.clientOrigin', { maxLength: 200, help: 'adyen.clientOriginHelp' })}
          {select('captureMode', 'adyen.captureMode', [['automatic', 'adyen.capture.automatic'], ['manual', 'adyen.capture.manual']], 'adyen.captureHelp')}
        </fieldset>
        <fieldset>
          <legend>{t('connectors.credentials')}</legend>
          {text('apiKey', 'adyen.apiKey', { required: true, password: true, maxLength: 500, help: 'connectors.neverShown' })}
          {text('hmacKey', 'adyen.hmacKey', { required: true, password: true, maxLength: 256, help: 'adyen.hmacKeyHelp' })}
        </fieldset>
        <div class="field">
          <label for="adyen-reason">{t('common.reason')}</label>
          <textarea id="adyen-reason" name="reason" rows={2} maxLength={500} required aria-required="true" aria-invalid={errors.reason ? 'true' : 'false'} aria-describedby={described('reason', true)}
            value={values.reason ?? ''} onInput={(e) => set('reason', (e.target as HTMLTextAreaElement).value)} />
          {note('reason', 'common.reasonHelp')}
        </div>
        <ErrorMessage error={failure} />
        <div class="form-actions">
          <button type="submit" disabled={busy}>{t('adyen.create')}</button>
          <Link class="button secondary" href={back}>{t('common.cancel')}</Link>
        </div>
      </form>
    </Page>
  );
}

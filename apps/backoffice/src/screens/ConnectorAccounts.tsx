import { useState } from 'preact/hooks';
import { ApiFailure, call, client, mutationHeaders, type Schemas } from '../api/client';
import { ConfirmDialog, ErrorMessage, flash, Loaded, Page, Paged, StatusBadge, useCursor, useLoad } from '../components';
import { useApp } from '../context';
import type { MessageKey } from '../i18n';
import { Link, navigate } from '../router';
import { AccountTabs } from './AccountTabs';

// Connector accounts (issue 25): a PSP's credentials and settings, the platform's (every
// merchant's default) or one merchant's own (which overrides the platform's). Secrets go in once,
// on create or rotate, and never come back: the screens show only that they are stored, the
// certificate's subject, fingerprint and expiry, and which master key wraps them. Every change
// asks for a reason (the audit log keeps it); a viewer sees everything and may test the
// connection, which only reads at the PSP.

type ConnectorAccount = Schemas['ConnectorAccount'];
type TestResult = Schemas['ConnectorTestResult'];

// Which account serves new payments of an environment and method (Pix, card), as the server
// resolves it: the merchant's newest active one, else the platform's newest active one (the list
// is newest first).
function inUse(rows: ConnectorAccount[], accountId: string | undefined): Set<string> {
  const ids = new Set<string>();
  for (const env of ['production', 'homologation'] as const) for (const method of new Set(rows.map((r) => r.method))) {
    const active = rows.filter((r) => r.environment === env && r.method === method && r.status === 'active');
    const chosen = (accountId ? active.find((r) => r.ownerAccountId === accountId) : undefined) ?? active.find((r) => r.ownerAccountId === null);
    if (chosen) ids.add(chosen.id);
  }
  return ids;
}

// The list: every connector account (the platform's page) or those that may serve a merchant.
export function ConnectorAccounts({ accountId }: { accountId?: string }) {
  const { t, can, dateTime } = useApp();
  const cursor = useCursor(accountId ?? '');
  const list = useLoad(() => call(client.GET('/admin/connector-accounts', { params: { query: { limit: 50, startingAfter: cursor.after, ...(accountId ? { ownerAccountId: accountId } : {}) } } })), [accountId, cursor.after]);
  const newHref = accountId ? `/accounts/${accountId}/connectors/new` : '/connector-accounts/new';
  return (
    <Page
      title={accountId ? t('connectors.titleMerchant') : t('connectors.title')}
      actions={can('connector_accounts:manage') ? (
        <>
          <Link class="button" href={newHref}>{accountId ? t('connectors.newMerchant') : t('connectors.newPlatform')}</Link>{' '}
          <Link class="button secondary" href={`${newHref}-adyen`}>{t('adyen.new')}</Link>
        </>
      ) : null}
    >
      {accountId ? <AccountTabs accountId={accountId} /> : null}
      <p class="hint">{accountId ? t('connectors.helpMerchant') : t('connectors.help')}</p>
      {accountId ? null : <p><Link href="/pix-received">{t('pixReceived.link')}</Link></p>}
      <Paged state={list} cursor={cursor}>{(rows) => {
        const serving = inUse(rows, accountId);
        return (
          <div class="table-scroll" tabIndex={0} role="region" aria-label={t('connectors.title')}>
            <table>
              <thead><tr>
                <th scope="col">{t('connectors.name')}</th><th scope="col">{t('connectors.owner')}</th><th scope="col">{t('connectors.environment')}</th>
                <th scope="col">{t('common.status')}</th><th scope="col">{t('connectors.certificate')}</th><th scope="col">{t('connectors.webhook')}</th>
              </tr></thead>
              <tbody>
                {rows.length === 0 ? <tr><td colSpan={6}>{t('connectors.empty')}</td></tr> : rows.map((r) => (
                  <tr key={r.id} data-connector-id={r.id}>
                    <td>
                      <Link href={`/connector-accounts/${r.id}${accountId ? `?account=${accountId}` : ''}`}>{r.name}</Link>
                      {serving.has(r.id) ? <> <span class="badge badge-active" data-in-use>{t('connectors.inUse')}</span></> : null}
                      <br /><code class="small muted">{r.id}</code>
                    </td>
                    <td>{r.ownerAccountId === null ? t('connectors.platform') : r.ownerAccountId === accountId ? t('connectors.thisMerchant') : <code>{r.ownerAccountId}</code>}</td>
                    <td>{t(`connectors.env.${r.environment}` as MessageKey)} · {t(`connectors.dialect.${r.dialect}` as MessageKey)}</td>
                    <td><StatusBadge status={r.status} /></td>
                    <td><CertificateCell certificate={r.certificate} /></td>
                    <td>{r.webhookRegisteredAt ? dateTime(r.webhookRegisteredAt) : <span class="muted">{t('connectors.webhookNone')}</span>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        );
      }}</Paged>
    </Page>
  );
}

function CertificateCell({ certificate }: { certificate: ConnectorAccount['certificate'] }) {
  const { t, dateTime } = useApp();
  if (!certificate) return <span class="muted">{t('common.none')}</span>;
  return (
    <>
      {dateTime(certificate.expiresAt)}
      {certificate.expiresSoon ? <> <span class="badge badge-held" data-expires-soon>{t('connectors.expiresSoon')}</span></> : null}
    </>
  );
}

// ---------------------------------------------------------------------------------------------
// Create

type CreateField = 'name' | 'environment' | 'dialect' | 'baseUrl' | 'tokenUrl' | 'pixKey' | 'scopes' | 'timeoutMs' | 'clientId' | 'clientSecret' | 'certificatePem' | 'privateKeyPem' | 'pkcs12Base64' | 'pkcs12Password' | 'caPem' | 'reason';
const FIELDS: CreateField[] = ['name', 'environment', 'dialect', 'baseUrl', 'tokenUrl', 'pixKey', 'scopes', 'timeoutMs', 'clientId', 'clientSecret', 'certificatePem', 'privateKeyPem', 'pkcs12Base64', 'pkcs12Password', 'caPem', 'reason'];

// A file's bytes as base64 (a .p12), read in the browser: it goes to the server once, in the body.
function readBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = typeof reader.result === 'string' ? reader.result : '';
      resolve(url.slice(url.indexOf(',') + 1));
    };
    reader.onerror = () => reject(reader.error ?? new Error('file'));
    reader.readAsDataURL(file);
  });
}
function readText(file: File): Promise<string> {
  return file.text();
}

export function ConnectorAccountForm({ accountId }: { accountId?: string }) {
  const { t } = useApp();
  const [values, setValues] = useState<Record<string, string>>({ environment: 'production', dialect: 'efi', baseUrl: 'https://pix.api.efipay.com.br' });
  const [certMode, setCertMode] = useState<'pkcs12' | 'pem'>('pkcs12');
  const [errors, setErrors] = useState<Partial<Record<CreateField, string>>>({});
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [key] = useState(() => mutationHeaders()['idempotency-key']);
  const set = (field: CreateField, value: string) => {
    setValues((v) => ({ ...v, [field]: value }));
    setErrors((e) => ({ ...e, [field]: undefined }));
  };
  const back = accountId ? `/accounts/${accountId}/connectors` : '/connector-accounts';

  const submit = async (e: Event) => {
    e.preventDefault();
    setFailure(null);
    const v = (f: CreateField) => (values[f] ?? '').trim();
    const missing: Partial<Record<CreateField, string>> = {};
    for (const f of ['name', 'baseUrl', 'pixKey', 'clientId', 'clientSecret', 'reason'] as const) if (!v(f)) missing[f] = t('connectors.required');
    if (certMode === 'pkcs12' && !values.pkcs12Base64) missing.pkcs12Base64 = t('connectors.required');
    if (certMode === 'pem' && !v('certificatePem')) missing.certificatePem = t('connectors.required');
    if (certMode === 'pem' && !v('privateKeyPem')) missing.privateKeyPem = t('connectors.required');
    if (v('timeoutMs') && !/^\d+$/.test(v('timeoutMs'))) missing.timeoutMs = t('connectors.timeoutInvalid');
    if (Object.keys(missing).length > 0) {
      setErrors(missing);
      document.getElementById(`connector-${FIELDS.find((f) => missing[f])}`)?.focus();
      return;
    }
    const body = {
      name: v('name'), connector: 'pix_api' as const, method: 'pix' as const,
      environment: v('environment') as 'production' | 'homologation', dialect: v('dialect') as 'standard' | 'efi',
      baseUrl: v('baseUrl'), pixKey: v('pixKey'), clientId: v('clientId'), clientSecret: values.clientSecret ?? '', reason: v('reason'),
      ...(v('tokenUrl') ? { tokenUrl: v('tokenUrl') } : {}),
      ...(v('scopes') ? { scopes: v('scopes') } : {}),
      ...(v('timeoutMs') ? { timeoutMs: Number(v('timeoutMs')) } : {}),
      ...(accountId ? { ownerAccountId: accountId } : {}),
      ...(certMode === 'pkcs12' ? { pkcs12Base64: values.pkcs12Base64, pkcs12Password: values.pkcs12Password ?? '' } : { certificatePem: values.certificatePem, privateKeyPem: values.privateKeyPem }),
      ...(v('caPem') ? { caPem: values.caPem } : {}),
    };
    setBusy(true);
    try {
      const created = await call(client.POST('/admin/connector-accounts', { params: { header: mutationHeaders(key) }, body }));
      // The secrets leave this page's memory with it: nothing keeps them in the browser.
      setValues({});
      flash(t('connectors.created'));
      navigate(`/connector-accounts/${created.id}${accountId ? `?account=${accountId}` : ''}`);
    } catch (err) {
      const param = err instanceof ApiFailure ? (err.body.param ?? '') as CreateField : undefined;
      if (err instanceof ApiFailure && param && FIELDS.includes(param)) {
        setErrors({ [param]: err.body.message });
        document.getElementById(`connector-${param}`)?.focus();
      } else setFailure(err);
      setBusy(false);
    }
  };

  const described = (f: CreateField, help?: boolean) => (errors[f] ? `connector-${f}-error` : help ? `connector-${f}-help` : undefined);
  const note = (f: CreateField, help?: MessageKey) =>
    errors[f] ? <p id={`connector-${f}-error`} class="field-error">{errors[f]}</p> : help ? <p id={`connector-${f}-help`} class="hint">{t(help)}</p> : null;
  const text = (f: CreateField, label: MessageKey, opts: { help?: MessageKey; required?: boolean; type?: 'text' | 'url' | 'password'; maxLength?: number; placeholder?: string; inputMode?: 'numeric' } = {}) => (
    <div class="field">
      <label for={`connector-${f}`}>{t(label)}{opts.required ? '' : ` ${t('connectors.optional')}`}</label>
      <input
        // Preact types <input> as a union keyed by `type`, and tsc (the back office's JSX settings)
        // cannot pick a member for a union of types; ESLint's program resolves the JSX types
        // differently and calls the assertion needless.
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
        id={`connector-${f}`} name={f} type={(opts.type ?? 'text') as 'text'} autoComplete="off" spellcheck={false}
        required={opts.required} aria-required={opts.required ? 'true' : undefined} maxLength={opts.maxLength ?? 300} placeholder={opts.placeholder} inputMode={opts.inputMode}
        aria-invalid={errors[f] ? 'true' : 'false'} aria-describedby={described(f, !!opts.help)}
        value={values[f] ?? ''} onInput={(e) => set(f, (e.target as HTMLInputElement).value)}
      />
      {note(f, opts.help)}
    </div>
  );
  const pem = (f: CreateField, label: MessageKey, help?: MessageKey) => (
    <div class="field">
      <label for={`connector-${f}`}>{t(label)}</label>
      <textarea id={`connector-${f}`} name={f} rows={4} spellcheck={false} autoComplete="off" maxLength={20_000} placeholder="-----BEGIN …-----"
        aria-invalid={errors[f] ? 'true' : 'false'} aria-describedby={described(f, !!help)} value={values[f] ?? ''} onInput={(e) => set(f, (e.target as HTMLTextAreaElement).value)} />
      {note(f, help)}
    </div>
  );

  return (
    <Page title={accountId ? t('connectors.newMerchant') : t('connectors.newPlatform')}>
      {accountId ? <AccountTabs accountId={accountId} /> : null}
      <p class="hint">{t('connectors.secretsOnce')}</p>
      <form onSubmit={(e) => void submit(e)} noValidate class="connector-form">
        <fieldset>
          <legend>{t('connectors.psp')}</legend>
          {text('name', 'connectors.name', { required: true, maxLength: 100, placeholder: 'Efí produção' })}
          <div class="field">
            <label for="connector-environment">{t('connectors.environment')}</label>
            <select id="connector-environment" name="environment" value={values.environment} aria-describedby="connector-environment-help" onChange={(e) => set('environment', (e.target as HTMLSelectElement).value)}>
              <option value="production">{t('connectors.env.production')}</option>
              <option value="homologation">{t('connectors.env.homologation')}</option>
            </select>
            <p id="connector-environment-help" class="hint">{t('connectors.environmentHelp')}</p>
          </div>
          <div class="field">
            <label for="connector-dialect">{t('connectors.dialectLabel')}</label>
            <select id="connector-dialect" name="dialect" value={values.dialect} onChange={(e) => set('dialect', (e.target as HTMLSelectElement).value)}>
              <option value="efi">{t('connectors.dialect.efi')}</option>
              <option value="standard">{t('connectors.dialect.standard')}</option>
            </select>
          </div>
          {text('baseUrl', 'connectors.baseUrl', { required: true, help: 'connectors.baseUrlHelp', type: 'url' })}
          {text('tokenUrl', 'connectors.tokenUrl', { type: 'url' })}
          {text('pixKey', 'connectors.pixKey', { required: true, maxLength: 77, help: 'connectors.pixKeyHelp' })}
          {text('scopes', 'connectors.scopes')}
          {text('timeoutMs', 'connectors.timeoutMs', { inputMode: 'numeric', maxLength: 5, placeholder: '10000' })}
        </fieldset>
        <fieldset>
          <legend>{t('connectors.credentials')}</legend>
          {text('clientId', 'connectors.clientId', { required: true, maxLength: 200 })}
          {text('clientSecret', 'connectors.clientSecret', { required: true, type: 'password', maxLength: 500, help: 'connectors.neverShown' })}
          <div class="field" role="radiogroup" aria-labelledby="connector-certmode-label">
            <span id="connector-certmode-label" class="label">{t('connectors.certificate')}</span>
            <label><input type="radio" name="certMode" value="pkcs12" checked={certMode === 'pkcs12'} onChange={() => setCertMode('pkcs12')} /> {t('connectors.certPkcs12')}</label>
            <label><input type="radio" name="certMode" value="pem" checked={certMode === 'pem'} onChange={() => setCertMode('pem')} /> {t('connectors.certPem')}</label>
          </div>
          {certMode === 'pkcs12' ? (
            <>
              <div class="field">
                <label for="connector-pkcs12Base64">{t('connectors.pkcs12File')}</label>
                <input id="connector-pkcs12Base64" name="pkcs12" type="file" accept=".p12,.pfx,application/x-pkcs12" aria-invalid={errors.pkcs12Base64 ? 'true' : 'false'} aria-describedby={described('pkcs12Base64', true)}
                  onChange={(e) => { const file = (e.target as HTMLInputElement).files?.[0]; if (file) void readBase64(file).then((b) => set('pkcs12Base64', b)); else set('pkcs12Base64', ''); }} />
                {note('pkcs12Base64', 'connectors.pkcs12Help')}
              </div>
              {text('pkcs12Password', 'connectors.pkcs12Password', { type: 'password', maxLength: 200 })}
            </>
          ) : (
            <>
              {pem('certificatePem', 'connectors.certificatePem')}
              {pem('privateKeyPem', 'connectors.privateKeyPem', 'connectors.neverShown')}
            </>
          )}
          <div class="field">
            <label for="connector-caFile">{t('connectors.caPem')} {t('connectors.optional')}</label>
            <input id="connector-caFile" type="file" accept=".pem,.crt,.cer" aria-describedby="connector-caPem-help"
              onChange={(e) => { const file = (e.target as HTMLInputElement).files?.[0]; if (file) void readText(file).then((s) => set('caPem', s)); else set('caPem', ''); }} />
            {errors.caPem ? <p id="connector-caPem-help" class="field-error">{errors.caPem}</p> : <p id="connector-caPem-help" class="hint">{t('connectors.caHelp')}</p>}
          </div>
        </fieldset>
        <div class="field">
          <label for="connector-reason">{t('common.reason')}</label>
          <textarea id="connector-reason" name="reason" rows={2} maxLength={500} required aria-required="true" aria-invalid={errors.reason ? 'true' : 'false'} aria-describedby={described('reason', true)}
            value={values.reason ?? ''} onInput={(e) => set('reason', (e.target as HTMLTextAreaElement).value)} />
          {note('reason', 'common.reasonHelp')}
        </div>
        <ErrorMessage error={failure} />
        <div class="form-actions">
          <button type="submit" disabled={busy}>{t('connectors.create')}</button>
          <Link class="button secondary" href={back}>{t('common.cancel')}</Link>
        </div>
      </form>
    </Page>
  );
}

// ---------------------------------------------------------------------------------------------
// Detail: settings, masked secrets, certificate, health (test connection), and the actions.

export function ConnectorAccountDetail({ id }: { id: string }) {
  const { t, can, dateTime } = useApp();
  const accountId = new URLSearchParams(window.location.search).get('account') ?? undefined;
  const loaded = useLoad(() => call(client.GET('/admin/connector-accounts/{id}', { params: { path: { id } } })), [id]);
  const [test, setTest] = useState<TestResult | null>(null);
  const [testing, setTesting] = useState(false);
  const [testError, setTestError] = useState<unknown>(null);
  const [dialog, setDialog] = useState<'disable' | 'webhook' | 'rotate' | 'edit' | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const manage = can('connector_accounts:manage');

  const runTest = async () => {
    setTesting(true);
    setTest(null);
    setTestError(null);
    try {
      setTest(await call(client.POST('/admin/connector-accounts/{id}/test', { params: { path: { id }, header: mutationHeaders() } })));
    } catch (err) {
      setTestError(err);
    } finally {
      setTesting(false);
    }
  };

  return (
    <Loaded state={loaded}>{(c) => {
      // A card acquirer (Adyen): its own settings, keys and notifications URL; the Pix health
      // check, webhook registration, edit and rotate are Pix connectors' (Adyen keys change by a
      // new account, docs/providers.md).
      const card = c.method === 'card';
      return (
      <Page title={c.name}>
        <nav class="breadcrumb" aria-label={t('breadcrumb.label')}>
          <ol>
            {accountId
              ? <li><Link href={`/accounts/${accountId}/connectors`}>{t('connectors.titleMerchant')}</Link></li>
              : <li><Link href="/connector-accounts">{t('connectors.title')}</Link></li>}
            <li><code class="small">{c.id}</code></li>
          </ol>
        </nav>
        {done ? <p role="status" class="notice">{done}</p> : null}
        <dl class="summary" data-connector={c.id}>
          <div><dt>{t('common.status')}</dt><dd><StatusBadge status={c.status} /></dd></div>
          <div><dt>{t('connectors.owner')}</dt><dd>{c.ownerAccountId === null ? t('connectors.platform') : <Link href={`/accounts/${c.ownerAccountId}`}>{c.ownerAccountId}</Link>}</dd></div>
          <div><dt>{t('connectors.environment')}</dt><dd>{t(`connectors.env.${c.environment}` as MessageKey)}</dd></div>
          <div><dt>{t('connectors.dialectLabel')}</dt><dd>{t(`connectors.dialect.${c.dialect}` as MessageKey)}</dd></div>
          <div><dt>{card ? t('adyen.baseUrl') : t('connectors.baseUrl')}</dt><dd><code>{c.baseUrl}</code></dd></div>
          {card ? (
            <>
              <div><dt>{t('adyen.merchantAccount')}</dt><dd><code>{c.merchantAccount}</code></dd></div>
              <div><dt>{t('adyen.clientKey')}</dt><dd>{c.clientKey ? <code>{c.clientKey}</code> : <span class="muted">{t('common.none')}</span>}</dd></div>
              <div><dt>{t('adyen.clientOrigin')}</dt><dd><code>{c.clientOrigin}</code></dd></div>
              <div><dt>{t('adyen.captureMode')}</dt><dd data-capture-mode={c.captureMode}>{t(c.captureMode === 'manual' ? 'adyen.capture.manual' : 'adyen.capture.automatic')}</dd></div>
            </>
          ) : (
            <>
              <div><dt>{t('connectors.tokenUrl')}</dt><dd>{c.tokenUrl ? <code>{c.tokenUrl}</code> : <span class="muted">{t('connectors.default')}</span>}</dd></div>
              <div><dt>{t('connectors.pixKey')}</dt><dd><code>{c.pixKey}</code></dd></div>
              <div><dt>{t('connectors.scopes')}</dt><dd>{c.scopes ?? <span class="muted">{t('connectors.default')}</span>}</dd></div>
            </>
          )}
          <div><dt>{t('connectors.timeoutMs')}</dt><dd>{c.timeoutMs ?? 10000} ms</dd></div>
          {card ? null : <div><dt>{t('connectors.clientId')}</dt><dd><code>{c.clientId}</code></dd></div>}
          {card ? null : <div><dt>{t('connectors.webhook')}</dt><dd>{c.webhookRegisteredAt ? dateTime(c.webhookRegisteredAt) : <span class="muted">{t('connectors.webhookNone')}</span>}</dd></div>}
          <div><dt>{t('common.createdAt')}</dt><dd>{dateTime(c.createdAt)}</dd></div>
          {c.disabledAt ? <div><dt>{t('connectors.disabledAt')}</dt><dd>{dateTime(c.disabledAt)}</dd></div> : null}
        </dl>

        <section aria-labelledby="connector-secrets-title">
          <h2 id="connector-secrets-title">{t('connectors.secrets')}</h2>
          <p class="hint">{t('connectors.secretsMasked')}</p>
          <dl class="summary" data-secrets>
            {card ? (
              <>
                <div><dt>{t('adyen.apiKeyStatus')}</dt><dd data-api-key>{c.secrets.apiKey === 'set' ? t('connectors.stored') : t('common.none')}</dd></div>
                <div><dt>{t('adyen.hmacStatus')}</dt><dd data-hmac-key>{c.secrets.hmacKey === 'set' ? t('connectors.stored') : t('common.none')}</dd></div>
              </>
            ) : (
              <>
                <div><dt>{t('connectors.clientSecret')}</dt><dd>{c.secrets.clientSecret === 'set' ? t('connectors.stored') : t('common.none')}</dd></div>
                <div><dt>{t('connectors.privateKeyPem')}</dt><dd>{c.secrets.privateKey === 'set' ? t('connectors.stored') : t('common.none')}</dd></div>
                <div><dt>{t('connectors.caPem')}</dt><dd>{c.secrets.ca === 'set' ? t('connectors.stored') : t('common.none')}</dd></div>
              </>
            )}
            <div><dt>{t('connectors.masterKey')}</dt><dd><code>{c.secrets.masterKeyId}</code></dd></div>
            <div><dt>{t('connectors.rotatedAt')}</dt><dd>{dateTime(c.secrets.rotatedAt)}</dd></div>
          </dl>
          {c.certificate ? (
            <dl class="summary" data-certificate>
              <div><dt>{t('connectors.certSubject')}</dt><dd><code>{c.certificate.subject}</code></dd></div>
              <div><dt>{t('connectors.certFingerprint')}</dt><dd><code class="wrap" data-fingerprint>{c.certificate.fingerprintSha256}</code></dd></div>
              <div><dt>{t('connectors.certExpires')}</dt><dd><CertificateCell certificate={c.certificate} /></dd></div>
            </dl>
          ) : null}
          {c.certificate?.expiresSoon ? <p role="alert" class="error">{t('connectors.expiresSoonHelp')}</p> : null}
        </section>

        {card ? (
          <section aria-labelledby="connector-notifications-title">
            <h2 id="connector-notifications-title">{t('adyen.notifications')}</h2>
            <p class="hint">{t('adyen.notificationsHelp')}</p>
            {c.notificationUrl ? (
              <dl class="summary">
                <div><dt>{t('adyen.notificationUrl')}</dt><dd><code class="wrap" data-notification-url>{c.notificationUrl}</code></dd></div>
                <div><dt>{t('adyen.hmacStatus')}</dt><dd>{c.secrets.hmacKey === 'set' ? t('connectors.stored') : t('common.none')}</dd></div>
              </dl>
            ) : <p role="alert" class="error">{t('adyen.noPublicUrl')}</p>}
          </section>
        ) : null}

        {card ? null : <section aria-labelledby="connector-health-title">
          <h2 id="connector-health-title">{t('connectors.health')}</h2>
          <p class="hint">{t('connectors.healthHelp')}</p>
          <button type="button" class="secondary" onClick={() => void runTest()} disabled={testing}>{t('connectors.test')}</button>
          <div aria-live="polite" data-test-result>
            {testing ? <p role="status" class="muted">{t('connectors.testing')}</p> : null}
            {test ? (
              <dl class="summary">
                <div><dt>{t('connectors.testResult')}</dt><dd><span class={`badge ${test.ok ? 'badge-active' : 'badge-failed'}`} data-ok={String(test.ok)}>{test.ok ? t('connectors.testOk') : t('connectors.testFailed')}</span></dd></div>
                <div><dt>{t('connectors.testToken')}</dt><dd>{test.token ? t('common.yes') : t('common.no')}</dd></div>
                <div><dt>{t('connectors.testWebhook')}</dt><dd>{test.webhookIsOurs ? t('common.yes') : t('common.no')}</dd></div>
                {test.error ? <div><dt>{t('connectors.lastError')}</dt><dd data-last-error>{test.error}</dd></div> : null}
              </dl>
            ) : null}
          </div>
          <ErrorMessage error={testError} />
        </section>}

        {manage && c.status === 'active' ? (
          <section aria-labelledby="connector-actions-title">
            <h2 id="connector-actions-title">{t('connectors.actions')}</h2>
            <div class="form-actions">
              {card ? null : <button type="button" onClick={() => setDialog('webhook')}>{t('connectors.registerWebhook')}</button>}
              {card ? null : <button type="button" class="secondary" onClick={() => setDialog('edit')}>{t('connectors.edit')}</button>}
              {card ? null : <button type="button" class="secondary" onClick={() => setDialog('rotate')}>{t('connectors.rotate')}</button>}
              <button type="button" class="danger" onClick={() => setDialog('disable')}>{t('connectors.disable')}</button>
            </div>
          </section>
        ) : null}

        {dialog === 'webhook' ? (
          <ConfirmDialog title={t('connectors.registerWebhook')} message={t('connectors.registerWebhookConfirm')} confirmLabel={t('connectors.registerWebhook')} reason="required" onClose={() => setDialog(null)}
            onConfirm={async (reason, key) => {
              await call(client.POST('/admin/connector-accounts/{id}/register-webhook', { params: { path: { id }, header: mutationHeaders(key) }, body: { reason: reason ?? '' } }));
              setDone(t('connectors.webhookDone'));
              loaded.reload();
            }} />
        ) : null}
        {dialog === 'disable' ? (
          <ConfirmDialog title={t('connectors.disable')} message={t('connectors.disableConfirm')} confirmLabel={t('connectors.disable')} reason="required" onClose={() => setDialog(null)}
            onConfirm={async (reason, key) => {
              await call(client.POST('/admin/connector-accounts/{id}/disable', { params: { path: { id }, header: mutationHeaders(key) }, body: { reason: reason ?? '' } }));
              setDone(t('connectors.disabled'));
              loaded.reload();
            }} />
        ) : null}
        {dialog === 'edit' ? <EditDialog connector={c} onClose={() => setDialog(null)} onDone={() => { setDone(t('connectors.edited')); loaded.reload(); }} /> : null}
        {dialog === 'rotate' ? <RotateDialog id={id} onClose={() => setDialog(null)} onDone={() => { setDone(t('connectors.rotated')); loaded.reload(); }} /> : null}
      </Page>
      );
    }}</Loaded>
  );
}

type EditField = 'name' | 'baseUrl' | 'tokenUrl' | 'pixKey' | 'scopes' | 'timeoutMs' | 'clientId';
const EDIT_FIELDS: Array<[EditField, MessageKey]> = [['name', 'connectors.name'], ['baseUrl', 'connectors.baseUrl'], ['tokenUrl', 'connectors.tokenUrl'], ['pixKey', 'connectors.pixKey'], ['scopes', 'connectors.scopes'], ['timeoutMs', 'connectors.timeoutMs'], ['clientId', 'connectors.clientId']];

// Settings only (secrets change through rotate); what is left as it was is not sent.
function EditDialog({ connector, onClose, onDone }: { connector: ConnectorAccount; onClose: () => void; onDone: () => void }) {
  const { t } = useApp();
  const initial: Record<EditField, string> = {
    name: connector.name, baseUrl: connector.baseUrl, tokenUrl: connector.tokenUrl ?? '', pixKey: connector.pixKey ?? '',
    scopes: connector.scopes ?? '', timeoutMs: connector.timeoutMs === null ? '' : String(connector.timeoutMs), clientId: connector.clientId,
  };
  const [values, setValues] = useState(initial);
  const [errors, setErrors] = useState<Partial<Record<EditField, string>>>({});
  return (
    <ConfirmDialog title={t('connectors.edit')} message={t('connectors.editConfirm')} confirmLabel={t('common.save')} reason="required" onClose={onClose}
      onConfirm={async (reason, key) => {
        const body: Record<string, string | number> = { reason: reason ?? '' };
        for (const [f] of EDIT_FIELDS) {
          const v = values[f].trim();
          if (v === initial[f] || v === '') continue;
          if (f === 'timeoutMs' && !/^\d+$/.test(v)) {
            setErrors({ timeoutMs: t('connectors.timeoutInvalid') });
            document.getElementById('edit-timeoutMs')?.focus();
            return 'stay';
          }
          body[f] = f === 'timeoutMs' ? Number(v) : v;
        }
        try {
          await call(client.PATCH('/admin/connector-accounts/{id}', { params: { path: { id: connector.id }, header: mutationHeaders(key) }, body: body as Schemas['UpdateConnectorAccountRequest'] }));
        } catch (err) {
          const param = err instanceof ApiFailure ? err.body.param as EditField | undefined : undefined;
          if (err instanceof ApiFailure && param && EDIT_FIELDS.some(([f]) => f === param)) {
            setErrors({ [param]: err.body.message });
            document.getElementById(`edit-${param}`)?.focus();
            return 'stay';
          }
          throw err;
        }
        onDone();
      }}>
      {EDIT_FIELDS.map(([f, label]) => (
        <div class="field" key={f}>
          <label for={`edit-${f}`}>{t(label)}</label>
          <input id={`edit-${f}`} autoComplete="off" spellcheck={false} maxLength={f === 'pixKey' ? 77 : 300} inputMode={f === 'timeoutMs' ? 'numeric' : undefined}
            aria-invalid={errors[f] ? 'true' : 'false'} aria-describedby={errors[f] ? `edit-${f}-error` : undefined}
            value={values[f]} onInput={(e) => { const v = (e.target as HTMLInputElement).value; setValues((x) => ({ ...x, [f]: v })); setErrors((x) => ({ ...x, [f]: undefined })); }} />
          {errors[f] ? <p id={`edit-${f}-error`} class="field-error">{errors[f]}</p> : null}
        </div>
      ))}
    </ConfirmDialog>
  );
}

type RotateField = 'clientSecret' | 'certificatePem' | 'privateKeyPem' | 'caPem';

// New secrets, any of them (the others are kept). Entered here and sent once.
function RotateDialog({ id, onClose, onDone }: { id: string; onClose: () => void; onDone: () => void }) {
  const { t } = useApp();
  const [values, setValues] = useState<Partial<Record<RotateField, string>>>({});
  const [errors, setErrors] = useState<Partial<Record<RotateField, string>>>({});
  const set = (f: RotateField, v: string) => {
    setValues((x) => ({ ...x, [f]: v }));
    setErrors((e) => ({ ...e, [f]: undefined }));
  };
  const field = (f: RotateField, label: MessageKey, multiline: boolean) => (
    <div class="field">
      <label for={`rotate-${f}`}>{t(label)} {t('connectors.optional')}</label>
      {multiline
        ? <textarea id={`rotate-${f}`} rows={3} spellcheck={false} maxLength={20_000} aria-invalid={errors[f] ? 'true' : 'false'} aria-describedby={errors[f] ? `rotate-${f}-error` : undefined} value={values[f] ?? ''} onInput={(e) => set(f, (e.target as HTMLTextAreaElement).value)} />
        : <input id={`rotate-${f}`} type="password" autoComplete="off" maxLength={500} aria-invalid={errors[f] ? 'true' : 'false'} aria-describedby={errors[f] ? `rotate-${f}-error` : undefined} value={values[f] ?? ''} onInput={(e) => set(f, (e.target as HTMLInputElement).value)} />}
      {errors[f] ? <p id={`rotate-${f}-error`} class="field-error">{errors[f]}</p> : null}
    </div>
  );
  return (
    <ConfirmDialog title={t('connectors.rotate')} message={t('connectors.rotateConfirm')} confirmLabel={t('connectors.rotate')} reason="required" onClose={onClose}
      onConfirm={async (reason, key) => {
        const body: Record<string, string> = { reason: reason ?? '' };
        for (const [f, v] of Object.entries(values)) if (v && v.trim() !== '') body[f] = v;
        try {
          await call(client.POST('/admin/connector-accounts/{id}/rotate', { params: { path: { id }, header: mutationHeaders(key) }, body: body as Schemas['RotateConnectorSecretsRequest'] }));
        } catch (err) {
          const param = err instanceof ApiFailure ? err.body.param as RotateField | undefined : undefined;
          if (err instanceof ApiFailure && param && ['clientSecret', 'certificatePem', 'privateKeyPem', 'caPem'].includes(param)) {
            setErrors({ [param]: err.body.message });
            document.getElementById(`rotate-${param}`)?.focus();
            return 'stay';
          }
          throw err;
        }
        setValues({});
        onDone();
      }}>
      {field('clientSecret', 'connectors.clientSecret', false)}
      {field('certificatePem', 'connectors.certificatePem', true)}
      {field('privateKeyPem', 'connectors.privateKeyPem', true)}
      {field('caPem', 'connectors.caPem', true)}
    </ConfirmDialog>
  );
}

// ---------------------------------------------------------------------------------------------
// Pix received at PSPs, as reconciliation and the reads saw them (at most the newest 100):
// operators resolve `unmatched` and `amount_mismatch` (docs/providers.md, "Reconciliation").

const RECEIVED_STATUSES = ['unmatched', 'amount_mismatch', 'late_returned', 'matched'] as const;
type ReceivedStatus = (typeof RECEIVED_STATUSES)[number];

export function PixReceived() {
  const { t, money, dateTime } = useApp();
  const [status, setStatus] = useState<ReceivedStatus | ''>('unmatched');
  const list = useLoad(() => call(client.GET('/admin/pix-received', { params: { query: status ? { status } : {} } })), [status]);
  return (
    <Page title={t('pixReceived.title')}>
      <nav class="breadcrumb" aria-label={t('breadcrumb.label')}><ol><li><Link href="/connector-accounts">{t('connectors.title')}</Link></li><li aria-current="page">{t('pixReceived.title')}</li></ol></nav>
      <p class="hint">{t('pixReceived.help')}</p>
      <div class="field">
        <label for="pix-received-status">{t('common.status')}</label>
        <select id="pix-received-status" value={status} onChange={(e) => setStatus((e.target as HTMLSelectElement).value as ReceivedStatus | '')}>
          <option value="">{t('common.any')}</option>
          {RECEIVED_STATUSES.map((s) => <option key={s} value={s}>{t(`pixReceived.status.${s}` as MessageKey)}</option>)}
        </select>
      </div>
      <Loaded state={list}>{(page) => (
        <div class="table-scroll" tabIndex={0} role="region" aria-label={t('pixReceived.title')}>
          <table>
            <thead><tr>
              <th scope="col">{t('pixReceived.e2eid')}</th><th scope="col">txid</th><th scope="col">{t('common.amount')}</th>
              <th scope="col">{t('pixReceived.paidAt')}</th><th scope="col">{t('common.status')}</th><th scope="col">{t('pixReceived.payment')}</th><th scope="col">{t('pixReceived.connector')}</th>
            </tr></thead>
            <tbody>
              {page.data.length === 0 ? <tr><td colSpan={7}>{t('common.empty')}</td></tr> : page.data.map((r) => (
                <tr key={r.e2eid} data-e2eid={r.e2eid} data-status={r.status}>
                  <td><code class="wrap">{r.e2eid}</code></td>
                  <td>{r.txid ? <code class="wrap">{r.txid}</code> : <span class="muted">{t('common.none')}</span>}</td>
                  <td>{money(r.amount)}</td>
                  <td>{dateTime(r.paidAt)}</td>
                  <td><span class={`badge ${r.status === 'matched' ? 'badge-active' : r.status === 'late_returned' ? 'badge-held' : 'badge-failed'}`}>{t(`pixReceived.status.${r.status}` as MessageKey)}</span></td>
                  <td>{r.paymentId ? <Link href={`/payments/${r.paymentId}`}>{r.paymentId}</Link> : <span class="muted">{t('common.none')}</span>}</td>
                  <td><Link href={`/connector-accounts/${r.connectorAccountId}`}><code>{r.connectorAccountId}</code></Link></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}</Loaded>
    </Page>
  );
}

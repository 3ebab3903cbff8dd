import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, call, client, mutationHeaders } from '../api/client';
import { useApp } from '../context';

// The account's look on the hosted checkout: display name, accent color and logo (issue 29). The
// server checks them (the accent's WCAG AA contrast against white, the logo's type and size) and
// its refusal is shown on the field it names, with the focus moved there.

type Field = 'displayName' | 'accentColor' | 'logo';

// The server's limit (admin/branding/schemas.ts MAX_LOGO_BYTES).
const MAX_LOGO_BYTES = 64 * 1024;
const kib = (bytes: number) => `${Math.ceil(bytes / 1024)} KiB`;

export function CheckoutBranding({ accountId }: { accountId: string }) {
  const { t, can, lang } = useApp();
  const [current, setCurrent] = useState<Awaited<ReturnType<typeof load>> | null>(null);
  const [displayName, setDisplayName] = useState('');
  const [accent, setAccent] = useState('');
  const [logo, setLogo] = useState<{ contentType: string; dataBase64: string } | null>(null);
  const [removeLogo, setRemoveLogo] = useState(false);
  const [errors, setErrors] = useState<Partial<Record<Field, string>>>({});
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  const load = () => call(client.GET('/admin/accounts/{id}/checkout-branding', { params: { path: { id: accountId } } }));
  useEffect(() => {
    void load().then((b) => {
      setCurrent(b);
      setDisplayName(b.displayName ?? '');
      setAccent(b.accentColor ?? '');
    }).catch(() => undefined);
  }, [accountId]);
  const editable = can('accounts:update');

  // A picked file refused here: saving stops on it rather than save the rest without it.
  const refused = useRef(false);
  const pick = (file: File | undefined) => {
    refused.current = false;
    setErrors((e) => ({ ...e, logo: undefined }));
    if (!file) return setLogo(null);
    // The server refuses a logo over 64 KiB (and a body over its limit as a whole): a bigger file
    // is refused here, before it is read and sent, on its own field, with the focus kept there.
    if (file.size > MAX_LOGO_BYTES) {
      setLogo(null);
      refused.current = true;
      setErrors((e) => ({ ...e, logo: t('account.branding.logoTooBig', { size: kib(file.size), max: kib(MAX_LOGO_BYTES) }) }));
      document.getElementById('branding-logo')?.focus();
      return;
    }
    const reader = new FileReader();
    reader.onload = () => {
      const url = typeof reader.result === 'string' ? reader.result : '';
      setLogo({ contentType: file.type, dataBase64: url.slice(url.indexOf(',') + 1) });
    };
    reader.readAsDataURL(file);
  };

  const save = async (e: Event) => {
    e.preventDefault();
    if (refused.current) {
      document.getElementById('branding-logo')?.focus();
      return;
    }
    setBusy(true);
    setSaved(false);
    setErrors({});
    try {
      const body: Record<string, unknown> = { displayName: displayName.trim() === '' ? null : displayName.trim(), accentColor: accent.trim() === '' ? null : accent.trim() };
      if (removeLogo) body.logo = null;
      else if (logo) body.logo = logo;
      const next = await call(client.PATCH('/admin/accounts/{id}/checkout-branding', { params: { path: { id: accountId }, header: mutationHeaders() }, body }));
      setCurrent(next);
      setLogo(null);
      setRemoveLogo(false);
      if (fileInput.current) fileInput.current.value = '';
      setSaved(true);
    } catch (err) {
      const param = err instanceof ApiFailure ? err.body.param ?? '' : '';
      const field: Field | undefined = param.startsWith('logo') ? 'logo' : param === 'displayName' || param === 'accentColor' ? param : undefined;
      if (err instanceof ApiFailure && field) {
        // The server's contrast refusal, in the operator's language (it says the ratio).
        const contrast = field === 'accentColor' ? /contrast of ([\d.]+):1/.exec(err.body.message) : null;
        setErrors({ [field]: contrast ? t('account.branding.accentContrast', { color: accent.trim(), ratio: lang === 'en' ? contrast[1] : contrast[1].replace('.', ',') }) : err.body.message });
        document.getElementById(`branding-${field}`)?.focus();
      } else {
        setErrors({ displayName: err instanceof Error ? err.message : String(err) });
      }
    } finally {
      setBusy(false);
    }
  };

  const described = (field: Field, help?: string) => (errors[field] ? `branding-${field}-error` : help);
  const error = (field: Field) => (errors[field] ? <p id={`branding-${field}-error`} class="field-error">{errors[field]}</p> : null);
  return (
    <section aria-labelledby="branding-title">
      <h2 id="branding-title">{t('account.branding')}</h2>
      <p class="hint">{t('account.branding.help')}</p>
      {current?.logo ? <p><img src={current.logo.url} alt={t('account.branding.logoCurrent')} height={40} /></p> : null}
      {saved ? <p role="status" class="notice">{t('account.branding.saved')}</p> : null}
      <form onSubmit={(e) => void save(e)} noValidate>
        <div class="field">
          <label for="branding-displayName">{t('account.branding.displayName')}</label>
          <input id="branding-displayName" maxLength={60} value={displayName} disabled={!editable} aria-invalid={errors.displayName ? 'true' : 'false'} aria-describedby={described('displayName')} onInput={(e) => setDisplayName((e.target as HTMLInputElement).value)} />
          {error('displayName')}
        </div>
        <div class="field">
          <label for="branding-accentColor">{t('account.branding.accent')}</label>
          <input id="branding-accentColor" maxLength={7} placeholder="#0f766e" value={accent} disabled={!editable} aria-invalid={errors.accentColor ? 'true' : 'false'} aria-describedby={described('accentColor', 'branding-accentColor-help')} onInput={(e) => setAccent((e.target as HTMLInputElement).value)} />
          {error('accentColor') ?? <p id="branding-accentColor-help" class="hint">{t('account.branding.accentHelp')}</p>}
        </div>
        <div class="field">
          <label for="branding-logo">{t('account.branding.logo')}</label>
          <input id="branding-logo" ref={fileInput} type="file" accept="image/png,image/jpeg,image/webp" disabled={!editable || removeLogo} aria-invalid={errors.logo ? 'true' : 'false'} aria-describedby={described('logo', 'branding-logo-help')} onChange={(e) => pick((e.target as HTMLInputElement).files?.[0])} />
          {error('logo') ?? <p id="branding-logo-help" class="hint">{t('account.branding.logoHelp')}</p>}
          {current?.logo ? (
            <label><input type="checkbox" checked={removeLogo} disabled={!editable} onChange={(e) => setRemoveLogo((e.target as HTMLInputElement).checked)} /> {t('account.branding.removeLogo')}</label>
          ) : null}
        </div>
        {editable ? <button type="submit" disabled={busy}>{t('common.save')}</button> : null}
      </form>
    </section>
  );
}

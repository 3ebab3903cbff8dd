import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, call, client, type Schemas } from '../api/client';
import { translate, type Lang } from '../i18n';

// Sign-in. Rendered in place of whatever page was asked for, so the URL stays that page's:
// after a session expires, signing in again shows the same page.
export function SignIn({ lang, notice, onSignedIn, onLang }: { lang: Lang; notice: 'expired' | 'signedOut' | null; onSignedIn: (s: Schemas['AdminSession']) => void; onLang: () => void }) {
  const t = (key: Parameters<typeof translate>[1]) => translate(lang, key);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${t('signIn.title')} · ${t('app.title')}`;
    heading.current?.focus();
  }, [lang]);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const session = await call(client.POST('/admin/session', { body: { email, password } }), { expireOn401: false });
      setPassword('');
      onSignedIn(session);
    } catch (err) {
      setError(err instanceof ApiFailure ? err.body.message : String(err));
      setBusy(false);
    }
  };
  return (
    <main id="main" class="signin">
      <div class="signin-lang">
        <button type="button" class="link" lang={lang === 'pt-BR' ? 'en' : 'pt-BR'} aria-label={t('lang.switchLabel')} onClick={onLang}>{t('lang.switch')}</button>
      </div>
      {/* void: Preact drops a handler's promise; submit shows its own failure. */}
      <form onSubmit={(e) => void submit(e)} class="card">
        <h1 tabIndex={-1} ref={heading}>{t('signIn.title')}</h1>
        {notice ? <p role="status" class="notice">{notice === 'expired' ? t('signIn.expired') : t('signIn.signedOut')}</p> : null}
        <div class="field">
          <label for="email">{t('signIn.email')}</label>
          <input id="email" name="email" type="email" autoComplete="username" required value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="password">{t('signIn.password')}</label>
          <input id="password" name="password" type="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword((e.target as HTMLInputElement).value)} />
        </div>
        {error ? <div role="alert" class="error">{error}</div> : null}
        <button type="submit" disabled={busy}>{t('signIn.submit')}</button>
      </form>
    </main>
  );
}

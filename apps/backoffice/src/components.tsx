import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, SessionExpired, newIdempotencyKey } from './api/client';
import { useApp } from './context';
import type { MessageKey } from './i18n';

// ---------------------------------------------------------------------------------------------
// Page: one h1 per screen, focused on arrival (so keyboard and screen-reader users start at the
// new content), and the document title.

// A confirmation that outlives a navigation ("Regra salva." on the list the form goes back to):
// the next Page shows it once, as a status message.
let pendingFlash: string | null = null;
export function flash(message: string): void {
  pendingFlash = message;
}

export function Page({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  const { t } = useApp();
  const heading = useRef<HTMLHeadingElement>(null);
  const [notice] = useState(() => {
    const message = pendingFlash;
    pendingFlash = null;
    return message;
  });
  useEffect(() => {
    document.title = `${title} · ${t('app.title')}`;
    heading.current?.focus();
  }, [title]);
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1} ref={heading}>{title}</h1>
        {actions ? <div class="actions">{actions}</div> : null}
      </div>
      {notice ? <p role="status" class="notice" data-flash>{notice}</p> : null}
      {children}
    </>
  );
}

// ---------------------------------------------------------------------------------------------
// Loading data

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  // The data shown is the previous deps' (a new query is on its way).
  stale: boolean;
  reload: () => void;
}

// A load answers for its deps: when they change (a filter, the next page), the data on screen is
// the previous query's until the new one arrives. That is known at render time, before the
// effect that starts the request runs, so `stale` is computed here and not left to the effect: a
// render that showed the old rows with no sign of loading (for as long as the request takes)
// would let an operator read another filter's list as this one's.
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const key = JSON.stringify(deps);
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean; key: string | undefined }>({ data: undefined, error: null, loading: true, key: undefined });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true, error: null }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false, key }),
      (error) => live && setState({ data: undefined, error, loading: false, key }),
    );
    return () => {
      live = false;
    };
  }, [key, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  const stale = state.key !== key;
  return { data: state.data, error: stale ? null : state.error, loading: state.loading || stale, stale, reload };
}

export function Loading() {
  const { t } = useApp();
  return <p role="status" class="muted">{t('common.loading')}</p>;
}

export function ErrorMessage({ error }: { error: unknown }) {
  const { t } = useApp();
  if (!error || error instanceof SessionExpired) return null;
  const failure = error instanceof ApiFailure ? error.body : null;
  return (
    <div role="alert" class="error">
      <strong>{t('common.error')}:</strong> {failure ? failure.message : String((error as Error).message ?? error)}
      {failure?.correlationId ? <span class="muted"> ({failure.correlationId})</span> : null}
    </div>
  );
}

// Shows a load's error, its spinner, or its content.
export function Loaded<T>({ state, children }: { state: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (state.error) return <ErrorMessage error={state.error} />;
  if (state.data === undefined) return <Loading />;
  // The previous query's content stays (dimmed, busy) while the new one loads, so the focus on a
  // pager's button or a row survives the change; the same element tree either way for that.
  return (
    <>
      {state.stale ? <Loading /> : null}
      <div class={state.stale ? 'loaded stale' : 'loaded'} aria-busy={state.stale ? 'true' : undefined}>{children(state.data)}</div>
    </>
  );
}

// ---------------------------------------------------------------------------------------------
// Small pieces

export function StatusBadge({ status }: { status: string }) {
  const { t } = useApp();
  const key = `status.${status}` as MessageKey;
  let text: string = status;
  try {
    text = t(key);
  } catch { /* unknown status: shown as is */ }
  return <span class={`badge badge-${status}`}>{text}</span>;
}

export function Pager({ hasMore, onNext, onPrevious }: { hasMore: boolean; onNext?: () => void; onPrevious?: () => void }) {
  const { t } = useApp();
  if (!hasMore && !onPrevious) return null;
  return (
    <nav class="pager" aria-label={`${t('common.previous')} / ${t('common.next')}`}>
      {onPrevious ? <button type="button" class="secondary" onClick={onPrevious}>{t('common.previous')}</button> : null}
      {hasMore && onNext ? <button type="button" class="secondary" onClick={onNext}>{t('common.next')}</button> : null}
    </nav>
  );
}

// Cursor paging over a list sorted newest first: the cursors seen so far, to go back.
export type Cursor = ReturnType<typeof useCursor>;
export function useCursor(resetKey: string) {
  const [stack, setStack] = useState<string[]>([]);
  useEffect(() => setStack([]), [resetKey]);
  const after = stack.length > 0 ? stack[stack.length - 1] : undefined;
  return {
    after,
    next: (lastId: string) => setStack((s) => [...s, lastId]),
    previous: stack.length > 0 ? () => setStack((s) => s.slice(0, -1)) : undefined,
  };
}

// A loaded page of a list, then its pager.
export function Paged<T extends { id: string }>({ state, cursor, children }: { state: Loaded<{ data: T[]; hasMore: boolean }>; cursor: Cursor; children: (rows: T[]) => ComponentChildren }) {
  return (
    <Loaded state={state}>{(page) => (
      <>
        {children(page.data)}
        <Pager hasMore={page.hasMore} onNext={() => cursor.next(page.data[page.data.length - 1].id)} onPrevious={cursor.previous} />
      </>
    )}</Loaded>
  );
}

// ---------------------------------------------------------------------------------------------
// Confirmation dialog, with a reason when the action asks for one. A native <dialog> opened
// modally: focus moves into it and stays there, Escape closes it. The caller unmounts it to close
// it, and a dialog removed from the page gives focus back to nothing (<body>): so it remembers the
// element that had the focus when it opened (the button that opened it) and focuses it again
// when it goes. A caller whose opener disappears with the change (a button that only exists in
// the old state) moves the focus itself afterwards.

export interface ConfirmProps {
  title: string;
  message: string;
  confirmLabel: string;
  reason: 'required' | 'optional' | 'none';
  children?: ComponentChildren; // extra fields
  // Resolves 'stay' to keep the dialog open without an error of its own (the caller shows the
  // problem on its fields).
  onConfirm: (reason: string | undefined, idempotencyKey: string) => Promise<void | 'stay'>;
  onClose: () => void;
}

export function ConfirmDialog({ title, message, confirmLabel, reason, children, onConfirm, onClose }: ConfirmProps) {
  const { t } = useApp();
  const dialog = useRef<HTMLDialogElement>(null);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [missing, setMissing] = useState(false);
  // One key for this dialog: submitting again after a lost answer replays it.
  const [key] = useState(newIdempotencyKey);
  // Read on the first render, before showModal moves the focus into the dialog.
  const [opener] = useState(() => (document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : null));
  useEffect(() => {
    const d = dialog.current;
    if (d && !d.open) d.showModal();
    return () => {
      d?.close();
      if (opener?.isConnected) opener.focus();
    };
  }, []);
  // Closing: the dialog closed and the focus given back here and now, then the caller told (it
  // unmounts the dialog, whose cleanup above does the same again, for a caller that unmounts it
  // otherwise). Left to the unmount alone, the focus came back a moment after the dialog had
  // left the page, and could land after the next key a fast user pressed (Chromium 156).
  // Once: d.close() below queues the dialog's own close event, which calls this again, maybe
  // after the user has moved the focus on.
  const closed = useRef(false);
  const close = () => {
    if (closed.current) return;
    closed.current = true;
    const d = dialog.current;
    if (d?.open) d.close();
    if (opener?.isConnected) opener.focus();
    onClose();
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    const trimmed = text.trim();
    if (reason === 'required' && trimmed === '') {
      setMissing(true);
      return;
    }
    setBusy(true);
    setError(null);
    try {
      if ((await onConfirm(trimmed === '' ? undefined : trimmed, key)) === 'stay') {
        setBusy(false);
        return;
      }
      close();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  return (
    <dialog ref={dialog} aria-labelledby="confirm-title" aria-describedby="confirm-message" onClose={close} onCancel={(e) => {
      // Escape: closed here (above), not by the browser after this event.
      e.preventDefault();
      close();
    }}>
      {/* void: Preact drops a handler's promise; submit shows its own failure. */}
      <form onSubmit={(e) => void submit(e)} noValidate>
        <h2 id="confirm-title">{title}</h2>
        <p id="confirm-message">{message}</p>
        {children}
        {reason !== 'none' ? (
          <div class="field">
            <label for="confirm-reason">{reason === 'required' ? t('common.reason') : t('common.reasonOptional')}</label>
            <textarea
              id="confirm-reason"
              name="reason"
              rows={3}
              maxLength={500}
              required={reason === 'required'}
              aria-required={reason === 'required'}
              aria-invalid={missing}
              aria-describedby="confirm-reason-help"
              value={text}
              onInput={(e) => {
                setText((e.target as HTMLTextAreaElement).value);
                setMissing(false);
              }}
            />
            <p id="confirm-reason-help" class={missing ? 'field-error' : 'hint'}>{missing ? t('common.reasonRequired') : t('common.reasonHelp')}</p>
          </div>
        ) : null}
        <ErrorMessage error={error} />
        <div class="dialog-actions">
          <button type="button" class="secondary" onClick={close}>{t('common.cancel')}</button>
          <button type="submit" disabled={busy}>{confirmLabel}</button>
        </div>
      </form>
    </dialog>
  );
}

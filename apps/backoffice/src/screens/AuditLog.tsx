import { useState } from 'preact/hooks';
import { call, client, type Schemas } from '../api/client';
import { Page, Paged, useCursor, useLoad } from '../components';
import { useApp } from '../context';
import { Link, navigate, queryString, useLocation } from '../router';

type Entry = Schemas['AuditEntry'];

export function AuditLog() {
  const { t, dateTime } = useApp();
  const { query } = useLocation();
  const filters = { action: query.get('action') ?? '', objectType: query.get('objectType') ?? '', objectId: query.get('objectId') ?? '', actorEmail: query.get('actorEmail') ?? '' };
  const [form, setForm] = useState(filters);
  const cursor = useCursor(JSON.stringify(filters));
  const entries = useLoad(() => call(client.GET('/admin/audit-log', {
    params: { query: { limit: 25, action: filters.action || undefined, objectType: filters.objectType || undefined, objectId: filters.objectId || undefined, actorEmail: filters.actorEmail || undefined, startingAfter: cursor.after } },
  })), [JSON.stringify(filters), cursor.after]);
  const set = (name: keyof typeof form) => (e: Event) => setForm({ ...form, [name]: (e.target as HTMLInputElement).value });
  return (
    <Page title={t('audit.title')}>
      <p class="hint">{t('audit.help')}</p>
      <form role="search" class="filters" onSubmit={(e) => {
        e.preventDefault();
        navigate(`/audit-log${queryString({ action: form.action.trim(), objectType: form.objectType.trim(), objectId: form.objectId.trim(), actorEmail: form.actorEmail.trim() })}`);
      }}>
        <div class="field"><label for="a-action">{t('audit.action')}</label><input id="a-action" value={form.action} onInput={set('action')} placeholder="split_rule.update" /></div>
        <div class="field"><label for="a-type">{t('audit.objectType')}</label><input id="a-type" value={form.objectType} onInput={set('objectType')} placeholder="split_rule" /></div>
        <div class="field"><label for="a-id">{t('audit.objectId')}</label><input id="a-id" value={form.objectId} onInput={set('objectId')} /></div>
        <div class="field"><label for="a-actor">{t('audit.actorEmail')}</label><input id="a-actor" type="email" value={form.actorEmail} onInput={set('actorEmail')} /></div>
        <button type="submit">{t('common.search')}</button>
      </form>
      <Paged state={entries} cursor={cursor}>{(rows) => (
        // Fixed column widths (styles.css, table.audit): the page fits a laptop's window and the
        // changes column keeps room for its values instead of being squeezed to one character.
        <div class="table-scroll" role="region" aria-labelledby="audit-caption" tabIndex={0}>
          <table class="audit">
            <caption id="audit-caption" class="sr-only">{t('audit.title')}</caption>
            <colgroup><col class="c-when" /><col class="c-who" /><col class="c-action" /><col class="c-reason" /><col class="c-origin" /><col class="c-changes" /></colgroup>
            <thead><tr><th scope="col">{t('audit.when')}</th><th scope="col">{t('audit.who')}</th><th scope="col">{t('audit.action')} / {t('audit.object')}</th><th scope="col">{t('audit.reason')}</th><th scope="col">{t('audit.origin')}</th><th scope="col">{t('audit.changes')}</th></tr></thead>
            <tbody>
              {rows.length === 0 ? <tr><td colSpan={6}>{t('common.empty')}</td></tr> : rows.map((e) => (
                <tr key={e.id} data-audit-action={e.action} data-object-id={e.objectId}>
                  <td>{dateTime(e.createdAt)}</td>
                  <td><span class="wrap-anywhere">{e.actor.email}</span><br /><span class="muted">{e.actor.role === 'admin' || e.actor.role === 'viewer' ? t(`session.role.${e.actor.role}`) : e.actor.role}</span></td>
                  <td><code>{e.action}</code><br /><span class="muted">{e.objectType}</span> <code class="small">{e.objectId}</code>{e.accountId ? <><br /><Link href={`/accounts/${e.accountId}`} data-merchant-name>{e.accountName ?? e.accountId}</Link></> : null}</td>
                  <td>{e.reason ?? '—'}</td>
                  <td><code>{e.ip}</code><br /><span class="muted small wrap-anywhere" title={e.userAgent ?? undefined}>{e.userAgent ?? ''}</span></td>
                  <td><Changes entry={e} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}</Paged>
    </Page>
  );
}

// A value as JSON: an array of objects (a rule's splits, an account's rule order) one element a
// line, anything else on one line; `pre-wrap` wraps a long line at the column's width.
const show = (value: unknown): string => {
  if (value === undefined) return '—';
  if (Array.isArray(value) && value.some((v) => v !== null && typeof v === 'object')) return `[\n${value.map((v) => JSON.stringify(v)).join(',\n')}\n]`;
  return JSON.stringify(value);
};

// The fields that differ between before and after (all of them for a creation), as a list: the
// field, then its value before and after (marked as deleted and inserted text).
function Changes({ entry }: { entry: Entry }) {
  const { t } = useApp();
  const before = (entry.before ?? {}) as Record<string, unknown>;
  const after = (entry.after ?? {}) as Record<string, unknown>;
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
  return (
    <details>
      <summary>{t('audit.showChanges', { n: fields.length })}<span class="sr-only"> ({entry.id})</span></summary>
      {fields.length === 0 ? <p class="muted">{t('audit.noChanges')}</p> : (
        <dl class="diff">
          {fields.map((f) => (
            <div key={f} data-field={f}>
              <dt><code>{f}</code></dt>
              <dd class="before"><span class="diff-label">{t('audit.before')}</span><pre data-before>{entry.before === null ? '—' : <del>{show(before[f])}</del>}</pre></dd>
              <dd class="after"><span class="diff-label">{t('audit.after')}</span><pre data-after>{entry.after === null ? '—' : <ins>{show(after[f])}</ins>}</pre></dd>
            </div>
          ))}
        </dl>
      )}
    </details>
  );
}

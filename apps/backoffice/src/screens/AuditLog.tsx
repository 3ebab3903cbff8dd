import { useState } from 'preact/hooks';
import { call, client, type Schemas } from '../api/client';
import { Page, Paged, useCursor, useLoad } from '../components';
import { useApp } from '../context';
import { navigate, queryString, useLocation } from '../router';

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
        <>
          <table class="audit">
            <caption class="sr-only">{t('audit.title')}</caption>
            <thead><tr><th scope="col">{t('audit.when')}</th><th scope="col">{t('audit.who')}</th><th scope="col">{t('audit.action')}</th><th scope="col">{t('audit.object')}</th><th scope="col">{t('audit.reason')}</th><th scope="col">{t('audit.origin')}</th><th scope="col">{t('audit.changes')}</th></tr></thead>
            <tbody>
              {rows.length === 0 ? <tr><td colSpan={7}>{t('common.empty')}</td></tr> : rows.map((e) => (
                <tr key={e.id} data-audit-action={e.action} data-object-id={e.objectId}>
                  <td>{dateTime(e.createdAt)}</td>
                  <td>{e.actor.email}<br /><span class="muted">{e.actor.role === 'admin' || e.actor.role === 'viewer' ? t(`session.role.${e.actor.role}`) : e.actor.role}</span></td>
                  <td class="nowrap"><code>{e.action}</code></td>
                  <td>{e.objectType}<br /><code>{e.objectId}</code></td>
                  <td>{e.reason ?? '—'}</td>
                  <td>{e.ip}<br /><span class="muted small">{e.userAgent ?? ''}</span></td>
                  <td><Changes entry={e} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}</Paged>
    </Page>
  );
}

const show = (value: unknown) => (value === undefined ? '—' : JSON.stringify(value));

// The fields that differ between before and after (all of them for a creation).
function Changes({ entry }: { entry: Entry }) {
  const { t } = useApp();
  const before = (entry.before ?? {}) as Record<string, unknown>;
  const after = (entry.after ?? {}) as Record<string, unknown>;
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
  return (
    <details>
      <summary>{t('audit.showChanges')}<span class="sr-only"> ({entry.id})</span></summary>
      <table class="changes">
        <thead><tr><th scope="col">{t('audit.field')}</th><th scope="col">{t('audit.before')}</th><th scope="col">{t('audit.after')}</th></tr></thead>
        <tbody>
          {fields.map((f) => (
            <tr key={f} data-field={f}>
              <th scope="row">{f}</th>
              <td><code data-before>{entry.before === null ? '—' : show(before[f])}</code></td>
              <td><code data-after>{entry.after === null ? '—' : show(after[f])}</code></td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

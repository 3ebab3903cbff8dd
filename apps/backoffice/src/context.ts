import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Schemas } from './api/client';
import { formatDate, formatDateTime, formatMoney, formatPercent, translate, type Lang, type MessageKey } from './i18n';

export type AdminSession = Schemas['AdminSession'];
export type Permission = AdminSession['permissions'][number];

export interface AppState {
  session: AdminSession;
  lang: Lang;
}

export const AppContext = createContext<AppState | null>(null);

// What every screen needs: the words, the formats and what the signed-in role may do. Screens
// and controls a role cannot use are not rendered at all (the server refuses them anyway).
export function useApp() {
  const state = useContext(AppContext);
  if (!state) throw new Error('useApp outside AppContext');
  const { session, lang } = state;
  return {
    session,
    lang,
    t: (key: MessageKey, params?: Record<string, string | number>) => translate(lang, key, params),
    can: (permission: Permission) => session.permissions.includes(permission),
    money: (cents: number) => formatMoney(lang, cents),
    percent: (p: number) => formatPercent(lang, p),
    dateTime: (iso: string) => formatDateTime(lang, iso),
    date: (ymd: string) => formatDate(lang, ymd),
  };
}

import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

// A small history router under /backoffice (the server answers index.html for every path below
// it). Paths in the app are written without the base: `/accounts/acct_...`.
export const BASE = '/backoffice';
const CHANGE = 'backoffice:navigate';

export interface Location {
  path: string;
  query: URLSearchParams;
}

function current(): Location {
  const path = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) || '/' : '/';
  return { path: path.length > 1 ? path.replace(/\/+$/, '') : path, query: new URLSearchParams(window.location.search) };
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = BASE + (to.startsWith('/') ? to : `/${to}`);
  if (options.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  window.dispatchEvent(new Event(CHANGE));
}

export function useLocation(): Location {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const update = () => setLocation(current());
    window.addEventListener('popstate', update);
    window.addEventListener(CHANGE, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(CHANGE, update);
    };
  }, []);
  return location;
}

// `/accounts/:id` against `/accounts/acct_1` → { id: 'acct_1' }; null when it does not match.
export function match(pattern: string, path: string): Record<string, string> | null {
  const names: string[] = [];
  const regex = new RegExp('^' + pattern.replace(/:(\w+)/g, (_, name: string) => {
    names.push(name);
    return '([^/]+)';
  }) + '$');
  const m = regex.exec(path);
  if (!m) return null;
  return Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1])]));
}

export function queryString(params: Record<string, string | number | boolean | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

interface LinkProps {
  href: string;
  children: ComponentChildren;
  class?: string;
  'aria-current'?: 'page';
  'aria-label'?: string;
}

export function Link({ href, children, ...rest }: LinkProps) {
  return (
    <a
      {...rest}
      href={BASE + href}
      onClick={(e) => {
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}

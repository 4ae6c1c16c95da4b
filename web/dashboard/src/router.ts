import { useEffect, useState } from 'preact/hooks';

/** Client routes live under /dashboard; the server answers index.html for every extensionless path there. */
export const BASE = '/dashboard';

const listeners = new Set<() => void>();

export function currentPath(): string {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '/';
  return path === '' ? '/' : path;
}

export function href(path: string): string {
  return `${BASE}${path}`;
}

/** Goes to a client route (pushState), or replaces the current entry (redirects). */
export function navigate(path: string, options: { replace?: boolean } = {}): void {
  const url = href(path);
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const l of listeners) l();
  // A new page: start reading from the top, and let screen readers land on its heading.
  window.scrollTo(0, 0);
  queueMicrotask(() => document.querySelector<HTMLElement>('main h1')?.focus());
}

/** The current path plus query, re-rendering on navigation and on back/forward. */
export function useRoute(): { path: string; search: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const bump = () => setTick((n) => n + 1);
    listeners.add(bump);
    window.addEventListener('popstate', bump);
    return () => {
      listeners.delete(bump);
      window.removeEventListener('popstate', bump);
    };
  }, []);
  return { path: currentPath(), search: new URLSearchParams(location.search) };
}

/** Left clicks on in-app links navigate without a reload; modified clicks (new tab) keep the browser's behaviour. */
export function onLinkClick(event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
    return;
  const anchor = (event.target as Element).closest('a');
  if (!anchor || anchor.target || anchor.origin !== location.origin || !anchor.pathname.startsWith(BASE)) return;
  if (/\.[a-z0-9]+$/i.test(anchor.pathname)) return;
  event.preventDefault();
  navigate(anchor.pathname.slice(BASE.length) + anchor.search);
}

import { signal } from './signal.ts';

/** The page's address (path and query) as components follow it. */
export const route = signal({ path: location.pathname, query: new URLSearchParams(location.search) });

export function navigate(href: string, replace = false) {
  const url = new URL(href, location.origin);
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  route.set({ path: url.pathname, query: url.searchParams });
  if (!replace) window.scrollTo(0, 0);
}

/**
 * Where `next` (of /sign-in) may lead: a page of this origin, never the sign-in page again;
 * anything else (`//host`, `/\host`, `https://host`) leads to `/`.
 */
export function pageAfterSignIn(next: string | null): string {
  if (!next?.startsWith('/')) return '/';
  try {
    // Resolved as the browser would: `/\host` is `//host`, another origin (`//[` no URL at all).
    const url = new URL(next, location.origin);
    if (url.origin === location.origin && !url.pathname.startsWith('/sign-in')) return url.pathname + url.search + url.hash;
  } catch {}
  return '/';
}

addEventListener('popstate', () => route.set({ path: location.pathname, query: new URLSearchParams(location.search) }));

/** Links of the app move without a reload (plain left clicks only: a new tab stays a new tab). */
addEventListener('click', (event) => {
  const a = (event.target as Element | null)?.closest?.('a');
  if (!a || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const href = a.getAttribute('href');
  if (!href?.startsWith('/') || href.startsWith('//') || href.startsWith('/api/') || a.hasAttribute('download')) return;
  event.preventDefault();
  navigate(href);
});

/** `/questions/12` against `/questions/:id`: the parameters, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/');
  const s = path.split('/');
  if (p.length !== s.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i]!.startsWith(':')) params[p[i]!.slice(1)] = decodeURIComponent(s[i]!);
    else if (p[i] !== s[i]) return null;
  }
  return params;
}

import { ApiError, KnClient, type ResponseOf } from '@kn/client/http';
import { setLanguage } from './i18n.ts';
import { navigate } from './router.ts';
import { signal } from './signal.ts';

/*
 * The API, only through @kn/client, on the page's own origin. The credential is the gateway's
 * HttpOnly session cookie, which this script never sees; what it keeps is the session's CSRF
 * token, sent as X-CSRF-Token with every request (the gateway asks for it on changes).
 * /session (sign in, the CSRF token, sign out) is the gateway's, beside the API.
 */

export type Me = ResponseOf<'getMe'>;
export type User = ResponseOf<'getUser'>;
export const me = signal<Me | null>(null);
/** The languages of the person's content settings: what the question list offers to filter by. */
export const contentLanguages = signal<string[]>([]);
export const unseen = signal(0);
/** Set when a request found the session gone: the sign-in page says so. */
export const expired = signal(false);

// No retries: the person sees at once what the API said (SearchIndexLoading, say) and tries again.
let client = new KnClient({ baseUrl: '/api/v1', retry: false });
export const kn = () => client;

function useCsrf(csrf: string) {
  client = new KnClient({ baseUrl: '/api/v1', retry: false, headers: { 'x-csrf-token': csrf } });
}

async function sessionError(res: Response) {
  return new ApiError(
    'session',
    res.status,
    await res.json().catch(() => ({ code: 'InternalError', message: res.statusText })),
    res.headers,
  );
}

/** After sign-in or on load with a live session: who the person is, in their language. */
async function loadPerson() {
  const [person, settings] = await Promise.all([kn().call('getMe'), kn().call('getLanguageSettings')]);
  setLanguage(settings.interface_language);
  contentLanguages.set(settings.content_languages);
  me.set(person);
  void refreshUnseen();
}

/** On load: the session of the cookie, if it is still good. */
export async function resume(): Promise<boolean> {
  const res = await fetch('/session', { headers: { accept: 'application/json' } });
  if (!res.ok) return false;
  useCsrf(((await res.json()) as { csrf: string }).csrf);
  await loadPerson();
  return true;
}

export async function signIn(email: string, password: string) {
  const res = await fetch('/session', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  if (!res.ok) throw await sessionError(res);
  useCsrf(((await res.json()) as { csrf: string }).csrf);
  expired.set(false);
  await loadPerson();
}

export async function signOut() {
  await fetch('/session', { method: 'DELETE', headers: { 'x-csrf-token': client.options.headers?.['x-csrf-token'] ?? '' } });
  client = new KnClient({ baseUrl: '/api/v1', retry: false });
  me.set(null);
  unseen.set(0);
  users.clear();
  navigate('/sign-in');
}

/** A request that found the session gone (expired, revoked): back to the sign-in page, which says why. */
export function sessionLost(err: unknown): boolean {
  if (!(err instanceof ApiError) || err.status !== 401 || !me.get()) return false;
  me.set(null);
  users.clear();
  expired.set(true);
  navigate(`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`);
  return true;
}

export async function refreshUnseen() {
  if (!me.get()) return;
  try {
    unseen.set((await kn().call('countUnseenNotifications')).notifications);
  } catch (err) {
    sessionLost(err);
  }
}

// People by id, each asked for once in a session however many authors a page names: a page asks
// for all the authors it has not seen yet in one request (GET /users/by-id).
const users = new Map<number, Promise<User | null>>();
const BATCH = 100;
export function usersOf(ids: readonly number[]): Promise<Map<number, User>> {
  const missing = [...new Set(ids)].filter((id) => !users.has(id));
  for (let i = 0; i < missing.length; i += BATCH) {
    const chunk = missing.slice(i, i + BATCH);
    const read = kn()
      .call('listUsersById', { query: { ids: chunk.join(',') } as never })
      .then(({ items }) => new Map(items.map((u) => [u.id, u])))
      .catch(() => {
        for (const id of chunk) users.delete(id);
        return new Map<number, User>();
      });
    for (const id of chunk)
      users.set(
        id,
        read.then((found) => found.get(id) ?? null),
      );
  }
  return Promise.all(ids.map((id) => users.get(id)!)).then((found) => new Map(found.flatMap((u) => (u ? [[u.id, u] as const] : []))));
}
export const userOf = (id: number) => usersOf([id]).then((found) => found.get(id) ?? null);

export const hasRole = (...roles: string[]) => roles.some((r) => me.get()?.roles?.includes(r as never));
/** Content administrators: they may edit, validate and attach to anyone's questions and solutions. */
export const isContentAdmin = () => hasRole('content_admin', 'super_admin');

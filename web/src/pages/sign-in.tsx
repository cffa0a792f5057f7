import { useEffect, useState } from 'preact/hooks';
import { expired, signIn } from '../api.ts';
import { t } from '../i18n.ts';
import { navigate, pageAfterSignIn, route } from '../router.ts';
import { useSignal } from '../signal.ts';
import { ErrorBox, Page, useAction } from '../ui.tsx';

export function SignInPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  // Single sign-on (docs/sso.md): a link per protocol the gateway has an identity provider for.
  const [providers, setProviders] = useState<Array<{ href: string; name: string }>>([]);
  useEffect(() => {
    const next = encodeURIComponent(pageAfterSignIn(route.get().query.get('next')));
    const offered = (path: string) =>
      fetch(path, { headers: { accept: 'application/json' } })
        .then((res) => (res.ok ? (res.json() as Promise<{ enabled: boolean; name: string | null }>) : null))
        .then((answer) => (answer?.enabled && answer.name ? [{ href: `${path}/start?next=${next}`, name: answer.name }] : []))
        .catch(() => []);
    Promise.all([offered('/auth/oidc'), offered('/auth/saml')]).then((lists) => setProviders(lists.flat()));
  }, []);
  const action = useAction();
  const wasExpired = useSignal(expired);
  const submit = async (event: Event) => {
    event.preventDefault();
    const ok = await action.run(() => signIn(email, password));
    if (!ok) return;
    const next = pageAfterSignIn(route.get().query.get('next'));
    // The consent page of an assistant's connection (docs/mcp.md) is the gateway's, not the app's: the whole page goes.
    if (next.startsWith('/oauth/')) location.assign(next);
    else navigate(next, true);
  };
  return (
    <Page title={t('signIn.title')}>
      {wasExpired && (
        <p class="error" role="alert">
          {t('signIn.expired')}
        </p>
      )}
      {providers.map(({ href, name }) => (
        <p class="narrow" key={href}>
          <a
            href={href}
            // A page of the gateway's that leads on to the provider: the whole page goes, not the app's router.
            onClick={(event) => {
              event.preventDefault();
              location.assign(href);
            }}
          >
            {t('signIn.sso', { name })}
          </a>
        </p>
      ))}
      <form class="narrow" onSubmit={submit}>
        <label for="email">{t('signIn.email')}</label>
        <input id="email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        <label for="password">{t('signIn.password')}</label>
        <input
          id="password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
        <ErrorBox error={action.error} />
        <button type="submit" disabled={action.busy}>
          {t('signIn.submit')}
        </button>
      </form>
    </Page>
  );
}

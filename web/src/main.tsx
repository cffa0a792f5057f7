import { render } from 'preact';
import { useEffect } from 'preact/hooks';
import { expired, hasRole, me, refreshUnseen, resume, signOut, unseen } from './api.ts';
import { language, setLanguage, t } from './i18n.ts';
import { AdminPage } from './pages/admin.tsx';
import { AnalyticsPage } from './pages/analytics.tsx';
import { AskPage } from './pages/ask.tsx';
import { ChatLinkPage } from './pages/chat.tsx';
import { ExpertsPage } from './pages/experts.tsx';
import { NotFoundPage } from './pages/not-found.tsx';
import { NotificationsPage } from './pages/notifications.tsx';
import { ProfilePage } from './pages/profile.tsx';
import { QuestionPage } from './pages/question.tsx';
import { QuestionsPage } from './pages/questions.tsx';
import { ReviewPage } from './pages/review.tsx';
import { SettingsPage } from './pages/settings.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { match, navigate, route } from './router.ts';
import { useSignal } from './signal.ts';
import { Avatar, Loading } from './ui.tsx';

/** How often the unseen count is asked for while the page is open (and on every move and focus). */
const UNSEEN_POLL_MS = 15_000;

function Nav() {
  const count = useSignal(unseen);
  const person = useSignal(me);
  const path = useSignal(route).path;
  const link = (href: string, label: string, badge?: number) => (
    <li>
      <a href={href} aria-current={path === href ? 'page' : undefined}>
        {label}
        {badge !== undefined && (
          <span class="badge" data-testid="unseen">
            {' '}
            {badge}
            <span class="visually-hidden"> {t('nav.unseenSuffix')}</span>
          </span>
        )}
      </a>
    </li>
  );
  return (
    <nav aria-label={t('nav.main')}>
      <ul>
        {link('/', t('nav.questions'))}
        {link('/ask', t('nav.ask'))}
        {link('/experts', t('nav.experts'))}
        {link('/notifications', t('nav.notifications'), count > 0 ? count : undefined)}
        {link('/settings', t('nav.settings'))}
        {link('/review', t('nav.review'))}
        {hasRole('manager', 'content_admin', 'super_admin') && link('/analytics', t('nav.analytics'))}
        {hasRole('settings_admin', 'super_admin') && link('/admin', t('nav.admin'))}
        {person && (
          <li>
            {/* One's own profile, as a picture (or initials) the way other sites show the person signed in. */}
            <a
              class="me"
              href={`/users/${person.id}`}
              aria-current={path === `/users/${person.id}` ? 'page' : undefined}
              title={t('nav.profile')}
            >
              <Avatar user={person} />
              <span class="visually-hidden">{t('nav.profile')}</span>
            </a>
          </li>
        )}
        <li>
          <button type="button" class="link" onClick={() => void signOut()}>
            {t('nav.signOut')}
          </button>
        </li>
      </ul>
    </nav>
  );
}

function Routes() {
  const { path } = useSignal(route);
  if (path === '/') return <QuestionsPage />;
  if (path === '/ask') return <AskPage />;
  if (path === '/experts') return <ExpertsPage />;
  if (path === '/notifications') return <NotificationsPage />;
  if (path === '/settings') return <SettingsPage />;
  if (path === '/admin') return <AdminPage />;
  if (path === '/chat/link') return <ChatLinkPage />;
  if (path === '/analytics') return <AnalyticsPage />;
  if (path === '/review') return <ReviewPage />;
  const question = match('/questions/:id', path);
  if (question && /^\d+$/.test(question.id!)) return <QuestionPage id={Number(question.id)} />;
  const profile = match('/users/:id', path);
  if (profile && /^\d+$/.test(profile.id!)) return <ProfilePage id={Number(profile.id)} />;
  return <NotFoundPage />;
}

function App({ ready }: { ready: boolean }) {
  const person = useSignal(me);
  const { path } = useSignal(route);
  useSignal(language);
  useSignal(expired);
  useEffect(() => {
    if (!person) return;
    const timer = setInterval(() => void refreshUnseen(), UNSEEN_POLL_MS);
    const onFocus = () => void refreshUnseen();
    addEventListener('focus', onFocus);
    return () => {
      clearInterval(timer);
      removeEventListener('focus', onFocus);
    };
  }, [person]);
  useEffect(() => {
    void refreshUnseen();
  }, [path]);
  if (!ready) return <Loading />;
  return (
    <>
      <a class="skip" href="#main">
        {t('app.skip')}
      </a>
      <header>
        <a class="brand" href="/">
          {t('app.name')}
        </a>
        {person && <Nav />}
      </header>
      <main id="main" tabIndex={-1}>
        {person ? <Routes /> : <SignInPage />}
      </main>
    </>
  );
}

// Until the person's setting is known (signed in), the browser's language.
setLanguage(navigator.language.slice(0, 2));
const root = document.getElementById('app')!;
render(<App ready={false} />, root);
resume()
  .catch(() => false)
  .then((signedIn) => {
    if (!signedIn && route.get().path !== '/sign-in')
      navigate(`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`, true);
    if (signedIn && route.get().path === '/sign-in') navigate('/', true);
    render(<App ready={true} />, root);
  });

import { type ComponentChildren, render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { expired, hasRole, type Me, me, refreshUnseen, resume, signOut, unseen } from './api.ts';
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

/** On a phone, notifications are a bell (the word stays for screen readers). */
const BELL = (
  <svg class="nav-icon" aria-hidden="true" viewBox="0 0 24 24" width="20" height="20">
    <path
      fill="currentColor"
      d="M12 22a2.5 2.5 0 0 0 2.5-2.5h-5A2.5 2.5 0 0 0 12 22m7-6v-5a7 7 0 0 0-5.5-6.8V3a1.5 1.5 0 0 0-3 0v1.2A7 7 0 0 0 5 11v5l-2 2v1h18v-1z"
    />
  </svg>
);

function Nav() {
  const count = useSignal(unseen);
  const person = useSignal(me);
  const path = useSignal(route).path;
  const link = (href: string, label: string, badge?: number, icon?: ComponentChildren) => (
    <li>
      <a href={href} aria-current={path === href ? 'page' : undefined}>
        {icon}
        {icon ? <span class="nav-label">{label}</span> : label}
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
  // What everyone uses in the header; the rest (one's profile, settings, review, analytics,
  // administration, signing out) in a menu under one's picture: one line on a phone.
  return (
    <nav aria-label={t('nav.main')}>
      <ul>
        {link('/', t('nav.questions'))}
        {link('/ask', t('nav.ask'))}
        {link('/experts', t('nav.experts'))}
        {link('/notifications', t('nav.notifications'), count > 0 ? count : undefined, BELL)}
        {person && (
          <AccountMenu person={person} path={path}>
            {link(`/users/${person.id}`, t('nav.profile'))}
            {link('/settings', t('nav.settings'))}
            {link('/review', t('nav.review'))}
            {hasRole('manager', 'content_admin', 'super_admin') && link('/analytics', t('nav.analytics'))}
            {hasRole('settings_admin', 'super_admin') && link('/admin', t('nav.admin'))}
            <li>
              <button type="button" class="link" onClick={() => void signOut()}>
                {t('nav.signOut')}
              </button>
            </li>
          </AccountMenu>
        )}
      </ul>
    </nav>
  );
}

/**
 * A disclosure under the person's picture (or initials): a button that says whether it is open,
 * then its list. Escape closes it (back on the button), as do a click elsewhere, focus leaving it,
 * and moving to another page.
 */
function AccountMenu({ person, path, children }: { person: Me; path: string; children: ComponentChildren }) {
  const [open, setOpen] = useState(false);
  const box = useRef<HTMLLIElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => setOpen(false), [path]);
  useEffect(() => {
    if (!open) return;
    const outside = (e: Event) => !box.current?.contains(e.target as Node) && setOpen(false);
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      setOpen(false);
      button.current?.focus();
    };
    addEventListener('click', outside);
    addEventListener('focusin', outside);
    addEventListener('keydown', onKey);
    return () => {
      removeEventListener('click', outside);
      removeEventListener('focusin', outside);
      removeEventListener('keydown', onKey);
    };
  }, [open]);
  return (
    <li class="account" ref={box}>
      <button
        ref={button}
        type="button"
        class="me"
        aria-expanded={open}
        aria-controls="account-menu"
        title={t('nav.account')}
        onClick={() => setOpen(!open)}
      >
        <Avatar user={person} />
        <span class="visually-hidden">{t('nav.account')}</span>
      </button>
      <ul id="account-menu" hidden={!open}>
        {children}
      </ul>
    </li>
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

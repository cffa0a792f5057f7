import type { ResponseOf } from '@kn/client/http';
import { useEffect } from 'preact/hooks';
import { kn, refreshUnseen } from '../api.ts';
import type { MessageKey } from '../i18n/en.ts';
import { language, t } from '../i18n.ts';
import { useSignal } from '../signal.ts';
import { ErrorBox, Loading, Page, PersonLink, useAction, useLoad, When } from '../ui.tsx';

type Notification = ResponseOf<'listNotifications'>['items'][number];

/** The day of a moment in the person's time zone, as a heading: "Today", "Yesterday", or the date. */
function dayOf(iso: string, lang: string, now = new Date()) {
  const day = new Date(iso);
  const midnight = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const days = Math.round((midnight(now) - midnight(day)) / 86_400_000);
  if (days === 0 || days === 1) {
    const word = new Intl.RelativeTimeFormat(lang, { numeric: 'auto' }).format(-days, 'day');
    return word.charAt(0).toLocaleUpperCase(lang) + word.slice(1);
  }
  return day.toLocaleDateString(lang, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' });
}

/** Notifications newest first, by day: who did what, read or not; opening the page counts them as seen. */
export function NotificationsPage() {
  const lang = useSignal(language);
  const list = useLoad(() => kn().call('listNotifications', { query: { limit: 50 } }), []);
  const action = useAction();
  const act = (run: () => Promise<unknown>) =>
    action.run(run).then(() => {
      list.reload();
      void refreshUnseen();
    });
  // Seen once they were shown: the count in the navigation goes.
  useEffect(() => {
    if (list.data?.items.some((n) => !n.is_seen))
      void kn()
        .call('markAllNotificationsSeen')
        .then(() => refreshUnseen())
        .catch(() => {});
  }, [list.data]);
  const groups = new Map<string, Notification[]>();
  for (const n of list.data?.items ?? []) {
    const day = dayOf(n.created, lang);
    groups.set(day, [...(groups.get(day) ?? []), n]);
  }
  const unread = list.data?.items.some((n) => !n.is_read);
  return (
    <Page title={t('notifications.title')}>
      {unread && (
        <div class="actions">
          <button
            type="button"
            class="secondary"
            disabled={action.busy}
            onClick={() => void act(() => kn().call('markAllNotificationsRead'))}
          >
            {t('notifications.allRead')}
          </button>
        </div>
      )}
      <ErrorBox error={action.error ?? list.error} />
      {!list.data && list.loading && <Loading lines={6} />}
      {list.data?.items.length === 0 && <p>{t('notifications.empty')}</p>}
      {[...groups].map(([day, items]) => (
        <section key={day} aria-label={day}>
          <h2 class="day">{day}</h2>
          <ul class="notifications">
            {items.map((n) => (
              <li key={n.id} class={n.is_read ? 'read' : 'unread'}>
                {/* Unread: the bar beside it and its words in bold; screen readers hear "unread". */}
                <p class="what">
                  {!n.is_read && <span class="visually-hidden">{t('notifications.unread')} </span>}
                  <span class="muted">{t(`email.${n.type}` as MessageKey)}</span>
                </p>
                <p class="subject">
                  <a
                    href={n.url.startsWith('/') ? n.url : `/questions/${n.question_id}`}
                    onClick={() =>
                      !n.is_read &&
                      void kn()
                        .call('markNotificationRead', { params: { id: n.id } })
                        .catch(() => {})
                    }
                  >
                    {n.content}
                  </a>
                </p>
                {/* The sender's own words, as text. */}
                {n.message && (
                  <blockquote class="message" aria-label={t('notifications.message')}>
                    {n.message}
                  </blockquote>
                )}
                <p class="meta">
                  {n.user && <PersonLink user={n.user} />}
                  <When iso={n.created} />
                </p>
              </li>
            ))}
          </ul>
        </section>
      ))}
    </Page>
  );
}

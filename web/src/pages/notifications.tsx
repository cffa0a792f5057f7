import { kn, refreshUnseen } from '../api.ts';
import { language, t } from '../i18n.ts';
import { useSignal } from '../signal.ts';
import { ErrorBox, formatDate, Loading, Page, useAction, useLoad } from '../ui.tsx';

export function NotificationsPage() {
  const lang = useSignal(language);
  const list = useLoad(() => kn().call('listNotifications', { query: { limit: 25 } }), []);
  const action = useAction();
  const act = (run: () => Promise<unknown>) =>
    action.run(run).then(() => {
      list.reload();
      void refreshUnseen();
    });
  return (
    <Page title={t('notifications.title')}>
      <div class="actions">
        <button
          type="button"
          class="secondary"
          disabled={action.busy}
          onClick={() => void act(() => kn().call('markAllNotificationsRead'))}
        >
          {t('notifications.allRead')}
        </button>
        <button
          type="button"
          class="secondary"
          disabled={action.busy}
          onClick={() => void act(() => kn().call('markAllNotificationsSeen'))}
        >
          {t('notifications.allSeen')}
        </button>
      </div>
      <ErrorBox error={action.error ?? list.error} />
      {!list.data && list.loading && <Loading />}
      {list.data?.items.length === 0 && <p>{t('notifications.empty')}</p>}
      <ul class="notifications">
        {list.data?.items.map((n) => (
          <li key={n.id} class={n.is_read ? 'read' : 'unread'}>
            <p>
              {!n.is_read && <strong class="tag-unread">{t('notifications.unread')} </strong>}
              <a
                href={n.url.startsWith('/') ? n.url : `/questions/${n.question_id}`}
                onClick={() => void act(() => kn().call('markNotificationRead', { params: { id: n.id } }))}
              >
                {n.content}
              </a>
            </p>
            <p class="meta">
              <span>{formatDate(n.created, lang)}</span>
              {!n.is_read && (
                <button
                  type="button"
                  class="link"
                  onClick={() => void act(() => kn().call('markNotificationRead', { params: { id: n.id } }))}
                >
                  {t('notifications.markRead')}
                </button>
              )}
              {!n.is_seen && (
                <button
                  type="button"
                  class="link"
                  onClick={() => void act(() => kn().call('markNotificationSeen', { params: { id: n.id } }))}
                >
                  {t('notifications.markSeen')}
                </button>
              )}
            </p>
          </li>
        ))}
      </ul>
    </Page>
  );
}

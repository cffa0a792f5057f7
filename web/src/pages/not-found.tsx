import { ApiError } from '@kn/client/http';
import { t } from '../i18n.ts';
import { Page } from '../ui.tsx';

/** Any address the app has no page for (the gateway answers it with a 404 and this app). */
export function NotFoundPage() {
  return (
    <Page title={t('notFound.title')}>
      <p>{t('notFound.text')}</p>
      <p>
        <a href="/">{t('notFound.back')}</a>
      </p>
    </Page>
  );
}

/** The API said there is no such thing: the page says so as any unknown address does. */
export const isNotFound = (err: unknown) => err instanceof ApiError && err.status === 404;

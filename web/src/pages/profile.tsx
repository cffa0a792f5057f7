import { userOf } from '../api.ts';
import { t } from '../i18n.ts';
import { Avatar, ErrorBox, fullName, Loading, Page, textOf, useLoad, When } from '../ui.tsx';
import { isNotFound, NotFoundPage } from './not-found.tsx';

/** A person of the network: who they are and where they work, as their account says. */
export function ProfilePage({ id }: { id: number }) {
  const person = useLoad(() => userOf(id), [id]);
  if (person.error) return isNotFound(person.error) ? <NotFoundPage /> : <ErrorBox error={person.error} />;
  if (person.loading && !person.data) return <Loading lines={4} />;
  const u = person.data;
  if (!u || u.is_deleted) return <NotFoundPage />;
  const work = [u.position, u.department, u.company].filter(Boolean).join(' · ');
  return (
    <Page title={fullName(u)}>
      <div class="profile">
        <Avatar user={u} size="large" />
        <div>
          {work && <p>{work}</p>}
          {u.location && <p class="muted">{u.location}</p>}
          <p class="meta">
            <a href={`mailto:${u.email}`}>{u.email}</a>
            <span>
              {t('profile.since')} <When iso={u.first_seen} />
            </span>
          </p>
        </div>
      </div>
      {u.about && (
        <section aria-labelledby="profile-about">
          <h2 id="profile-about">{t('profile.about')}</h2>
          <p class="about">{textOf(u.about).trim()}</p>
        </section>
      )}
    </Page>
  );
}

import type { ResponseOf } from '@kn/client/http';
import { kn, me, userOf } from '../api.ts';
import { t, tn } from '../i18n.ts';
import { Avatar, ErrorBox, fullName, Loading, Page, TagLinks, textOf, useLoad, When } from '../ui.tsx';
import { ExpertFacts, SimilarAnswered } from './experts.tsx';
import { isNotFound, NotFoundPage } from './not-found.tsx';

type Listed = ResponseOf<'listQuestions'>['items'];
/** Questions read for a profile: enough to see which tags someone answers most. */
const SOLVED_READ = 50;
const SOLVED_SHOWN = 10;
const TAGS_SHOWN = 8;

/** The tags of the questions someone answered, most often first. */
function tagsKnown(questions: Listed) {
  const counts = new Map<string, { concept_id: string; primary_label: string; n: number }>();
  for (const c of questions.flatMap((q) => q.concepts)) {
    const known = counts.get(c.concept_id) ?? { concept_id: c.concept_id, primary_label: c.primary_label, n: 0 };
    known.n++;
    counts.set(c.concept_id, known);
  }
  return [...counts.values()].sort((a, b) => b.n - a.n || a.primary_label.localeCompare(b.primary_label)).slice(0, TAGS_SHOWN);
}

/**
 * A person of the network: who they are and where they work, as their account says; the tags they
 * answer, what expert search says of them on those tags, the questions they answered. Questions
 * are asked anonymously, so only a person's own profile lists their questions.
 */
export function ProfilePage({ id }: { id: number }) {
  const person = useLoad(() => userOf(id), [id]);
  const self = me.get()?.id === id;
  const solved = useLoad(
    () => kn().call('listQuestions', { query: { solution_author: id, sort: ['last_activity.desc'], limit: SOLVED_READ } as never }),
    [id],
  );
  const asked = useLoad(
    async () =>
      self
        ? (await kn().call('listQuestions', { query: { filter: ['my-questions'], sort: ['id.desc'], limit: SOLVED_SHOWN } as never })).items
        : [],
    [id, self],
  );
  const known = tagsKnown(solved.data?.items ?? []);
  const knownKey = known.map((k) => k.primary_label).join(' ');
  // Expert search on the tags the person answers: where they stand, and why.
  const expert = useLoad(
    async () =>
      knownKey
        ? ((await kn().call('findExperts', { body: { query: knownKey, limit: 100 } })).experts.find((e) => e.user.id === id) ?? null)
        : null,
    [id, knownKey],
  );
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
      {!self && (
        <p>
          <a class="button-link" href={`/ask?to=${id}`}>
            {t('experts.ask', { name: fullName(u) })}
          </a>
        </p>
      )}
      {known.length > 0 && (
        <section aria-labelledby="profile-known">
          <h2 id="profile-known">{t('profile.known')}</h2>
          <TagLinks concepts={known} />
          {expert.data && (
            <>
              <ExpertFacts details={expert.data.details} />
              <SimilarAnswered details={expert.data.details} />
            </>
          )}
        </section>
      )}
      <section aria-labelledby="profile-solved">
        <h2 id="profile-solved">{solved.data ? tn('profile.solved', solved.data.total) : t('profile.solvedTitle')}</h2>
        <ErrorBox error={solved.error} />
        {!solved.data && solved.loading && <Loading lines={3} />}
        {solved.data?.total === 0 && <p>{t('profile.noSolutions')}</p>}
        <QuestionLinks items={solved.data?.items.slice(0, SOLVED_SHOWN) ?? []} />
      </section>
      <section aria-labelledby="profile-asked">
        <h2 id="profile-asked">{t('profile.asked')}</h2>
        {self ? (
          <>
            <ErrorBox error={asked.error} />
            {asked.data?.length === 0 && <p>{t('profile.noQuestions')}</p>}
            <QuestionLinks items={asked.data ?? []} />
          </>
        ) : (
          <p class="muted">{t('profile.anonymous')}</p>
        )}
      </section>
    </Page>
  );
}

function QuestionLinks({ items }: { items: Listed }) {
  if (!items.length) return null;
  return (
    <ul class="profile-questions">
      {items.map((q) => (
        <li key={q.id}>
          <a href={`/questions/${q.id}`}>{q.title}</a>{' '}
          <span class="meta">
            {q.has_accepted_solution && (
              <span class="count has accepted" title={t('list.accepted')}>
                <span aria-hidden="true">✓</span>
                <span class="visually-hidden">{t('list.accepted')}</span>
              </span>
            )}
            <When iso={q.last_activity} />
          </span>
        </li>
      ))}
    </ul>
  );
}

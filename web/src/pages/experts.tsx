import type { ResponseOf } from '@kn/client/http';
import { useEffect, useState } from 'preact/hooks';
import { kn, type User } from '../api.ts';
import { formatNumber, language, t, tn } from '../i18n.ts';
import { route } from '../router.ts';
import { ErrorBox, fullName, Notice, Page, useAction, useLoad } from '../ui.tsx';

/** The question the page was opened for (from a question's "find experts"): its id and title. */
type Current = { id: number; title: string } | null;

const formatPercent = (share: number) => new Intl.NumberFormat(language.get(), { style: 'percent' }).format(share);

export function ExpertsPage() {
  // Opened from a question: its title is the search, and it is the first question to forward.
  const [opened] = useState(() => route.get().query);
  const current: Current = Number(opened.get('question')) > 0 ? { id: Number(opened.get('question')), title: opened.get('q') ?? '' } : null;
  const [query, setQuery] = useState(opened.get('q') ?? '');
  const [result, setResult] = useState<ResponseOf<'findExperts'> | null>(null);
  const action = useAction();
  const find = () => void action.run(async () => setResult(await kn().call('findExperts', { body: { query, limit: 10 } })));
  const submit = (event: Event) => {
    event.preventDefault();
    find();
  };
  useEffect(() => {
    if (query.trim()) find();
  }, []);
  return (
    <Page title={t('experts.title')}>
      <form onSubmit={submit}>
        <label for="experts-query">{t('experts.query')}</label>
        <textarea id="experts-query" rows={3} required maxLength={1000} value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        <button type="submit" disabled={action.busy}>
          {t('experts.search')}
        </button>
      </form>
      <ErrorBox error={action.error} />
      {result && (
        <section aria-labelledby="experts-found" aria-live="polite">
          <h2 id="experts-found">{result.tags.length ? t('experts.tags', { tags: result.tags.join(', ') }) : t('experts.none')}</h2>
          <ol class="experts">
            {result.experts.map((e) => (
              <li key={e.user.id}>
                <h3>
                  <a href={`/users/${e.user.id}`} aria-label={t('experts.profile', { name: fullName(e.user) })}>
                    {fullName(e.user)}
                  </a>
                </h3>
                <ExpertFacts details={e.details} />
                <p>
                  <a class="button-link" href={`/ask?to=${e.user.id}`}>
                    {t('experts.ask', { name: fullName(e.user) })}
                  </a>
                </p>
                <ForwardTo expert={e.user} current={current} />
                <SimilarAnswered details={e.details} />
              </li>
            ))}
          </ol>
        </section>
      )}
    </Page>
  );
}

/**
 * Forwarding a question that is already asked to this expert: the question the page was opened
 * for, or one of the person's own (their newest, read when the form is first opened).
 */
function ForwardTo({ expert, current }: { expert: User; current: Current }) {
  const [opened, setOpened] = useState(false);
  const mine = useLoad(
    async () =>
      opened
        ? (await kn().call('listQuestions', { query: { filter: ['my-questions'], sort: ['id.desc'], limit: 20 } as never })).items
        : [],
    [opened],
  );
  const [chosen, setChosen] = useState(current ? String(current.id) : '');
  const [message, setMessage] = useState('');
  const [notice, setNotice] = useState<string | null>(null);
  const action = useAction();
  const key = `forward-${expert.id}`;
  const name = fullName(expert);
  const send = (event: Event) => {
    event.preventDefault();
    setNotice(null);
    void action.run(async () => {
      await kn().call('forwardQuestion', {
        params: { id: Number(chosen) },
        body: { recipient: expert.id, ...(message.trim() ? { message } : {}) },
      });
      setMessage('');
      setNotice(t('question.forwarded', { name }));
    });
  };
  const own = (mine.data ?? []).filter((q) => q.id !== current?.id);
  return (
    <details class="forward-to" onToggle={(e) => e.currentTarget.open && setOpened(true)}>
      <summary>{t('experts.forward', { name })}</summary>
      {opened && (
        <form onSubmit={send}>
          <label for={`${key}-question`}>{t('experts.forwardWhich')}</label>
          <select id={`${key}-question`} required value={chosen} onChange={(e) => setChosen(e.currentTarget.value)}>
            <option value="">{mine.loading ? t('common.loading') : t('experts.forwardPick')}</option>
            {current && <option value={current.id}>{t('experts.forwardCurrent', { title: current.title })}</option>}
            {own.map((q) => (
              <option key={q.id} value={q.id}>
                {q.title}
              </option>
            ))}
          </select>
          <label for={`${key}-message`}>
            {t('question.forwardMessage')} {t('common.optional')}
          </label>
          <textarea id={`${key}-message`} rows={2} maxLength={10000} value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
          <button type="submit" disabled={action.busy || !chosen}>
            {t('question.forwardSend')}
          </button>
          <ErrorBox error={action.error ?? mine.error} />
          <Notice text={notice} />
        </form>
      )}
    </details>
  );
}

type Details = ResponseOf<'findExperts'>['experts'][number]['details'];

/** What expert search says of a person: solutions, rating, recommendations, and the tags that made them an expert. */
export function ExpertFacts({ details }: { details: Details }) {
  return (
    <>
      <p class="meta">
        {t('experts.details', {
          solutions: tn('experts.solutions', details.solution_count),
          rating: details.average_rating === null ? '–' : formatNumber(details.average_rating, 1),
          forwards: tn('experts.forwards', details.recommendation_count),
        })}
      </p>
      {details.reasons.tags.length > 0 && (
        <p>
          {t('experts.why', {
            tags: details.reasons.tags.map((tag) => `${tag.label} (${formatPercent(tag.weight)})`).join(', '),
          })}
        </p>
      )}
    </>
  );
}

/** The similar questions the person answered, as expert search gives them. */
export function SimilarAnswered({ details }: { details: Details }) {
  if (!details.reasons.similar_questions.length) return null;
  return (
    <>
      <p>{t('experts.answered')}</p>
      <ul>
        {details.reasons.similar_questions.map((q) => (
          <li key={q.id}>
            <a href={`/questions/${q.id}`}>{q.title}</a>
          </li>
        ))}
      </ul>
    </>
  );
}

import type { ResponseOf } from '@kn/client/http';
import { useState } from 'preact/hooks';
import { kn } from '../api.ts';
import { formatNumber, language, t } from '../i18n.ts';
import { ErrorBox, fullName, Page, useAction } from '../ui.tsx';

const formatPercent = (share: number) => new Intl.NumberFormat(language.get(), { style: 'percent' }).format(share);

export function ExpertsPage() {
  const [query, setQuery] = useState('');
  const [result, setResult] = useState<ResponseOf<'findExperts'> | null>(null);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => setResult(await kn().call('findExperts', { body: { query, limit: 10 } })));
  };
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
                <p class="meta">
                  {t('experts.details', {
                    solutions: e.details.solution_count,
                    rating: e.details.average_rating === null ? '–' : formatNumber(e.details.average_rating, 1),
                    forwards: e.details.recommendation_count,
                  })}
                </p>
                {e.details.reasons.tags.length > 0 && (
                  <p>
                    {t('experts.why', {
                      tags: e.details.reasons.tags.map((tag) => `${tag.label} (${formatPercent(tag.weight)})`).join(', '),
                    })}
                  </p>
                )}
                <p>
                  <a class="button-link" href={`/ask?to=${e.user.id}`}>
                    {t('experts.ask', { name: fullName(e.user) })}
                  </a>
                </p>
                {e.details.reasons.similar_questions.length > 0 && (
                  <>
                    <p>{t('experts.answered')}</p>
                    <ul>
                      {e.details.reasons.similar_questions.map((q) => (
                        <li key={q.id}>
                          <a href={`/questions/${q.id}`}>{q.title}</a>
                        </li>
                      ))}
                    </ul>
                  </>
                )}
              </li>
            ))}
          </ol>
        </section>
      )}
    </Page>
  );
}

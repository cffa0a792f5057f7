import type { ResponseOf } from '@kn/client/http';
import { useState } from 'preact/hooks';
import { hasRole, kn } from '../api.ts';
import { t } from '../i18n.ts';
import { route } from '../router.ts';
import { useSignal } from '../signal.ts';
import { ErrorBox, Loading, Notice, Page, useAction, useLoad, When } from '../ui.tsx';

type Item = ResponseOf<'listReviewQueue'>['items'][number];
const KINDS = ['expiring', 'expired', 'validation_requested', 'unaccepted'] as const;
const VALIDITIES = ['months_three', 'months_six', 'year_one', 'years_two', 'unlimited'] as const;

/** One solution of the queue: verify it for a period, edit it on its question, or mark it obsolete. */
function SolutionActions({ item, done }: { item: Item; done: (text: string) => void }) {
  const [validity, setValidity] = useState<(typeof VALIDITIES)[number]>('year_one');
  const action = useAction();
  const id = item.solution_id!;
  const verify = () =>
    void action
      .run(() => kn().call('verifySolution', { params: { id }, body: { validity } }))
      .then((ok) => ok && done(t('review.verified')));
  const obsolete = () => {
    if (!confirm(t('review.obsoleteConfirm'))) return;
    void action.run(() => kn().call('markSolutionObsolete', { params: { id } })).then((ok) => ok && done(t('review.obsoleted')));
  };
  return (
    <div class="actions">
      <label for={`validity-${id}-${item.kind}`}>{t('validity.label')}</label>
      <select id={`validity-${id}-${item.kind}`} value={validity} onInput={(e) => setValidity(e.currentTarget.value as never)}>
        {VALIDITIES.map((v) => (
          <option key={v} value={v}>
            {t(`validity.${v}`)}
          </option>
        ))}
      </select>
      <button type="button" disabled={action.busy} onClick={verify}>
        {t('review.verify')}
      </button>
      <a class="button-link" href={`/questions/${item.question_id}#solution-${id}`}>
        {t('review.edit')}
      </a>
      <button type="button" disabled={action.busy} onClick={obsolete}>
        {t('review.obsolete')}
      </button>
      <ErrorBox error={action.error} />
    </div>
  );
}

/** The content-health review queue: the caller's own items, or the whole queue for managers. */
export function ReviewPage() {
  const { query } = useSignal(route);
  const manager = hasRole('manager', 'content_admin', 'super_admin');
  const [kind, setKind] = useState(query.get('kind') ?? '');
  const [mine, setMine] = useState(!manager);
  const [notice, setNotice] = useState<string | null>(null);
  const queue = useLoad(
    () => kn().call('listReviewQueue', { query: { kind: (kind || undefined) as never, mine, limit: 100 } }),
    [kind, mine],
  );
  const done = (text: string) => {
    setNotice(text);
    queue.reload();
  };
  return (
    <Page title={t('review.title')}>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label for="review-kind">{t('review.kind')}</label>
        <select id="review-kind" value={kind} onInput={(e) => setKind(e.currentTarget.value)}>
          <option value="">{t('review.kind.all')}</option>
          {KINDS.map((k) => (
            <option key={k} value={k}>
              {t(`review.kind.${k}`)}
            </option>
          ))}
        </select>
        {manager && (
          <label>
            <input type="checkbox" checked={mine} onInput={(e) => setMine(e.currentTarget.checked)} /> {t('review.mine')}
          </label>
        )}
      </form>
      <Notice text={notice} />
      <ErrorBox error={queue.error} />
      {queue.loading && !queue.data && <Loading />}
      {queue.data && (
        <section aria-labelledby="review-count">
          <h2 id="review-count">{t('review.count', { count: queue.data.total })}</h2>
          <ol class="review">
            {queue.data.items.map((item) => (
              <li key={`${item.kind} ${item.question_id} ${item.solution_id}`}>
                <p>
                  <strong>{t(`review.kind.${item.kind}`)}</strong> · <a href={`/questions/${item.question_id}`}>{item.question_title}</a> ·{' '}
                  <When iso={item.since} />
                </p>
                {item.solution_id !== null && item.responsible_id !== null && <SolutionActions item={item} done={done} />}
              </li>
            ))}
          </ol>
        </section>
      )}
    </Page>
  );
}

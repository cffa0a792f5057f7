import type { ResponseOf } from '@kn/client/http';
import { useEffect, useState } from 'preact/hooks';
import { kn, me } from '../api.ts';
import { language, t } from '../i18n.ts';
import { useSignal } from '../signal.ts';
import { ErrorBox, formatDate, Loading, Notice, Page, SanitisedHtml, TagLinks, useAction, useLoad } from '../ui.tsx';
import { textToHtml } from './ask.tsx';

type Complete = ResponseOf<'getCompleteQuestion'>;
type Solution = Complete['solutions'][number];
type Comment = Complete['comments'][number];

const userIdOf = (path: string) => Number(path.split('/').pop());

export function QuestionPage({ id }: { id: number }) {
  const question = useLoad(() => kn().call('getCompleteQuestion', { params: { id } }), [id]);
  const q = question.data;
  const authorIds = [...new Set([...(q?.solutions ?? []), ...(q?.comments ?? [])].map((s) => userIdOf(s.user)))];
  const authors = useLoad(
    async () => new Map((await Promise.all(authorIds.map((uid) => kn().call('getUser', { params: { id: uid } })))).map((u) => [u.id, u])),
    [authorIds.join(',')],
  );
  if (question.error) return <ErrorBox error={question.error} />;
  if (!q) return <Loading />;
  const nameOf = (path: string) => {
    const u = authors.data?.get(userIdOf(path));
    return u ? `${u.firstname} ${u.lastname}` : '';
  };
  const published = q.solutions.filter((s) => s.is_published);
  return (
    <Page title={q.title}>
      <article aria-labelledby="question-body">
        <div id="question-body">{q.description && <SanitisedHtml html={q.description} />}</div>
        <TagLinks concepts={q.concepts} />
        {q.category && (
          <p class="meta">
            {t('question.category')}: {q.category.name}
          </p>
        )}
        <Follow id={id} />
      </article>
      <section aria-labelledby="solutions-title">
        <h2 id="solutions-title">{t('question.solutions')}</h2>
        {published.length === 0 && <p>{t('question.noSolutions')}</p>}
        {published.map((s) => (
          <SolutionView key={s.id} solution={s} author={nameOf(s.user)} onChange={question.reload} />
        ))}
        {q.is_published && <DraftSolution questionId={id} onPublished={question.reload} />}
      </section>
      <Comments questionId={id} comments={q.comments.filter((c) => c.solution_id === null)} nameOf={nameOf} onChange={question.reload} />
      <Forward questionId={id} />
      <Similar id={id} />
    </Page>
  );
}

function Follow({ id }: { id: number }) {
  const action = useAction();
  const [notice, setNotice] = useState<string | null>(null);
  const follow = (on: boolean) =>
    action.run(async () => {
      await kn().call(on ? 'followQuestion' : 'unfollowQuestion', { params: { id } });
      setNotice(t(on ? 'question.following' : 'question.notFollowing'));
    });
  return (
    <div class="actions">
      <button type="button" class="secondary" disabled={action.busy} onClick={() => void follow(true)}>
        {t('question.follow')}
      </button>
      <button type="button" class="secondary" disabled={action.busy} onClick={() => void follow(false)}>
        {t('question.unfollow')}
      </button>
      <ErrorBox error={action.error} />
      <Notice text={notice} />
    </div>
  );
}

function SolutionView({ solution: s, author, onChange }: { solution: Solution; author: string; onChange: () => void }) {
  const lang = useSignal(language);
  const action = useAction();
  const [rating, setRating] = useState('5');
  const mine = userIdOf(s.user) === me.get()?.id;
  const act = (run: () => Promise<unknown>) => action.run(run).then((ok) => ok && onChange());
  return (
    <article class="solution" id={`solution-${s.id}`} aria-label={author ? t('common.by', { name: author }) : undefined}>
      <SanitisedHtml html={s.description} />
      <p class="meta">
        {author && <span>{t('common.by', { name: author })}</span>}
        {s.published && <span>{formatDate(s.published, lang)}</span>}
        <span>
          {s.rating === null ? t('question.unrated') : t('question.rating', { rating: s.rating.toFixed(1), count: s.rating_count })}
        </span>
        {s.accepted_by_question_poser && <strong class="accepted">{t('question.accepted')}</strong>}
      </p>
      {!mine && (
        <div class="actions">
          {!s.accepted_by_question_poser && (
            <button
              type="button"
              disabled={action.busy}
              onClick={() => void act(() => kn().call('acceptSolution', { params: { id: s.id } }))}
            >
              {t('question.accept')}
            </button>
          )}
          <label for={`rating-${s.id}`}>{t('question.rateLabel')}</label>
          <select id={`rating-${s.id}`} value={rating} onChange={(e) => setRating(e.currentTarget.value)}>
            {['5', '4', '3', '2', '1'].map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
          <button
            type="button"
            class="secondary"
            disabled={action.busy}
            onClick={() => void act(() => kn().call('rateSolution', { params: { id: s.id }, body: { rating: Number(rating) } }))}
          >
            {t('question.rate')}
          </button>
        </div>
      )}
      <ErrorBox error={action.error} />
    </article>
  );
}

function DraftSolution({ questionId, onPublished }: { questionId: number; onPublished: () => void }) {
  const draft = useLoad(() => kn().call('getSolutionDraft', { params: { id: questionId } }), [questionId]);
  const [text, setText] = useState('');
  const [draftId, setDraftId] = useState<number | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const action = useAction();
  useEffect(() => {
    const d = draft.data as { id: number; description: string } | undefined;
    if (d?.id) {
      setDraftId(d.id);
      setText(new DOMParser().parseFromString(d.description, 'text/html').body.textContent ?? '');
    }
  }, [draft.data]);
  const save = async () => {
    const description = textToHtml(text);
    if (draftId === null) {
      const created = await kn().call('createSolution', { params: { id: questionId }, body: { description } });
      setDraftId(created.id);
      return created.id;
    }
    await kn().call('updateSolution', { params: { id: draftId }, body: { description } });
    return draftId;
  };
  const publish = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const id = await save();
      await kn().call('publishSolution', { params: { id } });
      setDraftId(null);
      setText('');
      setNotice(t('question.solutionPublished'));
      onPublished();
    });
  };
  return (
    <form class="draft" onSubmit={publish} aria-labelledby="your-solution">
      <h3 id="your-solution">{t('question.yourSolution')}</h3>
      <label for="solution-text">{draftId === null ? t('question.yourSolution') : t('question.draft')}</label>
      <textarea id="solution-text" rows={6} required value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <ErrorBox error={action.error ?? draft.error} />
      <Notice text={notice} />
      <div class="actions">
        <button
          type="button"
          class="secondary"
          disabled={action.busy || !text.trim()}
          onClick={() =>
            void action.run(async () => {
              await save();
              setNotice(t('question.solutionSaved'));
            })
          }
        >
          {t('question.saveSolution')}
        </button>
        <button type="submit" disabled={action.busy}>
          {t('question.publishSolution')}
        </button>
      </div>
    </form>
  );
}

function Comments({
  questionId,
  comments,
  nameOf,
  onChange,
}: {
  questionId: number;
  comments: Comment[];
  nameOf: (path: string) => string;
  onChange: () => void;
}) {
  const lang = useSignal(language);
  const [text, setText] = useState('');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await kn().call('createQuestionComment', { params: { id: questionId }, body: { description: textToHtml(text) } });
      setText('');
      onChange();
    });
  };
  return (
    <section aria-labelledby="comments-title">
      <h2 id="comments-title">{t('question.comments')}</h2>
      {comments.length === 0 && <p>{t('question.noComments')}</p>}
      <ul class="comments">
        {comments.map((c) => (
          <li key={c.id}>
            <SanitisedHtml html={c.description} />
            <p class="meta">
              {nameOf(c.user) && <span>{t('common.by', { name: nameOf(c.user) })}</span>}
              <span>{formatDate(c.created, lang)}</span>
            </p>
          </li>
        ))}
      </ul>
      <form onSubmit={submit}>
        <label for="comment-text">{t('question.addComment')}</label>
        <textarea id="comment-text" rows={3} required value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <ErrorBox error={action.error} />
        <button type="submit" disabled={action.busy}>
          {t('question.postComment')}
        </button>
      </form>
    </section>
  );
}

function Forward({ questionId }: { questionId: number }) {
  const [who, setWho] = useState('');
  const [recipient, setRecipient] = useState('');
  const [message, setMessage] = useState('');
  const [notice, setNotice] = useState<string | null>(null);
  const action = useAction();
  const people = useLoad(
    async () => (who.trim().length < 2 ? null : kn().call('listUsers', { query: { query: who.trim(), limit: 8 } })),
    [who],
  );
  const submit = (event: Event) => {
    event.preventDefault();
    const person = people.data?.items.find((u) => String(u.id) === recipient);
    if (!person) return;
    void action.run(async () => {
      await kn().call('forwardQuestion', { params: { id: questionId }, body: { recipient: person.id, message: message || undefined } });
      setNotice(t('question.forwarded', { name: `${person.firstname} ${person.lastname}` }));
    });
  };
  return (
    <section aria-labelledby="forward-title">
      <h2 id="forward-title">{t('question.forward')}</h2>
      <form onSubmit={submit}>
        <label for="forward-who">{t('question.forwardWho')}</label>
        <input id="forward-who" value={who} onInput={(e) => setWho(e.currentTarget.value)} />
        <label for="forward-pick">{t('question.pick')}</label>
        <select id="forward-pick" required value={recipient} onChange={(e) => setRecipient(e.currentTarget.value)}>
          <option value="">{t('question.pick')}</option>
          {people.data?.items.map((u) => (
            <option key={u.id} value={String(u.id)}>
              {u.firstname} {u.lastname}
            </option>
          ))}
        </select>
        <label for="forward-message">
          {t('question.forwardMessage')} {t('common.optional')}
        </label>
        <input id="forward-message" value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
        <ErrorBox error={action.error} />
        <Notice text={notice} />
        <button type="submit" class="secondary" disabled={action.busy}>
          {t('question.forwardSend')}
        </button>
      </form>
    </section>
  );
}

function Similar({ id }: { id: number }) {
  const similar = useLoad(() => kn().call('similarToQuestion', { params: { id }, query: { limit: 5 } }), [id]);
  if (!similar.data?.items.length) return null;
  return (
    <aside aria-labelledby="similar-questions">
      <h2 id="similar-questions">{t('question.similar')}</h2>
      <ul>
        {similar.data.items.map((q) => (
          <li key={q.id}>
            <a href={`/questions/${q.id}`}>{q.title}</a>
          </li>
        ))}
      </ul>
    </aside>
  );
}

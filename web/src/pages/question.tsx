import type { ResponseOf } from '@kn/client/http';
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { isContentAdmin, kn, me, type User, userOf } from '../api.ts';
import type { MessageKey } from '../i18n/en.ts';
import { language, t } from '../i18n.ts';
import { useSignal } from '../signal.ts';
import { ChoiceAction, ErrorBox, formatDate, Loading, Notice, Page, SanitisedHtml, TagLinks, useAction, useLoad } from '../ui.tsx';
import { textToHtml } from './ask.tsx';

type Complete = ResponseOf<'getCompleteQuestion'>;
type Solution = Complete['solutions'][number];
type Comment = Complete['comments'][number];
type Attachment = Complete['attachments'][number];

const VALIDITIES = ['months_three', 'months_six', 'year_one', 'years_two', 'unlimited'] as const;

const userIdOf = (path: string) => Number(path.split('/').pop());
const fullName = (u: User) => `${u.firstname} ${u.lastname}`;

/**
 * Whether the person asked this question. The API's Question names no author, so their own
 * questions are listed newest first (in the question's language: lists leave out the languages
 * their settings exclude) until this one, or an older one, comes.
 */
async function askedByMe(q: Complete) {
  for await (const page of kn().pages('listQuestions', {
    query: { filter: ['my-questions'], sort: ['id.desc'], language_id: [q.language], limit: 100 } as never,
  })) {
    if (page.items.some((item) => item.id === q.id)) return true;
    if ((page.items.at(-1)?.id ?? 0) < q.id) return false;
  }
  return false;
}

export function QuestionPage({ id }: { id: number }) {
  const question = useLoad(() => kn().call('getCompleteQuestion', { params: { id } }), [id]);
  const q = question.data;
  // A draft is seen by its author alone.
  const poser = useLoad(async () => !!q && (!q.is_published || askedByMe(q)), [q?.id, q?.is_published]);
  const authorIds = [...new Set([...(q?.solutions ?? []), ...(q?.comments ?? [])].map((s) => userIdOf(s.user)))];
  const authors = useLoad(
    async () => new Map((await Promise.all(authorIds.map(userOf))).flatMap((u) => (u ? [[u.id, u] as const] : []))),
    [authorIds.join(',')],
  );
  if (question.error) return <ErrorBox error={question.error} />;
  if (!q) return <Loading />;
  const nameOf = (path: string) => {
    const u = authors.data?.get(userIdOf(path));
    return u ? fullName(u) : '';
  };
  const published = q.solutions.filter((s) => s.is_published);
  const open = q.is_published && !q.is_deleted;
  const asker = poser.data === true;
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
        <Attachments kind="question" id={id} items={q.attachments} canChange={asker || isContentAdmin()} />
      </article>
      <section aria-labelledby="solutions-title">
        <h2 id="solutions-title">{t('question.solutions')}</h2>
        {published.length === 0 && <p>{t('question.noSolutions')}</p>}
        {published.map((s) => (
          <SolutionView key={s.id} solution={s} author={nameOf(s.user)} asker={asker} onChange={question.reload} />
        ))}
        {open && published.length > 0 && <RequestValidation id={id} />}
        {open && <DraftSolution questionId={id} onPublished={question.reload} />}
      </section>
      <Comments
        comments={q.comments.filter((c) => c.solution_id === null)}
        questionId={id}
        nameOf={nameOf}
        canConvert={(c) => open && (asker || isContentAdmin() || userIdOf(c.user) === me.get()?.id)}
        onChange={question.reload}
      />
      {open && (
        <section aria-labelledby="share-title">
          <h2 id="share-title">{t('share.title')}</h2>
          <Share kind="question" id={id} />
        </section>
      )}
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

function SolutionView({
  solution: s,
  author,
  asker,
  onChange,
}: {
  solution: Solution;
  author: string;
  asker: boolean;
  onChange: () => void;
}) {
  const lang = useSignal(language);
  const action = useAction();
  const [rating, setRating] = useState('5');
  const [validity, setValidity] = useState<(typeof VALIDITIES)[number]>('months_six');
  const mine = userIdOf(s.user) === me.get()?.id;
  const canEdit = mine || isContentAdmin();
  const act = (run: () => Promise<unknown>) => action.run(run).then((ok) => ok && onChange());
  const expires = s.expires && formatDate(s.expires, lang);
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
        {expires &&
          (Date.parse(s.expires!) <= Date.now() ? (
            <strong class="expired">{t('validity.expired', { date: expires })}</strong>
          ) : (
            <span>{t('validity.until', { date: expires })}</span>
          ))}
        {!expires && s.validity_period === 'unlimited' && <span>{t('validity.none')}</span>}
      </p>
      <div class="actions">
        {asker && !s.accepted_by_question_poser && (
          <button
            type="button"
            disabled={action.busy}
            onClick={() => void act(() => kn().call('acceptSolution', { params: { id: s.id } }))}
          >
            {t('question.accept')}
          </button>
        )}
        {!mine && (
          <ChoiceAction
            id={`rating-${s.id}`}
            label={t('question.rateLabel')}
            value={rating}
            options={['5', '4', '3', '2', '1'].map((r) => [r, r])}
            onChange={setRating}
            busy={action.busy}
            act={t('question.rate')}
            onAct={() => void act(() => kn().call('rateSolution', { params: { id: s.id }, body: { rating: Number(rating) } }))}
          />
        )}
        {canEdit && (
          <ChoiceAction
            id={`validity-${s.id}`}
            label={t('validity.label')}
            value={validity}
            options={VALIDITIES.map((v) => [v, t(`validity.${v}` as MessageKey)])}
            onChange={(v) => setValidity(v as never)}
            busy={action.busy}
            act={t('validity.validate')}
            onAct={() => void act(() => kn().call('validateSolution', { params: { id: s.id }, body: { validity } }))}
          />
        )}
      </div>
      <ErrorBox error={action.error} />
      <Lazy summary={t('attachments.title')}>
        <SolutionAttachments id={s.id} canChange={canEdit} />
      </Lazy>
      <Lazy summary={t('share.solution')}>
        <Share kind="solution" id={s.id} />
      </Lazy>
    </article>
  );
}

/** A disclosure whose content is made (and loads what it needs) only once it is opened. */
function Lazy({ summary, children }: { summary: string; children: ComponentChildren }) {
  const [opened, setOpened] = useState(false);
  return (
    <details onToggle={(e) => e.currentTarget.open && setOpened(true)}>
      <summary>{summary}</summary>
      {opened && children}
    </details>
  );
}

function SolutionAttachments({ id, canChange }: { id: number; canChange: boolean }) {
  const list = useLoad(() => kn().call('listSolutionAttachments', { params: { id } }), [id]);
  if (list.error) return <ErrorBox error={list.error} />;
  return list.data ? <Attachments kind="solution" id={id} items={list.data.items} canChange={canChange} /> : <Loading />;
}

/** A file size in the person's language. */
const sizeOf = (bytes: number, lang: string) => {
  const [n, unit] = bytes < 1000 ? [bytes, 'byte'] : bytes < 1e6 ? [bytes / 1e3, 'kilobyte'] : [bytes / 1e6, 'megabyte'];
  return new Intl.NumberFormat(lang, { style: 'unit', unit, maximumFractionDigits: 1 }).format(n);
};

/** The files of a question or solution: each a download; their authors (and content admins) attach and remove. */
function Attachments({
  kind,
  id,
  items: initial,
  canChange,
}: {
  kind: 'question' | 'solution';
  id: number;
  items: Attachment[];
  canChange: boolean;
}) {
  const lang = useSignal(language);
  const [items, setItems] = useState(initial);
  const [file, setFile] = useState<File | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const action = useAction();
  useEffect(() => setItems(initial), [initial]);
  const key = `${kind}-${id}-file`;
  const upload = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    setNotice(null);
    if (file)
      void action.run(async () => {
        const op = kind === 'question' ? 'addQuestionAttachment' : 'addSolutionAttachment';
        const added = await kn().call(op, { params: { id }, body: { file, filename: file.name } });
        setItems((list) => [...list, added]);
        setFile(null);
        form.reset();
        setNotice(t('attachments.added', { name: added.name }));
      });
  };
  const remove = (a: Attachment) => {
    setNotice(null);
    void action.run(async () => {
      await kn().call('deleteAttachment', { params: { id: a.id } });
      setItems((list) => list.filter((x) => x.id !== a.id));
      setNotice(t('attachments.removed', { name: a.name }));
    });
  };
  return (
    <div class="attachments">
      {kind === 'question' && <h2>{t('attachments.title')}</h2>}
      {items.length === 0 ? (
        <p>{t('attachments.none')}</p>
      ) : (
        <ul aria-label={t('attachments.title')}>
          {items.map((a) => (
            <li key={a.id}>
              <a href={a.link} download={a.name}>
                {a.name}
              </a>{' '}
              <span class="muted">{sizeOf(a.size, lang)}</span>{' '}
              {canChange && (
                <button type="button" class="link" disabled={action.busy} onClick={() => remove(a)}>
                  {t('attachments.remove', { name: a.name })}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {canChange && (
        <form onSubmit={upload}>
          <label for={key}>{t('attachments.file')}</label>
          <input id={key} type="file" required onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
          <ErrorBox error={action.error} />
          <button type="submit" class="secondary" disabled={action.busy}>
            {t('attachments.upload')}
          </button>
        </form>
      )}
      {!canChange && <ErrorBox error={action.error} />}
      <Notice text={notice} />
    </div>
  );
}

function RequestValidation({ id }: { id: number }) {
  const lang = useSignal(language);
  const action = useAction();
  const [notice, setNotice] = useState<string | null>(null);
  const request = () =>
    action.run(async () => {
      const { last_requested } = await kn().call('requestValidation', { params: { id } });
      setNotice(t('validity.requested', { date: last_requested ? formatDate(last_requested, lang) : '' }));
    });
  return (
    <div>
      <button type="button" class="secondary" disabled={action.busy} onClick={() => void request()}>
        {t('validity.request')}
      </button>
      <ErrorBox error={action.error} />
      <Notice text={notice} />
    </div>
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
  canConvert,
  onChange,
}: {
  questionId: number;
  comments: Comment[];
  nameOf: (path: string) => string;
  canConvert: (c: Comment) => boolean;
  onChange: () => void;
}) {
  const lang = useSignal(language);
  const [text, setText] = useState('');
  const action = useAction();
  const converting = useAction();
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
              {canConvert(c) && (
                <button
                  type="button"
                  class="link"
                  disabled={converting.busy}
                  onClick={() =>
                    void converting
                      .run(() => kn().call('convertCommentToSolution', { params: { id: c.id } }))
                      .then((ok) => ok && onChange())
                  }
                >
                  {t('comment.toSolution')}
                </button>
              )}
            </p>
          </li>
        ))}
      </ul>
      <ErrorBox error={converting.error} />
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

/**
 * Sharing a question or solution with the people chosen (each is notified), or forwarding the
 * question to one of them (recommending them as someone who might answer it).
 */
function Share({ kind, id }: { kind: 'question' | 'solution'; id: number }) {
  const [who, setWho] = useState('');
  const [chosen, setChosen] = useState<User[]>([]);
  const [message, setMessage] = useState('');
  const [notice, setNotice] = useState<string | null>(null);
  const action = useAction();
  const found = useLoad(
    async () => (who.trim().length < 2 ? null : kn().call('listUsers', { query: { query: who.trim(), limit: 8 } })),
    [who],
  );
  const people = [...chosen, ...(found.data?.items.filter((u) => !chosen.some((c) => c.id === u.id)) ?? [])];
  const key = `${kind}-${id}-share`;
  const send = (forward: boolean) => {
    const names = chosen.map(fullName).join(', ');
    setNotice(null);
    void action.run(async () => {
      const body = { message: message.trim() || undefined };
      if (forward) await kn().call('forwardQuestion', { params: { id }, body: { ...body, recipient: chosen[0]!.id } });
      else
        await kn().call(kind === 'question' ? 'shareQuestion' : 'shareSolution', {
          params: { id },
          body: { ...body, recipients: chosen.map((c) => c.id) },
        });
      setChosen([]);
      setMessage('');
      setNotice(t(forward ? 'question.forwarded' : 'share.shared', { name: names }));
    });
  };
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        send(false);
      }}
    >
      <label for={`${key}-who`}>{t('share.who')}</label>
      <input id={`${key}-who`} type="search" value={who} onInput={(e) => setWho(e.currentTarget.value)} />
      <fieldset>
        <legend>{t('share.people')}</legend>
        {people.length === 0 && <p class="hint">{t('share.noPeople')}</p>}
        {people.map((u) => (
          <div class="check" key={u.id}>
            <input
              id={`${key}-${u.id}`}
              type="checkbox"
              checked={chosen.some((c) => c.id === u.id)}
              onChange={(e) => setChosen(e.currentTarget.checked ? [...chosen, u] : chosen.filter((c) => c.id !== u.id))}
            />
            <label for={`${key}-${u.id}`}>{fullName(u)}</label>
          </div>
        ))}
      </fieldset>
      <label for={`${key}-message`}>
        {t('question.forwardMessage')} {t('common.optional')}
      </label>
      <input id={`${key}-message`} value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
      <ErrorBox error={action.error} />
      <Notice text={notice} />
      {kind === 'question' && <p class="hint">{t('share.forwardHint')}</p>}
      <div class="actions">
        <button type="submit" disabled={action.busy || chosen.length === 0}>
          {t('share.send')}
        </button>
        {kind === 'question' && (
          <button type="button" class="secondary" disabled={action.busy || chosen.length !== 1} onClick={() => send(true)}>
            {t('question.forwardSend')}
          </button>
        )}
      </div>
    </form>
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

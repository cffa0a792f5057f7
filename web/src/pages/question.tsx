import type { ResponseOf } from '@kn/client/http';
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { isContentAdmin, kn, me, type User, usersOf } from '../api.ts';
import { Editor, markdownToHtml } from '../editor.tsx';
import type { MessageKey } from '../i18n/en.ts';
import { formatNumber, language, t, tn } from '../i18n.ts';
import { useSignal } from '../signal.ts';
import {
  ChoiceAction,
  ErrorBox,
  formatDate,
  fullName,
  Loading,
  Notice,
  Page,
  PersonLink,
  SanitisedHtml,
  TagLinks,
  useAction,
  useLoad,
  When,
} from '../ui.tsx';
import { textToHtml } from './ask.tsx';
import { isNotFound, NotFoundPage } from './not-found.tsx';

type Complete = ResponseOf<'getCompleteQuestion'>;
type Solution = Complete['solutions'][number];
type Comment = Complete['comments'][number];
type Attachment = Complete['attachments'][number];

const VALIDITIES = ['months_three', 'months_six', 'year_one', 'years_two', 'unlimited'] as const;
/** Comments shown under a question or solution before "show all". */
const COMMENTS_SHOWN = 3;

/** Changes this soon after publishing are part of asking, not an edit worth showing. */
const EDIT_GRACE_MS = 5 * 60_000;

const userIdOf = (path: string) => Number(path.split('/').pop());

/**
 * Whether the question is among the person's questions of `filter` (my-questions, following):
 * the API's Question names neither its author nor its followers, so that list is read newest
 * first (in the question's language: lists leave out the languages the settings exclude) until
 * this one, or an older one, comes.
 */
async function listedForMe(q: Complete, filter: 'my-questions' | 'following') {
  for await (const page of kn().pages('listQuestions', {
    query: { filter: [filter], sort: ['id.desc'], language_id: [q.language], limit: 100 } as never,
  })) {
    if (page.items.some((item) => item.id === q.id)) return true;
    if ((page.items.at(-1)?.id ?? 0) < q.id) return false;
  }
  return false;
}

/** The accepted solution first, then the most upvoted, then the best rated, then the oldest. */
export function solutionOrder(a: Solution, b: Solution) {
  return (
    Number(!!b.accepted_by_question_poser) - Number(!!a.accepted_by_question_poser) ||
    b.upvote_count - a.upvote_count ||
    (b.rating ?? 0) - (a.rating ?? 0) ||
    a.id - b.id
  );
}

export function QuestionPage({ id }: { id: number }) {
  const question = useLoad(() => kn().call('getCompleteQuestion', { params: { id } }), [id]);
  // Which solutions the person upvoted (a Solution does not say): their buttons show as pressed.
  const upvotes = useLoad(() => kn().call('listMyUpvotes', { params: { id } }), [id]);
  const q = question.data;
  // A draft is seen by its author alone.
  const poser = useLoad(async () => !!q && (!q.is_published || listedForMe(q, 'my-questions')), [q?.id, q?.is_published]);
  const authorIds = [...new Set([...(q?.solutions ?? []), ...(q?.comments ?? [])].map((s) => userIdOf(s.user)))];
  const authors = useLoad(() => usersOf(authorIds), [authorIds.join(',')]);
  if (question.error) return isNotFound(question.error) ? <NotFoundPage /> : <ErrorBox error={question.error} />;
  if (!q) return <Loading lines={8} />;
  const authorOf = (path: string) => authors.data?.get(userIdOf(path));
  const published = q.solutions.filter((s) => s.is_published).sort(solutionOrder);
  const open = q.is_published && !q.is_deleted;
  const asker = poser.data === true;
  const commentsOf = (solutionId: number | null) => q.comments.filter((c) => c.solution_id === solutionId);
  const canConvert = (c: Comment) => open && (asker || isContentAdmin() || userIdOf(c.user) === me.get()?.id);
  return (
    <Page title={q.title}>
      <div class="question-layout">
        <div class="question-main">
          <article aria-labelledby="question-body" class="question">
            <p class="meta question-header">
              {q.published && (
                <span>
                  {t('question.asked')} <When iso={q.published} />
                </span>
              )}
              {q.published && Date.parse(q.content_updated) - Date.parse(q.published) > EDIT_GRACE_MS && (
                <span>
                  {t('question.edited')} <When iso={q.content_updated} />
                </span>
              )}
              <span>{tn('question.views', q.view_count)}</span>
              <span>{tn('question.votes', q.upvote_count)}</span>
              {q.category && (
                <span>
                  {t('question.category')}: {q.category.name}
                </span>
              )}
            </p>
            <div id="question-body">{q.description && <SanitisedHtml html={q.description} />}</div>
            <TagLinks concepts={q.concepts} />
            <div class="actions">
              <Follow q={q} />
              {open && (
                <a class="button-link secondary" href={`/experts?${new URLSearchParams({ q: q.title, question: String(id) })}`}>
                  {t('question.findExperts')}
                </a>
              )}
              <Menu label={t('question.more')}>
                <Attachments kind="question" id={id} items={q.attachments} canChange={asker || isContentAdmin()} />
                {open && (
                  <section aria-labelledby="share-title">
                    <h2 id="share-title">{t('share.title')}</h2>
                    <Share kind="question" id={id} />
                  </section>
                )}
              </Menu>
            </div>
            <Comments
              target={{ kind: 'question', id }}
              comments={commentsOf(null)}
              authorOf={authorOf}
              canConvert={canConvert}
              open={open}
              onChange={question.reload}
            />
          </article>
          <section aria-labelledby="solutions-title">
            <h2 id="solutions-title">{published.length ? tn('question.solutionCount', published.length) : t('question.solutions')}</h2>
            {published.length === 0 && <p>{t('question.noSolutions')}</p>}
            {published.map((s) => (
              <SolutionView
                key={s.id}
                solution={s}
                upvoted={upvotes.data ? upvotes.data.solution_ids.includes(s.id) : upvotes.error ? false : null}
                authorOf={authorOf}
                asker={asker}
                onChange={question.reload}
              >
                {(menu) => (
                  <Comments
                    target={{ kind: 'solution', id: s.id }}
                    comments={commentsOf(s.id)}
                    authorOf={authorOf}
                    canConvert={() => false}
                    open={open}
                    onChange={question.reload}
                    extra={menu}
                  />
                )}
              </SolutionView>
            ))}
            {open && published.some((s) => s.expires && Date.parse(s.expires) <= Date.now()) && <RequestValidation id={id} />}
            {open && <DraftSolution questionId={id} onPublished={question.reload} />}
          </section>
        </div>
        <Similar id={id} />
      </div>
    </Page>
  );
}

/** Following as one switch that shows whether it holds. */
function Follow({ q }: { q: Complete }) {
  const known = useLoad(() => listedForMe(q, 'following'), [q.id]);
  const [following, setFollowing] = useState<boolean | null>(null);
  useEffect(() => setFollowing(known.data ?? null), [known.data]);
  const action = useAction();
  const toggle = () =>
    action.run(async () => {
      const on = !following;
      await kn().call(on ? 'followQuestion' : 'unfollowQuestion', { params: { id: q.id } });
      setFollowing(on);
    });
  return (
    <>
      <button
        type="button"
        class={following ? 'toggle on' : 'toggle'}
        aria-pressed={following === true}
        disabled={action.busy || following === null}
        onClick={() => void toggle()}
      >
        {following ? t('question.following') : t('question.follow')}
      </button>
      <ErrorBox error={action.error} />
    </>
  );
}

/**
 * A menu of what is done less often (attachments, sharing): closed until asked for. Compact (each
 * solution's): "…", its label for screen readers and as a tooltip.
 */
function Menu({ label, compact, children }: { label: string; compact?: boolean; children: ComponentChildren }) {
  const [opened, setOpened] = useState(false);
  return (
    <details class={compact ? 'menu compact' : 'menu'} onToggle={(e) => e.currentTarget.open && setOpened(true)}>
      {compact ? (
        <summary title={label}>
          <span aria-hidden="true">…</span>
          <span class="visually-hidden">{label}</span>
        </summary>
      ) : (
        <summary>{label}</summary>
      )}
      {opened && <div class="menu-body">{children}</div>}
    </details>
  );
}

function SolutionView({
  solution: initial,
  upvoted: known,
  authorOf,
  asker,
  onChange,
  children,
}: {
  solution: Solution;
  /** Whether the person upvoted it; null until known. */
  upvoted: boolean | null;
  authorOf: (path: string) => User | undefined;
  asker: boolean;
  onChange: () => void;
  /** Its comments, given the solution's menu to show beside "Add a comment". */
  children: (menu: ComponentChildren) => ComponentChildren;
}) {
  const [s, setSolution] = useState(initial);
  useEffect(() => setSolution(initial), [initial]);
  const [upvoted, setUpvoted] = useState(known);
  useEffect(() => setUpvoted(known), [known]);
  const action = useAction();
  const author = authorOf(s.user);
  const mine = userIdOf(s.user) === me.get()?.id;
  const canEdit = mine || isContentAdmin();
  const act = (run: () => Promise<unknown>) => action.run(run).then((ok) => ok && onChange());
  // One click: the count changes at once, from the API's answer (a second click takes it back).
  const upvote = () =>
    action.run(async () => {
      const on = !upvoted;
      setSolution(await kn().call(on ? 'upvoteSolution' : 'removeSolutionUpvote', { params: { id: s.id } }));
      setUpvoted(on);
    });
  const label = author ? t('question.solutionBy', { name: fullName(author) }) : t('question.solution');
  return (
    <article class={s.accepted_by_question_poser ? 'solution is-accepted' : 'solution'} id={`solution-${s.id}`} aria-label={label}>
      {s.accepted_by_question_poser && <p class="badge-accepted">{t('question.accepted')}</p>}
      <div class="solution-row">
        <div class="vote">
          <button
            type="button"
            class={upvoted ? 'toggle on' : 'toggle'}
            aria-pressed={upvoted === true}
            disabled={action.busy || mine || upvoted === null}
            title={mine ? t('question.upvoteOwn') : undefined}
            onClick={() => void upvote()}
          >
            <span aria-hidden="true">▲ </span>
            {t('question.upvote')}
          </button>
          <span class="vote-count">{tn('question.votes', s.upvote_count)}</span>
        </div>
        <div class="solution-body">
          <SanitisedHtml html={s.description} />
          <p class="meta">
            <PersonLink user={author} />
            {s.published && <When iso={s.published} />}
            {s.rating !== null && <span>{tn('question.rating', s.rating_count, { rating: formatNumber(s.rating, 1) })}</span>}
          </p>
          <Validity solution={s} canEdit={canEdit} onValidated={setSolution} />
          {asker && !s.accepted_by_question_poser && (
            <div class="actions">
              <button
                type="button"
                class="secondary"
                disabled={action.busy}
                onClick={() => void act(() => kn().call('acceptSolution', { params: { id: s.id } }))}
              >
                {t('question.accept')}
              </button>
            </div>
          )}
          <ErrorBox error={action.error} />
          {children(
            <Menu label={t('question.more')} compact>
              <SolutionAttachments id={s.id} canChange={canEdit} />
              <h3>{t('share.solution')}</h3>
              <Share kind="solution" id={s.id} />
            </Menu>,
          )}
        </div>
      </div>
    </article>
  );
}

/** A solution's validity as a state (valid until …, expired, without limit), and, for its editors, validating it. */
function Validity({ solution: s, canEdit, onValidated }: { solution: Solution; canEdit: boolean; onValidated: (s: Solution) => void }) {
  const lang = useSignal(language);
  const [validity, setValidity] = useState<(typeof VALIDITIES)[number]>('months_six');
  const action = useAction();
  const expires = s.expires && formatDate(s.expires, lang);
  const expired = !!s.expires && Date.parse(s.expires) <= Date.now();
  const state = expires
    ? expired
      ? t('validity.expired', { date: expires })
      : t('validity.until', { date: expires })
    : s.validity_period === 'unlimited'
      ? t('validity.none')
      : null;
  if (!state && !canEdit) return null;
  return (
    <div class={expired ? 'validity expired' : 'validity'}>
      {state && <span class="validity-state">{state}</span>}
      {canEdit && (
        <details class="menu">
          <summary>{expired ? t('validity.renew') : t('validity.change')}</summary>
          <div class="actions">
            <ChoiceAction
              id={`validity-${s.id}`}
              label={t('validity.label')}
              value={validity}
              options={VALIDITIES.map((v) => [v, t(`validity.${v}` as MessageKey)])}
              onChange={(v) => setValidity(v as never)}
              busy={action.busy}
              act={t('validity.validate')}
              onAct={() =>
                void action.run(async () => onValidated(await kn().call('validateSolution', { params: { id: s.id }, body: { validity } })))
              }
            />
          </div>
          <ErrorBox error={action.error} />
        </details>
      )}
    </div>
  );
}

function SolutionAttachments({ id, canChange }: { id: number; canChange: boolean }) {
  const list = useLoad(() => kn().call('listSolutionAttachments', { params: { id } }), [id]);
  if (list.error) return <ErrorBox error={list.error} />;
  return list.data ? <Attachments kind="solution" id={id} items={list.data.items} canChange={canChange} /> : <Loading lines={1} />;
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
    const description = await markdownToHtml(text);
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
    <form class="draft" onSubmit={publish} aria-label={t('question.yourSolution')}>
      <Editor
        id="solution-text"
        label={draftId === null ? t('question.yourSolution') : t('question.draft')}
        rows={6}
        required
        value={text}
        onInput={setText}
      />
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

/**
 * The comments of a question or a solution, oldest first: the first few, then "show all"; anyone
 * may add one while the question is open.
 */
function Comments({
  target,
  comments,
  authorOf,
  canConvert,
  open,
  onChange,
  extra,
}: {
  target: { kind: 'question' | 'solution'; id: number };
  comments: Comment[];
  authorOf: (path: string) => User | undefined;
  canConvert: (c: Comment) => boolean;
  open: boolean;
  onChange: () => void;
  /** Shown beside "Add a comment" (a solution's menu). */
  extra?: ComponentChildren;
}) {
  const [all, setAll] = useState(false);
  const [writing, setWriting] = useState(false);
  const [text, setText] = useState('');
  const action = useAction();
  const converting = useAction();
  const key = `${target.kind}-${target.id}-comment`;
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const op = target.kind === 'question' ? 'createQuestionComment' : 'createSolutionComment';
      await kn().call(op, { params: { id: target.id }, body: { description: textToHtml(text) } });
      setText('');
      setWriting(false);
      onChange();
    });
  };
  const shown = all ? comments : comments.slice(0, COMMENTS_SHOWN);
  const label = t(target.kind === 'question' ? 'question.commentsOnQuestion' : 'question.commentsOnSolution');
  return (
    <section class="comments" aria-label={label}>
      {comments.length > 0 && (
        <ul class="comments">
          {shown.map((c) => (
            <li key={c.id}>
              <SanitisedHtml html={c.description} />
              <p class="meta">
                <PersonLink user={authorOf(c.user)} />
                <When iso={c.created} />
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
      )}
      {!all && comments.length > COMMENTS_SHOWN && (
        <button type="button" class="link" onClick={() => setAll(true)}>
          {tn('question.showAllComments', comments.length)}
        </button>
      )}
      <ErrorBox error={converting.error} />
      {((open && !writing) || extra) && (
        <div class="comment-bar">
          {open && !writing && (
            <button type="button" class="link add-comment" onClick={() => setWriting(true)}>
              {t('question.writeComment')}
            </button>
          )}
          {extra}
        </div>
      )}
      {open && writing && (
        <form onSubmit={submit}>
          <label for={key}>{t('question.addComment')}</label>
          <textarea id={key} rows={3} required value={text} onInput={(e) => setText(e.currentTarget.value)} />
          <ErrorBox error={action.error} />
          <div class="actions">
            <button type="submit" disabled={action.busy}>
              {t('question.postComment')}
            </button>
            <button type="button" class="secondary" onClick={() => setWriting(false)}>
              {t('common.cancel')}
            </button>
          </div>
        </form>
      )}
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

/** Questions like this one: beside the content on a wide screen, after it on a narrow one. */
function Similar({ id }: { id: number }) {
  const similar = useLoad(() => kn().call('similarToQuestion', { params: { id }, query: { limit: 5 } }), [id]);
  return (
    <aside class="related" aria-labelledby="similar-questions">
      <h2 id="similar-questions">{t('question.similar')}</h2>
      {similar.loading && !similar.data && <Loading lines={3} />}
      {similar.data && !similar.data.items.length && <p class="muted">{t('common.none')}</p>}
      <ul>
        {similar.data?.items.map((q) => (
          <li key={q.id}>
            <a href={`/questions/${q.id}`}>{q.title}</a>
          </li>
        ))}
      </ul>
    </aside>
  );
}

import { useEffect, useState } from 'preact/hooks';
import { kn, userOf } from '../api.ts';
import { Editor, markdownToHtml } from '../editor.tsx';
import { t, tn } from '../i18n.ts';
import { route } from '../router.ts';
import { useSignal } from '../signal.ts';
import { ErrorBox, fullName, labels, Notice, Page, TagInput, useAction, useLoad } from '../ui.tsx';

type Expert = { id: number; name: string };

/** Plain text as the description's HTML: paragraphs, every character encoded. */
export function textToHtml(text: string) {
  const encode = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  return text
    .split(/\n{2,}/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => `<p>${encode(p).replace(/\n/g, '<br>')}</p>`)
    .join('');
}

/** Waits until the value has stood still for `ms`. */
function useSettled<T>(value: T, ms: number) {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

export function AskPage() {
  const [title, setTitle] = useState('');
  const [description, setDescription] = useState('');
  const [tags, setTags] = useState<string[]>([]);
  const [typedTag, setTypedTag] = useState('');
  // From an expert's result: the question goes to them too once it is published.
  const to = Number(useSignal(route).query.get('to')) || null;
  const recipient = useLoad(async () => (to ? userOf(to) : null), [to]);
  const [category, setCategory] = useState('');
  const [draftId, setDraftId] = useState<number | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [published, setPublished] = useState<{ id: number; count: number; experts: Expert[] } | null>(null);
  const action = useAction();
  const categories = useLoad(() => kn().call('listCategories'), []);
  const typed = useSettled(`${title}\n${description}`.trim(), 400);
  // With the draft once there is one: the similar questions it was shown count in the reuse figures.
  const similar = useLoad(
    async () =>
      typed.length < 8
        ? null
        : kn().call('similarToText', { query: { query: typed.slice(0, 1000), limit: 5, draft: draftId ?? undefined } }),
    [typed, draftId],
  );

  const body = async () => ({
    title,
    description: description.trim() ? await markdownToHtml(description) : undefined,
    tags: [...new Set([...tags, ...labels(typedTag)])],
    category: category ? Number(category) : undefined,
  });
  const save = async () => {
    if (draftId === null) {
      const draft = await kn().call('createQuestion', { body: await body() });
      setDraftId(draft.id);
      return draft.id;
    }
    const { tags: _tags, ...rest } = await body();
    await kn().call('updateQuestion', { params: { id: draftId }, body: rest });
    return draftId;
  };
  const saveDraft = () =>
    action.run(async () => {
      await save();
      setNotice(t('ask.draftSaved'));
    });
  const publish = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const id = await save();
      const { number_of_experts } = await kn().call('publishQuestion', { params: { id } });
      if (recipient.data) await kn().call('forwardQuestion', { params: { id }, body: { recipient: recipient.data.id } });
      const experts = await kn()
        .call('getQuestionExperts', { params: { id } })
        .then((r) =>
          r.items.slice(0, Math.max(number_of_experts, 0)).map((e) => ({ id: e.user.id, name: `${e.user.firstname} ${e.user.lastname}` })),
        )
        .catch(() => []);
      setPublished({ id, count: number_of_experts, experts });
    });
  };

  if (published)
    return (
      <Page title={t('ask.published')}>
        <p role="status" data-testid="experts-asked">
          {tn('ask.expertsAsked', published.count)}
        </p>
        {published.experts.length > 0 && (
          <section aria-labelledby="experts-who">
            <h2 id="experts-who">{t('ask.expertsWho')}</h2>
            <ul>
              {published.experts.map((e) => (
                <li key={e.id}>
                  <a href={`/users/${e.id}`}>{e.name}</a>
                </li>
              ))}
            </ul>
          </section>
        )}
        <p>
          <a href={`/questions/${published.id}`}>{t('ask.open')}</a>
        </p>
      </Page>
    );
  return (
    <Page title={t('ask.title')}>
      {recipient.data && <p class="notice">{t('ask.forwardTo', { name: fullName(recipient.data) })}</p>}
      <div class="narrow-form">
        <form onSubmit={publish}>
          <label for="title">{t('ask.questionTitle')}</label>
          <input id="title" aria-describedby="title-hint" value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
          <p id="title-hint" class="hint">
            {t('ask.titleHint')}
          </p>
          <section class="similar-box" aria-labelledby="similar-title">
            <h2 id="similar-title">{t('ask.similar')}</h2>
            <ErrorBox error={similar.error} />
            <ul class="similar" aria-live="polite">
              {similar.data?.items.map((q) => (
                <li key={q.id}>
                  <a href={`/questions/${q.id}`}>{q.title}</a>
                </li>
              ))}
            </ul>
            {!similar.data?.items.length && <p class="muted">{t('common.none')}</p>}
          </section>
          <Editor id="description" label={t('ask.description')} value={description} onInput={setDescription} />
          <TagInput id="ask-tags" label={t('ask.tags')} value={tags} onChange={setTags} onTyped={setTypedTag} disabled={draftId !== null} />
          <label for="ask-category">{t('ask.category')}</label>
          <select id="ask-category" value={category} onChange={(e) => setCategory(e.currentTarget.value)}>
            <option value="">{t('ask.noCategory')}</option>
            {categories.data?.map((c) => (
              <option key={c.id} value={String(c.id)}>
                {c.name}
              </option>
            ))}
          </select>
          <ErrorBox error={action.error} />
          <Notice text={notice} />
          <div class="actions">
            <button type="button" class="secondary" disabled={action.busy} onClick={() => void saveDraft()}>
              {t('ask.saveDraft')}
            </button>
            <button type="submit" disabled={action.busy}>
              {t('ask.publish')}
            </button>
          </div>
        </form>
      </div>
    </Page>
  );
}

import { useEffect, useState } from 'preact/hooks';
import { contentLanguages, kn } from '../api.ts';
import type { MessageKey } from '../i18n/en.ts';
import { language, t } from '../i18n.ts';
import { navigate, route } from '../router.ts';
import { useSignal } from '../signal.ts';
import { ErrorBox, formatDate, Loading, labels, Page, SanitisedHtml, TagLinks, useLoad } from '../ui.tsx';

const PAGE_SIZE = 10;
const FILTERS = ['unsolved', 'solved', 'following', 'my-questions', 'my-solutions', 'trending'] as const;
const SORTS = ['last_activity.desc', 'date_published.desc', 'view_count.desc', 'solution_count.desc'] as const;

/** The list and search of questions; what is asked lives in the address, so a reload or a link keeps it. */
export function QuestionsPage() {
  const { query } = useSignal(route);
  const lang = useSignal(language);
  const text = query.get('q') ?? '';
  const tags = query.get('tags') ?? '';
  const category = query.get('category') ?? '';
  const languageId = query.get('language') ?? '';
  const space = query.get('space') ?? '';
  const filter = query.get('filter') ?? '';
  const sort = query.get('sort') ?? '';
  const page = Math.max(1, Number(query.get('page') ?? 1) || 1);
  const [form, setForm] = useState(currentOf(query));
  const search = query.toString();
  useEffect(() => setForm(currentOf(query)), [search]);
  const categories = useLoad(() => kn().call('listCategories'), []);
  const spaces = useLoad(() => kn().call('listKnowledgeSpaces'), []);
  const languages = useSignal(contentLanguages);
  const languageName = new Intl.DisplayNames(lang, { type: 'language', fallback: 'code' });
  const list = useLoad(
    () =>
      kn().call('listQuestions', {
        query: {
          query: text || undefined,
          tags: tags ? labels(tags) : undefined,
          categories: category ? [Number(category)] : undefined,
          language_id: languageId ? [languageId] : undefined,
          knowledge_space: space ? Number(space) : undefined,
          filter: filter ? [filter as (typeof FILTERS)[number]] : undefined,
          sort: sort ? [sort] : undefined,
          limit: PAGE_SIZE,
          offset: (page - 1) * PAGE_SIZE,
        } as never,
      }),
    [text, tags, category, languageId, space, filter, sort, page],
  );
  const go = (changes: Record<string, string | number>) => {
    const next = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...form, page: 1, ...changes })) if (v && !(k === 'page' && v === 1)) next.set(k, String(v));
    const qs = next.toString();
    navigate(qs ? `/?${qs}` : '/');
  };
  const submit = (event: Event) => {
    event.preventDefault();
    go({});
  };
  const pages = list.data ? Math.max(1, Math.ceil(list.data.total / PAGE_SIZE)) : 1;
  return (
    <Page title={t('list.title')}>
      <search>
        <form class="search" onSubmit={submit}>
          <div class="row">
            <label for="q" class="visually-hidden">
              {t('list.search')}
            </label>
            <input
              id="q"
              type="search"
              placeholder={t('list.search')}
              value={form.q}
              onInput={(e) => setForm({ ...form, q: e.currentTarget.value })}
            />
            <button type="submit">{t('list.searchButton')}</button>
          </div>
          <fieldset class="filters">
            <legend>{t('list.filters')}</legend>
            <div>
              <label for="tags">{t('list.tags')}</label>
              <input id="tags" value={form.tags} onInput={(e) => setForm({ ...form, tags: e.currentTarget.value })} />
            </div>
            <div>
              <label for="category">{t('list.category')}</label>
              <select id="category" value={form.category} onChange={(e) => setForm({ ...form, category: e.currentTarget.value })}>
                <option value="">{t('list.allCategories')}</option>
                {categories.data?.map((c) => (
                  <option key={c.id} value={String(c.id)}>
                    {c.name}
                  </option>
                ))}
              </select>
            </div>
            <div>
              <label for="language">{t('list.language')}</label>
              <select id="language" value={form.language} onChange={(e) => setForm({ ...form, language: e.currentTarget.value })}>
                <option value="">{t('list.allLanguages')}</option>
                {languages.map((code) => (
                  <option key={code} value={code}>
                    {languageName.of(code)}
                  </option>
                ))}
              </select>
            </div>
            {!!spaces.data?.items.length && (
              <div>
                <label for="space">{t('list.space')}</label>
                <select id="space" value={form.space} onChange={(e) => setForm({ ...form, space: e.currentTarget.value })}>
                  <option value="">{t('list.allSpaces')}</option>
                  {spaces.data.items.map((k) => (
                    <option key={k.id} value={String(k.id)}>
                      {k.name}
                    </option>
                  ))}
                </select>
              </div>
            )}
            <div>
              <label for="filter">{t('list.filter')}</label>
              <select id="filter" value={form.filter} onChange={(e) => setForm({ ...form, filter: e.currentTarget.value })}>
                <option value="">{t('list.filter.all')}</option>
                {FILTERS.map((f) => (
                  <option key={f} value={f}>
                    {t(`list.filter.${f}` as MessageKey)}
                  </option>
                ))}
              </select>
            </div>
            <div>
              <label for="sort">{t('list.sort')}</label>
              <select id="sort" value={form.sort} onChange={(e) => setForm({ ...form, sort: e.currentTarget.value })}>
                <option value="">{form.q ? t('list.sort.relevance') : t('list.sort.last_activity.desc')}</option>
                {SORTS.map((s) => (
                  <option key={s} value={s}>
                    {t(`list.sort.${s}` as MessageKey)}
                  </option>
                ))}
              </select>
            </div>
            <button type="submit" class="secondary">
              {t('list.apply')}
            </button>
          </fieldset>
        </form>
      </search>
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && (
        <section aria-labelledby="results" aria-busy={list.loading}>
          <h2 id="results">{t('list.results', { total: list.data.total })}</h2>
          {list.data.items.length === 0 && <p>{t('list.empty')}</p>}
          <ol class="questions">
            {list.data.items.map((q) => {
              const meta = q.search_metadata;
              const hl = meta?.highlighting;
              return (
                <li key={q.id} class="question-item">
                  <h3>
                    <a href={`/questions/${q.id}`}>
                      {hl?.query_field === 'title' ? <SanitisedHtml class="inline" html={hl.fragment} /> : q.title}
                    </a>
                  </h3>
                  {hl && hl.query_field !== 'title' && (
                    <p class="fragment">
                      <span class="muted">{t('list.matchIn', { field: t(`field.${hl.query_field}` as MessageKey) })}: </span>
                      {!hl.start && '… '}
                      <SanitisedHtml class="inline" html={hl.fragment} />
                      {!hl.end && ' …'}
                    </p>
                  )}
                  <p class="meta">
                    {meta && (
                      <span class="relevance">
                        {t('list.relevance', { score: meta.score.toFixed(2) })}
                        {meta.is_relevant && <strong> · {t('list.relevant')}</strong>}
                      </span>
                    )}
                    <span>{t('list.solutions', { count: q.solution_count })}</span>
                    <span>{t('list.views', { count: q.view_count })}</span>
                    <span>{formatDate(q.last_activity, lang)}</span>
                    {q.category && <span>{q.category.name}</span>}
                  </p>
                  <TagLinks concepts={q.concepts} />
                </li>
              );
            })}
          </ol>
          <nav class="pager" aria-label={t('common.page', { page, pages })}>
            <button type="button" class="secondary" disabled={page <= 1} onClick={() => go({ ...currentOf(query), page: page - 1 })}>
              {t('common.previous')}
            </button>
            <span>{t('common.page', { page, pages })}</span>
            <button type="button" class="secondary" disabled={page >= pages} onClick={() => go({ ...currentOf(query), page: page + 1 })}>
              {t('common.next')}
            </button>
          </nav>
        </section>
      )}
    </Page>
  );
}

/** The search as it stands in the address (paging keeps it, whatever the form holds unsent). */
const currentOf = (query: URLSearchParams) => ({
  q: query.get('q') ?? '',
  tags: query.get('tags') ?? '',
  category: query.get('category') ?? '',
  language: query.get('language') ?? '',
  space: query.get('space') ?? '',
  filter: query.get('filter') ?? '',
  sort: query.get('sort') ?? '',
});

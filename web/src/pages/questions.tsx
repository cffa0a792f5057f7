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
            <FilterSelect
              id="category"
              label={t('list.category')}
              all={t('list.allCategories')}
              value={form.category}
              options={(categories.data ?? []).map((c) => [String(c.id), c.name])}
              onChange={(category) => setForm({ ...form, category })}
            />
            <FilterSelect
              id="language"
              label={t('list.language')}
              all={t('list.allLanguages')}
              value={form.language}
              options={languages.map((code) => [code, languageName.of(code) ?? code])}
              onChange={(language) => setForm({ ...form, language })}
            />
            {!!spaces.data?.items.length && (
              <FilterSelect
                id="space"
                label={t('list.space')}
                all={t('list.allSpaces')}
                value={form.space}
                options={spaces.data.items.map((k) => [String(k.id), k.name])}
                onChange={(space) => setForm({ ...form, space })}
              />
            )}
            <FilterSelect
              id="filter"
              label={t('list.filter')}
              all={t('list.filter.all')}
              value={form.filter}
              options={FILTERS.map((f) => [f, t(`list.filter.${f}` as MessageKey)])}
              onChange={(filter) => setForm({ ...form, filter })}
            />
            <FilterSelect
              id="sort"
              label={t('list.sort')}
              all={form.q ? t('list.sort.relevance') : t('list.sort.last_activity.desc')}
              value={form.sort}
              options={SORTS.map((o) => [o, t(`list.sort.${o}` as MessageKey)])}
              onChange={(sort) => setForm({ ...form, sort })}
            />
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

/** A labelled filter of the list: its first option (`all`, the empty value) leaves the filter out. */
function FilterSelect(props: {
  id: string;
  label: string;
  all: string;
  value: string;
  options: ReadonlyArray<readonly [value: string, text: string]>;
  onChange: (value: string) => void;
}) {
  return (
    <div>
      <label for={props.id}>{props.label}</label>
      <select id={props.id} value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        <option value="">{props.all}</option>
        {props.options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

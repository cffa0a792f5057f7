import { useEffect, useState } from 'preact/hooks';
import { contentLanguages, kn } from '../api.ts';
import type { MessageKey } from '../i18n/en.ts';
import { language, relativeTime, t, tn } from '../i18n.ts';
import { navigate, route } from '../router.ts';
import { useSignal } from '../signal.ts';
import { ErrorBox, Loading, labels, Page, SanitisedHtml, TagLinks, textOf, useLoad } from '../ui.tsx';

const PAGE_SIZE = 10;
const FILTERS = ['unsolved', 'solved', 'following', 'my-questions', 'my-solutions', 'trending'] as const;
/** The first is the list's order when nothing is searched; a search is ordered by relevance. */
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
  const go = (changes: Record<string, string | number>) => navigate(hrefOf({ ...form, page: 1, ...changes }));
  const activeFilters = [tags, category, languageId, space, filter].filter(Boolean).length;
  // Open at first when filters are on; then as the person leaves it (choosing applies at once).
  const [filtersOpen] = useState(activeFilters > 0);
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
          <details class="filters" open={filtersOpen}>
            <summary>{activeFilters ? tn('list.filtersActive', activeFilters) : t('list.filters')}</summary>
            <div class="filter-grid">
              <div>
                <label for="tags">{t('list.tags')}</label>
                <input
                  id="tags"
                  value={form.tags}
                  onInput={(e) => setForm({ ...form, tags: e.currentTarget.value })}
                  onChange={(e) => go({ tags: e.currentTarget.value })}
                />
              </div>
              <FilterSelect
                id="category"
                label={t('list.category')}
                all={t('list.allCategories')}
                value={form.category}
                options={(categories.data ?? []).map((c) => [String(c.id), c.name])}
                onChange={(category) => go({ category })}
              />
              <FilterSelect
                id="language"
                label={t('list.language')}
                all={t('list.allLanguages')}
                value={form.language}
                options={languages.map((code) => [code, languageName.of(code) ?? code])}
                onChange={(language) => go({ language })}
              />
              {!!spaces.data?.items.length && (
                <FilterSelect
                  id="space"
                  label={t('list.space')}
                  all={t('list.allSpaces')}
                  value={form.space}
                  options={spaces.data.items.map((k) => [String(k.id), k.name])}
                  onChange={(space) => go({ space })}
                />
              )}
              <FilterSelect
                id="filter"
                label={t('list.filter')}
                all={t('list.filter.all')}
                value={form.filter}
                options={FILTERS.map((f) => [f, t(`list.filter.${f}` as MessageKey)])}
                onChange={(filter) => go({ filter })}
              />
            </div>
          </details>
        </form>
      </search>
      <nav class="tabs" aria-label={t('list.sort')}>
        <ul>
          {[...(text ? [''] : []), ...SORTS].map((o) => {
            const current = o === sort || (!sort && o === (text ? '' : SORTS[0]));
            return (
              <li key={o}>
                <a
                  href={hrefOf({ ...currentOf(query), sort: o === SORTS[0] && !text ? '' : o })}
                  aria-current={current ? 'page' : undefined}
                >
                  {o ? t(`list.sort.${o}` as MessageKey) : t('list.sort.relevance')}
                </a>
              </li>
            );
          })}
        </ul>
      </nav>
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && (
        <section aria-labelledby="results" aria-busy={list.loading}>
          <h2 id="results">{tn('list.results', list.data.total)}</h2>
          {list.data.items.length === 0 && <p>{t('list.empty')}</p>}
          <ol class="questions">
            {list.data.items.map((q) => {
              const hl = q.search_metadata?.highlighting;
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
                  {(!hl || hl.query_field === 'title') && q.description && <p class="excerpt">{excerptOf(q.description)}</p>}
                  <p class="meta">
                    {q.has_accepted_solution ? (
                      <span class="count has accepted" title={t('list.accepted')}>
                        <span aria-hidden="true">✓ </span>
                        {tn('list.solutions', q.solution_count)}
                        <span class="visually-hidden">, {t('list.accepted')}</span>
                      </span>
                    ) : (
                      <span class={q.solution_count ? 'count has' : 'count'}>{tn('list.solutions', q.solution_count)}</span>
                    )}
                    <span>{tn('list.views', q.view_count)}</span>
                    <span>{t('list.active', { time: relativeTime(q.last_activity) })}</span>
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

/** The address of the list with these choices (the first page and empty choices left out). */
function hrefOf(choices: Record<string, string | number>) {
  const next = new URLSearchParams();
  for (const [k, v] of Object.entries(choices)) if (v && !(k === 'page' && v === 1)) next.set(k, String(v));
  const qs = next.toString();
  return qs ? `/?${qs}` : '/';
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

/** The start of a description as plain text (the API's sanitised HTML, read as text, never drawn). */
const EXCERPT_CHARS = 180;
function excerptOf(html: string) {
  const text = textOf(html).replace(/\s+/g, ' ').trim();
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS).replace(/\s+\S*$/, '')} …` : text;
}

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

import { Client } from '@elastic/elasticsearch';
import type { Bus } from '@kn/bus';
import { type RoutedQuestion, type ServiceName, searchIndexLoading } from '@kn/contracts';
import type { HighlightRequest, IndexStatus, SearchBackend } from '../backend.ts';
import { chooseTags, type ExpertQuery, type FoundExperts, ranking, scoreExperts } from '../domain/experts.ts';
import { highlightSource } from '../domain/highlight.ts';
import { type MatchRequest, PAGE, SIMILAR_ONLY_MIN, similarityBlend } from '../domain/match.ts';
import { CANDIDATE_TERMS, candidateCount, cosine, topicVector, unitIdf, withFeedbackOf } from '../domain/similarity.ts';
import { rankSuggestedTags, SUGGESTION_NEIGHBOURS } from '../domain/suggest.ts';
import type { IndexHandlers } from '../local/events.ts';
import { labelWords, queryTerms, queryWords, textCounts } from '../words.ts';
import type { QuestionDocument, SettingDocument, SpaceDocument, TagDocument, UserDocument } from './documents.ts';
import { ElasticsearchFeed } from './feed.ts';
import { indexNames } from './mappings.ts';
import {
  autocompleteQuery,
  countsTypos,
  filterClauses,
  frequencyQuery,
  matchQuery,
  requestedFields,
  similarCandidatesQuery,
  unitFrequencyQuery,
} from './queries.ts';
import { rankMatches, routedQuestion, scoredHits, termStatistics, unitFrequencies } from './results.ts';

/** Users per tag an expert search considers. */
const EXPERTS_PER_TAG = 1000;

/**
 * The Elasticsearch backend: one index shared by every instance (ELASTICSEARCH_URL,
 * ELASTICSEARCH_INDEX_PREFIX), fed by whichever instance holds the feed's lease (feed.ts). The
 * ranking, highlighting, similarity and expert search follow the local backend's rules (docs/search.md,
 * "Elasticsearch backend"): the words are the same, Elasticsearch finds and scores the matches.
 */
export class ElasticsearchBackend implements SearchBackend {
  readonly client: Client;
  readonly names: ReturnType<typeof indexNames>;
  readonly feed: ElasticsearchFeed;
  private readonly bus: Bus;
  private readonly streams: ServiceName[];
  private opened = false;
  private rebuilding: Promise<void> | null = null;
  private targets: Record<string, number> = {};
  private applied: Record<string, number> = {};
  private questions = 0;
  private poller: NodeJS.Timeout | null = null;

  constructor(options: { url: string; prefix: string; bus: Bus; streams: ServiceName[]; handlers: IndexHandlers; client?: Client }) {
    this.client = options.client ?? new Client({ node: options.url });
    this.names = indexNames(options.prefix);
    this.bus = options.bus;
    this.streams = options.streams;
    this.feed = new ElasticsearchFeed({
      client: this.client,
      names: this.names,
      bus: options.bus,
      streams: options.streams,
      handlers: options.handlers,
    });
  }

  private async lastSequences() {
    const out: Record<string, number> = {};
    for (const s of this.streams) out[s] = (await this.bus.jsm.streams.info(this.bus.streamName(s))).state.last_seq;
    return out;
  }

  /** Reads the positions (and the question count) from the index: another instance may be the one feeding it. */
  private async poll() {
    this.applied = await this.feed.positions();
    try {
      this.questions = (await this.client.count({ index: this.names.questions, query: { term: { is_published: true } } })).count;
    } catch {
      this.questions = 0;
    }
  }

  async open() {
    await this.feed.start();
    this.targets = await this.lastSequences();
    await this.poll();
    this.opened = true;
    this.poller = setInterval(() => void this.poll().catch(() => {}), 1000);
  }

  async close() {
    this.opened = false;
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
    await this.feed.stop();
  }

  get ready() {
    return this.opened && this.rebuilding === null && this.streams.every((s) => (this.applied[s] ?? 0) >= (this.targets[s] ?? 0));
  }

  status(): IndexStatus {
    return {
      ready: this.ready,
      questions: this.questions,
      streams: Object.fromEntries(this.streams.map((s) => [s, { applied: this.applied[s] ?? 0, target: this.targets[s] ?? 0 }])),
    };
  }

  async caughtUp() {
    await this.rebuilding;
    const targets = await this.lastSequences();
    for (;;) {
      await this.poll();
      if (this.streams.every((s) => (this.applied[s] ?? 0) >= targets[s]!)) return;
      if (!this.opened) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  rebuild(): Promise<void> {
    this.rebuilding ??= (async () => {
      try {
        await this.feed.rebuild();
        this.targets = await this.lastSequences();
        this.applied = Object.fromEntries(this.streams.map((s) => [s, 0]));
      } finally {
        this.rebuilding = null;
      }
    })();
    return this.rebuilding;
  }

  private check() {
    if (!this.ready) throw searchIndexLoading();
  }

  private async documents(ids: readonly number[], fields?: string[]): Promise<Map<number, QuestionDocument>> {
    const out = new Map<number, QuestionDocument>();
    if (!ids.length) return out;
    const { docs } = await this.client.mget<QuestionDocument>({
      index: this.names.questions,
      ids: ids.map(String),
      ...(fields ? { _source_includes: fields } : {}),
    });
    for (const d of docs) if ('found' in d && d.found && d._source) out.set(Number(d._id), d._source);
    return out;
  }

  async match(request: MatchRequest & { highlight: boolean }) {
    this.check();
    const words = queryWords(request.query, request.stop_languages);
    const { terms } = words;
    const fields = requestedFields(request.fields);
    if (!terms.length) return { total: 0, items: [] };
    const stats = termStatistics(await this.client.search({ index: this.names.questions, ...frequencyQuery(words, fields) }), terms);
    const query = matchQuery({ query: words, operator: request.operator, fields, filter: request.filter }, stats);
    const hits = query ? scoredHits(await this.client.search({ index: this.names.questions, ...query })) : [];
    const typoTerms = new Set(terms.filter((t, i) => countsTypos(t, stats.frequencies[i]!, stats.documents)));
    let similarity: Map<number, number> | undefined;
    let similarOnly: Array<{ id: number; score: number }> | undefined;
    if (['title', 'description', 'tags', 'solutions'].every((f) => fields.includes(f as never))) {
      const language = words.languages[0];
      const best = hits.slice(0, similarityBlend.depth).map((h) => h.id);
      similarity = new Map((await this.cosinesWith(request.query, language, best)).map((c) => [c.id, c.score]));
      if (request.operator === 'AND' && hits.length < PAGE) {
        const found = new Set(hits.map((h) => h.id));
        const candidates = (await this.similar({ text: request.query, language }, PAGE)).filter(
          (s) => !found.has(s.id) && s.score >= SIMILAR_ONLY_MIN,
        );
        // Only the visible ones that hold some word of the query.
        const { filter, must_not } = filterClauses(request.filter);
        const visible = candidates.length
          ? await this.client.search({
              index: this.names.questions,
              size: candidates.length,
              _source: false,
              query: {
                bool: {
                  filter: [...filter, { ids: { values: candidates.map((c) => String(c.id)) } }],
                  must_not,
                  should: terms.flatMap((t) => fields.map((f) => ({ term: { [`words.${f}`]: t } }))),
                  minimum_should_match: 1,
                },
              },
            })
          : null;
        const ids = new Set(visible?.hits.hits.map((h) => Number(h._id)) ?? []);
        similarOnly = candidates.filter((c) => ids.has(c.id));
      }
    }
    const result = rankMatches(hits, { similarity, similarOnly, offset: request.offset, limit: request.limit });
    if (!request.highlight) return result;
    const highlights = await this.highlightIds(
      request,
      result.items.map((i) => i.id),
      typoTerms,
    );
    return { ...result, items: result.items.map((item, i) => ({ ...item, highlighting: highlights[i] })) };
  }

  private async highlightIds(request: HighlightRequest, ids: readonly number[], typoTerms?: ReadonlySet<string>) {
    const docs = await this.documents(ids, ['id', 'title', 'description', 'tags', 'parts', 'is_published']);
    return ids.map((id) => {
      const doc = docs.get(id);
      if (!doc?.is_published) return null;
      return highlightSource({ ...doc, parts: (kind) => doc.parts[kind] }, request, typoTerms);
    });
  }

  async highlight(request: HighlightRequest, ids: readonly number[]) {
    this.check();
    return this.highlightIds(request, ids);
  }

  /** Unit idf of words, from the index's unit frequencies. */
  private async idf(words: Iterable<string>): Promise<(word: string) => number> {
    const list = [...new Set(words)];
    const { documents, frequency } = unitFrequencies(
      await this.client.search({ index: this.names.questions, ...unitFrequencyQuery(list) }),
    );
    return (word) => unitIdf(documents, frequency.get(word) ?? 0);
  }

  private textCounts(text: string, language?: string) {
    return textCounts(text, language);
  }

  /** Cosines of a text with questions (those missing count 0). */
  private async cosinesWith(text: string, language: string | undefined, ids: readonly number[]) {
    if (!ids.length) return [];
    const counts = this.textCounts(text, language);
    const docs = await this.documents(ids, ['id', 'unit']);
    const idf = await this.idf([...counts.keys(), ...[...docs.values()].flatMap((d) => Object.keys(d.unit ?? {}))]);
    const units = ids.map((id) => docs.get(id)?.unit);
    // The query's topic with pseudo-relevance feedback from its best text matches (ids come best first).
    const vectors = units.map((unit) => (unit ? topicVector(Object.entries(unit), idf) : null));
    const query = withFeedbackOf(
      topicVector(counts, idf),
      vectors.filter((v) => v !== null),
    );
    return ids.map((id, i) => ({ id, score: vectors[i] ? cosine(query, vectors[i]) : 0 }));
  }

  /** Similar live questions with their documents (tags and solutions for tag votes and experts); `thorough` as similarity.ts similarTo. */
  private async similarDocuments(source: { question_id?: number; text?: string; language?: string }, limit: number, thorough = false) {
    let counts: Iterable<readonly [string, number]>;
    if (source.question_id !== undefined) {
      const own = (await this.documents([source.question_id], ['id', 'unit', 'is_published'])).get(source.question_id);
      if (!own?.is_published) return [];
      counts = Object.entries(own.unit ?? {});
    } else counts = this.textCounts(source.text ?? '', source.language);
    const words = [...counts];
    if (!words.length) return [];
    const queryIdf = await this.idf(words.map(([w]) => w));
    const query = topicVector(words, queryIdf);
    const informative = [...query]
      .sort((a, b) => b[1] - a[1])
      .slice(0, CANDIDATE_TERMS)
      .map(([word, weight]) => ({ word, weight }));
    if (!informative.length) return [];
    const response = await this.client.search<QuestionDocument>({
      index: this.names.questions,
      ...similarCandidatesQuery(informative, source.question_id, candidateCount(thorough)),
    });
    const docs = response.hits.hits.map((h) => h._source!).filter(Boolean);
    const idf = await this.idf([...words.map(([w]) => w), ...docs.flatMap((d) => Object.keys(d.unit ?? {}))]);
    const units = docs.map((doc) => topicVector(Object.entries(doc.unit ?? {}), idf));
    const first = topicVector(words, idf);
    const byFirst = units.map((u, i) => ({ u, s: cosine(first, u), i })).sort((a, b) => b.s - a.s || a.i - b.i);
    const vector = thorough
      ? withFeedbackOf(
          first,
          byFirst.map((b) => b.u),
        )
      : first;
    return docs
      .map((doc, i) => ({ doc, id: doc.id, score: cosine(vector, units[i]!) }))
      .filter((r) => r.score > 0)
      .sort((a, b) => b.score - a.score || b.id - a.id)
      .slice(0, limit);
  }

  async similar(source: { question_id?: number; text?: string; language?: string }, limit: number) {
    this.check();
    return (await this.similarDocuments(source, limit, true)).map(({ id, score }) => ({ id, score }));
  }

  private async closedSpaces(): Promise<SpaceDocument[]> {
    const response = await this.client.search<SpaceDocument>({
      index: this.names.state,
      size: 10_000,
      query: { bool: { filter: [{ term: { type: 'space' } }, { term: { is_closed: true } }] } },
    });
    return response.hits.hits.map((h) => h._source!);
  }

  async autocomplete(text: string, limit: number) {
    this.check();
    const terms = queryTerms(text, ['en']);
    if (!terms.length || limit === 0) return { total: 0, items: [] };
    const closed = (await this.closedSpaces()).map((s) => s.space_id);
    const response = await this.client.search<{ title: string }>({
      index: this.names.questions,
      ...autocompleteQuery(terms, closed, limit),
    });
    const total = response.hits.total;
    return {
      total: Math.min(1000, typeof total === 'number' ? total : (total?.value ?? 0)),
      items: response.hits.hits.map((h) => h._source!.title),
    };
  }

  /** Tags by lower-case label (announced, or carried by a question). */
  private async tags(keys: Iterable<string>): Promise<Map<string, TagDocument>> {
    const ids = [...new Set(keys)].map((k) => `tag:${k}`);
    const out = new Map<string, TagDocument>();
    if (!ids.length) return out;
    const { docs } = await this.client.mget<TagDocument>({ index: this.names.state, ids });
    for (const d of docs) if ('found' in d && d.found && d._source) out.set(d._source.key, d._source);
    return out;
  }

  /** Lower-case labels of the tags whose words occur in the text in a row (store.ts tagsNamedIn). */
  private async tagsNamedIn(text: string): Promise<Set<string>> {
    const words = labelWords(text);
    if (!words.length) return new Set();
    const response = await this.client.search<TagDocument>({
      index: this.names.state,
      size: 10_000,
      query: { bool: { filter: [{ term: { type: 'tag' } }, { terms: { first_word: [...new Set(words)] } }] } },
    });
    const named = new Set<string>();
    for (const hit of response.hits.hits) {
      const tagWords = labelWords(hit._source!.key);
      if (words.some((_, i) => tagWords.every((w, k) => words[i + k] === w))) named.add(hit._source!.key);
    }
    return named;
  }

  async suggestTags(text: string, limit: number) {
    this.check();
    const neighbours = await this.similarDocuments({ text }, SUGGESTION_NEIGHBOURS);
    const named = await this.tagsNamedIn(text);
    const known = await this.tags([...neighbours.flatMap((n) => n.doc.tags.map((t) => t.toLowerCase())), ...named]);
    return rankSuggestedTags({
      neighbours: neighbours.map((n) => ({ score: n.score, tags: n.doc.tags })),
      named,
      tag: (key) => known.get(key),
      limit,
    });
  }

  /**
   * Per tag and user: the value of their live solutions on live questions with the tag (unfaded)
   * and their recommendations, as expertise.ts keeps them, from aggregations.
   */
  private async records(keys: readonly string[]): Promise<Map<string, Map<number, { value: number; recommendations: number }>>> {
    const out = new Map<string, Map<number, { value: number; recommendations: number }>>();
    if (!keys.length) return out;
    const response = await this.client.search({
      index: this.names.questions,
      size: 0,
      query: { terms: { tag_keys: [...keys] } },
      aggs: {
        tags: {
          terms: { field: 'tag_keys', include: [...keys], size: keys.length },
          aggs: {
            live: {
              filter: { term: { live: true } },
              aggs: {
                solutions: {
                  nested: { path: 'solutions' },
                  aggs: {
                    live: {
                      filter: { term: { 'solutions.live': true } },
                      aggs: {
                        users: {
                          terms: { field: 'solutions.author_id', size: EXPERTS_PER_TAG },
                          aggs: { value: { sum: { field: 'solutions.value' } } },
                        },
                      },
                    },
                  },
                },
              },
            },
            forwards: {
              nested: { path: 'forwards' },
              aggs: { users: { terms: { field: 'forwards.recipient_id', size: EXPERTS_PER_TAG } } },
            },
          },
        },
      },
    });
    type Bucket = { key: number | string; doc_count: number; value?: { value: number } };
    const tagBuckets = (response.aggregations?.tags as { buckets: Array<Record<string, any>> } | undefined)?.buckets ?? [];
    for (const t of tagBuckets) {
      const users = new Map<number, { value: number; recommendations: number }>();
      for (const b of (t.live.solutions.live.users.buckets ?? []) as Bucket[])
        users.set(Number(b.key), { value: b.value?.value ?? 0, recommendations: 0 });
      for (const b of (t.forwards.users.buckets ?? []) as Bucket[]) {
        const entry = users.get(Number(b.key)) ?? { value: 0, recommendations: 0 };
        entry.recommendations += b.doc_count;
        users.set(Number(b.key), entry);
      }
      out.set(String(t.key), users);
    }
    return out;
  }

  /** Each user's value over all their live solutions (expertise.ts activity). */
  private async activity(users: readonly number[]): Promise<Map<number, number>> {
    if (!users.length) return new Map();
    const response = await this.client.search({
      index: this.names.questions,
      size: 0,
      query: { term: { live: true } },
      aggs: {
        solutions: {
          nested: { path: 'solutions' },
          aggs: {
            mine: {
              filter: { bool: { filter: [{ term: { 'solutions.live': true } }, { terms: { 'solutions.author_id': [...users] } }] } },
              aggs: {
                users: {
                  terms: { field: 'solutions.author_id', size: users.length },
                  aggs: { value: { sum: { field: 'solutions.value' } } },
                },
              },
            },
          },
        },
      },
    });
    const buckets = (response.aggregations?.solutions as Record<string, any> | undefined)?.mine?.users?.buckets ?? [];
    return new Map((buckets as Array<{ key: number; value: { value: number } }>).map((b) => [Number(b.key), b.value.value]));
  }

  private async deletedUsers(users: readonly number[]): Promise<Set<number>> {
    if (!users.length) return new Set();
    const { docs } = await this.client.mget<UserDocument>({ index: this.names.state, ids: users.map((u) => `user:${u}`) });
    return new Set(docs.flatMap((d) => ('found' in d && d.found && d._source?.deleted ? [d._source.user_id] : [])));
  }

  private async minExperts(): Promise<number | undefined> {
    const { docs } = await this.client.mget<SettingDocument>({ index: this.names.state, ids: ['setting:min_experts'] });
    const d = docs[0];
    return d && 'found' in d && d.found ? d._source?.value : undefined;
  }

  /** The local expert search (domain/experts.ts) over facts read from the index. */
  private async findExperts(query: Omit<ExpertQuery, 'now'>): Promise<FoundExperts> {
    const neighbours = (await this.similarDocuments({ text: query.text, language: query.language }, ranking.neighbours)).filter(
      (n) => n.score >= ranking.minSimilarity,
    );
    const named = await this.tagsNamedIn(query.text);
    const ownKeys = (query.tags ?? []).map((t) => t.toLowerCase());
    const voted = new Set([...neighbours.flatMap((n) => n.doc.tags.map((t) => t.toLowerCase())), ...named]);
    const known = await this.tags([...voted, ...ownKeys]);
    const detected = chooseTags({
      neighbours: neighbours.map((n) => ({ score: n.score, tags: n.doc.tags })),
      named,
      own: ownKeys,
      tag: (key) => known.get(key),
    });
    if (!detected.length) return { tags: [], experts: [] };
    // Linked tags either way, read now: they widen the pool when the tags give too few experts.
    const linkedBack = await this.client.search<TagDocument>({
      index: this.names.state,
      size: 10_000,
      query: { bool: { filter: [{ term: { type: 'tag' } }, { terms: { link_keys: detected.map((d) => d.key) } }] } },
    });
    const linked = new Map<string, Set<string>>();
    const link = (a: string, b: string) => {
      if (a !== b) linked.set(a, (linked.get(a) ?? new Set()).add(b));
    };
    for (const d of detected) for (const other of known.get(d.key)?.link_keys ?? []) link(d.key, other);
    for (const hit of linkedBack.hits.hits) for (const other of hit._source!.link_keys) link(other, hit._source!.key);
    const linkedKeys = [...new Set([...linked.values()].flatMap((s) => [...s]))];
    for (const [key, doc] of await this.tags(linkedKeys)) known.set(key, doc);
    const records = await this.records([...new Set([...detected.map((d) => d.key), ...linkedKeys])]);
    const candidates = [...new Set([...records.values()].flatMap((m) => [...m.keys()]))];
    const [deleted, minExperts, activity] = await Promise.all([
      this.deletedUsers(candidates),
      this.minExperts(),
      this.activity(candidates),
    ]);
    const skip = new Set(query.exclude ?? []);
    const { experts, used } = scoreExperts({
      tags: detected,
      eachOnTag: (key, visit) => {
        for (const [user, { value, recommendations }] of records.get(key) ?? []) visit(user, value, recommendations);
      },
      linkedTags: (key) => linked.get(key) ?? [],
      tagExists: (key) => known.has(key),
      minExperts: minExperts ?? 1,
      eligible: (user) => !skip.has(user) && !deleted.has(user) && (!query.only || query.only.has(user)),
      activity: (user) => activity.get(user) ?? 0,
      neighbours: neighbours.map((n) => ({ score: n.score, solutions: (n.doc.solutions ?? []).filter((s) => s.live) })),
      now: Date.now(),
      limit: query.limit,
    });
    const label = (key: string) => known.get(key)?.label ?? key;
    const details = await this.expertRecords(
      experts.map(([user]) => user),
      new Set(used),
    );
    return {
      tags: used.map(label),
      experts: experts.map(([user_id, score]) => {
        const d = details.get(user_id)!;
        return { user_id, score, details: { ...d, expert_tags: d.expert_tags.map((key) => ({ label: label(key) })) } };
      }),
    };
  }

  /** The users' records on a set of tags, each solution and recommendation counted once (store.ts expertRecord). */
  private async expertRecords(users: readonly number[], tags: ReadonlySet<string>) {
    const records = new Map(
      users.map((u) => [u, { solution_count: 0, ratingSum: 0, ratingCount: 0, recommendation_count: 0, expert_tags: new Set<string>() }]),
    );
    if (users.length) {
      const response = await this.client.search<QuestionDocument>({
        index: this.names.questions,
        size: 10_000,
        _source: ['tag_keys', 'live', 'solutions', 'forwards'],
        query: {
          bool: {
            filter: [{ terms: { tag_keys: [...tags] } }],
            should: [
              { nested: { path: 'solutions', query: { terms: { 'solutions.author_id': [...users] } } } },
              { nested: { path: 'forwards', query: { terms: { 'forwards.recipient_id': [...users] } } } },
            ],
            minimum_should_match: 1,
          },
        },
      });
      for (const hit of response.hits.hits) {
        const q = hit._source!;
        const matched = q.tag_keys.filter((t) => tags.has(t));
        if (!matched.length) continue;
        if (q.live)
          for (const s of q.solutions) {
            const r = records.get(s.author_id);
            if (!r || !s.live) continue;
            r.solution_count++;
            if (s.rating !== null && s.rating_count > 0) {
              r.ratingSum += s.rating * s.rating_count;
              r.ratingCount += s.rating_count;
            }
            for (const t of matched) r.expert_tags.add(t);
          }
        for (const f of q.forwards) {
          const r = records.get(f.recipient_id);
          if (!r) continue;
          r.recommendation_count++;
          for (const t of matched) r.expert_tags.add(t);
        }
      }
    }
    return new Map(
      [...records].map(([user, r]) => [
        user,
        {
          solution_count: r.solution_count,
          average_rating: r.ratingCount ? Math.round((r.ratingSum / r.ratingCount) * 100) / 100 : null,
          recommendation_count: r.recommendation_count,
          expert_tags: [...r.expert_tags],
        },
      ]),
    );
  }

  async experts(query: { text: string; limit: number }) {
    this.check();
    return this.findExperts(query);
  }

  async expertsOn(question: RoutedQuestion, limit: number, exclude: readonly number[] = []) {
    this.check();
    const space =
      question.knowledge_space_id === null
        ? undefined
        : (await this.client.mget<SpaceDocument>({ index: this.names.state, ids: [`space:${question.knowledge_space_id}`] })).docs[0];
    const closed = space && 'found' in space && space.found && space._source?.is_closed ? new Set(space._source.members) : undefined;
    return this.findExperts({
      text: `${question.title}\n${question.text}`,
      tags: question.tags,
      language: question.language,
      limit,
      exclude: [question.author_id, ...exclude],
      only: closed,
    });
  }

  async question(id: number) {
    this.check();
    return routedQuestion((await this.documents([id])).get(id));
  }
}

/** Deletes every index of a prefix (tests drop their own; Elasticsearch refuses wildcards in deletes by default). */
export async function dropElasticsearchIndices(url: string, prefix: string) {
  const client = new Client({ node: url });
  try {
    const names = Object.keys(await client.indices.get({ index: `${prefix}-*`, ignore_unavailable: true, allow_no_indices: true }));
    if (names.length) await client.indices.delete({ index: names });
  } finally {
    await client.close();
  }
}

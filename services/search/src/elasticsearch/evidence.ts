import type { Client, estypes } from '@elastic/elasticsearch';
import { NETWORK_SETTINGS_DEFAULTS } from '@kn/contracts';
import { type Language, languages, termCounts } from '@kn/similarity';
import type { ExpertRecord } from '../core/backend.ts';
import { labelWords, tagNamer } from '../core/words.ts';
import type { HistoryQuestion, HistorySolution, NetworkHistory } from '../domain/expert-history.ts';
import { fadedValue, type SolutionFacts, type TagRecord } from '../domain/expertise.ts';
import {
  ANSWERED_LIMIT,
  type ExpertEvidence,
  latestAnswered,
  type Neighbour,
  type TagFacts,
  type TagUsers,
  type UserFacts,
} from '../domain/experts.ts';
import { askedFieldWeights } from '../domain/fields.ts';
import { pacer } from '../domain/pace.ts';
import { unitIdf } from '../domain/ranking.ts';
import { sources } from './client.ts';
import {
  type NeighbourFacts,
  type QuestionDocument,
  type SettingDocument,
  type SolutionSource,
  type SpaceDocument,
  type TagDocument,
  type UserDocument,
  unpacked,
} from './documents.ts';
import { type DocumentFrequencies, KeptUntilMoved } from './frequencies.ts';
import type { IndexNames } from './mappings.ts';
import { inSpaces, tagUsesQuery } from './queries.ts';
import { tagsOnlyIn } from './results.ts';

/** Users per tag an expert search considers. */
const EXPERTS_PER_TAG = 1000;
/** Candidates of the neighbours, and the most informative words that find them (as similarity.ts). */
const CANDIDATES = 200;
const CANDIDATE_TERMS = 24;
/** Documents read per request when the fit reads the past. */
const PAGE = 1000;

/** Neighbours whose asked vectors a backend keeps at most before it starts again. */
const MAX_NEIGHBOURS = 50_000;

/** A neighbour's facts and its asked words' weights (log(1 + count) · idf, those above 0, in its order) with their norm. */
interface NeighbourVector {
  facts: NeighbourFacts;
  weights: Array<readonly [string, number]>;
  norm: number;
}

const languageOf = (l: string | undefined): Language => ((languages as readonly string[]).includes(l ?? '') ? (l as Language) : 'en');
const round = (v: number) => Math.round(v * 1e12) / 1e12;
type Buckets = Array<Record<string, any>>;
const bucketsOf = (agg: unknown): Buckets => ((agg as { buckets?: Buckets } | undefined)?.buckets ?? []) as Buckets;
/** The questions with a solution by one of `users`: a query that keeps aggregations over their solutions small. */
const answeredBy = (users: readonly number[]) => ({
  nested: { path: 'solutions', query: { terms: { 'solutions.author_id': [...users] } } },
});
/** An aggregation of the live solutions of each of `users` (buckets at `theirs.users`), `perUser` under each. */
const solutionsByUser = (
  users: readonly number[],
  perUser: Record<string, estypes.AggregationsAggregationContainer>,
): estypes.AggregationsAggregationContainer => ({
  nested: { path: 'solutions' },
  aggs: {
    theirs: {
      filter: { bool: { filter: [{ term: { 'solutions.live': true } }, { terms: { 'solutions.author_id': [...users] } }] } },
      aggs: { users: { terms: { field: 'solutions.author_id', size: users.length }, aggs: perUser } },
    },
  },
});

/** A stored solution as expertise sees it. */
const factsOf = (s: SolutionSource): SolutionFacts => ({
  id: s.id,
  question_id: s.question_id,
  author_id: s.author_id,
  live: s.live,
  time: s.time,
  rating: s.rating,
  rating_count: s.rating_count,
  upvotes: s.upvotes,
  accepted_at: s.accepted_at,
});

/** The asked weight of a word: title twice, description, tags. */
const askedCount = ([title, description, tags]: readonly [number, number, number]) =>
  (askedFieldWeights.title ?? 0) * title + (askedFieldWeights.description ?? 0) * description + (askedFieldWeights.tags ?? 0) * tags;

/**
 * Expert search's evidence from the shared Elasticsearch index (domain/experts.ts reads it, as it
 * reads the local index's): the same facts, from aggregations over the question documents. With
 * `hidden` knowledge spaces (a caller's closed ones), their questions are left out of every
 * aggregation and search, and tags used only there do not exist (local/evidence.ts does the same).
 */
export class ElasticsearchEvidence implements ExpertEvidence {
  private readonly client: Client;
  private readonly names: IndexNames;
  /** Shared by every scope: frequencies count all published questions. */
  private readonly askedFrequencies: DocumentFrequencies;
  private readonly hidden: readonly number[];
  /** Whole-index figures (the clock, all live solutions), kept until the index moves; shared by every scope. */
  private readonly kept: KeptUntilMoved;

  constructor(
    client: Client,
    names: IndexNames,
    askedFrequencies: DocumentFrequencies,
    hidden: readonly number[] = [],
    kept = new KeptUntilMoved(),
  ) {
    this.client = client;
    this.names = names;
    this.askedFrequencies = askedFrequencies;
    this.hidden = [...hidden];
    this.kept = kept;
  }

  /** The same evidence for a caller who may not read the `hidden` spaces. */
  scoped(hidden: readonly number[]): ElasticsearchEvidence {
    return hidden.length || this.hidden.length
      ? new ElasticsearchEvidence(this.client, this.names, this.askedFrequencies, hidden, this.kept)
      : this;
  }

  /** The questions of the hidden spaces, for a `must_not`. */
  private get unreadable() {
    return inSpaces(this.hidden);
  }

  /** Of these tags, those used only in the hidden spaces (none without hidden spaces). */
  private async onlyHidden(keys: Iterable<string>): Promise<Set<string>> {
    const list = [...new Set(keys)];
    if (!this.hidden.length || !list.length) return new Set();
    return tagsOnlyIn(await this.client.search({ index: this.names.questions, ...tagUsesQuery(list, this.hidden) }));
  }

  clock() {
    return this.kept
      .of('clock', async () => {
        const response = await this.client.search({
          index: this.names.questions,
          size: 0,
          query: { term: { live: true } },
          aggs: { latest: { max: { field: 'published' } } },
        });
        return (response.aggregations?.latest as estypes.AggregationsMaxAggregate | undefined)?.value ?? null;
      })
      .then((latest) => {
        const now = Date.now();
        return latest ? Math.min(now, latest) : now;
      });
  }

  /**
   * The idf of words among what was asked (log((N + 1) / (df + 0.5)), as TermIndex.askedIdf),
   * without the words of `own` (a question read as if it were not indexed yet) when given.
   */
  private async askedIdf(words: Iterable<string>, own?: ReadonlySet<string>): Promise<(word: string) => number> {
    const answer = await this.askedFrequencies.of(words);
    const documents = answer.documents - (own ? 1 : 0);
    return (word) => unitIdf(documents, (answer.frequency.get(word) ?? 0) - (own?.has(word) ? 1 : 0));
  }

  async neighbours(text: string, language: string | undefined, limit: number, self?: number): Promise<Neighbour[]> {
    const counts = [...termCounts(text, { language: languageOf(language), stem: false, fold: true })];
    if (!counts.length) return [];
    let own: Set<string> | undefined;
    if (self !== undefined) {
      const { docs } = await this.client.mget<QuestionDocument>({
        index: this.names.questions,
        ids: [String(self)],
        _source_includes: ['asked', 'is_published'],
      });
      const [d] = sources(docs);
      if (d?.is_published) own = new Set(Object.keys(d.asked ?? {}));
    }
    const queryIdf = await this.askedIdf(
      counts.map(([w]) => w),
      own,
    );
    const weighted = counts.map(([word, count]) => ({ word, weight: Math.log1p(count) * queryIdf(word) })).filter((w) => w.weight > 0);
    const informative = [...weighted].sort((a, b) => b.weight - a.weight || (a.word < b.word ? -1 : 1)).slice(0, CANDIDATE_TERMS);
    if (!informative.length) return [];
    const response = await this.client.search({
      index: this.names.questions,
      size: CANDIDATES,
      // What a neighbour is, from binary doc values: no stored source read (OpenSearch filters a
      // source by parsing it: 220 ms for these 200 at 20,000 questions, 27 ms sent whole).
      _source: false,
      stored_fields: '_none_',
      docvalue_fields: ['id', 'neighbour_packed'],
      query: {
        bool: {
          should: informative.map(({ word, weight }) => ({ term: { asked_terms: { value: word, boost: weight } } })),
          minimum_should_match: 1,
          filter: [{ term: { live: true } }],
          must_not: [...(self === undefined ? [] : [{ term: { id: self } }]), ...this.unreadable],
        },
      },
    });
    // Neighbours already weighed (the same questions are the neighbours of many texts) are not
    // unpacked nor weighed again, unless a question is read as if not indexed (its own words' idf differ).
    const generation = this.kept.generation;
    const known = this.kept.map<number, NeighbourVector>('neighbour vectors');
    const found = response.hits.hits.flatMap((h): Array<{ facts: NeighbourFacts; kept: NeighbourVector | undefined }> => {
      const fields = (h.fields ?? {}) as { id?: number[]; neighbour_packed?: string[] };
      const id = fields.id?.[0];
      const kept = own || id === undefined ? undefined : known.get(id);
      if (kept) return [{ facts: kept.facts, kept }];
      const value = fields.neighbour_packed?.[0];
      return value ? [{ facts: unpacked<NeighbourFacts>(value), kept: undefined }] : [];
    });
    const idf = await this.askedIdf(
      [...counts.map(([w]) => w), ...found.flatMap((d) => (d.kept ? [] : Object.keys(d.facts.asked ?? {})))],
      own,
    );
    const query = new Map<string, number>();
    let norm = 0;
    for (const [word, count] of counts) {
      const w = Math.log1p(count) * idf(word);
      if (w <= 0) continue;
      query.set(word, w);
      norm += w * w;
    }
    const length = Math.sqrt(norm) || 1;
    const keep = !own && generation === this.kept.generation;
    return found
      .map(({ facts: doc, kept }) => {
        let vector = kept;
        if (!vector) {
          const weights: Array<readonly [string, number]> = [];
          let docNorm = 0;
          for (const [word, fields] of Object.entries(doc.asked ?? {})) {
            const w = Math.log1p(askedCount(fields)) * idf(word);
            if (w <= 0) continue;
            docNorm += w * w;
            weights.push([word, w]);
          }
          vector = { facts: doc, weights, norm: docNorm };
          if (keep) {
            if (known.size >= MAX_NEIGHBOURS) known.clear();
            known.set(doc.id, vector);
          }
        }
        let dot = 0;
        for (const [word, w] of vector.weights) dot += w * (query.get(word) ?? 0);
        const score = vector.norm > 0 ? round(Math.min(1, Math.max(0, dot / length / Math.sqrt(vector.norm)))) : 0;
        return { doc, score, time: doc.published ? Date.parse(doc.published) : 0 };
      })
      .filter((n) => n.score > 0)
      .sort((a, b) => b.score - a.score || b.time - a.time || b.doc.id - a.doc.id)
      .slice(0, limit)
      .map(({ doc, score, time }) => ({
        id: doc.id,
        score,
        time,
        tags: doc.tags,
        knowledge_space_id: doc.knowledge_space_id,
        solutions: doc.solutions,
      }));
  }

  /**
   * Every tag of the network by key, who links to each, and the namer over them (store.ts
   * tagNamer), kept until the index moves: each expert search asked for the tags its text names
   * and for those it found, with their links, three requests every time.
   */
  private knownTags() {
    return this.kept.of('tags', async () => {
      const byKey = new Map((await this.allTags()).map((t) => [t.key, t]));
      const linkedBack = new Map<string, string[]>();
      for (const tag of byKey.values())
        for (const key of tag.link_keys) if (key !== tag.key) linkedBack.set(key, [...(linkedBack.get(key) ?? []), tag.key]);
      return { byKey, linkedBack, named: tagNamer(byKey.keys()) };
    });
  }

  /** The tag documents, read page by page in the order of their keys. */
  private async allTags(): Promise<TagDocument[]> {
    const tags: TagDocument[] = [];
    for (let after: string | undefined; ; ) {
      const page = await this.client.search<TagDocument>({
        index: this.names.state,
        size: PAGE,
        query: { term: { type: 'tag' } },
        sort: [{ key: 'asc' }],
        ...(after === undefined ? {} : { search_after: [after] }),
      });
      tags.push(...page.hits.hits.map((h) => h._source!));
      if (page.hits.hits.length < PAGE) return tags;
      after = tags[tags.length - 1]!.key;
    }
  }

  /** Lower-case labels of the tags whose words occur in the text in a row (store.ts tagNamer). */
  async namedTags(text: string): Promise<Set<string>> {
    if (!labelWords(text).length) return new Set();
    const named = (await this.knownTags()).named(text);
    const hidden = await this.onlyHidden(named);
    return new Set([...named].filter((key) => !hidden.has(key)));
  }

  async tags(keys: readonly string[]): Promise<Map<string, TagFacts>> {
    const out = new Map<string, TagFacts>();
    if (!keys.length) return out;
    const { byKey, linkedBack } = await this.knownTags();
    const found = keys.flatMap((key) => byKey.get(key) ?? []);
    const linked = new Map(
      found.map((tag) => [tag.key, [...new Set([...tag.link_keys.filter((k) => k !== tag.key), ...(linkedBack.get(tag.key) ?? [])])]]),
    );
    const hidden = await this.onlyHidden([...linked.keys(), ...[...linked.values()].flat()]);
    for (const tag of found)
      if (!hidden.has(tag.key))
        out.set(tag.key, {
          label: tag.label,
          excluded_from_suggestions: tag.excluded_from_suggestions,
          linked: linked.get(tag.key)!.filter((k) => !hidden.has(k)),
        });
    return out;
  }

  /**
   * Whose answers and forwards count on each tag: an aggregation over every question with the tag,
   * so kept per tag until the index moves (the same tags come back in most expert searches).
   */
  async onTags(keys: readonly string[]) {
    const kept = await this.kept.ofEach(`tag users ${this.hidden.join(',')}`, keys, (missing) => this.readOnTags(missing), null);
    return new Map([...kept].filter((entry): entry is [string, TagUsers] => entry[1] !== null));
  }

  private async readOnTags(keys: readonly string[]) {
    const out = new Map<string, TagUsers>();
    if (!keys.length) return out;
    const response = await this.client.search({
      index: this.names.questions,
      size: 0,
      query: { bool: { filter: [{ terms: { tag_keys: [...keys] } }], must_not: this.unreadable } },
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
    for (const t of bucketsOf(response.aggregations?.tags)) {
      const users = new Map<number, TagRecord>();
      const live = t.live.solutions.live;
      for (const b of bucketsOf(live.users))
        users.set(Number(b.key), { value: b.value?.value ?? 0, count: b.doc_count, recommendations: 0 });
      for (const b of bucketsOf(t.forwards.users)) {
        const entry = users.get(Number(b.key)) ?? { value: 0, count: 0, recommendations: 0 };
        entry.recommendations += b.doc_count;
        users.set(Number(b.key), entry);
      }
      out.set(String(t.key), {
        answers: live.doc_count ?? 0,
        forEach: (visit) => {
          for (const [user, record] of users) visit(user, record);
        },
        has: (user) => users.has(user),
      });
    }
    return out;
  }

  answers() {
    return this.kept.of(`answers ${this.hidden.join(',')}`, async () => {
      const response = await this.client.search({
        index: this.names.questions,
        size: 0,
        query: { bool: { filter: [{ term: { live: true } }], must_not: this.unreadable } },
        aggs: { solutions: { nested: { path: 'solutions' }, aggs: { live: { filter: { term: { 'solutions.live': true } } } } } },
      });
      return ((response.aggregations?.solutions as Record<string, any> | undefined)?.live?.doc_count as number | undefined) ?? 0;
    });
  }

  /** Kept per user until the index moves, as onTags. */
  users(ids: readonly number[]) {
    return this.keptPerUser('user facts', ids, (missing) => this.readUsers(missing));
  }

  /** Values per user id, kept until the index moves, those not kept read together (users absent from the answer left out). */
  private async keptPerUser<T>(name: string, ids: readonly number[], read: (missing: number[]) => Promise<Map<number, T>>) {
    const kept = await this.kept.ofEach<T | null>(
      `${name} ${this.hidden.join(',')}`,
      ids.map(String),
      async (missing) => new Map([...(await read(missing.map(Number)))].map(([id, value]) => [String(id), value])),
      null,
    );
    return new Map([...kept].flatMap(([id, value]) => (value === null ? [] : [[Number(id), value] as [number, T]])));
  }

  private async readUsers(ids: readonly number[]) {
    const out = new Map<number, UserFacts>();
    if (!ids.length) return out;
    const [response, { docs }] = await Promise.all([
      this.client.search({
        index: this.names.questions,
        size: 0,
        // Only the questions these users answered: the aggregation reads their solutions, not everyone's.
        query: { bool: { filter: [{ term: { live: true } }, answeredBy(ids)], must_not: this.unreadable } },
        aggs: {
          solutions: solutionsByUser(ids, {
            value: { sum: { field: 'solutions.value' } },
            accepted: { filter: { term: { 'solutions.accepted': true } } },
            times: { terms: { field: 'solutions.time', size: 10_000 } },
          }),
        },
      }),
      this.client.mget<UserDocument>({ index: this.names.state, ids: ids.map((u) => `user:${u}`) }),
    ]);
    const known = new Map(sources(docs).flatMap((d) => (d ? [[d.user_id, d] as const] : [])));
    const buckets = bucketsOf((response.aggregations?.solutions as Record<string, any> | undefined)?.theirs?.users);
    const byUser = new Map(buckets.map((b) => [Number(b.key), b]));
    for (const id of ids) {
      const b = byUser.get(id);
      const times = b ? bucketsOf(b.times).flatMap((t) => Array<number>(t.doc_count).fill(Number(t.key))) : [];
      out.set(id, {
        answers: b?.doc_count ?? 0,
        accepted: b?.accepted?.doc_count ?? 0,
        value: b?.value?.value ?? 0,
        times: Float64Array.from(times).sort(),
        deleted: known.get(id)?.deleted ?? false,
        system: known.get(id)?.system ?? false,
      });
    }
    return out;
  }

  /** Kept until the index moves, as the closed spaces' members (every expert search reads them). */
  private setting(name: string): Promise<number | undefined> {
    return this.kept.of(`setting ${name}`, async () => {
      const { docs } = await this.client.mget<SettingDocument>({ index: this.names.state, ids: [`setting:${name}`] });
      return sources(docs)[0]?.value;
    });
  }

  async minExperts() {
    return (await this.setting('min_experts')) ?? NETWORK_SETTINGS_DEFAULTS.min_experts;
  }

  async routingsPerExpertPerWeek() {
    return this.setting('routings_per_expert_per_week');
  }

  closedSpaceMembers(id: number): Promise<ReadonlySet<number> | undefined> {
    return this.kept.of(`space ${id}`, async () => {
      const { docs } = await this.client.mget<SpaceDocument>({ index: this.names.state, ids: [`space:${id}`] });
      const [d] = sources(docs);
      return d?.is_closed ? new Set(d.members) : undefined;
    });
  }

  async acceptedAnswers() {
    const response = await this.client.search({
      index: this.names.questions,
      size: 0,
      query: { term: { live: true } },
      aggs: {
        solutions: {
          nested: { path: 'solutions' },
          aggs: {
            accepted: { filter: { bool: { filter: [{ term: { 'solutions.live': true } }, { term: { 'solutions.accepted': true } }] } } },
          },
        },
      },
    });
    return ((response.aggregations?.solutions as Record<string, any> | undefined)?.accepted?.doc_count as number | undefined) ?? 0;
  }

  answered(users: readonly number[]) {
    return this.keptPerUser('answered', users, (missing) => this.readAnswered(missing));
  }

  private async readAnswered(users: readonly number[]) {
    const out = new Map(users.map((user) => [user, [] as number[]]));
    if (!users.length) return out;
    const response = await this.client.search({
      index: this.names.questions,
      size: 0,
      query: { bool: { filter: [{ term: { live: true } }, answeredBy(users)], must_not: this.unreadable } },
      aggs: {
        // A nested hit names its question document: that document's id is the question's.
        solutions: solutionsByUser(users, {
          latest: { top_hits: { size: ANSWERED_LIMIT, sort: [{ 'solutions.time': 'desc' }], _source: false } },
        }),
      },
    });
    for (const bucket of bucketsOf((response.aggregations?.solutions as Record<string, any> | undefined)?.theirs?.users)) {
      const hits = (bucket.latest?.hits?.hits ?? []) as Array<{ _id: string; sort?: number[] }>;
      const latest = new Map<number, number>();
      for (const h of hits) latest.set(Number(h._id), Math.max(latest.get(Number(h._id)) ?? -Infinity, Number(h.sort?.[0] ?? 0)));
      out.set(Number(bucket.key), latestAnswered([...latest].map(([question_id, time]) => ({ question_id, time }))));
    }
    return out;
  }

  /** Kept per asker until the index moves, as onTags: the same people ask again. */
  askerRecord(asker: number, now: number) {
    return this.kept.of(`asker ${this.hidden.join(',')} ${asker} ${now}`, () => this.readAskerRecord(asker, now));
  }

  private async readAskerRecord(asker: number, now: number) {
    const out = new Map<number, number>();
    const response = await this.client.search<QuestionDocument>({
      index: this.names.questions,
      size: 10_000,
      _source: ['solutions'],
      query: { bool: { filter: [{ term: { author_id: asker } }, { term: { live: true } }], must_not: this.unreadable } },
    });
    for (const hit of response.hits.hits)
      for (const s of hit._source!.solutions ?? [])
        if (s.live) out.set(s.author_id, (out.get(s.author_id) ?? 0) + fadedValue(factsOf(s), now));
    return out;
  }

  /**
   * Counted by aggregations, not from the questions' sources: OpenSearch parses a whole source to
   * filter it (about 1 ms a question), and an expert's tags hold hundreds of questions. A rating
   * is a float in the index: averages agree with the sources' to their two decimals.
   */
  async expertRecords(users: readonly number[], tags: ReadonlySet<string>): Promise<Map<number, ExpertRecord>> {
    const records = new Map(
      users.map((u) => [u, { solution_count: 0, ratingSum: 0, ratingCount: 0, recommendation_count: 0, expert_tags: new Set<string>() }]),
    );
    if (users.length) {
      const onTheirTags = {
        reverse_nested: {},
        aggs: { tags: { terms: { field: 'tag_keys', include: [...tags], size: Math.max(1, tags.size) } } },
      };
      const response = await this.client.search({
        index: this.names.questions,
        size: 0,
        query: {
          bool: {
            filter: [{ terms: { tag_keys: [...tags] } }],
            must_not: this.unreadable,
            should: [answeredBy(users), { nested: { path: 'forwards', query: { terms: { 'forwards.recipient_id': [...users] } } } }],
            minimum_should_match: 1,
          },
        },
        aggs: {
          live: {
            filter: { term: { live: true } },
            aggs: {
              solutions: solutionsByUser(users, {
                rated: {
                  filter: {
                    bool: { filter: [{ exists: { field: 'solutions.rating' } }, { range: { 'solutions.rating_count': { gt: 0 } } }] },
                  },
                  aggs: {
                    sum: { sum: { script: { source: "doc['solutions.rating'].value * doc['solutions.rating_count'].value" } } },
                    count: { sum: { field: 'solutions.rating_count' } },
                  },
                },
                questions: onTheirTags,
              }),
            },
          },
          forwards: {
            nested: { path: 'forwards' },
            aggs: {
              theirs: {
                filter: { terms: { 'forwards.recipient_id': [...users] } },
                aggs: { users: { terms: { field: 'forwards.recipient_id', size: users.length }, aggs: { questions: onTheirTags } } },
              },
            },
          },
        },
      });
      const aggs = (response.aggregations ?? {}) as Record<string, any>;
      const tagsOf = (bucket: Record<string, any>) => new Set(bucketsOf(bucket.questions?.tags).map((t) => String(t.key)));
      for (const b of bucketsOf(aggs.live?.solutions?.theirs?.users)) {
        const r = records.get(Number(b.key));
        if (!r) continue;
        r.solution_count += b.doc_count;
        r.ratingSum += b.rated?.sum?.value ?? 0;
        r.ratingCount += b.rated?.count?.value ?? 0;
        for (const t of tagsOf(b)) r.expert_tags.add(t);
      }
      for (const b of bucketsOf(aggs.forwards?.theirs?.users)) {
        const r = records.get(Number(b.key));
        if (!r) continue;
        r.recommendation_count += b.doc_count;
        for (const t of tagsOf(b)) r.expert_tags.add(t);
      }
    }
    return new Map(
      [...records].map(([user, r]) => [
        user,
        {
          solution_count: r.solution_count,
          average_rating: r.ratingCount ? Math.round((r.ratingSum / r.ratingCount) * 100) / 100 : null,
          recommendation_count: r.recommendation_count,
          // In the order of the tags asked about (an aggregation orders its buckets by count).
          expert_tags: [...tags].filter((t) => r.expert_tags.has(t)),
        },
      ]),
    );
  }

  /** The network's past up to `cutoff` (domain/expert-history.ts), read page by page. */
  async history(cutoff: number): Promise<Omit<NetworkHistory, 'routings'>> {
    const pace = pacer();
    const allTags = await this.allTags();
    const tagByKey = new Map(allTags.map((t) => [t.key, t]));
    const named = tagNamer(tagByKey.keys());
    const dictionary = new Map<string, number>();
    const words: string[] = [];
    const wordId = (word: string) => {
      let id = dictionary.get(word);
      if (id === undefined) {
        id = words.length;
        dictionary.set(word, id);
        words.push(word);
      }
      return id;
    };
    const questions: HistoryQuestion[] = [];
    const solutions: HistorySolution[] = [];
    const forwards: NetworkHistory['forwards'] = [];
    for (let after: number | undefined; ; ) {
      const page = await this.client.search<QuestionDocument>({
        index: this.names.questions,
        size: PAGE,
        _source: [
          'id',
          'author_id',
          'title',
          'description',
          'tags',
          'knowledge_space_id',
          'published',
          'is_published',
          'is_deleted',
          'asked',
          'solutions',
          'forwards',
        ],
        // Every question: the solutions and forwards of deleted ones are history too (as in the local engine).
        query: { match_all: {} },
        sort: [{ id: 'asc' }],
        ...(after === undefined ? {} : { search_after: [after] }),
      });
      for (const hit of page.hits.hits) {
        const pause = pace();
        if (pause) await pause;
        const doc = hit._source!;
        const entries = Object.entries(doc.asked ?? {}).sort((a, b) => (a[0] < b[0] ? -1 : 1));
        if (doc.is_published && !doc.is_deleted && doc.published && Date.parse(doc.published) < cutoff)
          questions.push({
            id: doc.id,
            author_id: doc.author_id,
            time: Date.parse(doc.published!),
            tags: doc.tags,
            knowledge_space_id: doc.knowledge_space_id,
            named: [...named(`${doc.title}\n${doc.description}`)],
            terms: Int32Array.from(entries.map(([word]) => wordId(word))),
            counts: Uint8Array.from(entries.flatMap(([, c]) => c)),
          });
        for (const s of doc.solutions ?? [])
          if (s.time < cutoff)
            solutions.push({
              id: s.id,
              question_id: doc.id,
              author_id: s.author_id,
              time: s.time,
              accepted_at: s.accepted_at,
              states: (s.states ?? []).filter((st) => st.time < cutoff),
            });
        for (const f of doc.forwards ?? [])
          if (f.time < cutoff) forwards.push({ question_id: doc.id, recipient_id: f.recipient_id, time: f.time });
      }
      if (page.hits.hits.length < PAGE) break;
      after = page.hits.hits[page.hits.hits.length - 1]!._source!.id;
    }
    questions.sort((a, b) => a.time - b.time || a.id - b.id);
    const deletedUsers = new Set<number>();
    const systemUsers = new Set<number>();
    for (let after: number | undefined; ; ) {
      const page = await this.client.search<UserDocument>({
        index: this.names.state,
        size: PAGE,
        query: {
          bool: {
            filter: [{ term: { type: 'user' } }],
            should: [{ term: { deleted: true } }, { term: { system: true } }],
            minimum_should_match: 1,
          },
        },
        sort: [{ user_id: 'asc' }],
        ...(after === undefined ? {} : { search_after: [after] }),
      });
      for (const hit of page.hits.hits) {
        if (hit._source!.deleted) deletedUsers.add(hit._source!.user_id);
        if (hit._source!.system) systemUsers.add(hit._source!.user_id);
      }
      if (page.hits.hits.length < PAGE) break;
      after = page.hits.hits[page.hits.hits.length - 1]!._source!.user_id;
    }
    const tags = new Map<string, TagFacts & { since: number }>();
    for (const q of questions)
      for (const label of q.tags) {
        const key = label.toLowerCase();
        if (tags.has(key)) continue;
        const tag = tagByKey.get(key);
        const linked = new Set((tag?.link_keys ?? []).filter((k) => k !== key));
        for (const other of allTags) if (other.link_keys.includes(key) && other.key !== key) linked.add(other.key);
        tags.set(key, {
          label: tag?.label ?? label,
          excluded_from_suggestions: tag?.excluded_from_suggestions ?? false,
          linked: [...linked],
          since: q.time,
        });
      }
    return {
      cutoff,
      questions,
      solutions: solutions.filter((s) => s.states.length > 0),
      forwards: forwards.sort((a, b) => a.time - b.time || a.question_id - b.question_id || a.recipient_id - b.recipient_id),
      tags,
      deletedUsers,
      systemUsers,
      minExperts: await this.minExperts(),
      word: (id) => words[id]!,
    };
  }
}

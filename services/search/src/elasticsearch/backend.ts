import type { Client, estypes } from '@elastic/elasticsearch';
import type { Bus } from '@kn/bus';
import { AppError, NETWORK_SETTINGS_DEFAULTS, type ServiceName, searchIndexLoading } from '@kn/contracts';
import { type IntervalJob, intervalJob } from '@kn/service';
import type { HighlightRequest, IndexStatus, SearchBackend } from '../core/backend.ts';
import type { IndexHandlers } from '../core/events.ts';
import { queryTerms, queryWords, textCounts } from '../core/words.ts';
import { highlightSource, sourceMatcher } from '../domain/highlight.ts';
import {
  blendsSimilarity,
  type MatchRequest,
  PAGE,
  RELEVANT_SCORE,
  SIMILAR_ONLY_MIN,
  similarityBlend,
  WEAK_SCORE,
  WINDOW,
} from '../domain/match.ts';
import { unitIdf } from '../domain/ranking.ts';
import { blendSimilar, MEANING_ONLY_MIN, type Meaning, semanticWeights } from '../domain/semantic.ts';
import { CANDIDATE_TERMS, candidateCount, cosine, topicVector, withFeedbackOf } from '../domain/similarity.ts';
import { rankSuggestedTags, SUGGESTION_NEIGHBOURS } from '../domain/suggest.ts';
import { topicParameters } from '../domain/topics.ts';
import { hiddenSpacesOf, type Viewer } from '../domain/visibility.ts';
import { type Embeddings, embeddingText, noEmbeddings } from '../semantic/embeddings.ts';
import { checkEngine, engineClient, sources } from './client.ts';
import { type NeighbourFacts, type QuestionDocument, type SpaceDocument, type TagDocument, unpacked, unpackUnit } from './documents.ts';
import { ElasticsearchEvidence } from './evidence.ts';
import { ElasticsearchFeed } from './feed.ts';
import { DocumentFrequencies, KeptUntilMoved, MatchFrequencies, publishedCount, TermDictionary } from './frequencies.ts';
import { indexNames } from './mappings.ts';
import {
  autocompleteQuery,
  countsTypos,
  filterClauses,
  matchesAtMost,
  matchQuery,
  requestedFields,
  similarCandidatesQuery,
  type TermStatistics,
} from './queries.ts';
import { countedAtLeast, countedHits, rankMatches, routedQuestion, scoredHits } from './results.ts';
import { topicCosine, trainWordTopics, type WordTopics } from './topics.ts';

/** Units a backend keeps at most before it starts again (a few KiB each). */
const MAX_UNITS = 50_000;

/** Characters of texts the documents a backend keeps for pages hold at most (shownDocuments); one of more than a hundredth is not kept. */
const KEPT_CHARACTERS = 16_000_000;

/** The characters of a question document's texts: what keeping it costs. */
const textCharacters = (doc: QuestionDocument) =>
  doc.title.length +
  doc.description.length +
  Object.values(doc.parts).reduce((sum, parts) => sum + parts.reduce((n, p) => n + p.text.length, 0), 0);

/** A question's unit vector and its topic vector under the model `topics` (null: not taken yet). */
interface KnownVector {
  vector: Map<string, number>;
  topics: WordTopics | null;
  topic: Float32Array | null;
}

/**
 * The Elasticsearch engine's backend: one index shared by every instance (ELASTICSEARCH_URL,
 * ELASTICSEARCH_INDEX_PREFIX), fed by whichever instance holds the feed's lease (feed.ts). The
 * ranking, highlighting, similarity and expert search follow the local engine's rules (docs/search.md,
 * "The Elasticsearch engine"): the words are the same, Elasticsearch finds and scores the matches.
 */
export class ElasticsearchBackend implements SearchBackend {
  readonly client: Client;
  readonly names: ReturnType<typeof indexNames>;
  readonly feed: ElasticsearchFeed;
  private readonly expertEvidence: ElasticsearchEvidence;
  private readonly unitFrequencies: DocumentFrequencies;
  private readonly askedFrequencies: DocumentFrequencies;
  private readonly matchFrequencies: MatchFrequencies;
  /** Whole-index figures every request would read (published questions, closed spaces, the clock, …), until the index moves. */
  private readonly kept = new KeptUntilMoved();
  /** Units of questions read (units()), until the index moves; `moves` counts the moves. */
  private readonly knownUnits = new Map<number, Record<string, number>>();
  /**
   * Questions' unit vectors (topicVector over the unit idfs) and their topic vectors under the
   * topic model they were taken with, until the index moves: the blend of every question search
   * read the units of its 50 best again, with the idf of all their words, and took their topic
   * vectors (a third of the search service's CPU a query).
   */
  private readonly knownVectors = new Map<number, KnownVector>();
  /**
   * Question documents read for what a page shows (highlights, the titles of expert search's
   * reasons), until the index moves, within KEPT_CHARACTERS of their texts: each page read its ten
   * documents whole again, and expert search its reasons' (a sixth of the engine's CPU a query).
   */
  private readonly shownDocuments = new Map<number, QuestionDocument>();
  private shownCharacters = 0;
  private moves = 0;
  private readonly bus: Bus;
  private readonly streams: ServiceName[];
  /** The question embeddings of this instance (none: lexical search). */
  private readonly embeddings: Embeddings | undefined;
  private opened = false;
  /** The engine answered and the feed started (an engine that did not answer at open is tried again by the poll). */
  private connected = false;
  private readonly url: string;
  private rebuilding: Promise<void> | null = null;
  private targets: Record<string, number> = {};
  private applied: Record<string, number> = {};
  private questions = 0;
  /** Polls run concurrently (the timer's and caughtUp's): only the latest one started shows its figures. */
  private pollsStarted = 0;
  private pollShown = 0;
  private poller: IntervalJob<void> | null = null;
  /** This instance's topic vectors (topics.ts); null until trained after the index caught up. */
  private topics: WordTopics | null = null;
  private topicTraining: Promise<void> | null = null;

  constructor(options: {
    url: string;
    prefix: string;
    bus: Bus;
    streams: ServiceName[];
    handlers: IndexHandlers;
    /** The index version (mappings.ts INDEX_VERSION unless a test passes another). */
    version?: number;
    embeddings?: Embeddings;
  }) {
    this.url = options.url;
    this.client = engineClient(options.url);
    this.names = indexNames(options.prefix);
    this.bus = options.bus;
    this.streams = options.streams;
    this.embeddings = options.embeddings;
    const dictionary = new TermDictionary(this.client, this.names.questions);
    this.unitFrequencies = new DocumentFrequencies(this.client, this.names.questions, 'unit_terms', this.kept, dictionary);
    this.askedFrequencies = new DocumentFrequencies(this.client, this.names.questions, 'asked_terms', this.kept, dictionary);
    this.matchFrequencies = new MatchFrequencies(this.client, this.names.questions, this.kept, dictionary);
    this.expertEvidence = new ElasticsearchEvidence(this.client, this.names, this.askedFrequencies, [], this.kept);
    this.feed = new ElasticsearchFeed({
      client: this.client,
      names: this.names,
      bus: options.bus,
      streams: options.streams,
      handlers: options.handlers,
      version: options.version,
    });
  }

  private async lastSequences() {
    const out: Record<string, number> = {};
    for (const s of this.streams) out[s] = (await this.bus.jsm.streams.info(this.bus.streamName(s))).state.last_seq;
    return out;
  }

  /** Reads the positions (and the question count) from the index: another instance may be the one feeding it. */
  private async poll() {
    const ticket = ++this.pollsStarted;
    const applied = await this.feed.positions();
    if (ticket < this.pollShown) return;
    this.pollShown = ticket;
    if (this.streams.some((s) => applied[s] !== this.applied[s])) {
      this.unitFrequencies.moved();
      this.askedFrequencies.moved();
      this.matchFrequencies.moved();
      this.kept.moved();
      this.knownUnits.clear();
      this.knownVectors.clear();
      this.shownDocuments.clear();
      this.shownCharacters = 0;
      this.moves++;
    }
    this.applied = applied;
    // Counted again only once the index moved: a count reads every question, and polls come every second.
    this.questions = await publishedCount(this.client, this.names.questions, this.kept).catch(() => 0);
    await this.refreshTopics();
  }

  /**
   * Starts training the topic vectors when due (none yet, or the questions have grown by
   * retrainGrowth since) and no more events wait than backlogShare of the questions: a backlog (a
   * catch-up, a bulk import) would leave a model trained now behind at once. The model in force
   * stays in use meanwhile; a training that fails is tried again by a later poll.
   */
  private async refreshTopics() {
    if (this.topicTraining || !this.ready || !this.topicsDue()) return;
    const last = await this.lastSequences().catch(() => null);
    if (!last) return;
    const waiting = this.streams.reduce((sum, s) => sum + Math.max(0, last[s]! - (this.applied[s] ?? 0)), 0);
    if (this.topicTraining || waiting > this.questions * topicParameters.backlogShare) return;
    this.topicTraining = (async () => {
      try {
        while (this.opened && this.topicsDue()) {
          const started = performance.now();
          const topics = await trainWordTopics(this.client, this.names.questions, () => !this.opened);
          if (!topics) return;
          this.topics = topics;
          this.bus.logger.info({ questions: topics.trainedOn, ms: Math.round(performance.now() - started) }, 'topic vectors trained');
        }
      } catch (err) {
        this.bus.logger.warn({ err }, 'topic vectors not trained: tried again at a later poll');
      }
    })().finally(() => {
      this.topicTraining = null;
    });
  }

  private topicsDue() {
    const grown = this.topics ? this.topics.trainedOn * (1 + topicParameters.retrainGrowth) : 1;
    return this.questions >= grown;
  }

  /** Checks the engine and starts the feed; throws ServiceUnavailable while the engine does not answer. */
  private async connect() {
    if (this.connected) return;
    await checkEngine(this.client, this.url);
    const targets = await this.lastSequences();
    // Last: a feed started is never started again by a later round.
    await this.feed.start();
    this.targets = targets;
    this.connected = true;
    this.bus.logger.info({ url: this.url }, 'search engine connected');
  }

  /**
   * Starts with the engine, or without it when it does not answer yet: search answers
   * SearchIndexLoading until it does (the poll connects then). Another program or another major
   * version at ELASTICSEARCH_URL stops the start (StartError).
   */
  async open() {
    try {
      await this.connect();
      await this.poll();
    } catch (err) {
      if (!(err instanceof AppError)) {
        await this.client.close();
        throw err;
      }
      this.bus.logger.warn({ url: this.url, err: err.message }, 'the search engine does not answer; search waits for it');
    }
    this.opened = true;
    this.poller = intervalJob({
      name: 'index status poll',
      everyMs: 1000,
      logger: this.bus.logger,
      // A failed poll leaves the figures of the last one; an engine that does not answer shows in the feed's log.
      round: () =>
        this.connect()
          .then(() => this.poll())
          .catch(() => {}),
    });
  }

  async close() {
    this.opened = false;
    await this.poller?.stop();
    this.poller = null;
    await this.topicTraining;
    if (this.connected) await this.feed.stop();
    this.connected = false;
  }

  get ready() {
    if (!this.opened || !this.connected || this.rebuilding !== null) return false;
    // While this instance builds a newer version, the live index answers as it stands.
    return this.feed.isBuilding || this.streams.every((s) => (this.applied[s] ?? 0) >= (this.targets[s] ?? 0));
  }

  status(): IndexStatus {
    return {
      ready: this.ready,
      questions: this.questions,
      topics: { trained_on: this.topics?.trainedOn ?? 0, training: this.topicTraining !== null || this.topicsDue() },
      streams: Object.fromEntries(this.streams.map((s) => [s, { applied: this.applied[s] ?? 0, target: this.targets[s] ?? 0 }])),
      embeddings: this.embeddings?.status() ?? noEmbeddings,
    };
  }

  async caughtUp() {
    await this.rebuilding;
    const targets = await this.lastSequences();
    for (;;) {
      // An engine that does not answer for a moment (a node lost) is waited for.
      await this.poll().catch(() => {});
      if (this.streams.every((s) => (this.applied[s] ?? 0) >= targets[s]!)) return;
      if (!this.opened) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  rebuild(): Promise<void> {
    this.rebuilding ??= (async () => {
      try {
        await this.feed.rebuild();
        // Trained on what the index held before: trained again once the new one has caught up.
        this.topics = null;
        this.targets = await this.lastSequences();
        // A poll started before the rebuild read the old generation's positions.
        this.pollShown = ++this.pollsStarted;
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

  /**
   * Question documents by id, whole: OpenSearch filters a source by parsing it, which cost twice
   * what sending it whole does (50 questions at 20,000: 80 against 40 ms).
   */
  private async documents(ids: readonly number[]): Promise<Map<number, QuestionDocument>> {
    const out = new Map<number, QuestionDocument>();
    if (!ids.length) return out;
    const { docs } = await this.client.mget<QuestionDocument>({ index: this.names.questions, ids: ids.map(String) });
    for (const d of sources(docs)) if (d) out.set(d.id, d);
    return out;
  }

  /** Documents as a page shows them: those read before (shownDocuments), the others read now and kept. */
  private async shownDocumentsOf(ids: readonly number[]): Promise<Map<number, QuestionDocument>> {
    const out = new Map<number, QuestionDocument>();
    const missing = ids.filter((id) => {
      const doc = this.shownDocuments.get(id);
      if (doc) out.set(id, doc);
      return !doc;
    });
    if (!missing.length) return out;
    const moves = this.moves;
    const read = await this.documents(missing);
    for (const [id, doc] of read) {
      out.set(id, doc);
      if (moves !== this.moves) continue;
      const characters = textCharacters(doc);
      if (characters > KEPT_CHARACTERS / 100) continue;
      if (this.shownCharacters + characters > KEPT_CHARACTERS) {
        this.shownDocuments.clear();
        this.shownCharacters = 0;
      }
      this.shownDocuments.set(id, doc);
      this.shownCharacters += characters;
    }
    return out;
  }

  async match(request: MatchRequest & { highlight: boolean }) {
    this.check();
    const words = queryWords(request.query, request.stop_languages);
    const { terms } = words;
    const fields = requestedFields(request.fields);
    if (!terms.length) return { total: 0, items: [] };
    const blended = blendsSimilarity(fields);
    // The unit frequencies of the query's words (the blend's idf, cosinesWith) in the term-dictionary call of its match counts.
    const primed = blended
      ? this.unitFrequencies.prime(this.textCounts(request.query, words.languages[0]).keys()).catch(() => {})
      : undefined;
    const stats = await this.matchFrequencies.of(words, fields);
    const { hits, counted } = await this.textMatches(
      { query: words, operator: request.operator, fields, filter: request.filter },
      stats,
      Math.min(WINDOW, Math.max(request.offset + request.limit, similarityBlend.depth)),
    );
    const typoTerms = new Set(terms.filter((t, i) => countsTypos(t, stats.frequencies[i]!, stats.documents)));
    const meaning = await this.embeddings?.meaningOf({ text: request.query });
    let similarity: Map<number, number> | undefined;
    let topics: Map<number, number> | undefined;
    let similarOnly: Array<{ id: number; score: number }> | undefined;
    if (blended) {
      await primed;
      const language = words.languages[0];
      const best = hits.slice(0, similarityBlend.depth).map((h) => h.id);
      const cosines = await this.cosinesWith(request.query, language, best);
      similarity = new Map(cosines.map((c) => [c.id, c.score]));
      topics = new Map(cosines.map((c) => [c.id, c.topic]));
      if (request.operator === 'AND' && hits.length < PAGE) {
        const found = new Set(hits.map((h) => h.id));
        const candidates = (await this.similar({ text: request.query, language }, PAGE)).filter(
          (s) => !found.has(s.id) && s.score >= SIMILAR_ONLY_MIN,
        );
        // Only the visible ones that hold some word of the query.
        const ids = await this.visible(
          candidates.map((c) => c.id),
          request.filter,
          terms.flatMap((t) => fields.map((f) => ({ term: { [`words.${f}`]: t } }))),
        );
        similarOnly = candidates.filter((c) => ids.has(c.id));
      }
    }
    // Fewer text matches than a page: visible questions that say the same in other words follow them (as the local engine).
    if (meaning && hits.length < PAGE) {
      const listed = new Set([...hits, ...(similarOnly ?? [])].map((h) => h.id));
      const near = meaning.nearest(PAGE, (id) => !listed.has(id)).filter((n) => n.score >= MEANING_ONLY_MIN);
      const ids = await this.visible(
        near.map((n) => n.id),
        request.filter,
      );
      similarOnly = [...(similarOnly ?? []), ...near.filter((n) => ids.has(n.id))];
    }
    const result = rankMatches(hits, { similarity, topics, meaning, similarOnly, offset: request.offset, limit: request.limit, counted });
    if (!request.highlight) return result;
    const highlights = await this.highlightIds(
      request,
      result.items.map((i) => i.id),
      typoTerms,
    );
    return { ...result, items: result.items.map((item, i) => ({ ...item, highlighting: highlights[i] })) };
  }

  /**
   * The best `size` text matches, their units kept (the blend reads them), and what the window
   * counts, as the local ranking has them (local/match.ts: only the best the page and the blend read;
   * when a page of the window is relevant, weak matches are left out and not counted). One search:
   * the strong matches (at or above WEAK_SCORE) are its best ones, and an aggregation counts them,
   * unless the words' counts leave no more to match than `size` (its hits are then every match).
   * Asking for the strong matches first and for the weak ones when fewer than a page was relevant
   * took two requests for most queries, and a request costs the engine about 3 ms whatever it
   * finds; the whole window (WINDOW hits, then their units in a second request) cost the engine and
   * the service more than the query itself.
   */
  private async textMatches(request: Parameters<typeof matchQuery>[0], stats: TermStatistics, size: number) {
    const moves = this.moves;
    const few = matchesAtMost(request, stats) <= size;
    const query = matchQuery(request, stats, { size, countAtLeast: few ? undefined : WEAK_SCORE });
    if (!query) return { hits: [], counted: { total: 0, leaveOutWeak: false } };
    const response = await this.client.search({ index: this.names.questions, ...query });
    const hits = scoredHits(response);
    response.hits.hits.forEach((hit, i) => {
      // Unpacked only when not known yet (the same questions come back in other queries).
      if (this.knownUnits.has(hits[i]!.id)) return;
      const unit = (hit.fields as { unit_packed?: string[] } | undefined)?.unit_packed?.[0];
      this.keepUnit(hits[i]!.id, unit ? unpackUnit(unit) : {}, moves);
    });
    const strong = hits.filter((h) => h.score >= WEAK_SCORE);
    if (strong.length >= PAGE && strong[PAGE - 1]!.score >= RELEVANT_SCORE) {
      const total = few ? strong.length : Math.min(WINDOW, countedAtLeast(response));
      return { hits: strong, counted: { total, leaveOutWeak: true } };
    }
    return { hits, counted: { total: Math.min(WINDOW, countedHits(response)), leaveOutWeak: false } };
  }

  /** Keeps a question's unit until the index moves (read before a move: not kept). */
  private keepUnit(id: number, unit: Record<string, number>, moves: number) {
    if (moves !== this.moves) return;
    if (this.knownUnits.size >= MAX_UNITS && !this.knownUnits.has(id)) this.knownUnits.clear();
    this.knownUnits.set(id, unit);
  }

  /** Of these questions, those the filter lets in (and that match one of `should`, when given). */
  private async visible(ids: readonly number[], matchFilter: MatchRequest['filter'], should?: estypes.QueryDslQueryContainer[]) {
    if (!ids.length) return new Set<number>();
    const { filter, must_not } = filterClauses(matchFilter);
    const response = await this.client.search({
      index: this.names.questions,
      size: ids.length,
      _source: false,
      query: {
        bool: {
          filter: [...filter, { ids: { values: ids.map(String) } }],
          must_not,
          ...(should ? { should, minimum_should_match: 1 } : {}),
        },
      },
    });
    return new Set(response.hits.hits.map((h) => Number(h._id)));
  }

  private async highlightIds(request: HighlightRequest, ids: readonly number[], typoTerms?: ReadonlySet<string>) {
    const docs = await this.shownDocumentsOf(ids);
    const match = sourceMatcher(request, typoTerms);
    return ids.map((id) => {
      const doc = docs.get(id);
      if (!doc?.is_published) return null;
      return highlightSource({ ...doc, parts: (kind) => doc.parts[kind] }, request, typoTerms, match);
    });
  }

  async highlight(request: HighlightRequest, ids: readonly number[]) {
    this.check();
    return this.highlightIds(request, ids);
  }

  /** Unit idf of words, from the index's unit frequencies. */
  private async idf(words: Iterable<string>): Promise<(word: string) => number> {
    const { documents, frequency } = await this.unitFrequencies.of(words);
    return (word) => unitIdf(documents, frequency.get(word) ?? 0);
  }

  private textCounts(text: string, language?: string) {
    return textCounts(text, language);
  }

  /**
   * The units of questions, from their binary doc values: no stored source read (the 50 best's
   * sources whole took 48 ms at 20,000 questions, their units as keyword values 33 ms). Kept until
   * the index moves: the best matches of one word are those of the next query with it.
   */
  private async units(ids: readonly number[]): Promise<Map<number, Record<string, number>>> {
    const out = new Map<number, Record<string, number>>();
    const missing = ids.filter((id) => {
      const unit = this.knownUnits.get(id);
      if (unit) out.set(id, unit);
      return !unit;
    });
    if (!missing.length) return out;
    const moves = this.moves;
    const response = await this.client.search({
      index: this.names.questions,
      size: missing.length,
      _source: false,
      stored_fields: '_none_',
      docvalue_fields: ['id', 'unit_packed'],
      query: { ids: { values: missing.map(String) } },
    });
    for (const hit of response.hits.hits) {
      const fields = (hit.fields ?? {}) as { id?: number[]; unit_packed?: string[] };
      if (!fields.id?.length) continue;
      const unit = fields.unit_packed?.length ? unpackUnit(fields.unit_packed[0]!) : {};
      out.set(Number(fields.id[0]), unit);
      this.keepUnit(Number(fields.id[0]), unit, moves);
    }
    return out;
  }

  /** Cosines of a text with questions, of their units and of their topic vectors (those missing count 0). */
  private async cosinesWith(text: string, language: string | undefined, ids: readonly number[]) {
    if (!ids.length) return [];
    const moves = this.moves;
    const counts = this.textCounts(text, language);
    const missing = ids.filter((id) => !this.knownVectors.has(id));
    const byId = await this.units(missing);
    // The idf of the words of the query and of the units whose vectors are not known yet.
    const idf = await this.idf([...counts.keys(), ...[...byId.values()].flatMap((u) => Object.keys(u))]);
    // Known before this query read its idf, or taken with that idf now (a move meanwhile: not kept).
    const known = ids.map((id) => {
      const kept = this.knownVectors.get(id);
      if (kept) return kept;
      const unit = byId.get(id);
      if (!unit) return null;
      const fresh: KnownVector = { vector: topicVector(Object.entries(unit), idf), topics: null, topic: null };
      if (moves === this.moves) {
        if (this.knownVectors.size >= MAX_UNITS) this.knownVectors.clear();
        this.knownVectors.set(id, fresh);
      }
      return fresh;
    });
    const vectors = known.map((k) => k?.vector ?? null);
    const asked = topicVector(counts, idf);
    // The query's topic with pseudo-relevance feedback from its best text matches (ids come best first).
    const query = withFeedbackOf(
      asked,
      vectors.filter((v) => v !== null),
    );
    // The topic is the query's own, as the local engine's: without the feedback.
    const { topics } = this;
    const topic = topics?.vectorOf(asked) ?? null;
    return ids.map((id, i) => {
      const k = known[i];
      if (!k) return { id, score: 0, topic: 0 };
      if (topic && k.topics !== topics) {
        k.topic = topics!.vectorOf(k.vector);
        k.topics = topics;
      }
      return { id, score: cosine(query, k.vector), topic: topic && k.topic ? topicCosine(topic, k.topic) : 0 };
    });
  }

  /**
   * Similar live questions with their documents (tags and solutions for tag votes and experts);
   * `thorough` and `hidden` (spaces whose questions are never candidates) as local/similarity.ts similarTo.
   */
  private async similarDocuments(
    source: { question_id?: number; text?: string; language?: string },
    limit: number,
    thorough = false,
    hidden: readonly number[] = [],
    meaning?: Meaning,
  ) {
    let counts: Iterable<readonly [string, number]>;
    // A draft's unit is empty (documents.ts withDerived): it has no similar questions.
    if (source.question_id !== undefined) counts = Object.entries((await this.units([source.question_id])).get(source.question_id) ?? {});
    else counts = this.textCounts(source.text ?? '', source.language);
    const words = [...counts];
    if (!words.length) return [];
    const queryIdf = await this.idf(words.map(([w]) => w));
    const query = topicVector(words, queryIdf);
    const informative = [...query]
      .sort((a, b) => b[1] - a[1])
      .slice(0, CANDIDATE_TERMS)
      .map(([word, weight]) => ({ word, weight }));
    if (!informative.length) return [];
    const candidates = similarCandidatesQuery(informative, source.question_id, candidateCount(thorough), hidden);
    // Questions that say the same in other words join the candidates (the search's filters still apply).
    const near = meaning?.nearest(limit, (id) => id !== source.question_id).filter((n) => n.score >= MEANING_ONLY_MIN) ?? [];
    if (near.length) candidates.query.bool.should.push({ ids: { values: near.map((n) => String(n.id)) } } as never);
    const response = await this.client.search({ index: this.names.questions, ...candidates });
    const docs = response.hits.hits.flatMap((h) => {
      const fields = (h.fields ?? {}) as { unit_packed?: string[]; neighbour_packed?: string[] };
      const facts = fields.neighbour_packed?.[0] ? unpacked<NeighbourFacts | null>(fields.neighbour_packed[0]) : null;
      return facts ? [{ id: facts.id, tags: facts.tags, unit: fields.unit_packed?.[0] ? unpackUnit(fields.unit_packed[0]) : {} }] : [];
    });
    const idf = await this.idf([...words.map(([w]) => w), ...docs.flatMap((d) => Object.keys(d.unit))]);
    const units = docs.map((doc) => topicVector(Object.entries(doc.unit), idf));
    const first = topicVector(words, idf);
    const byFirst = units.map((u, i) => ({ u, s: cosine(first, u), i })).sort((a, b) => b.s - a.s || a.i - b.i);
    const vector = thorough
      ? withFeedbackOf(
          first,
          byFirst.map((b) => b.u),
        )
      : first;
    const found = docs.map((doc, i) => ({ doc, id: doc.id, score: cosine(vector, units[i]!) }));
    return blendSimilar(found, meaning, semanticWeights.similar)
      .filter((r) => r.score > 0)
      .slice(0, limit);
  }

  async similar(source: { question_id?: number; text?: string; language?: string }, limit: number) {
    this.check();
    let text = source.text;
    if (source.question_id !== undefined && this.embeddings) {
      const own = (await this.documents([source.question_id])).get(source.question_id);
      if (own) text = embeddingText(own.title, own.description);
    }
    const meaning = await this.embeddings?.meaningOf({ question_id: source.question_id, text });
    return (await this.similarDocuments(source, limit, true, [], meaning)).map(({ id, score }) => ({ id, score }));
  }

  private closedSpaces(): Promise<SpaceDocument[]> {
    return this.kept.of('closed spaces', async () => {
      const response = await this.client.search<SpaceDocument>({
        index: this.names.state,
        size: 10_000,
        query: { bool: { filter: [{ term: { type: 'space' } }, { term: { is_closed: true } }] } },
      });
      return response.hits.hits.map((h) => h._source!);
    });
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
    for (const d of sources(docs)) if (d) out.set(d.key, d);
    return out;
  }

  async suggestTags(text: string, limit: number, hidden: readonly number[]) {
    this.check();
    const neighbours = await this.similarDocuments({ text }, SUGGESTION_NEIGHBOURS, false, hidden);
    // Named tags used only in the hidden spaces are left out there.
    const named = await this.expertEvidence.scoped(hidden).namedTags(text);
    const known = await this.tags([...neighbours.flatMap((n) => n.doc.tags.map((t) => t.toLowerCase())), ...named]);
    return rankSuggestedTags({
      neighbours: neighbours.map((n) => ({ score: n.score, tags: n.doc.tags })),
      named,
      tag: (key) => known.get(key),
      limit,
    });
  }

  evidence(hidden: readonly number[] = []) {
    this.check();
    return this.expertEvidence.scoped(hidden);
  }

  async expertRecords(users: readonly number[], tags: ReadonlySet<string>, hidden: readonly number[] = []) {
    this.check();
    return this.expertEvidence.scoped(hidden).expertRecords(users, tags);
  }

  async hiddenSpaces(viewer: Viewer) {
    this.check();
    return hiddenSpacesOf(
      (await this.closedSpaces()).map((s) => [s.space_id, new Set(s.members)] as const),
      viewer,
    );
  }

  async titles(ids: readonly number[]) {
    this.check();
    const docs = await this.shownDocumentsOf(ids);
    return new Map([...docs].map(([id, d]) => [id, d.title]));
  }

  async closedSpaceMembers(id: number) {
    this.check();
    return this.expertEvidence.closedSpaceMembers(id);
  }

  async history(cutoff: number) {
    this.check();
    return this.expertEvidence.history(cutoff);
  }

  async acceptedAnswers() {
    this.check();
    return this.expertEvidence.acceptedAnswers();
  }

  async routingsPerExpertPerWeek() {
    this.check();
    return (await this.expertEvidence.routingsPerExpertPerWeek()) ?? NETWORK_SETTINGS_DEFAULTS.routings_per_expert_per_week;
  }

  async question(id: number) {
    this.check();
    return routedQuestion((await this.documents([id])).get(id));
  }
}

/** Deletes every index of a prefix (tests drop their own; Elasticsearch refuses wildcards in deletes by default). */
export async function dropElasticsearchIndices(url: string, prefix: string) {
  const client = engineClient(url);
  try {
    const names = Object.keys(await client.indices.get({ index: `${prefix}-*`, ignore_unavailable: true, allow_no_indices: true }));
    if (names.length) await client.indices.delete({ index: names });
  } finally {
    await client.close();
  }
}

import { createHash } from 'node:crypto';
import type { Db, Tx } from '@kn/db';
import { type Embedder, loadEmbedder, quantize } from '@kn/embedding';
import { type IntervalJob, intervalJob, lockedJob } from '@kn/service';
import type { Logger } from '@kn/telemetry';
import { sql } from 'kysely';
import type { SearchSchema } from '../db/schema.ts';
import type { Meaning } from '../domain/semantic.ts';
import { VectorIndex } from './vectors.ts';

/** What an operator sees of the embeddings (index view, metrics). */
export interface EmbeddingStatus {
  /** The model's name; null when none could be loaded. */
  model: string | null;
  /** `unavailable`: no usable model (search is lexical; `reason` says why); `backfilling`: questions wait for their vector. */
  state: 'unavailable' | 'backfilling' | 'ready';
  reason: string | null;
  /** Questions with a vector of the model in this instance, and questions with a text to embed. */
  embedded: number;
  questions: number;
}

/** The status of a backend built without embeddings (benchmarks that build one alone). */
export const noEmbeddings: EmbeddingStatus = {
  model: null,
  state: 'unavailable',
  reason: 'no embeddings configured',
  embedded: 0,
  questions: 0,
};

/** The text of a question its embedding is made of: the set-up's model reads its first 256 tokens, a model at most 512, so 4,000 characters is plenty. */
export const embeddingText = (title: string, description: string) => `${title}\n${description}`.slice(0, 4000);
export const sourceHash = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22);

/** Texts embedded in one call: a query waits behind at most one such call (about 0.2 s on 2 cores). */
const BATCH = 8;
/** A round of the embedding job embeds for about this long, then commits what it made. */
const ROUND_MS = 2000;
/** Rows loaded between two turns of the event loop (about 0.15 s of work). */
const LOAD_PAGE = 1000;
const FULL_LOOK_MS = 60_000;
/** Texts a page of a walk reads at most (Embeddings.advance). */
const MAX_PAGE = 65_536;
/** Query vectors kept (the same search is often asked again: paging, a draft typed further). */
const CACHED_QUERIES = 256;

/**
 * A walk of the embedding job over the texts in the order of (updated, question_id): `down` from
 * `bound` (at or before it, newest first), or up from it (after it, oldest first); `from`: the last
 * text it passed (Postgres time as text: no microsecond lost), null before the first.
 */
interface Walk {
  down: boolean;
  bound: string;
  from: { at: string; id: number } | null;
  /** No text was left beyond `from` when it last read (a walk up goes on with later changes). */
  ended: boolean;
}

interface WalkRow {
  question_id: number;
  text: string;
  source_hash: string;
  at: string;
  scanned: number;
  waiting: boolean;
}

/**
 * The questions' embeddings for this search instance. Every instance loads the model (queries are
 * embedded where they are asked) and every vector of it from Postgres (`question_embeddings`);
 * one instance at a time (an advisory lock a model) embeds the texts that have no vector of the
 * model or an older one (`question_texts`, kept by consumers/question-texts.ts), newest first, and
 * the others load the rows it writes. A new model re-embeds everything while search goes on with
 * the vectors it has; without a model (or with a corrupt one) search is lexical, the status says
 * why, and the model is looked for again every `retryModelMs`.
 */
export class Embeddings {
  private embedder: Embedder | null = null;
  private vectors: VectorIndex | null = null;
  private lastSeq = '0';
  private questions = 0;
  private reason: string | null = null;
  /** The latest text change (ms) when a round of this instance's job found nothing to embed, and when that was; null: look. */
  private doneUpTo: { changed: number; at: number } | null = null;
  /**
   * This instance's walk over every text, newest first (`bound`: the latest change when it began),
   * or null between walks. A walk goes on from where it stopped, round after round: each look at
   * the waiting texts starting from the newest again would pass every text embedded before.
   */
  private sweep: Walk | null = null;
  /** The walk over the texts changed after the sweep began (or the last one ended), oldest change first. */
  private changes: Walk | null = null;
  /** Every text changed at or before this (Postgres time) had its vector when the last walk ended, and when (ms) that was. */
  private walked: { upTo: string; at: number } | null = null;
  private readonly queries = new Map<string, Promise<Float32Array | null>>();
  private jobs: Array<IntervalJob<unknown>> = [];
  private modelJob: IntervalJob<void> | null = null;
  private readonly options: {
    db: Db<SearchSchema>;
    logger: Logger;
    modelPath?: string;
    pollMs: number;
    retryModelMs: number;
  };

  constructor(options: Embeddings['options']) {
    this.options = options;
  }

  async start() {
    await this.loadModel();
    if (!this.embedder)
      this.modelJob = intervalJob({
        name: 'embedding model',
        everyMs: this.options.retryModelMs,
        logger: this.options.logger,
        round: () => this.loadModel(),
      });
  }

  private async loadModel() {
    if (this.embedder) return;
    let why: string | null = null;
    const embedder = await loadEmbedder({ path: this.options.modelPath, onUnavailable: (reason) => (why = reason) });
    if (!embedder) {
      // Said once: the retries stay quiet until it changes.
      if (why !== this.reason) this.options.logger.warn({ reason: why }, 'no embedding model: search is lexical only');
      this.reason = why;
      return;
    }
    this.embedder = embedder;
    this.reason = null;
    this.vectors = new VectorIndex(embedder.dimensions);
    this.lastSeq = '0';
    this.options.logger.info({ model: embedder.model, path: embedder.path }, 'embedding model loaded');
    const { db, logger, pollMs } = this.options;
    const load = intervalJob({ name: 'embeddings load', everyMs: pollMs, logger, round: () => this.load() });
    // The vectors there are load in the background (a million take minutes): search answers
    // meanwhile with those loaded, and the status says `backfilling`.
    load.runOnce().catch((err) => logger.warn({ err }, 'loading the embeddings failed'));
    const embed = lockedJob({
      name: 'embeddings',
      db,
      lock: `search-embeddings:${embedder.model}`,
      everyMs: pollMs,
      logger,
      busy: 0,
      round: (tx) => this.embedWaiting(tx, embedder),
      // More texts may wait: the next round follows this one's commit at once, not at the next
      // tick (waiting for the tick left the model's threads idle a fifth of a backfill).
      more: (embedded) => embedded > 0,
    });
    this.jobs = [load, embed];
    void this.modelJob?.stop();
  }

  /** Counts the texts and loads the rows written since the last load, a page at a time between requests. */
  private async load() {
    const { embedder, vectors } = this;
    if (!embedder || !vectors) return;
    const { db } = this.options;
    const { n } = await db
      .selectFrom('question_texts')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    this.questions = Number(n);
    for (;;) {
      const rows = await db
        .selectFrom('question_embeddings')
        .select(['question_id', 'scale', 'vector', 'seq'])
        .where('model', '=', embedder.model)
        .where('seq', '>', this.lastSeq)
        .orderBy('seq')
        .limit(LOAD_PAGE)
        .execute();
      for (const row of rows) {
        // A view of the row's bytes: the index copies them into its own store.
        const values = new Int8Array(row.vector.buffer, row.vector.byteOffset, row.vector.byteLength);
        if (values.length === vectors.dimensions) vectors.put(row.question_id, { values, scale: row.scale });
        this.lastSeq = row.seq;
      }
      if (rows.length < LOAD_PAGE) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** One round of the embedding job: texts without a vector of the model (or with an older one), newest first. */
  private async embedWaiting(tx: Tx<SearchSchema>, embedder: Embedder) {
    // Nothing changed since a round found nothing to do: the search for waiting texts (a join over
    // every question) is skipped, but for one a minute (a text written by a transaction that began
    // before the last look but committed after it carries an older time).
    const { latest, latestText } = await tx
      .selectFrom('question_texts')
      .select((eb) => [eb.fn.max('updated').as('latest'), sql<string | null>`max(updated)::text`.as('latestText')])
      .executeTakeFirstOrThrow();
    const changed = latest === null ? 0 : new Date(latest).getTime();
    if (this.doneUpTo !== null && changed <= this.doneUpTo.changed && Date.now() - this.doneUpTo.at < FULL_LOOK_MS) return 0;
    if (latestText === null) return 0;
    // A whole walk once a minute at most: a text written by a transaction that began before the last
    // walk ended but committed after it carries an older time than the walk's start.
    if (!this.sweep && (!this.walked || Date.now() - this.walked.at >= FULL_LOOK_MS))
      this.sweep = { down: true, bound: latestText, from: null, ended: false };
    const before = { sweep: this.sweep && { ...this.sweep }, changes: this.changes && { ...this.changes } };
    const started = performance.now();
    let embedded = 0;
    try {
      while (performance.now() - started < ROUND_MS) {
        const waiting = await this.nextWaiting(tx, embedder.model);
        if (!waiting.length) {
          this.doneUpTo = { changed, at: Date.now() };
          break;
        }
        await this.embedTexts(tx, embedder, waiting);
        embedded += waiting.length;
      }
    } catch (error) {
      // The round's vectors are rolled back: the walk goes on from where the round began.
      ({ sweep: this.sweep, changes: this.changes } = before);
      throw error;
    }
    return embedded;
  }

  /**
   * The next texts without a vector of the model (or with an older one): those changed since the
   * walk began (or since the last one ended) first, oldest change first, then the walk's next,
   * newest first.
   */
  private async nextWaiting(tx: Tx<SearchSchema>, model: string) {
    const since = this.sweep?.bound ?? this.walked?.upTo;
    if (since !== undefined) {
      if (this.changes?.bound !== since) this.changes = { down: false, bound: since, from: null, ended: false };
      const changed = await this.advance(tx, model, this.changes);
      if (changed.length || !this.sweep) return changed;
    }
    const sweep = this.sweep!;
    const next = await this.advance(tx, model, sweep);
    if (sweep.ended) {
      this.walked = { upTo: sweep.bound, at: Date.now() };
      this.sweep = null;
    }
    return next;
  }

  /**
   * The next texts waiting along a walk, at most BATCH: pages of the walk are read (each a range
   * of the index on (updated, question_id), the vectors looked up a text) until one holds waiting
   * texts or the walk ends. A page that held none is followed by one four times as long: a walk
   * over texts embedded long ago (the whole walk once a minute) takes a few reads, and a backfill
   * reads eight texts a page. One join of every text with every vector cost 124 ms for eight texts
   * at 100,000 questions; a page of eight takes about a millisecond.
   */
  private async advance(tx: Tx<SearchSchema>, model: string, walk: Walk) {
    const [order, beyond, within] = walk.down ? ['desc', '<', '<='] : ['asc', '>', '>'];
    for (let size = BATCH; ; size = Math.min(size * 4, MAX_PAGE)) {
      const from = walk.from && sql`and (updated, question_id) ${sql.raw(beyond)} (${walk.from.at}::timestamptz, ${walk.from.id})`;
      // The waiting texts of the page with their text, and its last text whether it waits or not
      // (where the walk goes on).
      const { rows } = await sql<WalkRow>`
        with page as (
          select question_id, source_hash, updated from question_texts
          where updated ${sql.raw(within)} ${walk.bound}::timestamptz ${from ?? sql``}
          order by updated ${sql.raw(order)}, question_id ${sql.raw(order)}
          limit ${size}
        ), seen as (
          select p.*, (e.question_id is null or e.source_hash <> p.source_hash) as waiting, count(*) over () as scanned,
            row_number() over (order by p.updated ${sql.raw(order)}, p.question_id ${sql.raw(order)}) as n
          from page p left join question_embeddings e on e.model = ${model} and e.question_id = p.question_id
        )
        select s.question_id, t.text, s.source_hash, s.updated::text as at, s.scanned::int as scanned, s.waiting
        from seen s join question_texts t on t.question_id = s.question_id
        where s.waiting or s.n = s.scanned
        order by s.n`.execute(tx);
      const waiting = rows.filter((r) => r.waiting).slice(0, BATCH);
      const last = waiting.length === BATCH ? waiting.at(-1) : rows.at(-1);
      if (last) walk.from = { at: last.at, id: last.question_id };
      walk.ended = waiting.length < BATCH && (rows[0]?.scanned ?? 0) < size;
      if (waiting.length || walk.ended) return waiting;
    }
  }

  /** Embeds texts as passages and writes their vectors (a newer one replaces an older). */
  private async embedTexts(tx: Tx<SearchSchema>, embedder: Embedder, waiting: readonly WalkRow[]) {
    const made = await embedder.embed(
      waiting.map((w) => w.text),
      'passage',
    );
    await tx
      .insertInto('question_embeddings')
      .values(
        waiting.map((w, i) => {
          const q = quantize(made[i]!);
          return {
            model: embedder.model,
            question_id: w.question_id,
            source_hash: w.source_hash,
            scale: q.scale,
            vector: Buffer.from(q.values.buffer, q.values.byteOffset, q.values.byteLength),
          };
        }),
      )
      .onConflict((oc) =>
        oc.columns(['model', 'question_id']).doUpdateSet((eb) => ({
          source_hash: eb.ref('excluded.source_hash'),
          scale: eb.ref('excluded.scale'),
          vector: eb.ref('excluded.vector'),
          seq: eb.fn('nextval', [eb.val('question_embeddings_seq')]),
        })),
      )
      .execute();
  }

  /**
   * The meaning of a text as ranking reads it (domain/semantic.ts), or undefined without a model.
   * The vector is the question's own when `questionId` has one.
   */
  async meaningOf(source: { text?: string; question_id?: number }): Promise<Meaning | undefined> {
    const { vectors } = this;
    if (!vectors) return undefined;
    const own = source.question_id !== undefined ? vectors.vectorOf(source.question_id) : undefined;
    const query = own ?? (source.text?.trim() ? await this.queryVector(source.text) : null);
    if (!query) return undefined;
    return vectors.meaning(query);
  }

  /** A question's meaning by its stored vector alone (the expert model's fit replays the past with it), or undefined. */
  storedMeaning(questionId: number): Meaning | undefined {
    const query = this.vectors?.vectorOf(questionId);
    return query && this.vectors!.meaning(query);
  }

  private queryVector(text: string): Promise<Float32Array | null> {
    const cached = this.queries.get(text);
    if (cached) {
      // Most recently used last: the first key is the one to drop.
      this.queries.delete(text);
      this.queries.set(text, cached);
      return cached;
    }
    const embedder = this.embedder;
    if (!embedder) return Promise.resolve(null);
    const made = embedder.embed([text], 'query').then(
      ([v]) => v ?? null,
      (err) => {
        this.queries.delete(text);
        this.options.logger.warn({ err }, 'embedding a query failed: ranked by its words');
        return null;
      },
    );
    this.queries.set(text, made);
    if (this.queries.size > CACHED_QUERIES) this.queries.delete(this.queries.keys().next().value!);
    return made;
  }

  status(): EmbeddingStatus {
    const embedded = this.vectors?.size ?? 0;
    // A model counts once its vectors are loaded and its jobs run (caughtUp relies on them).
    const model = this.jobs.length ? this.embedder!.model : null;
    return {
      model,
      state: !model ? 'unavailable' : embedded < this.questions ? 'backfilling' : 'ready',
      reason: this.reason,
      embedded,
      questions: this.questions,
    };
  }

  /** Embeds every waiting text and loads the vectors (tests, benchmarks). */
  async caughtUp() {
    const [load, embed] = this.jobs;
    if (!load || !embed) return;
    this.doneUpTo = null;
    this.walked = null;
    while ((await embed.runOnce()) !== 0);
    await load.runOnce();
  }

  async stop() {
    await this.modelJob?.stop();
    await Promise.all(this.jobs.map((j) => j.stop()));
    await this.embedder?.close();
  }
}

import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { NETWORK_SETTINGS_DEFAULTS } from '@kn/contracts';
import type { EventSolutionFacts, ExpertSettings, IndexedQuestion, IndexWriter } from '../core/events.ts';
import { type PartKind, questionWords, tagNamer } from '../core/words.ts';
import { Expertise, fadedValue, type QuestionFacts, type SolutionFacts } from '../domain/expertise.ts';
import { pacer } from '../domain/pace.ts';
import { topicParameters } from '../domain/topics.ts';
import { type Facets, FORWARD_STRIDE, type Forward, packCounts, TermIndex, type TermIndexOptions } from './postings.ts';
import { TagUses } from './tag-uses.ts';
import { TopicModel, trainTopics } from './topics.ts';

/**
 * The search index of one search instance: an SQLite file (node:sqlite) with the questions as the
 * content events show them, their texts (for highlighting) and their words, plus the in-memory
 * inverted index built from those words at open. It is a projection, never a source of truth:
 * deleting the file and replaying the streams gives the same index. Stream positions are stored
 * in the same transaction as the changes they caused, so a restart resumes exactly where the
 * index stands.
 */

/** What highlighting reads of a question. */
export type QuestionTexts = Pick<IndexedQuestion, 'id' | 'title' | 'description' | 'tags'>;

interface QuestionRow {
  id: number;
  author_id: number;
  language: string;
  title: string;
  description: string;
  tags: string;
  category_id: number | null;
  knowledge_space_id: number | null;
  is_published: number;
  is_deleted: number;
  published: string | null;
}

const schema = `
  create table if not exists positions (stream text primary key, seq integer not null);
  create table if not exists questions (
    id integer primary key,
    author_id integer not null,
    language text not null,
    title text not null,
    description text not null,
    tags text not null,
    category_id integer,
    knowledge_space_id integer,
    is_published integer not null,
    is_deleted integer not null,
    published text,
    -- The question's words with their per-field frequencies (postings.ts Forward, as bytes), and
    -- its length in words: what the in-memory index is built from. Null when not indexed.
    terms blob,
    length integer not null default 0
  );
  -- The ids of the words in questions.terms; never reused.
  create table if not exists words (id integer primary key, word text not null);
  create table if not exists parts (
    kind text not null,
    id integer not null,
    question_id integer not null,
    author_id integer not null,
    text text not null,
    primary key (kind, id)
  ) without rowid;
  create index if not exists parts_question on parts (question_id);
  create table if not exists tags (label text primary key, excluded_from_suggestions integer not null default 0, links text not null default '[]');
  create table if not exists spaces (id integer primary key, is_closed integer not null, members text not null default '[]');
  -- What expertise counts (domain/expertise.ts): every solution's facts, every forward, deleted users, settings.
  create table if not exists solutions (
    id integer primary key,
    question_id integer not null,
    author_id integer not null,
    live integer not null,
    time integer not null,
    rating real,
    rating_count integer not null,
    upvotes integer not null,
    accepted_at integer
  );
  -- How each solution stood from each time on (live, votes, ratings): the expert model's fit reads
  -- the past as it was, so that nothing after its cut-off changes what it learns.
  create table if not exists solution_states (
    solution_id integer not null,
    time integer not null,
    live integer not null,
    upvotes integer not null,
    rating real,
    rating_count integer not null,
    primary key (solution_id, time)
  ) without rowid;
  create index if not exists solutions_question on solutions (question_id);
  create index if not exists questions_author on questions (author_id);
  -- Covers what an expert's record on some tags reads of their solutions (expertRecord): no row lookups.
  create index if not exists solutions_author on solutions (author_id, live, question_id, rating, rating_count);
  create table if not exists forwards (question_id integer not null, recipient_id integer not null, time integer not null);
  create index if not exists forwards_question on forwards (question_id);
  create index if not exists forwards_recipient on forwards (recipient_id);
  create table if not exists deleted_users (id integer primary key);
  -- System users (an importer's placeholder author, a bot): their content counts, they are never experts.
  create table if not exists system_users (id integer primary key);
  create table if not exists settings (name text primary key, value text not null);
`;

/** Bump when the layout or the word rules change: an index of another version is rebuilt from the streams. */
const SCHEMA_VERSION = 8;

type SqlValue = string | number | null | Uint8Array;

/** The columns of an IndexedQuestion (not its words: they are in memory). */
const questionColumns =
  'id, author_id, language, title, description, tags, category_id, knowledge_space_id, is_published, is_deleted, published';

export interface KnownTag {
  label: string;
  excluded_from_suggestions: boolean;
  /** Labels of the linked tags. */
  links: string[];
}

/** A question's facets, its language and tag labels as one shared string each (`share`). */
const facetsOf = (q: IndexedQuestion, share: (text: string) => string): Facets => ({
  author_id: q.author_id,
  language: share(q.language),
  category_id: q.category_id,
  knowledge_space_id: q.knowledge_space_id,
  is_deleted: q.is_deleted,
  tags: q.tags.map(share),
  time: q.published ? Date.parse(q.published) : 0,
});

export class SearchStore implements IndexWriter {
  db: DatabaseSync;
  readonly path: string;
  private readonly unitWeights: TermIndexOptions['unitWeights'];
  private statements = new Map<string, StatementSync>();
  /** Questions changed in the current transaction: their words are indexed once, at commit. */
  private dirty = new Set<number>();
  /**
   * Languages and tag labels as one string each: every question read from the file or an event
   * brings its own copies (2 MiB at 100,000 questions with beer's tags, ten times that at a million).
   */
  private readonly strings = new Map<string, string>();
  private readonly share = (text: string) => {
    const known = this.strings.get(text);
    if (known !== undefined) return known;
    this.strings.set(text, text);
    return text;
  };
  /** The inverted index of the published questions (deleted ones too, for administrators). */
  index = this.newIndex();
  /** Words of the index's dictionary that are in the file (the rest are written at the next commit). */
  private savedWords = 0;
  /** Knowledge spaces that are closed, with their members (only they see, find and are sent its questions). */
  readonly closedSpaces = new Map<number, ReadonlySet<number>>();
  /** Every tag the network has (in use or not), by lower-case label. */
  readonly tags = new Map<string, KnownTag>();
  /** Who knows what (domain/expertise.ts). */
  expertise = new Expertise();
  /** Questions whose expertise changes in the current transaction, with what they contributed before. */
  private expertiseBefore = new Map<number, QuestionFacts>();
  readonly deletedUsers = new Set<number>();
  /** System users: never experts (their answers still count as content). */
  readonly systemUsers = new Set<number>();
  /** Which knowledge spaces each tag is used in (tag-uses.ts). */
  readonly tagUses = new TagUses();
  /** The network's min_experts setting (the users service's default until it says otherwise). */
  minExperts = NETWORK_SETTINGS_DEFAULTS.min_experts;
  /** The network's routings_per_expert_per_week setting (the same). */
  routingsPerExpertPerWeek = NETWORK_SETTINGS_DEFAULTS.routings_per_expert_per_week;
  /** When the latest indexed question was published (ms; 0 without any): the network's clock. */
  latestPublished = 0;

  /** `unitWeights`: the similarity unit's field weights (TermIndex), when a benchmark tries others. */
  constructor(path: string, options: Pick<TermIndexOptions, 'unitWeights'> = {}) {
    this.path = path;
    this.unitWeights = options.unitWeights;
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new DatabaseSync(path);
    const version = (this.db.prepare('pragma user_version').get() as { user_version: number }).user_version;
    if (version !== SCHEMA_VERSION && version !== 0) {
      this.db.close();
      SearchStore.destroy(path);
      this.db = new DatabaseSync(path);
    }
    // An 8 MiB page cache (SQLite's default is 2 MiB): searches read a few rows by key (texts to
    // highlight, a question's words), and the operating system caches the file anyway; a larger
    // cache is resident memory of its own.
    this.db.exec('pragma journal_mode = wal; pragma synchronous = normal; pragma temp_store = memory; pragma cache_size = -8192;');
    this.db.exec(schema);
    this.db.exec(`pragma user_version = ${SCHEMA_VERSION}`);
    this.load();
  }

  /** An empty index that reads each question's words from the file (it keeps no copy of them). */
  private newIndex() {
    return new TermIndex({
      readWords: (id) => this.terms(id),
      readManyWords: (ids) => this.termsOf(ids),
      unitWeights: this.unitWeights,
    });
  }

  /** The words a question is indexed with, as the file holds them (null: not indexed). */
  private terms(questionId: number): Forward | null {
    const row = this.get<{ terms: Uint8Array | null }>('select terms from questions where id = ?', questionId);
    return row?.terms ? toForward(row.terms) : null;
  }

  /** The words of many questions, as the file holds them (the indexed ones only). */
  private termsOf(questionIds: readonly number[]): Map<number, Forward> {
    const out = new Map<number, Forward>();
    for (const row of this.all<{ id: number; terms: Uint8Array | null }>(
      'select id, terms from questions where id in (select value from json_each(?))',
      JSON.stringify(questionIds),
    ))
      if (row.terms) out.set(row.id, toForward(row.terms));
    return out;
  }

  /** Builds what is in memory from the file (at open). */
  private load() {
    this.index = this.newIndex();
    this.topics = null;
    for (const row of this.db.prepare('select id, word from words order by id').iterate() as Iterable<{ id: number; word: string }>)
      this.index.defineTerm(row.id, row.word);
    this.savedWords = this.index.termCount;
    const { db, share } = this;
    this.index.load(function* () {
      const rows = db.prepare('select * from questions where terms is not null').iterate() as Iterable<
        QuestionRow & { terms: Uint8Array; length: number }
      >;
      for (const row of rows)
        yield { id: row.id, forward: toForward(row.terms), length: row.length, facets: facetsOf(toQuestion(row), share) };
    });
    this.loadExpertise();
    this.loadSmallTables();
    const latest = this.get<{ latest: string | null }>('select max(published) as latest from questions where terms is not null');
    this.latestPublished = latest?.latest ? Date.parse(latest.latest) : 0;
  }

  /** Expertise of every question with solutions or forwards, and the spaces of every tag, from three scans. */
  private loadExpertise() {
    this.expertise = new Expertise();
    this.tagUses.clear();
    const solutions = new Map<number, SolutionFacts[]>();
    for (const row of this.db.prepare('select * from solutions').iterate() as Iterable<SolutionRow>) {
      const list = solutions.get(row.question_id) ?? [];
      list.push(toSolutionFacts(row));
      solutions.set(row.question_id, list);
    }
    const recipients = new Map<number, number[]>();
    for (const row of this.db.prepare('select question_id, recipient_id from forwards').iterate() as Iterable<{
      question_id: number;
      recipient_id: number;
    }>) {
      const list = recipients.get(row.question_id) ?? [];
      list.push(row.recipient_id);
      recipients.set(row.question_id, list);
    }
    for (const row of this.db.prepare('select id, tags, knowledge_space_id, is_published, is_deleted from questions').iterate() as Iterable<
      Pick<QuestionRow, 'id' | 'tags' | 'knowledge_space_id' | 'is_published' | 'is_deleted'>
    >) {
      const tags = JSON.parse(row.tags) as string[];
      this.tagUses.apply(tags, row.knowledge_space_id, 1);
      if (!solutions.has(row.id) && !recipients.has(row.id)) continue;
      this.expertise.apply(
        {
          id: row.id,
          tags,
          space: row.knowledge_space_id,
          live: row.is_published === 1 && row.is_deleted === 0,
          solutions: solutions.get(row.id) ?? [],
          recipients: recipients.get(row.id) ?? [],
        },
        1,
      );
    }
  }

  /** Spaces, tags, users and settings, kept in memory: again after a rollback, which may have undone changes to them. */
  private loadSmallTables() {
    this.tagLookup = null;
    this.deletedUsers.clear();
    for (const row of this.db.prepare('select id from deleted_users').iterate() as Iterable<{ id: number }>) this.deletedUsers.add(row.id);
    this.systemUsers.clear();
    for (const row of this.db.prepare('select id from system_users').iterate() as Iterable<{ id: number }>) this.systemUsers.add(row.id);
    const setting = (name: keyof ExpertSettings) => {
      const row = this.get<{ value: string }>('select value from settings where name = ?', name);
      return row ? Number(row.value) : NETWORK_SETTINGS_DEFAULTS[name];
    };
    this.minExperts = setting('min_experts');
    this.routingsPerExpertPerWeek = setting('routings_per_expert_per_week');
    this.tags.clear();
    for (const row of this.db.prepare('select label, excluded_from_suggestions, links from tags').iterate() as Iterable<{
      label: string;
      excluded_from_suggestions: number;
      links: string;
    }>)
      this.tags.set(row.label.toLowerCase(), {
        label: row.label,
        excluded_from_suggestions: row.excluded_from_suggestions === 1,
        links: JSON.parse(row.links) as string[],
      });
    this.closedSpaces.clear();
    for (const row of this.db.prepare('select id, members from spaces where is_closed = 1').iterate() as Iterable<{
      id: number;
      members: string;
    }>)
      this.closedSpaces.set(row.id, new Set(JSON.parse(row.members) as number[]));
  }

  /** Removes the file (and its WAL) of a closed store. */
  static destroy(path: string) {
    if (path === ':memory:') return;
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  }

  /** Topic vectors of the questions (topics.ts); null until trained after the index caught up. */
  topics: TopicModel | null = null;
  private topicTraining: Promise<void> | null = null;
  /** Questions changed while a training runs: their vectors are taken again from the new model. */
  private readonly topicsStale = new Set<number>();

  /** `words`: the question's new words (the store has them in hand; reading them again is a row of the file). */
  private topicsChanged(questionId: number, words?: Forward) {
    const slot = this.index.slotOf(questionId);
    if (slot < 0) return;
    this.topics?.update(slot, words);
    if (this.topicTraining) this.topicsStale.add(slot);
  }

  /** Events the feed has still to apply, as it last said (refreshTopics). */
  private eventsWaiting = 0;

  /**
   * Trains the topic model when it is due (none yet, or the index has grown by retrainGrowth since
   * the last training), a slice at a time between events and searches; resolves when done. The
   * model in force stays in use meanwhile. `eventsWaiting`: events in the streams not applied yet.
   */
  refreshTopics(eventsWaiting = 0): Promise<void> {
    this.eventsWaiting = eventsWaiting;
    if (this.topicTraining) return this.topicTraining;
    if (!this.topicsDue()) return Promise.resolve();
    const train = async () => {
      // Again while due: a network being loaded may have grown as much during one training.
      while (this.topicsDue()) {
        const index = this.index;
        const training = TopicModel.training(index);
        const pace = pacer();
        let step = training.next();
        while (!step.done) {
          const pause = pace();
          if (pause) await pause;
          // A store closed or loaded again meanwhile (a rebuild) trains anew when asked.
          if (this.closed || this.index !== index) return;
          step = training.next();
        }
        this.topics = step.value;
        for (const slot of this.topicsStale) this.topics.update(slot);
        this.topicsStale.clear();
      }
    };
    // Cleared in a callback of its own: a training short enough to finish without pausing must not clear it before it is set.
    this.topicTraining = train().finally(() => {
      this.topicsStale.clear();
      this.topicTraining = null;
    });
    return this.topicTraining;
  }

  private topicsDue() {
    // A backlog (a catch-up, a bulk import) would leave a model trained now behind at once: the
    // training waits for it. Trained as the network grew instead, an import of 100,000 questions
    // spent 9% of the search process's CPU on models it outgrew (a profile of bench:search).
    if (this.eventsWaiting > this.index.count * topicParameters.backlogShare) return false;
    return this.topics ? this.index.count >= this.topics.trainedOn * (1 + topicParameters.retrainGrowth) : this.index.count > 0;
  }

  topicStatus() {
    return { trained_on: this.topics?.trainedOn ?? 0, training: this.topicTraining !== null || this.topicsDue() };
  }

  /** Trains the topic model now, at once (a store loaded in one go: tests, benchmarks). */
  trainTopics() {
    this.topics = trainTopics(this.index);
  }

  private closed = false;

  close() {
    this.closed = true;
    this.statements.clear();
    this.db.close();
  }

  get documentCount() {
    return this.index.count;
  }

  private prepare(sqlText: string): StatementSync {
    let statement = this.statements.get(sqlText);
    if (!statement) {
      statement = this.db.prepare(sqlText);
      this.statements.set(sqlText, statement);
    }
    return statement;
  }

  private get<T>(sqlText: string, ...params: SqlValue[]): T | undefined {
    return this.prepare(sqlText).get(...params) as T | undefined;
  }

  /** Rows of a query on the file (the expert model's fit reads the past with it). */
  rows<T>(sqlText: string, ...params: SqlValue[]): T[] {
    return this.all<T>(sqlText, ...params);
  }

  private all<T>(sqlText: string, ...params: SqlValue[]): T[] {
    return this.prepare(sqlText).all(...params) as T[];
  }

  private run(sqlText: string, ...params: SqlValue[]) {
    return this.prepare(sqlText).run(...params);
  }

  /**
   * Runs changes in one SQLite transaction. The words of every question changed are written at
   * commit, and the in-memory index follows only once the file has committed, so a failed
   * transaction leaves both as they were.
   */
  transaction<T>(work: () => T): T {
    this.db.exec('begin immediate');
    let result: T;
    const changes: Array<() => void> = [];
    try {
      result = work();
      for (const id of this.dirty) changes.push(this.reindex(id));
      for (const [id, before] of this.expertiseBefore) {
        const after = this.factsOf(id);
        changes.push(() => {
          this.expertise.apply(before, -1);
          this.expertise.apply(after, 1);
          this.tagUses.apply(before.tags, before.space, -1);
          this.tagUses.apply(after.tags, after.space, 1);
        });
      }
      for (let id = this.savedWords; id < this.index.termCount; id++)
        this.run('insert into words (id, word) values (?, ?)', id, this.index.term(id));
      this.db.exec('commit');
      this.savedWords = this.index.termCount;
    } catch (err) {
      this.db.exec('rollback');
      this.loadSmallTables();
      throw err;
    } finally {
      this.dirty.clear();
      this.expertiseBefore.clear();
    }
    for (const change of changes) change();
    return result;
  }

  /** Runs `work`; when it throws, what it changed in the current transaction is undone (one event that cannot be applied). */
  attempt(work: () => void) {
    this.db.exec('savepoint attempt');
    try {
      work();
      this.db.exec('release attempt');
    } catch (err) {
      this.db.exec('rollback to attempt; release attempt');
      this.loadSmallTables();
      throw err;
    }
  }

  position(stream: string): number {
    return this.get<{ seq: number }>('select seq from positions where stream = ?', stream)?.seq ?? 0;
  }

  setPosition(stream: string, seq: number) {
    this.run('insert into positions (stream, seq) values (?, ?) on conflict (stream) do update set seq = excluded.seq', stream, seq);
  }

  question(id: number): IndexedQuestion | undefined {
    const row = this.get<QuestionRow>(`select ${questionColumns} from questions where id = ?`, id);
    return row && toQuestion(row);
  }

  /**
   * What highlighting reads of these questions (title, description, tags), by id, in one
   * statement: a page read a whole row a statement, a tenth of the search process's CPU per
   * query search (a profile at 20,000 questions).
   */
  texts(ids: readonly number[]): Map<number, QuestionTexts> {
    const out = new Map<number, QuestionTexts>();
    if (!ids.length) return out;
    for (const row of this.all<{ id: number; title: string; description: string; tags: string }>(
      'select id, title, description, tags from questions where id in (select value from json_each(?))',
      JSON.stringify(ids),
    ))
      out.set(row.id, { id: row.id, title: row.title, description: row.description, tags: JSON.parse(row.tags) as string[] });
    return out;
  }

  /** Titles of questions by id, in one statement. */
  titles(ids: readonly number[]): Map<number, string> {
    if (!ids.length) return new Map();
    const rows = this.all<{ id: number; title: string }>(
      'select id, title from questions where id in (select value from json_each(?))',
      JSON.stringify(ids),
    );
    return new Map(rows.map((r) => [r.id, r.title]));
  }

  /** The solutions, comments and attachments of a question (those of one kind). */
  parts(questionId: number, kind?: PartKind): Array<{ kind: PartKind; id: number; author_id: number; text: string }> {
    return kind
      ? this.all('select kind, id, author_id, text from parts where question_id = ? and kind = ? order by id', questionId, kind)
      : this.all('select kind, id, author_id, text from parts where question_id = ? order by kind, id', questionId);
  }

  /** Stores a question as the latest event shows it and re-indexes its words. */
  upsertQuestion(q: IndexedQuestion) {
    this.expertiseChanges(q.id);
    this.run(
      `insert into questions (id, author_id, language, title, description, tags, category_id, knowledge_space_id, is_published, is_deleted, published)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       on conflict (id) do update set author_id = excluded.author_id, language = excluded.language, title = excluded.title,
         description = excluded.description, tags = excluded.tags, category_id = excluded.category_id,
         knowledge_space_id = excluded.knowledge_space_id, is_published = excluded.is_published, is_deleted = excluded.is_deleted,
         published = excluded.published`,
      q.id,
      q.author_id,
      q.language,
      q.title,
      q.description,
      JSON.stringify(q.tags),
      q.category_id,
      q.knowledge_space_id,
      q.is_published ? 1 : 0,
      q.is_deleted ? 1 : 0,
      q.published,
    );
    this.dirty.add(q.id);
  }

  /** Questions whose category was deleted: uncategorized now. */
  clearCategory(questionIds: readonly number[]) {
    for (const id of questionIds) {
      this.run('update questions set category_id = null where id = ?', id);
      this.dirty.add(id);
    }
  }

  setPart(kind: PartKind, id: number, questionId: number, authorId: number, text: string | null) {
    if (text === null) this.run('delete from parts where kind = ? and id = ?', kind, id);
    else
      this.run(
        `insert into parts (kind, id, question_id, author_id, text) values (?, ?, ?, ?, ?)
         on conflict (kind, id) do update set question_id = excluded.question_id, author_id = excluded.author_id, text = excluded.text`,
        kind,
        id,
        questionId,
        authorId,
        text,
      );
    this.dirty.add(questionId);
  }

  /** Writes the words of one question from what the file holds; returns the matching change of the in-memory index. */
  private reindex(questionId: number): () => void {
    const q = this.question(questionId);
    // What the index holds of the question now: the file is about to hold its new words.
    const previous = this.terms(questionId);
    if (!q?.is_published) {
      this.run('update questions set terms = null, length = 0 where id = ?', questionId);
      return () => {
        this.index.remove(questionId, previous);
        this.topicsChanged(questionId);
      };
    }
    const { counts, length } = questionWords(q, this.parts(questionId));
    const forward: Forward = new Int32Array(counts.size * FORWARD_STRIDE);
    let j = 0;
    for (const [word, c] of counts) {
      forward[j] = this.index.internTerm(word);
      forward[j + 1] = packCounts(c);
      j += FORWARD_STRIDE;
    }
    this.run('update questions set terms = ?, length = ? where id = ?', new Uint8Array(forward.buffer), length, questionId);
    const facets = facetsOf(q, this.share);
    const published = q.published ? Date.parse(q.published) : 0;
    return () => {
      this.index.put(questionId, forward, length, facets, previous);
      this.topicsChanged(questionId, forward);
      this.latestPublished = Math.max(this.latestPublished, published);
    };
  }

  private tagLookup: { named: (text: string) => Set<string>; linked: Map<string, Set<string>> } | null = null;

  /** Tag labels as word sequences, and links both ways; rebuilt after a tag changes. */
  private tagLookups() {
    if (this.tagLookup) return this.tagLookup;
    const linked = new Map<string, Set<string>>();
    const link = (a: string, b: string) => {
      if (a === b) return;
      if (!linked.has(a)) linked.set(a, new Set());
      linked.get(a)!.add(b);
    };
    for (const [key, tag] of this.tags)
      for (const other of tag.links) {
        link(key, other.toLowerCase());
        link(other.toLowerCase(), key);
      }
    this.tagLookup = { named: tagNamer(this.tags.keys()), linked };
    return this.tagLookup;
  }

  /** A tag by its lower-case label: one the network announced, or one a question carries. */
  tag(key: string): KnownTag | undefined {
    const known = this.tags.get(key);
    if (known) return known;
    const used = this.index.tags.get(key);
    return used && { label: used.label, excluded_from_suggestions: false, links: [] };
  }

  /** Lower-case labels of the known tags whose words occur in the text, in a row ("pale-ale" in "a pale ale"). */
  tagsNamedIn(text: string): Set<string> {
    return this.tagLookups().named(text);
  }

  /** Lower-case labels of the tags linked to a tag, in either direction. */
  linkedTags(key: string): ReadonlySet<string> {
    return this.tagLookups().linked.get(key) ?? new Set();
  }

  /**
   * Records a solution's facts for expertise (its text is a part: setPart), and how it stands from
   * `at` (ms) on when that changed.
   */
  setSolution(s: EventSolutionFacts, at: number) {
    this.expertiseChanges(s.question_id);
    this.run(
      `insert into solutions (id, question_id, author_id, live, time, rating, rating_count, upvotes, accepted_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?)
       on conflict (id) do update set question_id = excluded.question_id, author_id = excluded.author_id, live = excluded.live,
         time = excluded.time, rating = excluded.rating, rating_count = excluded.rating_count, upvotes = excluded.upvotes,
         accepted_at = excluded.accepted_at`,
      s.id,
      s.question_id,
      s.author_id,
      s.live ? 1 : 0,
      Date.parse(s.time),
      s.rating,
      s.rating_count,
      s.upvotes,
      s.accepted_at === null ? null : Date.parse(s.accepted_at),
    );
    const last = this.get<{ live: number; upvotes: number; rating: number | null; rating_count: number }>(
      'select live, upvotes, rating, rating_count from solution_states where solution_id = ? order by time desc limit 1',
      s.id,
    );
    if (
      !last ||
      last.live !== (s.live ? 1 : 0) ||
      last.upvotes !== s.upvotes ||
      last.rating !== s.rating ||
      last.rating_count !== s.rating_count
    )
      this.run(
        `insert into solution_states (solution_id, time, live, upvotes, rating, rating_count) values (?, ?, ?, ?, ?, ?)
         on conflict (solution_id, time) do update set live = excluded.live, upvotes = excluded.upvotes, rating = excluded.rating,
           rating_count = excluded.rating_count`,
        s.id,
        at,
        s.live ? 1 : 0,
        s.upvotes,
        s.rating,
        s.rating_count,
      );
  }

  /** A question was forwarded to a user at `at` (ms): a recommendation of them for its tags. */
  addForward(questionId: number, recipientId: number, at: number) {
    this.expertiseChanges(questionId);
    this.run('insert into forwards (question_id, recipient_id, time) values (?, ?, ?)', questionId, recipientId, at);
  }

  setUserDeleted(userId: number, deleted: boolean) {
    if (deleted) this.run('insert or ignore into deleted_users (id) values (?)', userId);
    else this.run('delete from deleted_users where id = ?', userId);
    if (deleted) this.deletedUsers.add(userId);
    else this.deletedUsers.delete(userId);
  }

  setUserSystem(userId: number, system: boolean) {
    if (system) this.run('insert or ignore into system_users (id) values (?)', userId);
    else this.run('delete from system_users where id = ?', userId);
    if (system) this.systemUsers.add(userId);
    else this.systemUsers.delete(userId);
  }

  setExpertSettings(settings: ExpertSettings) {
    for (const [name, value] of Object.entries(settings))
      this.run(
        'insert into settings (name, value) values (?, ?) on conflict (name) do update set value = excluded.value',
        name,
        String(value),
      );
    this.minExperts = settings.min_experts;
    this.routingsPerExpertPerWeek = settings.routings_per_expert_per_week;
  }

  /** Called before a change to a question's expertise facts: remembers what it contributed until now. */
  private expertiseChanges(questionId: number) {
    if (!this.expertiseBefore.has(questionId)) this.expertiseBefore.set(questionId, this.factsOf(questionId));
  }

  /** What a question contributes to expertise (and to its tags' uses), as the file holds it. */
  private factsOf(questionId: number): QuestionFacts {
    const q = this.get<Pick<QuestionRow, 'tags' | 'knowledge_space_id' | 'is_published' | 'is_deleted'>>(
      'select tags, knowledge_space_id, is_published, is_deleted from questions where id = ?',
      questionId,
    );
    return {
      id: questionId,
      tags: q ? (JSON.parse(q.tags) as string[]) : [],
      space: q?.knowledge_space_id ?? null,
      live: q?.is_published === 1 && q.is_deleted === 0,
      solutions: this.all<SolutionRow>('select * from solutions where question_id = ?', questionId).map(toSolutionFacts),
      recipients: this.all<{ recipient_id: number }>('select recipient_id from forwards where question_id = ?', questionId).map(
        (r) => r.recipient_id,
      ),
    };
  }

  /**
   * Per user, the faded value of their live solutions on the asker's live questions (expert-search's
   * askerRecord); those in the `hidden` spaces left out.
   */
  askerRecord(asker: number, now: number, hidden: ReadonlySet<number> = new Set()) {
    const out = new Map<number, number>();
    for (const row of this.all<SolutionRow & { knowledge_space_id: number | null }>(
      `select s.*, q.knowledge_space_id from solutions s join questions q on q.id = s.question_id
        where q.author_id = ? and s.live = 1 and q.is_published = 1 and q.is_deleted = 0`,
      asker,
    )) {
      if (row.knowledge_space_id !== null && hidden.has(row.knowledge_space_id)) continue;
      const s = toSolutionFacts(row);
      out.set(s.author_id, (out.get(s.author_id) ?? 0) + fadedValue(s, now));
    }
    return out;
  }

  /**
   * A user's record on a set of tags (lower-case), each solution and recommendation counted once
   * however many of the tags its question has, and which of the tags they have a record on; the
   * questions of the `hidden` spaces left out.
   */
  expertRecord(user: number, tags: ReadonlySet<string>, hidden: ReadonlySet<number> = new Set()) {
    const on = (questionTags: string) => (JSON.parse(questionTags) as string[]).map((t) => t.toLowerCase()).filter((t) => tags.has(t));
    const expertTags = new Set<string>();
    let solutions = 0;
    let ratingSum = 0;
    let ratingCount = 0;
    // The questions' tags and states from memory: a busy expert has thousands of solutions, and
    // joining each with its question's row would cost an expert search much of its time.
    for (const row of this.all<{ question_id: number; rating: number | null; rating_count: number }>(
      'select question_id, rating, rating_count from solutions where author_id = ? and live = 1',
      user,
    )) {
      const slot = this.index.slotOf(row.question_id);
      if (!this.index.holds(slot) || this.index.isDeleted(slot) || hidden.has(this.index.spaceOf(slot))) continue;
      const matched = this.index
        .tagsOf(slot)
        .map((t) => t.toLowerCase())
        .filter((t) => tags.has(t));
      if (!matched.length) continue;
      solutions++;
      if (row.rating !== null && row.rating_count > 0) {
        ratingSum += row.rating * row.rating_count;
        ratingCount += row.rating_count;
      }
      for (const t of matched) expertTags.add(t);
    }
    let recommendations = 0;
    for (const row of this.all<{ tags: string; knowledge_space_id: number | null }>(
      'select q.tags, q.knowledge_space_id from forwards f join questions q on q.id = f.question_id where f.recipient_id = ?',
      user,
    )) {
      if (row.knowledge_space_id !== null && hidden.has(row.knowledge_space_id)) continue;
      const matched = on(row.tags);
      if (!matched.length) continue;
      recommendations++;
      for (const t of matched) expertTags.add(t);
    }
    return {
      solution_count: solutions,
      average_rating: ratingCount ? Math.round((ratingSum / ratingCount) * 100) / 100 : null,
      recommendation_count: recommendations,
      expert_tags: [...expertTags],
    };
  }

  setTag(label: string, fields: { excluded_from_suggestions?: boolean; links?: string[] }) {
    this.run('insert or ignore into tags (label) values (?)', label);
    if (fields.excluded_from_suggestions !== undefined)
      this.run('update tags set excluded_from_suggestions = ? where label = ?', fields.excluded_from_suggestions ? 1 : 0, label);
    if (fields.links !== undefined) this.run('update tags set links = ? where label = ?', JSON.stringify(fields.links), label);
    const known = this.tags.get(label.toLowerCase()) ?? { label, excluded_from_suggestions: false, links: [] };
    this.tags.set(label.toLowerCase(), { ...known, ...fields });
    this.tagLookup = null;
  }

  /** A knowledge space: whether it is closed, and (when the event says) its members. */
  setSpace(id: number, isClosed: boolean, members?: readonly number[]) {
    this.run(
      'insert into spaces (id, is_closed) values (?, ?) on conflict (id) do update set is_closed = excluded.is_closed',
      id,
      isClosed ? 1 : 0,
    );
    if (members) this.run('update spaces set members = ? where id = ?', JSON.stringify(members), id);
    const known =
      members ?? (JSON.parse(this.get<{ members: string }>('select members from spaces where id = ?', id)!.members) as number[]);
    if (isClosed) this.closedSpaces.set(id, new Set(known));
    else this.closedSpaces.delete(id);
  }
}

interface SolutionRow {
  id: number;
  question_id: number;
  author_id: number;
  live: number;
  time: number;
  rating: number | null;
  rating_count: number;
  upvotes: number;
  accepted_at: number | null;
}

const toSolutionFacts = (row: SolutionRow): SolutionFacts => ({
  id: row.id,
  question_id: row.question_id,
  author_id: row.author_id,
  live: row.live === 1,
  time: row.time,
  rating: row.rating,
  rating_count: row.rating_count,
  upvotes: row.upvotes,
  accepted_at: row.accepted_at,
});

/** The Forward of a stored question (a view of SQLite's bytes when they are aligned for one, a copy when not). */
const toForward = (bytes: Uint8Array): Forward =>
  bytes.byteOffset % 4 === 0 ? new Int32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 2) : new Int32Array(bytes.slice().buffer);

function toQuestion(row: QuestionRow): IndexedQuestion {
  return { ...row, tags: JSON.parse(row.tags) as string[], is_published: row.is_published === 1, is_deleted: row.is_deleted === 1 };
}

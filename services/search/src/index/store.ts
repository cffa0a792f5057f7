import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { type Language, languages, termCounts, tokenize, type WeightedText } from '@kn/similarity';

/**
 * The search index of one search instance: an SQLite file (node:sqlite, FTS5) rebuilt from the
 * content events. It is a projection, never a source of truth: deleting the file and replaying
 * the streams gives the same index. Stream positions are stored in the same transaction as the
 * changes they caused, so a restart resumes exactly where the index stands.
 */

export type PartKind = 'solution' | 'comment' | 'attachment';

export interface IndexedQuestion {
  id: number;
  author_id: number;
  language: string;
  title: string;
  description: string;
  tags: string[];
  category_id: number | null;
  knowledge_space_id: number | null;
  is_published: boolean;
  is_deleted: boolean;
  published: string | null;
}

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
    -- Term counts of the whole unit (question, tags, solutions, comments) for similarity: [[term, count], ...]
    unit_terms text not null default '[]',
    -- Whether the words and unit_terms are in the index (counted in the frequencies).
    indexed integer not null default 0
  );
  create table if not exists question_tags (label text not null, question_id integer not null, primary key (label, question_id)) without rowid;
  create index if not exists question_tags_question on question_tags (question_id);
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
  create table if not exists spaces (id integer primary key, is_closed integer not null);
  -- Contentless: the columns hold the words to match (stop words of the question's language
  -- removed, diacritics folded); the texts to show are in questions and parts.
  -- The columns in the order of SearchFieldNames (contracts), which the bm25() weights follow.
  create virtual table if not exists question_fts using fts5 (
    title, description, tags, solutions, comments, attachments,
    content = '', contentless_delete = 1, prefix = '3 4', tokenize = 'unicode61 remove_diacritics 2'
  );
  create virtual table if not exists question_vocab using fts5vocab (question_fts, 'row');
`;

/** Bump when the layout or the word rules change: an index of another version is rebuilt from the streams. */
const SCHEMA_VERSION = 2;

const isLanguage = (l: string): l is Language => (languages as readonly string[]).includes(l);

/** The words of a text as the index holds them: stop words of its language removed, diacritics folded. */
export function indexWords(text: string, language: string): string[] {
  return tokenize(text, { language: isLanguage(language) ? language : 'en', stem: false, fold: true });
}

/**
 * A question with its tags, solutions and comments as one unit for similar-question search: title
 * twice, comments a quarter (the weights that scored best on SemEval-2016 task 3, bench/semeval.ts).
 */
const unitWeights = { title: 2, comment: 0.25 };

export function unitTerms(
  q: { title: string; description: string; tags: string[]; language: string },
  parts: ReadonlyArray<{ kind: PartKind; text: string }>,
): Map<string, number> {
  const texts: WeightedText[] = [{ text: q.title, weight: unitWeights.title }, { text: q.description }, { text: q.tags.join(' ') }];
  for (const part of parts) {
    if (part.kind === 'solution') texts.push({ text: part.text });
    else if (part.kind === 'comment') texts.push({ text: part.text, weight: unitWeights.comment });
  }
  return termCounts(texts, { language: isLanguage(q.language) ? q.language : 'en', stem: false, fold: true });
}

/** What the filters of a search look at, per indexed question, in memory (a join to the rows costs more than the ranking). */
export interface Facets {
  is_deleted: boolean;
  language: string;
  category_id: number | null;
  knowledge_space_id: number | null;
  /** Lower-case labels. */
  tags: Set<string>;
}

const facetsOf = (q: Pick<IndexedQuestion, 'is_deleted' | 'language' | 'category_id' | 'knowledge_space_id' | 'tags'>): Facets => ({
  is_deleted: q.is_deleted,
  language: q.language,
  category_id: q.category_id,
  knowledge_space_id: q.knowledge_space_id,
  tags: new Set(q.tags.map((t) => t.toLowerCase())),
});

export class SearchStore {
  db: DatabaseSync;
  readonly path: string;
  private statements = new Map<string, StatementSync>();
  /** Questions in the full-text index (published), for inverse document frequencies. */
  private indexedCount = 0;
  /** Questions changed in the current transaction: their words are indexed once, at commit. */
  private dirty = new Set<number>();
  /**
   * In how many indexed units each term occurs (similarity's IDF), in memory: one similarity
   * ranking weighs thousands of terms. Loaded at open, kept current by reindex.
   */
  private unitFrequencies = new Map<string, number>();
  /** Facets of every indexed question. */
  readonly facets = new Map<number, Facets>();

  constructor(path: string) {
    this.path = path;
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new DatabaseSync(path);
    const version = (this.db.prepare('pragma user_version').get() as { user_version: number }).user_version;
    if (version !== SCHEMA_VERSION && version !== 0) {
      this.db.close();
      SearchStore.destroy(path);
      this.db = new DatabaseSync(path);
    }
    this.db.exec('pragma journal_mode = wal; pragma synchronous = normal; pragma temp_store = memory; pragma cache_size = -65536;');
    this.db.exec(schema);
    this.db.exec(`pragma user_version = ${SCHEMA_VERSION}`);
    this.recount();
  }

  /** Counts what is in memory again from the file (at open, and after a rolled-back change). */
  recount() {
    this.indexedCount = this.get<{ n: number }>('select count(*) as n from questions where indexed = 1')?.n ?? 0;
    this.unitFrequencies.clear();
    this.facets.clear();
    for (const row of this.db.prepare('select * from questions where indexed = 1').iterate() as Iterable<
      QuestionRow & { unit_terms: string }
    >) {
      this.countUnit(row.unit_terms, 1);
      this.facets.set(row.id, facetsOf(toQuestion(row)));
    }
  }

  private countUnit(unitTermsJson: string, delta: 1 | -1) {
    for (const [term] of JSON.parse(unitTermsJson) as Array<[string, number]>) {
      const n = (this.unitFrequencies.get(term) ?? 0) + delta;
      if (n > 0) this.unitFrequencies.set(term, n);
      else this.unitFrequencies.delete(term);
    }
  }

  /** In how many indexed units (questions with tags, solutions and comments) a term occurs. */
  unitFrequency(term: string): number {
    return this.unitFrequencies.get(term) ?? 0;
  }

  /** Removes the file (and its WAL) of a closed store. */
  static destroy(path: string) {
    if (path === ':memory:') return;
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  }

  close() {
    this.statements.clear();
    this.db.close();
  }

  get documentCount() {
    return this.indexedCount;
  }

  prepare(sqlText: string): StatementSync {
    let statement = this.statements.get(sqlText);
    if (!statement) {
      statement = this.db.prepare(sqlText);
      this.statements.set(sqlText, statement);
    }
    return statement;
  }

  get<T>(sqlText: string, ...params: Array<string | number | null>): T | undefined {
    return this.prepare(sqlText).get(...params) as T | undefined;
  }

  all<T>(sqlText: string, ...params: Array<string | number | null>): T[] {
    return this.prepare(sqlText).all(...params) as T[];
  }

  run(sqlText: string, ...params: Array<string | number | null>) {
    return this.prepare(sqlText).run(...params);
  }

  transaction<T>(work: () => T): T {
    this.db.exec('begin immediate');
    try {
      const result = work();
      for (const id of this.dirty) this.reindex(id);
      this.dirty.clear();
      this.db.exec('commit');
      return result;
    } catch (err) {
      this.dirty.clear();
      this.db.exec('rollback');
      this.recount();
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
    const row = this.get<QuestionRow>('select * from questions where id = ?', id);
    return row && toQuestion(row);
  }

  parts(questionId: number): Array<{ kind: PartKind; id: number; author_id: number; text: string }> {
    return this.all('select kind, id, author_id, text from parts where question_id = ? order by kind, id', questionId);
  }

  /** Stores a question as the latest event shows it and re-indexes its words. */
  upsertQuestion(q: IndexedQuestion) {
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
    this.run('delete from question_tags where question_id = ?', q.id);
    for (const label of new Set(q.tags.map((t) => t.toLowerCase())))
      this.run('insert or ignore into question_tags (label, question_id) values (?, ?)', label, q.id);
    this.dirty.add(q.id);
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

  /** Rebuilds the full-text row of one question from what the store holds. */
  private reindex(questionId: number) {
    const q = this.question(questionId);
    const before = this.get<{ unit_terms: string }>('select unit_terms from questions where id = ? and indexed = 1', questionId);
    if (before) {
      this.countUnit(before.unit_terms, -1);
      this.indexedCount--;
    }
    if (!q?.is_published) {
      this.run('delete from question_fts where rowid = ?', questionId);
      this.run('update questions set indexed = 0 where id = ?', questionId);
      this.facets.delete(questionId);
      return;
    }
    const texts: Record<PartKind, string[]> = { solution: [], comment: [], attachment: [] };
    const parts = this.parts(questionId);
    for (const part of parts) texts[part.kind].push(part.text);
    const words = (text: string) => indexWords(text, q.language).join(' ');
    const unit = JSON.stringify([...unitTerms(q, parts)]);
    this.run('update questions set unit_terms = ?, indexed = 1 where id = ?', unit, questionId);
    this.countUnit(unit, 1);
    this.indexedCount++;
    this.facets.set(questionId, facetsOf(q));
    this.run(
      'insert or replace into question_fts (rowid, title, description, tags, solutions, comments, attachments) values (?, ?, ?, ?, ?, ?, ?)',
      questionId,
      words(q.title),
      words(q.description),
      words(q.tags.join(' ')),
      words(texts.solution.join('\n')),
      words(texts.comment.join('\n')),
      words(texts.attachment.join('\n')),
    );
  }

  /** The unit's term counts for similarity (see unitTerms). */
  unitTerms(questionId: number): Map<string, number> | null {
    const row = this.get<{ unit_terms: string }>('select unit_terms from questions where id = ?', questionId);
    return row ? new Map(JSON.parse(row.unit_terms) as Array<[string, number]>) : null;
  }

  /** Number of indexed questions a word occurs in. */
  documentFrequency(word: string): number {
    return this.get<{ doc: number }>('select doc from question_vocab where term = ?', word)?.doc ?? 0;
  }

  setTag(label: string, fields: { excluded_from_suggestions?: boolean; links?: string[] }) {
    this.run('insert or ignore into tags (label) values (?)', label);
    if (fields.excluded_from_suggestions !== undefined)
      this.run('update tags set excluded_from_suggestions = ? where label = ?', fields.excluded_from_suggestions ? 1 : 0, label);
    if (fields.links !== undefined) this.run('update tags set links = ? where label = ?', JSON.stringify(fields.links), label);
  }

  setSpace(id: number, isClosed: boolean) {
    this.run(
      'insert into spaces (id, is_closed) values (?, ?) on conflict (id) do update set is_closed = excluded.is_closed',
      id,
      isClosed ? 1 : 0,
    );
  }
}

function toQuestion(row: QuestionRow): IndexedQuestion {
  return { ...row, tags: JSON.parse(row.tags) as string[], is_published: row.is_published === 1, is_deleted: row.is_deleted === 1 };
}

import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { type Language, languages, tokenize } from '@kn/similarity';
import { type Facets, FIELDS, type Forward, packCounts, TermIndex } from './postings.ts';

/**
 * The search index of one search instance: an SQLite file (node:sqlite) with the questions as the
 * content events show them, their texts (for highlighting) and their words, plus the in-memory
 * inverted index built from those words at open. It is a projection, never a source of truth:
 * deleting the file and replaying the streams gives the same index. Stream positions are stored
 * in the same transaction as the changes they caused, so a restart resumes exactly where the
 * index stands.
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
  create table if not exists spaces (id integer primary key, is_closed integer not null);
`;

/** Bump when the layout or the word rules change: an index of another version is rebuilt from the streams. */
const SCHEMA_VERSION = 3;

type SqlValue = string | number | null | Uint8Array;

/** The columns of an IndexedQuestion (not its words: they are in memory). */
const questionColumns =
  'id, author_id, language, title, description, tags, category_id, knowledge_space_id, is_published, is_deleted, published';

const isLanguage = (l: string): l is Language => (languages as readonly string[]).includes(l);

/** The words of a text as the index holds them: stop words of its language removed, diacritics folded. */
export function indexWords(text: string, language: string): string[] {
  return tokenize(text, { language: isLanguage(language) ? language : 'en', stem: false, fold: true });
}

/** A question's words with their frequency in each field (per-field counts in FIELDS order), and its length in words. */
export function questionWords(
  q: Pick<IndexedQuestion, 'title' | 'description' | 'tags' | 'language'>,
  parts: ReadonlyArray<{ kind: PartKind; text: string }>,
): { counts: Map<string, number[]>; length: number } {
  const texts: string[][] = FIELDS.map(() => []);
  texts[0]!.push(q.title);
  texts[1]!.push(q.description);
  texts[2]!.push(q.tags.join(' '));
  const fieldOf: Record<PartKind, number> = { solution: 3, comment: 4, attachment: 5 };
  for (const part of parts) texts[fieldOf[part.kind]]!.push(part.text);
  const counts = new Map<string, number[]>();
  let length = 0;
  texts.forEach((list, field) => {
    for (const text of list)
      for (const word of indexWords(text, q.language)) {
        let c = counts.get(word);
        if (!c) {
          c = [0, 0, 0, 0, 0, 0];
          counts.set(word, c);
        }
        c[field]!++;
        length++;
      }
  });
  return { counts, length };
}

export interface KnownTag {
  label: string;
  excluded_from_suggestions: boolean;
  /** Labels of the linked tags. */
  links: string[];
}

const facetsOf = (q: IndexedQuestion): Facets => ({
  author_id: q.author_id,
  language: q.language,
  category_id: q.category_id,
  knowledge_space_id: q.knowledge_space_id,
  is_deleted: q.is_deleted,
  tags: q.tags,
});

export class SearchStore {
  db: DatabaseSync;
  readonly path: string;
  private statements = new Map<string, StatementSync>();
  /** Questions changed in the current transaction: their words are indexed once, at commit. */
  private dirty = new Set<number>();
  /** The inverted index of the published questions (deleted ones too, for administrators). */
  index = new TermIndex();
  /** Words of the index's dictionary that are in the file (the rest are written at the next commit). */
  private savedWords = 0;
  /** Knowledge spaces that are closed (their questions are left out of autocomplete). */
  readonly closedSpaces = new Set<number>();
  /** Every tag the network has (in use or not), by lower-case label. */
  readonly tags = new Map<string, KnownTag>();

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
    this.load();
  }

  /** Builds what is in memory from the file (at open). */
  private load() {
    this.index = new TermIndex();
    for (const row of this.db.prepare('select id, word from words order by id').iterate() as Iterable<{ id: number; word: string }>)
      this.index.defineTerm(row.id, row.word);
    this.savedWords = this.index.termCount;
    const rows = this.db.prepare('select * from questions where terms is not null').iterate() as Iterable<
      QuestionRow & { terms: Uint8Array; length: number }
    >;
    this.index.load(
      (function* () {
        for (const row of rows) yield { id: row.id, forward: toForward(row.terms), length: row.length, facets: facetsOf(toQuestion(row)) };
      })(),
    );
    this.loadSmallTables();
  }

  /** Spaces and tags, kept in memory: again after a rollback, which may have undone changes to them. */
  private loadSmallTables() {
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
    for (const row of this.db.prepare('select id from spaces where is_closed = 1').iterate() as Iterable<{ id: number }>)
      this.closedSpaces.add(row.id);
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

  /** The solutions, comments and attachments of a question (those of one kind). */
  parts(questionId: number, kind?: PartKind): Array<{ kind: PartKind; id: number; author_id: number; text: string }> {
    return kind
      ? this.all('select kind, id, author_id, text from parts where question_id = ? and kind = ? order by id', questionId, kind)
      : this.all('select kind, id, author_id, text from parts where question_id = ? order by kind, id', questionId);
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
    if (!q?.is_published) {
      this.run('update questions set terms = null, length = 0 where id = ?', questionId);
      return () => this.index.remove(questionId);
    }
    const { counts, length } = questionWords(q, this.parts(questionId));
    const forward: Forward = new Int32Array(counts.size * 3);
    let j = 0;
    for (const [word, c] of counts) {
      forward[j] = this.index.internTerm(word);
      [forward[j + 1], forward[j + 2]] = packCounts(c);
      j += 3;
    }
    this.run('update questions set terms = ?, length = ? where id = ?', new Uint8Array(forward.buffer), length, questionId);
    const facets = facetsOf(q);
    return () => this.index.put(questionId, forward, length, facets);
  }

  setTag(label: string, fields: { excluded_from_suggestions?: boolean; links?: string[] }) {
    this.run('insert or ignore into tags (label) values (?)', label);
    if (fields.excluded_from_suggestions !== undefined)
      this.run('update tags set excluded_from_suggestions = ? where label = ?', fields.excluded_from_suggestions ? 1 : 0, label);
    if (fields.links !== undefined) this.run('update tags set links = ? where label = ?', JSON.stringify(fields.links), label);
    const known = this.tags.get(label.toLowerCase()) ?? { label, excluded_from_suggestions: false, links: [] };
    this.tags.set(label.toLowerCase(), { ...known, ...fields });
  }

  setSpace(id: number, isClosed: boolean) {
    this.run(
      'insert into spaces (id, is_closed) values (?, ?) on conflict (id) do update set is_closed = excluded.is_closed',
      id,
      isClosed ? 1 : 0,
    );
    if (isClosed) this.closedSpaces.add(id);
    else this.closedSpaces.delete(id);
  }
}

/** The Forward of a stored question (a copy: SQLite's bytes need not be aligned for an Int32Array view). */
const toForward = (bytes: Uint8Array): Forward => new Int32Array(bytes.slice().buffer);

function toQuestion(row: QuestionRow): IndexedQuestion {
  return { ...row, tags: JSON.parse(row.tags) as string[], is_published: row.is_published === 1, is_deleted: row.is_deleted === 1 };
}

import { mkdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { dumpFileOnDisk, missingFile, readRows } from './reader.ts';
import { type DumpFile, dumpFiles, type Malformed, PostType, parseRow, type Row, VoteType } from './rows.ts';

/*
 * The staging file: the dump's rows, parsed, in an SQLite file on disk (node:sqlite), indexed so
 * that a question can be assembled with its answers, comments and vote totals without holding the
 * dump in memory. It is also the checkpoint of a resumable import (table `meta`), and is deleted
 * when an import finished. SQLite's page cache is bounded (cache_size below), so the memory of the
 * import does not grow with the dump.
 */

const SCHEMA = `
create table if not exists meta (key text primary key, value text not null);
create table if not exists users (id integer primary key, row text not null);
create table if not exists tags (label text primary key);
create table if not exists questions (id integer primary key, row text not null);
create table if not exists answers (id integer primary key, parent_id integer not null, row text not null);
create index if not exists answers_parent on answers (parent_id, id);
create table if not exists comments (id integer primary key, post_id integer not null, row text not null);
create index if not exists comments_post on comments (post_id, id);
create table if not exists votes (post_id integer primary key, up integer not null default 0, down integer not null default 0, accepted text);
create table if not exists links (id integer primary key, post_id integer not null, related_id integer not null, type integer not null);
create table if not exists question_tags (question_id integer not null, tag text not null, primary key (question_id, tag));
create table if not exists malformed (file text not null, idx integer not null, line integer not null, reason text not null);
create table if not exists positions (file text not null, id integer not null, idx integer not null, line integer not null, primary key (file, id));
create table if not exists user_ids (se_id integer primary key, kn_id integer not null);
create table if not exists counters (name text primary key, value integer not null);
`;

export type Stage = DatabaseSync;

/**
 * The layout of the staging file: a checkpoint of another layout is not resumed but staged again
 * (2: `positions`, where each post and comment stands in its file).
 */
const LAYOUT = 2;

/** The fingerprint of a dump folder: names, sizes and modification times of the files read (and the staging layout). */
export function fingerprint(dir: string): string {
  return `layout ${LAYOUT}|${Object.values(dumpFiles)
    .map((f) => {
      const file = dumpFileOnDisk(path.join(dir, f.file));
      if (!file) throw missingFile(path.join(dir, f.file));
      const s = statSync(file);
      return `${path.basename(file)}:${s.size}:${s.mtimeMs}`;
    })
    .join(',')}`;
}

/**
 * Where a staged post or comment stands in its file (for the report of a row the content service
 * refused: its description passed a limit), or undefined for one staged by an older layout.
 */
export function positionOf(db: Stage, file: string, id: number): { index: number; line: number } | undefined {
  return db.prepare('select idx as "index", line from positions where file = ? and id = ?').get(file, id) as
    | { index: number; line: number }
    | undefined;
}

export function openStage(file: string): Stage {
  mkdirSync(path.dirname(file), { recursive: true });
  const db = new DatabaseSync(file);
  // A bounded page cache (about 8 MiB) whatever the dump size; the journal survives a crash.
  db.exec('pragma journal_mode = wal; pragma synchronous = normal; pragma cache_size = -8000; pragma temp_store = file;');
  db.exec(SCHEMA);
  return db;
}

export function removeStage(file: string) {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
}

export const getMeta = (db: Stage, key: string) =>
  (db.prepare('select value from meta where key = ?').get(key) as { value: string } | undefined)?.value;
export const setMeta = (db: Stage, key: string, value: string) =>
  db.prepare('insert into meta (key, value) values (?, ?) on conflict (key) do update set value = excluded.value').run(key, value);

export function addCounter(db: Stage, name: string, n: number) {
  if (n)
    db.prepare('insert into counters (name, value) values (?, ?) on conflict (name) do update set value = value + excluded.value').run(
      name,
      n,
    );
}
export const counter = (db: Stage, name: string) =>
  Number((db.prepare('select value from counters where name = ?').get(name) as { value: number } | undefined)?.value ?? 0);

/** Runs fn in one SQLite transaction (thousands of inserts per commit, not one each). */
export function transaction<T>(db: Stage, fn: () => T): T {
  db.exec('begin');
  try {
    const out = fn();
    db.exec('commit');
    return out;
  } catch (err) {
    db.exec('rollback');
    throw err;
  }
}

/**
 * Reads every file of the dump into the stage, file by file, committing every few thousand rows.
 * A malformed row is recorded (file, row number, line, reason) and skipped; a missing file or a
 * file of another format stops the import before anything was sent.
 */
export async function stageDump(db: Stage, dir: string, onRow: (file: string, rows: number, done: boolean) => void) {
  db.exec(
    'delete from users; delete from tags; delete from questions; delete from answers; delete from comments; delete from votes; delete from links; delete from question_tags; delete from malformed; delete from positions;',
  );
  const insertMalformed = db.prepare('insert into malformed (file, idx, line, reason) values (?, ?, ?, ?)');
  const statements = {
    users: db.prepare('insert or replace into users (id, row) values (?, ?)'),
    tags: db.prepare('insert or ignore into tags (label) values (?)'),
    question: db.prepare('insert or replace into questions (id, row) values (?, ?)'),
    questionTag: db.prepare('insert or ignore into question_tags (question_id, tag) values (?, ?)'),
    answer: db.prepare('insert or replace into answers (id, parent_id, row) values (?, ?, ?)'),
    comment: db.prepare('insert or replace into comments (id, post_id, row) values (?, ?, ?)'),
    vote: db.prepare(
      `insert into votes (post_id, up, down, accepted) values (?, ?, ?, ?)
       on conflict (post_id) do update set up = up + excluded.up, down = down + excluded.down, accepted = coalesce(accepted, excluded.accepted)`,
    ),
    link: db.prepare('insert or replace into links (id, post_id, related_id, type) values (?, ?, ?, ?)'),
    position: db.prepare('insert or replace into positions (file, id, idx, line) values (?, ?, ?, ?)'),
  };
  const handlers: { [F in DumpFile]: (row: Row<F>, raw: { index: number; line: number }) => string | undefined } = {
    users: (u) => {
      statements.users.run(u.Id, JSON.stringify(u));
      return undefined;
    },
    tags: (t) => {
      statements.tags.run(t.TagName);
      return undefined;
    },
    posts: (p, raw) => {
      if (p.PostTypeId === PostType.question) {
        if (!p.Title?.trim()) return 'Title: a question needs a title';
        statements.question.run(p.Id, JSON.stringify(p));
        for (const tag of p.Tags) statements.questionTag.run(p.Id, tag);
      } else if (p.PostTypeId === PostType.answer) {
        if (p.ParentId === undefined) return 'ParentId: an answer needs its question';
        statements.answer.run(p.Id, p.ParentId, JSON.stringify(p));
      } else {
        // Tag wikis, moderator nominations and the like are not content of this network.
        return undefined;
      }
      statements.position.run(dumpFiles.posts.file, p.Id, raw.index, raw.line);
      return undefined;
    },
    comments: (c, raw) => {
      statements.comment.run(c.Id, c.PostId, JSON.stringify(c));
      statements.position.run(dumpFiles.comments.file, c.Id, raw.index, raw.line);
      return undefined;
    },
    votes: (v) => {
      if (v.VoteTypeId === VoteType.up) statements.vote.run(v.PostId, 1, 0, null);
      else if (v.VoteTypeId === VoteType.down) statements.vote.run(v.PostId, 0, 1, null);
      else if (v.VoteTypeId === VoteType.accepted) statements.vote.run(v.PostId, 0, 0, v.CreationDate ?? null);
      return undefined;
    },
    postLinks: (l) => {
      statements.link.run(l.Id, l.PostId, l.RelatedPostId, l.LinkTypeId);
      return undefined;
    },
  };
  for (const kind of Object.keys(dumpFiles) as DumpFile[]) {
    const spec = dumpFiles[kind];
    let n = 0;
    db.exec('begin');
    try {
      for await (const raw of readRows(path.join(dir, spec.file), spec.root)) {
        const parsed = parseRow(kind, raw);
        let problem: Malformed | undefined;
        if (!parsed.ok) problem = parsed.malformed;
        else {
          const reason = (handlers[kind] as (row: unknown, raw: { index: number; line: number }) => string | undefined)(parsed.row, raw);
          if (reason) problem = { file: spec.file, index: raw.index, line: raw.line, reason };
        }
        if (problem) insertMalformed.run(problem.file, problem.index, problem.line, problem.reason);
        if (++n % 5000 === 0) {
          db.exec('commit');
          db.exec('begin');
          onRow(spec.file, n, false);
        }
      }
      db.exec('commit');
    } catch (err) {
      db.exec('rollback');
      throw err;
    }
    onRow(spec.file, n, true);
  }
}

import { hash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Bus, call } from '@kn/bus';
import { IMPORTED_HTML_MAX_CHARS, type ImportedQuestion, importOperations, type Operation, usersOperations } from '@kn/contracts';
import { escapeHtml } from '@kn/service';
import { DumpError } from './reader.ts';
import { dumpFiles, LinkType, type Malformed, type Row } from './rows.ts';
import {
  addCounter,
  counter,
  fingerprint,
  getMeta,
  openStage,
  positionOf,
  removeStage,
  type Stage,
  setMeta,
  stageDump,
  transaction,
} from './staging.ts';

export interface ImportOptions {
  /** The dump folder (Posts.xml, Users.xml, …). */
  dir: string;
  bus: Bus;
  /** Where the checkpoint lives; it names the target system too (NATS url and namespace). */
  stateDir?: string;
  target?: string;
  /** Language of the site's content (a dump does not say). */
  language?: string;
  /** A progress line; the command draws a bar on stderr with it. */
  progress?: (phase: string, done: number, total: number) => void;
  /** Largest JSON of one importQuestions call (NATS carries at most 1 MiB per message). */
  batchBytes?: number;
}

export interface Counts {
  created: number;
  skipped: number;
}

export interface ImportSummary {
  site: string;
  resumed: boolean;
  seconds: number;
  users: Counts;
  tags: Counts;
  questions: Counts;
  solutions: Counts;
  comments: Counts;
  tagLinks: Counts;
  questionLinks: Counts & { unresolved: number };
  /** Answers without their question, comments on posts that are not imported. */
  orphans: { answers: number; comments: number };
  malformed: { count: number; rows: Malformed[] };
  /** Seconds per phase of this run (0 for a phase a resumed run had done before). */
  phases: Record<string, number>;
}

/** `stackexchange-beer`, `beer.stackexchange.com` → `beer`. */
export function siteName(dir: string): string {
  const base = path
    .basename(path.resolve(dir))
    .toLowerCase()
    .replace(/^stackexchange[-_.]/, '')
    .replace(/\.stackexchange\.com$/, '')
    .replace(/\.com$/, '');
  return base.replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '') || 'site';
}

/** Stack Exchange users have no e-mail in a dump: a reserved address (RFC 2606 `.invalid`) that can never receive mail. */
export const userEmail = (site: string, id: number | string) => `user${id}@${site}.stackexchange.invalid`;

/** `Jane van Doe` → `Jane van` / `Doe`; a single word is a first name. */
export function splitName(displayName: string, fallback: string): { firstname: string; lastname: string } {
  const name = displayName.trim().replace(/\s+/g, ' ');
  if (!name) return { firstname: fallback, lastname: '' };
  const cut = name.lastIndexOf(' ');
  if (cut < 0) return { firstname: name.slice(0, 191), lastname: '' };
  return { firstname: name.slice(0, cut).slice(0, 191), lastname: name.slice(cut + 1).slice(0, 191) };
}

const iso = (d: string | undefined) => (d ? d : undefined);

const USER_BATCHES_IN_FLIGHT = 2;

const ACTOR = { id: 0, roles: ['super_admin' as const], token_id: null };

function rpc<O extends Operation>(bus: Bus, name: string, op: O, body: unknown) {
  return call(
    bus,
    name,
    op,
    { actor: ACTOR, params: undefined, query: undefined, body, requestId: `import-${Date.now()}`, url: '/internal/import' } as never,
    { timeoutMs: 120_000 },
  );
}

/**
 * Imports a Stack Exchange dump folder into a running system through the services' internal
 * operations. Phases: stage the files (streamed into SQLite on disk), users, tags, questions with
 * their answers and comments (in batches, each one transaction in the content service), tag links,
 * question links. The checkpoint after each batch makes an interrupted run continue where it
 * stopped; idempotency by external id makes a repeated batch harmless.
 */
export async function importDump(options: ImportOptions): Promise<ImportSummary> {
  const started = Date.now();
  const dir = path.resolve(options.dir);
  const site = siteName(dir);
  const language = options.language ?? 'en';
  const progress = options.progress ?? (() => {});
  const batchBytes = options.batchBytes ?? 512 * 1024;
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new DumpError(`${dir} is not a folder: give the folder of an unpacked Stack Exchange dump`);
  const print = fingerprint(dir);
  const key = hash('sha256', `${dir}\n${options.target ?? ''}`).slice(0, 16);
  const stateFile = path.join(options.stateDir ?? path.join(tmpdir(), 'kn-import'), `${site}-${key}.sqlite`);
  let db = openStage(stateFile);
  const resumed = getMeta(db, 'staged') === print;
  if (!resumed) {
    db.close();
    removeStage(stateFile);
    db = openStage(stateFile);
    try {
      await stageDump(db, dir, (file, rows, done) => progress(`reading ${file}`, rows, done ? rows : 0));
    } catch (err) {
      db.close();
      removeStage(stateFile);
      throw err;
    }
    setMeta(db, 'staged', print);
  }
  const ext = (kind: string, id: number | string) => `stackexchange:${site}:${kind}:${id}`;
  const phases: Record<string, number> = {};
  let mark = started;
  const lap = (phase: string) => {
    phases[phase] = (Date.now() - mark) / 1000;
    mark = Date.now();
  };
  lap('staging');

  // Users.
  if (!getMeta(db, 'done:users')) {
    const total = count(db, 'users') + 1;
    const rows = db.prepare('select id, row from users where id > ? order by id limit 1000');
    const save = db.prepare('insert or replace into user_ids (se_id, kn_id) values (?, ?)');
    // Posts of deleted accounts (no owner, or an owner missing from Users.xml) get one placeholder author.
    const placeholder = await rpc(bus(options), 'importUsers', usersOperations.importUsers, {
      users: [
        {
          external_id: ext('user', 'unknown'),
          email: `former-user@${site}.stackexchange.invalid`,
          firstname: 'Former',
          lastname: 'user',
          language,
          created: '2000-01-01T00:00:00.000Z',
          is_system: true,
        },
      ],
    });
    setMeta(db, 'unknown-user', String(placeholder.ids[ext('user', 'unknown')]));
    addCounter(db, 'users.created', placeholder.created);
    addCounter(db, 'users.skipped', 1 - placeholder.created);
    let last = Number(getMeta(db, 'users:last') ?? Number.MIN_SAFE_INTEGER);
    let done = 1;
    const toImported = ({ row }: { row: string }) => {
      const u = JSON.parse(row) as Row<'users'>;
      return {
        external_id: ext('user', u.Id),
        email: userEmail(site, u.Id),
        ...splitName(u.DisplayName, `user${u.Id}`),
        language,
        location: u.Location ? u.Location.slice(0, 10000) : null,
        about: u.AboutMe ? u.AboutMe.slice(0, 100000) : null,
        created: u.CreationDate,
        last_seen: u.LastAccessDate ?? null,
        // Id -1 is Stack Exchange's "Community" bot.
        is_system: u.Id <= 0,
      };
    };
    for (;;) {
      // Two batches in flight (disjoint users, so disjoint rows in the users service): the users
      // service's transactions overlap their database round trips. The checkpoint moves when both are in.
      const pages: Array<Array<{ id: number; row: string }>> = [];
      for (let from = last; pages.length < USER_BATCHES_IN_FLIGHT; ) {
        const page = rows.all(from) as Array<{ id: number; row: string }>;
        if (page.length === 0) break;
        pages.push(page);
        from = page[page.length - 1].id;
      }
      if (pages.length === 0) break;
      const results = await Promise.all(
        pages.map((page) => rpc(bus(options), 'importUsers', usersOperations.importUsers, { users: page.map(toImported) })),
      );
      const lastPage = pages[pages.length - 1];
      last = lastPage[lastPage.length - 1].id;
      transaction(db, () => {
        pages.forEach((page, i) => {
          for (const u of page) {
            const id = results[i].ids[ext('user', u.id)];
            if (id !== undefined) save.run(u.id, id);
          }
          addCounter(db, 'users.created', results[i].created);
          addCounter(db, 'users.skipped', page.length - results[i].created);
          done += page.length;
        });
        setMeta(db, 'users:last', String(last));
      });
      progress('users', done, total);
    }
    setMeta(db, 'done:users', '1');
  }
  lap('users');

  // Tags.
  if (!getMeta(db, 'done:tags')) {
    const labels = (
      db.prepare('select label from tags union select tag as label from question_tags order by 1').all() as Array<{ label: string }>
    ).map((r) => r.label);
    for (let i = 0; i < labels.length; i += 1000) {
      const result = await rpc(bus(options), 'importTags', importOperations.importTags, { labels: labels.slice(i, i + 1000) });
      addCounter(db, 'tags.created', result.created);
      addCounter(db, 'tags.skipped', result.skipped);
      progress('tags', Math.min(i + 1000, labels.length), labels.length);
    }
    setMeta(db, 'done:tags', '1');
  }
  lap('tags');

  // Questions with their answers, comments and votes.
  if (!getMeta(db, 'done:questions')) {
    const unknownUser = Number(getMeta(db, 'unknown-user'));
    const userId = db.prepare('select kn_id from user_ids where se_id = ?');
    const author = (se: number | undefined) =>
      se === undefined ? unknownUser : ((userId.get(se) as { kn_id: number } | undefined)?.kn_id ?? unknownUser);
    const votes = db.prepare('select up, down, accepted from votes where post_id = ?');
    const voteOf = (id: number) =>
      (votes.get(id) as { up: number; down: number; accepted: string | null } | undefined) ?? { up: 0, down: 0, accepted: null };
    const answersOf = db.prepare('select row from answers where parent_id = ? order by id');
    const commentsOf = db.prepare('select row from comments where post_id = ? order by id');
    const page = db.prepare('select id, row from questions where id > ? order by id limit 100');
    const total = count(db, 'questions');
    let last = Number(getMeta(db, 'questions:last') ?? 0);
    let done = Number((db.prepare('select count(*) as n from questions where id <= ?').get(last) as { n: number }).n);
    let batch: ImportedQuestion[] = [];
    let bytes = 0;
    /** Questions of the dump up to batchLast (in the batch or not importable) since the last checkpoint. */
    let questionsRead = 0;
    let batchLast = last;
    // Rows whose description cannot be imported (longer than an import takes, or refused by the
    // content service past one of its limits): recorded as malformed with the batch's checkpoint.
    type Importable = (file: string, rowId: number, field: string, html: string) => boolean;
    type Sources = Map<string, { file: string; id: number; field: string }>;
    const insertMalformed = db.prepare('insert into malformed (file, idx, line, reason) values (?, ?, ?, ?)');
    let unimported: Malformed[] = [];
    const malformed = (file: string, id: number, reason: string): Malformed => ({
      file,
      ...(positionOf(db, file, id) ?? { index: 0, line: 0 }),
      reason,
    });
    /** Where each row of the batch comes from, by external id, for the content service's refusals. */
    let sources: Sources = new Map();
    const flush = async () => {
      if (batch.length === 0 && unimported.length === 0) return;
      const result = batch.length
        ? await rpc(bus(options), 'importQuestions', importOperations.importQuestions, { questions: batch })
        : undefined;
      for (const refused of result?.refused ?? []) {
        const source = sources.get(refused.external_id);
        if (source) unimported.push(malformed(source.file, source.id, `${source.field}: ${refused.reason}`));
      }
      transaction(db, () => {
        for (const kind of ['questions', 'solutions', 'comments'] as const) {
          addCounter(db, `${kind}.created`, result?.[kind].created ?? 0);
          addCounter(db, `${kind}.skipped`, result?.[kind].skipped ?? 0);
        }
        for (const m of unimported) insertMalformed.run(m.file, m.index, m.line, m.reason);
        setMeta(db, 'questions:last', String(batchLast));
      });
      done += questionsRead;
      progress('questions', done, total);
      batch = [];
      bytes = 0;
      questionsRead = 0;
      unimported = [];
      sources = new Map();
    };
    const posts = dumpFiles.posts.file;
    const commentsFile = dumpFiles.comments.file;
    /** A question with its answers and comments as importQuestions takes it, without what `importable` refuses. */
    const questionItem = (q: Row<'posts'>, importable: Importable, from: Sources): ImportedQuestion => {
      from.set(ext('post', q.Id), { file: posts, id: q.Id, field: 'Body' });
      const answers = (answersOf.all(q.Id) as Array<{ row: string }>)
        .map((a) => JSON.parse(a.row) as Row<'posts'>)
        .filter((a) => importable(posts, a.Id, 'Body', a.Body));
      for (const a of answers) from.set(ext('post', a.Id), { file: posts, id: a.Id, field: 'Body' });
      const comments = [q, ...answers].flatMap((post) =>
        (commentsOf.all(post.Id) as Array<{ row: string }>).flatMap((c) => {
          const comment = JSON.parse(c.row) as Row<'comments'>;
          // Comments are plain text in a dump.
          const description = `<p>${escapeHtml(comment.Text)}</p>`;
          if (!importable(commentsFile, comment.Id, 'Text', description)) return [];
          from.set(ext('comment', comment.Id), { file: commentsFile, id: comment.Id, field: 'Text' });
          return [
            {
              external_id: ext('comment', comment.Id),
              author_id: author(comment.UserId),
              description,
              created: comment.CreationDate,
              upvote_count: Math.max(0, comment.Score ?? 0),
              solution_external_id: post === q ? null : ext('post', post.Id),
            },
          ];
        }),
      );
      return {
        external_id: ext('post', q.Id),
        author_id: author(q.OwnerUserId),
        title: q.Title ?? '',
        description: q.Body,
        language,
        tags: q.Tags,
        created: q.CreationDate,
        updated: iso(q.LastEditDate) ?? null,
        last_activity: iso(q.LastActivityDate) ?? null,
        view_count: q.ViewCount ?? 0,
        upvote_count: voteOf(q.Id).up,
        solutions: answers.map((a) => {
          const v = voteOf(a.Id);
          // Accept votes carry only the day: never before the answer itself.
          const accepted = q.AcceptedAnswerId === a.Id ? (v.accepted && v.accepted > a.CreationDate ? v.accepted : a.CreationDate) : null;
          return {
            external_id: ext('post', a.Id),
            author_id: author(a.OwnerUserId),
            description: a.Body,
            created: a.CreationDate,
            updated: iso(a.LastEditDate) ?? null,
            upvote_count: v.up,
            downvote_count: v.down,
            accepted,
          };
        }),
        comments,
      };
    };
    for (;;) {
      const rows = page.all(last) as Array<{ id: number; row: string }>;
      if (rows.length === 0) break;
      for (const { id, row } of rows) {
        const q = JSON.parse(row) as Row<'posts'>;
        // What of this question cannot be imported, and where what is sent comes from: they join
        // the batch with the question (after a flush of the batch before it).
        const reports: Malformed[] = [];
        const from: Sources = new Map();
        const importable: Importable = (file, rowId, field, html) => {
          if (html.length <= IMPORTED_HTML_MAX_CHARS) return true;
          reports.push(malformed(file, rowId, `${field}: longer than ${IMPORTED_HTML_MAX_CHARS} characters`));
          return false;
        };
        // Without its question, nothing of it is imported (its answers and comments are not counted).
        const item = importable(posts, q.Id, 'Body', q.Body) ? questionItem(q, importable, from) : undefined;
        const size = item ? JSON.stringify(item).length : 0;
        if (item && batch.length && (bytes + size > batchBytes || batch.length >= 100)) await flush();
        if (item) {
          batch.push(item);
          bytes += size;
        }
        unimported.push(...reports);
        for (const [external, source] of from) sources.set(external, source);
        batchLast = id;
        questionsRead++;
      }
      last = rows[rows.length - 1].id;
    }
    await flush();
    setMeta(db, 'done:questions', '1');
  }
  lap('questions');

  // Tag links: tags that occur together on at least 3 questions, and on at least a fifth of the rarer tag's questions.
  if (!getMeta(db, 'done:tag-links')) {
    const pairs = db
      .prepare(
        `with n as (select tag, count(*) as n from question_tags group by tag)
         select a.tag as label, b.tag as linked_label
         from question_tags a join question_tags b on a.question_id = b.question_id and a.tag < b.tag
         join n na on na.tag = a.tag join n nb on nb.tag = b.tag
         group by a.tag, b.tag, na.n, nb.n
         having count(*) >= 3 and count(*) * 5 >= min(na.n, nb.n)
         order by a.tag, b.tag`,
      )
      .all() as Array<{ label: string; linked_label: string }>;
    for (let i = 0; i < pairs.length; i += 1000) {
      const result = await rpc(bus(options), 'importTagLinks', importOperations.importTagLinks, { links: pairs.slice(i, i + 1000) });
      addCounter(db, 'tagLinks.created', result.created);
      addCounter(db, 'tagLinks.skipped', result.skipped);
    }
    progress('tag links', pairs.length, pairs.length);
    setMeta(db, 'done:tag-links', '1');
  }
  lap('tag links');

  // Duplicate and related links between questions.
  if (!getMeta(db, 'done:links')) {
    const page = db.prepare('select id, post_id, related_id, type from links where id > ? and type in (?, ?) order by id limit 1000');
    let last = 0;
    for (;;) {
      const rows = page.all(last, LinkType.duplicate, LinkType.related) as Array<{
        id: number;
        post_id: number;
        related_id: number;
        type: number;
      }>;
      if (rows.length === 0) break;
      const result = await rpc(bus(options), 'importQuestionLinks', importOperations.importQuestionLinks, {
        links: rows.map((l) => ({
          question_external_id: ext('post', l.post_id),
          linked_external_id: ext('post', l.related_id),
          kind: l.type === LinkType.duplicate ? ('duplicate' as const) : ('related' as const),
        })),
      });
      addCounter(db, 'questionLinks.created', result.created);
      addCounter(db, 'questionLinks.skipped', result.skipped);
      addCounter(db, 'questionLinks.unresolved', result.unresolved);
      last = rows[rows.length - 1].id;
    }
    progress('question links', 1, 1);
    setMeta(db, 'done:links', '1');
  }
  lap('question links');

  const counts = (name: string): Counts => ({ created: counter(db, `${name}.created`), skipped: counter(db, `${name}.skipped`) });
  const summary: ImportSummary = {
    site,
    resumed,
    seconds: (Date.now() - started) / 1000,
    users: counts('users'),
    tags: counts('tags'),
    questions: counts('questions'),
    solutions: counts('solutions'),
    comments: counts('comments'),
    tagLinks: counts('tagLinks'),
    questionLinks: { ...counts('questionLinks'), unresolved: counter(db, 'questionLinks.unresolved') },
    orphans: {
      answers: scalar(db, 'select count(*) as n from answers where parent_id not in (select id from questions)'),
      comments: scalar(
        db,
        'select count(*) as n from comments where post_id not in (select id from questions) and post_id not in (select a.id from answers a join questions q on q.id = a.parent_id)',
      ),
    },
    phases,
    malformed: {
      count: scalar(db, 'select count(*) as n from malformed'),
      rows: (
        db.prepare('select file, idx as "index", line, reason from malformed order by file, idx limit 100').all() as unknown as Malformed[]
      ).map((m) => ({ ...m })),
    },
  };
  db.close();
  // Finished: the next run starts from the beginning (and, idempotent, creates nothing twice).
  removeStage(stateFile);
  return summary;
}

const bus = (options: ImportOptions) => options.bus;
const scalar = (db: Stage, query: string) => Number((db.prepare(query).get() as { n: number }).n);
const count = (db: Stage, table: string) => scalar(db, `select count(*) as n from ${table}`);

export { DumpError };

/** The summary as the command prints it. */
export function formatSummary(s: ImportSummary): string {
  const line = (name: string, c: Counts, extra = '') =>
    `  ${name.padEnd(15)} ${String(c.created).padStart(7)} created ${String(c.skipped).padStart(7)} skipped${extra}`;
  const out = [
    `Imported Stack Exchange site "${s.site}" in ${s.seconds.toFixed(1)} s${s.resumed ? ' (resumed from a checkpoint)' : ''}:`,
    line('users', s.users),
    line('tags', s.tags),
    line('questions', s.questions),
    line('solutions', s.solutions),
    line('comments', s.comments),
    line('tag links', s.tagLinks),
    line('question links', s.questionLinks, `, ${s.questionLinks.unresolved} not resolved (a post that is not an imported question)`),
    `  not imported: ${s.orphans.answers} answers without their question, ${s.orphans.comments} comments on posts that are not imported`,
    `  time per phase: ${Object.entries(s.phases)
      .map(([name, seconds]) => `${name} ${seconds.toFixed(1)} s`)
      .join(', ')}`,
    `  malformed rows skipped: ${s.malformed.count}`,
  ];
  for (const m of s.malformed.rows) out.push(`    ${m.file} row ${m.index} (line ${m.line}): ${m.reason}`);
  if (s.malformed.count > s.malformed.rows.length) out.push(`    … and ${s.malformed.count - s.malformed.rows.length} more`);
  return out.join('\n');
}

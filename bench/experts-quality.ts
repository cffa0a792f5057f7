// Expert search quality on the beer Stack Exchange site: the author of a question's accepted answer
// (when not the poser) is the one relevant expert, found with the question's title and body. The
// site is replayed in time order into a search index (the search service's own store and event
// handlers) and asked through the same function POST /search/experts runs.
//
//   incremental: every such question, asked with the index built from everything before it
//   80/20:       the first 80% of the questions (with their answers) known; each later such
//                question a query (the protocol of ../shared/data/README.md: 82 queries)
//
// Beside it: popularity (users by how many answers they wrote) and BM25 over the text each user
// wrote in their answers. Run: pnpm bench:experts-quality
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { EventEnvelope, EventSubject } from '@kn/contracts';
import { dumpFiles, parseRow, readRows, VoteType } from '@kn/stackexchange';
import { sharedData } from '@kn/testing';
import { findExperts, ranking } from '../services/search/src/domain/experts.ts';
import { type IndexHandler, indexHandlers } from '../services/search/src/local/events.ts';
import { SearchStore } from '../services/search/src/local/store.ts';
import { indexWords } from '../services/search/src/words.ts';
import { report } from './lib.ts';

const dir = sharedData('stackexchange-beer');
type Post = {
  id: number;
  type: number;
  parent?: number;
  accepted?: number;
  time: number;
  owner?: number;
  title: string;
  text: string;
  tags: string[];
};
const posts = new Map<number, Post>();
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
for await (const raw of readRows(path.join(dir, dumpFiles.posts.file), dumpFiles.posts.root)) {
  const parsed = parseRow('posts', raw);
  if (!parsed.ok) continue;
  const r = parsed.row;
  posts.set(r.Id, {
    id: r.Id,
    type: r.PostTypeId,
    parent: r.ParentId,
    accepted: r.AcceptedAnswerId,
    time: new Date(r.CreationDate).getTime(),
    owner: r.OwnerUserId,
    title: r.Title ?? '',
    text: text(r.Body),
    tags: r.Tags,
  });
}
const upvotes: Array<{ post: number; time: number }> = [];
for await (const raw of readRows(path.join(dir, dumpFiles.votes.file), dumpFiles.votes.root)) {
  const parsed = parseRow('votes', raw);
  if (parsed.ok && parsed.row.VoteTypeId === VoteType.up && parsed.row.CreationDate)
    upvotes.push({ post: parsed.row.PostId, time: new Date(parsed.row.CreationDate).getTime() });
}

const questions = [...posts.values()].filter((p) => p.type === 1 && p.owner !== undefined).sort((a, b) => a.time - b.time);
const answers = [...posts.values()].filter((p) => p.type === 2 && p.owner !== undefined && posts.get(p.parent ?? -1)?.type === 1);
const answersOf = new Map<number, Post[]>();
for (const a of answers) answersOf.set(a.parent!, [...(answersOf.get(a.parent!) ?? []), a]);
/** The relevant expert of a question: its accepted answer's author, when not the poser. */
const expertOf = (q: Post) => {
  const accepted = q.accepted === undefined ? undefined : posts.get(q.accepted);
  return accepted?.owner !== undefined && accepted.owner !== q.owner && accepted.parent === q.id ? accepted.owner : undefined;
};

/** Feeds events into a store as the search service's projector does. */
function apply(store: SearchStore, subject: EventSubject, data: unknown) {
  const handler = indexHandlers[subject] as IndexHandler<EventSubject> | undefined;
  handler?.(store, { id: '', subject, occurred_at: '', actor_id: null, data } as EventEnvelope);
}
const iso = (ms: number) => new Date(ms).toISOString();
function addQuestion(store: SearchStore, q: Post, knownTags: Set<string>) {
  for (const tag of q.tags)
    if (!knownTags.has(tag)) {
      knownTags.add(tag);
      apply(store, 'content.tag.created.v1', { tag: { label: tag, excluded_from_suggestions: false } });
    }
  apply(store, 'content.question.published.v1', {
    question: {
      id: q.id,
      author_id: q.owner,
      language: 'en',
      title: q.title,
      description_text: q.text,
      tags: q.tags.map((label) => ({ label })),
      category: null,
      knowledge_space: null,
      is_published: true,
      is_deleted: false,
      published: iso(q.time),
    },
    followers: [],
  });
}
function addAnswer(store: SearchStore, a: Post, votes: number) {
  const q = posts.get(a.parent!)!;
  apply(store, 'content.solution.published.v1', {
    solution: {
      id: a.id,
      question_id: a.parent,
      author_id: a.owner,
      text: a.text,
      is_published: true,
      is_deleted: false,
      published: iso(a.time),
      created: iso(a.time),
      rating: null,
      rating_count: 0,
      upvote_count: votes,
      accepted_by_question_poser: q.accepted === a.id ? iso(a.time) : null,
    },
  });
}

/** BM25 over the text each user wrote in their answers (k1 1.2, b 0.75), kept as answers come. */
function answerTextRanking() {
  const docs = new Map<number, Map<string, number>>();
  const lengths = new Map<number, number>();
  return {
    add(a: Post) {
      const doc = docs.get(a.owner!) ?? new Map<string, number>();
      const words = indexWords(a.text, 'en');
      for (const w of words) doc.set(w, (doc.get(w) ?? 0) + 1);
      docs.set(a.owner!, doc);
      lengths.set(a.owner!, (lengths.get(a.owner!) ?? 0) + words.length);
    },
    rank(query: string) {
      const words = [...new Set(indexWords(query, 'en'))];
      const df = new Map(words.map((w) => [w, 0]));
      for (const doc of docs.values()) for (const w of words) if (doc.has(w)) df.set(w, df.get(w)! + 1);
      const n = docs.size;
      const avg = [...lengths.values()].reduce((s, l) => s + l, 0) / Math.max(1, n);
      const scored: Array<[number, number]> = [];
      for (const [user, doc] of docs) {
        let s = 0;
        for (const w of words) {
          const f = doc.get(w);
          if (!f) continue;
          const idf = Math.log(1 + (n - df.get(w)! + 0.5) / (df.get(w)! + 0.5));
          s += (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * lengths.get(user)!) / avg));
        }
        if (s > 0) scored.push([user, s]);
      }
      return scored.sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([u]) => u);
    },
  };
}

const popularity = (known: Post[]) => {
  const counts = new Map<number, number>();
  for (const a of known) counts.set(a.owner!, (counts.get(a.owner!) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([u]) => u);
};

type Ranks = Record<string, Array<number | null>>;
const rankOf = (list: number[], wanted: number) => {
  const at = list.indexOf(wanted);
  return at < 0 ? null : at + 1;
};
const metrics = (ranks: Array<number | null>) => ({
  queries: ranks.length,
  MRR: Number((ranks.reduce<number>((s, r) => s + (r ? 1 / r : 0), 0) / ranks.length).toFixed(3)),
  'P@1': Number((ranks.filter((r) => r === 1).length / ranks.length).toFixed(3)),
  'recall@10': Number((ranks.filter((r) => r !== null && r <= 10).length / ranks.length).toFixed(3)),
});

/**
 * Replays the site in time order into a fresh index. Incremental (`known` null): each query
 * question is asked when its time comes. Otherwise only the `known` questions with all their
 * answers and votes are replayed, and the other query questions are asked at the end.
 */
function run(known: Set<number> | null): Ranks {
  const tmp = mkdtempSync(path.join(tmpdir(), 'kn-experts-'));
  const store = new SearchStore(path.join(tmp, 'index.sqlite'));
  const applied = (questionId: number) => known === null || known.has(questionId);
  const events: Array<{ time: number; kind: 'question' | 'answer' | 'vote'; post: Post }> = [
    ...questions.map((post) => ({ time: post.time, kind: 'question' as const, post })),
    ...answers.map((post) => ({ time: post.time, kind: 'answer' as const, post })),
    ...upvotes.filter((v) => posts.get(v.post)?.type === 2).map((v) => ({ time: v.time, kind: 'vote' as const, post: posts.get(v.post)! })),
  ]
    .filter((e) => applied(e.kind === 'question' ? e.post.id : e.post.parent!))
    .sort((a, b) => a.time - b.time || (a.kind === 'question' ? -1 : 1));
  const votes = new Map<number, number>();
  const knownTags = new Set<string>();
  const knownAnswers: Post[] = [];
  const answerText = answerTextRanking();
  const answered = new Set<number>();
  const ranks: Ranks = {
    'expert search (POST /search/experts)': [],
    'expert search, poser excluded': [],
    popularity: [],
    'BM25 over answers': [],
  };
  const ask = (q: Post, expert: number) => {
    const query = `${q.title}\n${q.text}`;
    const found = findExperts(store, { text: query, limit: 10, now: q.time }).experts.map((e) => e.user_id);
    const withoutPoser = findExperts(store, { text: query, limit: 10, now: q.time, exclude: [q.owner!] }).experts.map((e) => e.user_id);
    ranks['expert search (POST /search/experts)']!.push(rankOf(found, expert));
    ranks['expert search, poser excluded']!.push(rankOf(withoutPoser, expert));
    ranks.popularity!.push(rankOf(popularity(knownAnswers).slice(0, 10), expert));
    ranks['BM25 over answers']!.push(rankOf(answerText.rank(query).slice(0, 10), expert));
  };
  for (const e of events)
    store.transaction(() => {
      if (e.kind === 'question') {
        const expert = expertOf(e.post);
        if (known === null && expert !== undefined) ask(e.post, expert);
        addQuestion(store, e.post, knownTags);
      } else if (e.kind === 'answer') {
        addAnswer(store, e.post, votes.get(e.post.id) ?? 0);
        knownAnswers.push(e.post);
        answerText.add(e.post);
        answered.add(e.post.id);
      } else {
        votes.set(e.post.id, (votes.get(e.post.id) ?? 0) + 1);
        if (answered.has(e.post.id)) addAnswer(store, e.post, votes.get(e.post.id)!);
      }
    });
  if (known !== null)
    for (const q of questions) {
      const expert = expertOf(q);
      if (!known.has(q.id) && expert !== undefined) ask(q, expert);
    }
  store.close();
  rmSync(tmp, { recursive: true, force: true });
  return ranks;
}

// TUNE='{"similarWeight":2}' tries other ranking parameters.
Object.assign(ranking, JSON.parse(process.env.TUNE ?? '{}'));
const started = Date.now();
// PROTOCOL=80/20 for a quick run of the second protocol only.
const incremental = process.env.PROTOCOL === '80/20' ? {} : run(null);
const frozen = run(new Set(questions.slice(0, Math.floor(questions.length * 0.8)).map((q) => q.id)));
const rows = [
  ...Object.entries(incremental).map(([method, r]) => ({ protocol: 'incremental', method, ...metrics(r) })),
  ...Object.entries(frozen).map(([method, r]) => ({ protocol: '80/20', method, ...metrics(r) })),
];
report(
  `Expert search on the beer site (${questions.length} questions, ${answers.length} answers), ${((Date.now() - started) / 1000).toFixed(1)} s`,
  'pnpm bench:experts-quality',
  rows,
);

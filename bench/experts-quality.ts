// Expert search quality on a Stack Exchange site (any dump folder): the author of a question's
// accepted answer (when not the poser) is the one relevant expert, found with the question's
// title and body through the ranking POST /search/experts runs. The protocol of
// datasets/README.md: questions in time order, the first 80% with all their answers and votes
// are what the network knows, each later question with such an answer is a query.
//
// The site is loaded three times into fresh indices (the search service's own store and event
// handlers), in three arrival orders: in time order; question by question in a shuffled order (as
// parallel importers deliver); shuffled again with every question, answer and user id renumbered.
// Each load fits its expert model on what it knows (the service's fit, validated on its own latest
// questions), then answers the queries. Beside it, in the same run: popularity (users by how many
// answers they wrote) and BM25 over the text each user wrote in their answers. Routing
// concentration: each query routed to the first ROUTING_EXPERTS, in time order, without and with
// the network's default cap per person and week; the share of routings that reach the ten people
// routed most.
//
// Two dump folders make one network of two communities (the second's ids moved past the first's,
// its times stretched onto the first's period): routing must then tell their topics apart.
//
// ORIGINS=0.5,0.6,0.7,0.8,0.9 runs the protocol at several cut-offs instead (rolling origin: each
// asked with the next tenth of the questions, time order only), for a held-out figure that does not
// rest on one period's few dozen queries.
//
// Run: pnpm bench:experts-quality [<dump folder> [<second dump folder>]] (default: the beer site)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type EventEnvelope, type EventSubject, NETWORK_SETTINGS_DEFAULTS } from '@kn/contracts';
import { dumpFiles, htmlText, parseRow, readRows, VoteType } from '@kn/stackexchange';
import { dataset } from '@kn/testing';
import { handlerOf, indexHandlers } from '../services/search/src/core/events.ts';
import { indexWords } from '../services/search/src/core/words.ts';
import { fitExpertModel } from '../services/search/src/domain/expert-history.ts';
import {
  DEFAULT_WEIGHTS,
  defaultModel,
  type Example,
  type ExpertModel,
  FEATURES,
  fitWeights,
  reciprocalRank,
  weightVector,
} from '../services/search/src/domain/expert-model.ts';
import { type ExpertRanking, expertRanking, rankExperts } from '../services/search/src/domain/experts.ts';
import { type Meaning, semanticWeights, withMeaning } from '../services/search/src/domain/semantic.ts';
import { LocalEvidence, localHistory } from '../services/search/src/local/evidence.ts';
import { SearchStore } from '../services/search/src/local/store.ts';
import { embeddingText } from '../services/search/src/semantic/embeddings.ts';
import { VectorIndex } from '../services/search/src/semantic/vectors.ts';
import { embeddedTexts } from './embedded-texts.ts';
import { report } from './lib.ts';

const dirs = process.argv.length > 2 ? process.argv.slice(2).map((d) => path.resolve(d)) : [dataset('stackexchange-beer')];
const site = dirs.map((d) => path.basename(d).replace(/^stackexchange-/, '')).join(' + ');
const ROUTING_EXPERTS = 10;
const WEEK = 7 * 86_400_000;

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
const upvotes = new Map<number, number[]>();
const acceptedAt = new Map<number, number>();
/**
 * Reads a dump into the maps above. A second dump (`pnpm bench:experts-quality <dump> <dump>`) joins
 * the first as a second community of one network: its post and user ids moved past the first's
 * (OFFSET), its times stretched onto the first's period, so that both ask and answer throughout and
 * routing has to tell the communities' topics apart.
 */
const OFFSET = 10_000_000;
async function readDump(dir: string, index: number, period?: { from: number; to: number }) {
  const id = (n: number | undefined) => (n === undefined ? undefined : n + index * OFFSET);
  const read: Post[] = [];
  for await (const raw of readRows(path.join(dir, dumpFiles.posts.file), dumpFiles.posts.root)) {
    const parsed = parseRow('posts', raw);
    if (!parsed.ok) continue;
    const r = parsed.row;
    read.push({
      id: id(r.Id)!,
      type: r.PostTypeId,
      parent: id(r.ParentId),
      accepted: id(r.AcceptedAnswerId),
      time: Date.parse(r.CreationDate),
      owner: id(r.OwnerUserId),
      title: r.Title ?? '',
      text: htmlText(r.Body),
      tags: r.Tags,
    });
  }
  const own = read.reduce((o, p) => ({ from: Math.min(o.from, p.time), to: Math.max(o.to, p.time) }), { from: Infinity, to: -Infinity });
  const time = (t: number) => (period ? period.from + ((t - own.from) * (period.to - period.from)) / Math.max(1, own.to - own.from) : t);
  for (const p of read) posts.set(p.id, { ...p, time: time(p.time) });
  for await (const raw of readRows(path.join(dir, dumpFiles.votes.file), dumpFiles.votes.root)) {
    const parsed = parseRow('votes', raw);
    if (!parsed.ok || !parsed.row.CreationDate) continue;
    const at = time(Date.parse(parsed.row.CreationDate));
    const post = id(parsed.row.PostId)!;
    if (parsed.row.VoteTypeId === VoteType.up) upvotes.set(post, [...(upvotes.get(post) ?? []), at]);
    if (parsed.row.VoteTypeId === VoteType.accepted) acceptedAt.set(post, at);
  }
  return own;
}
const period = await readDump(dirs[0]!, 0);
for (const [i, dir] of dirs.slice(1).entries()) await readDump(dir, i + 1, period);

const questions = [...posts.values()].filter((p) => p.type === 1 && p.owner !== undefined).sort((a, b) => a.time - b.time || a.id - b.id);
const answersOf = new Map<number, Post[]>();
for (const p of posts.values())
  if (p.type === 2 && p.owner !== undefined && posts.get(p.parent ?? -1)?.type === 1)
    answersOf.set(p.parent!, [...(answersOf.get(p.parent!) ?? []), p]);
for (const list of answersOf.values()) list.sort((a, b) => a.time - b.time || a.id - b.id);
/** The relevant expert of a question: its accepted answer's author, when not the poser. */
const expertOf = (q: Post) => {
  const accepted = q.accepted === undefined ? undefined : posts.get(q.accepted);
  return accepted?.owner !== undefined && accepted.owner !== q.owner && accepted.parent === q.id ? accepted.owner : undefined;
};
/**
 * The protocol at one cut-off: the first `share` of the questions (time order) with all their
 * answers are what the network knows; the questions of the next `span` of them with an expert ask.
 */
function protocolAt(share: number, span = 1) {
  const known = questions.slice(0, Math.floor(questions.length * share));
  const queries = questions.slice(known.length, known.length + Math.ceil(questions.length * span)).filter((q) => expertOf(q) !== undefined);
  const knownAnswers = known.flatMap((q) => answersOf.get(q.id) ?? []);
  const counts = new Map<number, number>();
  for (const a of knownAnswers) counts.set(a.owner!, (counts.get(a.owner!) ?? 0) + 1);
  const popularity = [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([u]) => u);
  const bm25 = answerTextRanking(knownAnswers);
  // Each baseline's ranking of each query, and its rank of the expert.
  const rankings = {
    popularity: queries.map(() => popularity),
    bm25: queries.map((q) => bm25(`${q.title}\n${q.text}`)),
  };
  const ranks = {
    popularity: queries.map((q, i) => rankOf(rankings.popularity[i]!, expertOf(q)!)),
    bm25: queries.map((q, i) => rankOf(rankings.bm25[i]!, expertOf(q)!)),
  };
  return { known, queries, knownAnswers, popularity, rankings, ranks };
}
type Protocol = ReturnType<typeof protocolAt>;

/** A seeded shuffle (mulberry32), so that every run loads the same three ways. */
function shuffled<T>(list: readonly T[], seed: number): T[] {
  let a = seed;
  const random = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const iso = (ms: number) => new Date(ms).toISOString();
/** Feeds an event into a store as the search service's projector does. */
function apply(store: SearchStore, subject: EventSubject, time: number, data: unknown) {
  const handler = handlerOf(indexHandlers, subject);
  handler?.(store, { id: '', subject, occurred_at: iso(time), actor_id: null, data } as EventEnvelope);
}

interface Load {
  name: string;
  /** Questions in the order they arrive; each question's own events stay in time order. */
  order: Post[];
  /** Renumbering of ids (identity for the first two loads). */
  id: (kind: 'post' | 'user', id: number) => number;
}

/** A question's events: itself, then its answers, their upvotes and acceptance, in time order. */
function eventsOf(q: Post) {
  const out: Array<{ time: number; kind: 'question' | 'answer' | 'vote' | 'accept'; post: Post }> = [
    { time: q.time, kind: 'question', post: q },
  ];
  for (const a of answersOf.get(q.id) ?? []) {
    out.push({ time: a.time, kind: 'answer', post: a });
    for (const t of upvotes.get(a.id) ?? []) out.push({ time: Math.max(t, a.time), kind: 'vote', post: a });
    if (q.accepted === a.id) out.push({ time: Math.max(acceptedAt.get(a.id) ?? a.time, a.time), kind: 'accept', post: a });
  }
  return out.sort(
    (x, y) =>
      x.time - y.time ||
      ['question', 'answer', 'vote', 'accept'].indexOf(x.kind) - ['question', 'answer', 'vote', 'accept'].indexOf(y.kind),
  );
}

function load(store: SearchStore, l: Load, known: readonly Post[]) {
  const tags = new Set<string>();
  const votes = new Map<number, number>();
  const accepted = new Set<number>();
  const solution = (a: Post) => ({
    id: l.id('post', a.id),
    question_id: l.id('post', a.parent!),
    author_id: l.id('user', a.owner!),
    text: a.text,
    is_published: true,
    is_deleted: false,
    published: iso(a.time),
    created: iso(a.time),
    rating: null,
    rating_count: 0,
    upvote_count: votes.get(a.id) ?? 0,
    accepted_by_question_poser: accepted.has(a.id) ? iso(Math.max(acceptedAt.get(a.id) ?? a.time, a.time)) : null,
  });
  const all = l.name === 'time order' ? known.flatMap(eventsOf).sort((a, b) => a.time - b.time) : l.order.flatMap(eventsOf);
  for (let i = 0; i < all.length; i += 200)
    store.transaction(() => {
      for (const e of all.slice(i, i + 200)) {
        if (e.kind === 'question') {
          const q = e.post;
          for (const tag of q.tags)
            if (!tags.has(tag)) {
              tags.add(tag);
              apply(store, 'content.tag.created.v1', e.time, { tag: { label: tag, excluded_from_suggestions: false } });
            }
          apply(store, 'content.question.published.v1', e.time, {
            question: {
              id: l.id('post', q.id),
              author_id: l.id('user', q.owner!),
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
        } else {
          if (e.kind === 'vote') votes.set(e.post.id, (votes.get(e.post.id) ?? 0) + 1);
          if (e.kind === 'accept') accepted.add(e.post.id);
          apply(store, 'content.solution.published.v1', e.time, { solution: solution(e.post) });
        }
      }
    });
}

/** BM25 over the text each user wrote in their answers (k1 1.2, b 0.75). */
function answerTextRanking(answers: readonly Post[]) {
  const docs = new Map<number, Map<string, number>>();
  const lengths = new Map<number, number>();
  for (const a of answers) {
    const doc = docs.get(a.owner!) ?? new Map<string, number>();
    const words = indexWords(a.text, 'en');
    for (const w of words) doc.set(w, (doc.get(w) ?? 0) + 1);
    docs.set(a.owner!, doc);
    lengths.set(a.owner!, (lengths.get(a.owner!) ?? 0) + words.length);
  }
  const n = docs.size;
  const avg = [...lengths.values()].reduce((s, l) => s + l, 0) / Math.max(1, n);
  return (query: string) => {
    const words = [...new Set(indexWords(query, 'en'))];
    const df = new Map(words.map((w) => [w, 0]));
    for (const doc of docs.values()) for (const w of words) if (doc.has(w)) df.set(w, df.get(w)! + 1);
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
  };
}

const rankOf = (list: readonly number[], wanted: number) => {
  const at = list.slice(0, 10).indexOf(wanted);
  return at < 0 ? null : at + 1;
};
const metrics = (ranks: Array<number | null>) => ({
  queries: ranks.length,
  MRR: Number((ranks.reduce<number>((s, r) => s + (r ? 1 / r : 0), 0) / ranks.length).toFixed(3)),
  'P@1': Number((ranks.filter((r) => r === 1).length / ranks.length).toFixed(3)),
  'recall@10': Number((ranks.filter((r) => r !== null && r <= 10).length / ranks.length).toFixed(3)),
});

/** Routing concentration: each query (in time order) to the first ROUTING_EXPERTS, skipping people at the weekly cap (0: none). */
function concentration(ranked: ReadonlyArray<{ time: number; users: number[] }>, cap: number) {
  const sent: Array<{ user: number; time: number }> = [];
  const counts = new Map<number, number>();
  for (const q of ranked) {
    const recent = new Map<number, number>();
    for (const s of sent) if (s.time > q.time - WEEK) recent.set(s.user, (recent.get(s.user) ?? 0) + 1);
    const chosen = q.users.filter((u) => cap === 0 || (recent.get(u) ?? 0) < cap).slice(0, ROUTING_EXPERTS);
    for (const u of chosen) {
      sent.push({ user: u, time: q.time });
      counts.set(u, (counts.get(u) ?? 0) + 1);
    }
  }
  const top = [...counts.values()]
    .sort((a, b) => b - a)
    .slice(0, 10)
    .reduce((s, c) => s + c, 0);
  return Number((top / Math.max(1, sent.length)).toFixed(3));
}

async function run(l: Load, { known, queries, popularity }: Protocol) {
  const popularTen = new Set(popularity.slice(0, 10));
  const tmp = mkdtempSync(path.join(tmpdir(), 'kn-experts-'));
  const store = new SearchStore(path.join(tmp, 'index.sqlite'));
  try {
    const started = Date.now();
    load(store, l, known);
    const loaded = Date.now();
    // The questions' embeddings as the service stores them (MEANING=0: none, the words alone).
    const vectors = meanings ? new VectorIndex(meanings.dimensions) : null;
    if (vectors) for (const [id, v] of meanings!.vectors) vectors.put(l.id('post', id), v);
    const meaningOf = (id: number): Meaning | undefined => {
      const query = vectors?.vectorOf(id);
      return query && vectors!.meaning(query);
    };
    const model = await fitExpertModel({ ...(await localHistory(store, Date.now())), routings: [] }, undefined, ranking, meaningOf);
    const fitted = Date.now();
    const lexical = new LocalEvidence(store);
    const evidenceOf = (q: Post) => withMeaning(lexical, meaningOf(l.id('post', q.id)), semanticWeights.experts);
    const back = new Map<number, number>();
    for (const p of posts.values()) if (p.owner !== undefined) back.set(l.id('user', p.owner), p.owner);
    const ask = async (m: ExpertModel, q: Post, exclude: boolean, limit: number) =>
      (
        await rankExperts(
          evidenceOf(q),
          { text: `${q.title}\n${q.text}`, limit, exclude: exclude ? [l.id('user', q.owner!)] : [], asker: l.id('user', q.owner!) },
          { weights: weightVector(m), responses: async () => new Map(), ranking },
        )
      ).experts.map((e) => back.get(e.user_id) ?? -e.user_id);
    const ranks = { model: [] as Array<number | null>, defaults: [] as Array<number | null> };
    let unanswered = 0;
    const routed: Array<{ time: number; users: number[] }> = [];
    const tops: string[] = [];
    // The queries as examples of the model family, for the diagnostic below (never for a result).
    const asExamples: Example[] = [];
    for (const q of queries) {
      const found = await ask(model, q, false, 10);
      if (!found.length) unanswered++;
      ranks.model.push(rankOf(found, expertOf(q)!));
      ranks.defaults.push(rankOf(await ask(defaultModel(), q, false, 10), expertOf(q)!));
      tops.push(found.join(','));
      routed.push({ time: q.time, users: await ask(model, q, true, 3 * ROUTING_EXPERTS + 10) });
      const all = await rankExperts(
        evidenceOf(q),
        { text: `${q.title}\n${q.text}`, limit: 0, asker: l.id('user', q.owner!) },
        { weights: weightVector(model), responses: async () => new Map(), ranking },
      );
      asExamples.push({
        rows: all.rows,
        candidates: all.candidates.length,
        relevant: all.candidates.indexOf(l.id('user', expertOf(q)!)),
        popularityRank: 0,
      });
    }
    // Weights chosen on the queries themselves (likelihood, then coordinate ascent on their MRR):
    // about how far this form of ranking could go on them at all. A diagnostic, never a result.
    const mrrOf = (w: ArrayLike<number>) => asExamples.reduce((sum, e) => sum + reciprocalRank(e, w), 0) / asExamples.length;
    let best: Float64Array = [
      weightVector(model),
      weightVector({ weights: DEFAULT_WEIGHTS }),
      await fitWeights(asExamples, weightVector({ weights: DEFAULT_WEIGHTS }), 1),
    ].reduce((a, b) => (mrrOf(b) > mrrOf(a) ? b : a));
    for (let round = 0; round < 4; round++)
      for (let i = 0; i < FEATURES.length; i++)
        for (const step of [-1, -0.3, -0.1, 0.1, 0.3, 1]) {
          const next = Float64Array.from(best);
          next[i]! += step;
          if (mrrOf(next) > mrrOf(best)) best = next;
        }
    const ceilingMrr = Number(mrrOf(best).toFixed(3));
    return {
      model,
      ranks,
      tops,
      ceilingMrr,
      inPool: asExamples.filter((e) => e.relevant >= 0).length,
      unanswered,
      overlap: Number(
        (
          routed.reduce((sum, r) => sum + r.users.slice(0, ROUTING_EXPERTS).filter((u) => popularTen.has(u)).length, 0) / routed.length
        ).toFixed(2),
      ),
      concentration: {
        uncapped: concentration(routed, 0),
        capped: concentration(routed, NETWORK_SETTINGS_DEFAULTS.routings_per_expert_per_week),
      },
      seconds: { load: (loaded - started) / 1000, fit: (fitted - loaded) / 1000, queries: (Date.now() - fitted) / 1000 },
    };
  } finally {
    store.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

const renumber = (() => {
  const maps = { post: new Map<number, number>(), user: new Map<number, number>() };
  const ids = {
    post: shuffled([...posts.keys()], 3),
    user: shuffled([...new Set([...posts.values()].flatMap((p) => (p.owner === undefined ? [] : [p.owner])))], 4),
  };
  for (const [i, id] of ids.post.entries()) maps.post.set(id, 1_000_000 + i);
  for (const [i, id] of ids.user.entries()) maps.user.set(id, 2_000_000 + i);
  return (kind: 'post' | 'user', id: number) => maps[kind].get(id) ?? id;
})();
// The meaning of every question (title and body, as the service embeds them), by the set-up's model;
// cached on disk between runs (bench/embedded-texts.ts). MEANING=0 ranks by the words alone.
const meanings =
  process.env.MEANING === '0'
    ? null
    : await embeddedTexts([...posts.values()].filter((p) => p.type === 1).map((p) => ({ id: p.id, text: embeddingText(p.title, p.text) })));
// TUNE='{"neighbours":50}' tries other ranking parameters; LOADS=1 loads once (quick).
const ranking: ExpertRanking = { ...expertRanking, ...JSON.parse(process.env.TUNE ?? '{}') };
const started = Date.now();

// ORIGINS=0.5,0.6,0.7,0.8,0.9: the same protocol at several cut-offs, each asking with the next tenth
// of the questions (rolling origin, time order only): one 80/20 split of a small site is a few dozen
// queries, and which people answer changes from one period to the next.
async function rollingOrigins(origins: number[]) {
  const rows: Record<string, unknown>[] = [];
  // Reciprocal ranks summed over the queries of every cut-off, for the pooled figures.
  const pooled = { queries: 0, model: 0, popularity: 0, bm25: 0 };
  for (const origin of origins) {
    const p = protocolAt(origin, 0.1);
    const r = await run({ name: 'time order', order: p.known, id: (_kind, id) => id }, p);
    const model = metrics(r.ranks.model).MRR;
    const popularity = metrics(p.ranks.popularity).MRR;
    const bm25 = metrics(p.ranks.bm25).MRR;
    const n = p.queries.length;
    pooled.queries += n;
    pooled.model += model * n;
    pooled.popularity += popularity * n;
    pooled.bm25 += bm25 * n;
    rows.push({
      'cut-off': origin,
      known: p.known.length,
      queries: p.queries.length,
      'learned model': model,
      'default weights': metrics(r.ranks.defaults).MRR,
      popularity,
      'BM25 over answers': bm25,
      'vs better baseline': Number((model / Math.max(popularity, bm25)).toFixed(2)),
    });
  }
  report(
    `Expert search on ${site} at ${rows.length} cut-offs, each asked with the next tenth of its ${questions.length} questions (MRR), ${((Date.now() - started) / 1000).toFixed(1)} s`,
    `ORIGINS=${origins.join(',')} pnpm bench:experts-quality ${process.argv.slice(2).join(' ')}`.trim(),
    rows,
  );
  const mrr = (sum: number) => (sum / pooled.queries).toFixed(3);
  console.log(
    `all ${pooled.queries} queries: learned model MRR ${mrr(pooled.model)}, popularity ${mrr(pooled.popularity)}, BM25 over answers ${mrr(pooled.bm25)}; ${(pooled.model / Math.max(pooled.popularity, pooled.bm25)).toFixed(2)} times the better baseline`,
  );
}

/** The protocol (top of this file) at 80/20, loaded three ways. */
async function eightyTwenty() {
  const protocol = protocolAt(0.8);
  const { known, queries, knownAnswers, rankings, ranks } = protocol;
  const loads: Load[] = [
    { name: 'time order', order: known, id: (_kind, id) => id },
    { name: 'shuffled', order: shuffled(known, 1), id: (_kind, id) => id },
    { name: 'shuffled, ids renumbered', order: shuffled(known, 2), id: renumber },
  ];

  loads.splice(Number(process.env.LOADS ?? 3));
  const results: Array<{ load: string } & Awaited<ReturnType<typeof run>>> = [];
  for (const l of loads) results.push({ load: l.name, ...(await run(l, protocol)) });
  const first = results[0]!;
  const better = Math.max(metrics(ranks.popularity).MRR, metrics(ranks.bm25).MRR);
  const mrrs = results.map((r) => metrics(r.ranks.model).MRR);
  const concentrationOf = (ranks: number[][]) =>
    concentration(
      queries.map((q, i) => ({ time: q.time, users: ranks[i]! })),
      0,
    );
  const rows = [
    ...results.map((r) => ({
      method: `expert search, learned model (${r.load})`,
      ...metrics(r.ranks.model),
      'vs better baseline': Number((metrics(r.ranks.model).MRR / better).toFixed(2)),
      'top-10 share uncapped': r.concentration.uncapped,
      'top-10 share capped': r.concentration.capped,
      'popular in top 10': r.overlap,
    })),
    {
      method: 'expert search, default weights (time order)',
      ...metrics(first.ranks.defaults),
      'vs better baseline': Number((metrics(first.ranks.defaults).MRR / better).toFixed(2)),
    },
    {
      method: 'popularity',
      ...metrics(ranks.popularity),
      'top-10 share uncapped': concentrationOf(rankings.popularity),
    },
    {
      method: 'BM25 over answers',
      ...metrics(ranks.bm25),
      'top-10 share uncapped': concentrationOf(rankings.bm25),
    },
  ];
  report(
    `Expert search on ${site} (${questions.length} questions; ${known.length} known with ${knownAnswers.length} answers; ${queries.length} queries), ${((Date.now() - started) / 1000).toFixed(1)} s`,
    `pnpm bench:experts-quality ${process.argv.slice(2).join(' ')}`.trim(),
    rows,
  );
  const same = queries.filter((_, i) => results.every((r) => r.tops[i] === first.tops[i])).length;
  console.log(
    `diagnostic, not a result: weights chosen on the queries themselves (about the ceiling of this ranking's form) reach MRR ${first.ceilingMrr}`,
  );
  console.log(`queries without any expert (no tag of the network found in their text): ${first.unanswered} of ${queries.length}`);
  // What any ranking of these candidates can reach: the expert must have answered before the cut-off,
  // and must be among the people the ranking scores.
  const answeredBefore = new Set(knownAnswers.map((a) => a.owner!));
  console.log(
    `reachable: the expert answered before the cut-off for ${queries.filter((q) => answeredBefore.has(expertOf(q)!)).length} of ${queries.length} queries, and is among the candidates for ${first.inPool}`,
  );
  console.log(
    `three loads: MRR ${mrrs.join(' / ')}, spread ${(Math.max(...mrrs) - Math.min(...mrrs)).toFixed(3)}; identical top ten for ${same} of ${queries.length} queries`,
  );
  for (const r of results)
    console.log(
      `${r.load}: load ${r.seconds.load} s, fit ${r.seconds.fit} s, queries ${r.seconds.queries} s; model ${r.model.status} on ${r.model.questions} questions, validation ${JSON.stringify(r.model.validation)}; weights ${FEATURES.map((f) => `${f} ${r.model.weights[f]}`).join(', ')}`,
    );
}

if (process.env.ORIGINS) await rollingOrigins(process.env.ORIGINS.split(',').map(Number));
else await eightyTwenty();

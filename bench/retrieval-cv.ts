// The parameters of question search and similar questions, each chosen by two-fold cross-validation
// on SemEval-2016 task 3 train-part2 (../shared/data/README.md): the 67 original questions are cut
// into two halves (by a hash of their id); every parameter setting of a grid is scored on one half
// and the best is reported on the other, and the other way round. Only held-out figures are printed.
// The chosen settings are then checked, unchanged, on the duplicate links of two Stack Exchange
// sites (beer, quantumcomputing): the original among the first 10 for the duplicate's title.
//
// Protocol (the one `GET /search/questions-similar` and `GET /questions?query=` answer): the 670
// related questions (subject, body and comments) are indexed by the search service's own store and
// event handlers; each original question (subject and body, at most 1,000 characters) asks, and its
// 10 related questions are ranked by the answer (those not answered last, ties by a hash of the id).
// Run: pnpm bench:retrieval-cv

import { languages, useStemmers } from '@kn/similarity';
import snowball from 'snowball-stemmers';
import { formWeights, matchQuestions, similarityBlend } from '../services/search/src/domain/match.ts';
import { similarityOfScore, similarParameters, similarTextRequest, similarTo } from '../services/search/src/domain/similarity.ts';
import { unitFieldWeights } from '../services/search/src/local/postings.ts';
import type { SearchStore } from '../services/search/src/local/store.ts';
import { report } from './lib.ts';
import {
  averagePrecision,
  type BenchQuestion,
  type Original,
  reciprocalRank,
  semevalOriginals,
  stackExchangeSite,
  storeOf,
  tieBreak,
} from './retrieval-data.ts';

// bench/stemmers.ts compares stemmer libraries: STEMMERS=snowball-stemmers runs with the other one.
if (process.env.STEMMERS === 'snowball-stemmers') {
  const names = { en: 'english', de: 'german', fr: 'french', es: 'spanish', it: 'italian', pt: 'portuguese' } as const;
  useStemmers(
    Object.fromEntries(
      languages.map((l) => {
        const stemmer = snowball.newStemmer(names[l]);
        return [l, (w: string) => stemmer.stem(w)];
      }),
    ) as Parameters<typeof useStemmers>[0],
  );
}

const originals = semevalOriginals();
const numeric = new Map<string, number>();
const relatedQuestions: BenchQuestion[] = [];
for (const o of originals)
  for (const r of o.related) {
    if (numeric.has(r.id)) continue;
    numeric.set(r.id, numeric.size + 1);
    relatedQuestions.push({ id: numeric.get(r.id)!, title: r.subject, body: r.body, tags: [], answers: [], comments: r.comments });
  }

const asked = (o: Original) => `${o.subject}\n${o.body}`.slice(0, 1000);
const matchRequest = (query: string, limit: number) => ({
  query,
  operator: 'OR' as const,
  fields: ['title', 'description', 'tags', 'solutions', 'comments', 'attachments'] as const,
  stop_languages: ['en'],
  filter: { tag_operator: 'AND' as const, include_uncategorized: false, include_deleted: false },
  offset: 0,
  limit,
});

type Task = 'similar' | 'query';
/** Scores of an original's related questions by the task's answer. */
function scoresOf(store: SearchStore, task: Task, o: Original): Map<number, number> {
  // As the search service's handler answers GET /search/questions-similar.
  if (task === 'similar' && similarParameters.textRanking === 'search') {
    const { items } = matchQuestions(store, similarTextRequest(asked(o), 'en', 1000));
    return new Map(items.map((i) => [i.id, similarityOfScore(i.score)]));
  }
  if (task === 'similar') return new Map(similarTo(store, { text: asked(o), language: 'en' }, 1000, true).map((s) => [s.id, s.score]));
  const { items } = matchQuestions(store, { ...matchRequest(asked(o), 1000), fields: [...matchRequest('', 0).fields] });
  return new Map(items.map((i) => [i.id, i.score]));
}

function evaluate(store: SearchStore, task: Task, half: readonly Original[]) {
  let map = 0;
  let mrr = 0;
  for (const o of half) {
    const scores = scoresOf(store, task, o);
    const ranked = o.related
      .map((r) => ({ r, s: scores.get(numeric.get(r.id)!) ?? -1, t: tieBreak(r.id) }))
      .sort((x, y) => y.s - x.s || x.t - y.t)
      .map(({ r }) => r.relevant);
    map += averagePrecision(ranked);
    mrr += reciprocalRank(ranked);
  }
  return { MAP: (100 * map) / half.length, MRR: (100 * mrr) / half.length };
}

// The two halves: by a hash of the original's id, so that neither half follows the file's order.
const halves: [Original[], Original[]] = [[], []];
for (const o of originals) halves[tieBreak(o.id) % 2]!.push(o);

/** A parameter setting: the values it changes (unit weights are indexed: another index is built for them). */
interface Setting {
  unit?: { title: number; comments: number };
  feedback?: { documents: number; weight: number };
  textRanking?: 'search' | 'cosine';
  stem?: number;
  blend?: { weight: number; depth: number; topics: number };
}
const describe = (s: Setting) =>
  Object.entries(s)
    .map(([k, v]) => `${k} ${typeof v === 'object' ? Object.values(v).join('/') : v}`)
    .join(', ');

const defaults = {
  unit: { ...unitFieldWeights },
  forms: { ...formWeights },
  blend: { ...similarityBlend },
  similar: structuredClone(similarParameters),
};
function apply(...settings: Setting[]) {
  Object.assign(unitFieldWeights, defaults.unit);
  Object.assign(formWeights, defaults.forms);
  Object.assign(similarityBlend, defaults.blend);
  Object.assign(similarParameters, structuredClone(defaults.similar));
  for (const s of settings) {
    if (s.unit) Object.assign(unitFieldWeights, s.unit);
    if (s.feedback) similarParameters.feedback = { ...s.feedback };
    if (s.textRanking) similarParameters.textRanking = s.textRanking;
    if (s.stem !== undefined) formWeights.stem = s.stem;
    if (s.blend) Object.assign(similarityBlend, s.blend);
  }
}
const stores = new Map<string, SearchStore>();
/** The index for the unit weights in force (built once per weights). */
function store(): SearchStore {
  const key = JSON.stringify(unitFieldWeights);
  if (!stores.has(key)) stores.set(key, storeOf(relatedQuestions));
  return stores.get(key)!;
}

const product = <T>(...lists: T[][]): T[][] => lists.reduce<T[][]>((acc, list) => acc.flatMap((a) => list.map((x) => [...a, x])), [[]]);
const similarGrid: Setting[] = product<Setting>(
  [1, 2, 3]
    .map((title) => ({ unit: { title, comments: 0.25 } }))
    .flatMap((s) => [0.1, 0.25, 0.5].map((c) => ({ unit: { ...s.unit!, comments: c } }))),
  [{ feedback: { documents: 0, weight: 0 } }, { feedback: { documents: 5, weight: 0.5 } }],
  [{ textRanking: 'cosine' as const }],
).map((parts) => Object.assign({}, ...parts));
const queryGrid: Setting[] = product<Setting>(
  [0.3, 0.5, 0.7].map((stem) => ({ stem })),
  product([0.15, 0.3, 0.6, 1, 2], [20, 50, 100], [0, 0.5, 1, 2, 4]).map(([weight, depth, topics]) => ({
    blend: { weight: weight!, depth: depth!, topics: topics! },
  })),
).map((parts) => Object.assign({}, ...parts));

/** Scores of every setting of a grid (on top of `base`) on both halves. */
function scoreGrid(task: Task, grid: Setting[], base: Setting = {}) {
  return grid.map((setting) => {
    apply(base, setting);
    const s = store();
    return { setting, result: halves.map((half) => evaluate(s, task, half)) };
  });
}
/** MAP points within which settings count as equally good: the cheaper one (a smaller blend depth) is chosen. */
const TOLERANCE = 0.1;
/**
 * The best setting on a half (or on the whole file: `half` null): of those within TOLERANCE of the
 * best MAP, the one with the smallest blend depth (each blended question costs a read of its
 * words per query), then the best MAP, then the first.
 */
const bestOn = (scores: ReturnType<typeof scoreGrid>, half: number | null) => {
  const map = (r: (typeof scores)[number]) =>
    half === null
      ? (r.result[0]!.MAP * halves[0]!.length + r.result[1]!.MAP * halves[1]!.length) / (halves[0]!.length + halves[1]!.length)
      : r.result[half]!.MAP;
  const top = Math.max(...scores.map(map));
  const depth = (r: (typeof scores)[number]) => r.setting.blend?.depth ?? 0;
  return scores
    .filter((r) => map(r) >= top - TOLERANCE)
    .reduce((a, b) => (depth(b) < depth(a) || (depth(b) === depth(a) && map(b) > map(a) + 1e-9) ? b : a));
};

// Each fold, on the training half: the unit and feedback (by the unit cosine), then the query
// parameters on top of them; both reported on the held-out half. A text's similar questions can be
// ranked two ways (similarParameters.textRanking), each with its own parameters chosen on the
// training half; which way is better is a choice between two pipelines, so it is made on their
// held-out figures (comparing them on the half they were tuned on favours the one with more knobs).
const similarScores = scoreGrid('similar', similarGrid);
const rows: Record<string, unknown>[] = [];
/** The unit, feedback and query choices on the whole file (half null) or on one half. */
function choose(half: number | null) {
  const unit = bestOn(similarScores, half);
  const query = bestOn(scoreGrid('query', queryGrid, unit.setting), half);
  return { unit, query };
}
const heldOut: Record<'cosine' | 'search', number[]> = { cosine: [], search: [] };
for (const held of [0, 1]) {
  const { unit, query } = choose(1 - held);
  const [search] = scoreGrid('similar', [{ textRanking: 'search' }], { ...unit.setting, ...query.setting });
  heldOut.cosine.push(unit.result[held]!.MAP);
  heldOut.search.push(search!.result[held]!.MAP);
  for (const [task, best] of [
    ['GET /search/questions-similar, the unit cosine', unit],
    [
      'GET /search/questions-similar, question search',
      { ...search!, setting: { ...unit.setting, ...query.setting, textRanking: 'search' } },
    ],
    ['GET /questions?query=', query],
  ] as const)
    rows.push({
      task,
      'held-out half': held + 1,
      questions: halves[held]!.length,
      'chosen on the other half': describe(best.setting),
      MAP: best.result[held]!.MAP.toFixed(2),
      MRR: best.result[held]!.MRR.toFixed(2),
    });
}
report(
  `Two-fold cross-validation on SemEval-2016 task 3 train-part2 (held-out halves only; grids of ${similarGrid.length} similar-question and ${queryGrid.length} query settings)`,
  'pnpm bench:retrieval-cv',
  rows,
);
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const textRanking = mean(heldOut.search) > mean(heldOut.cosine) ? 'search' : 'cosine';
console.log(
  `A text's similar questions: held-out MAP ${heldOut.cosine.map((m) => m.toFixed(2)).join('/')} by the unit cosine, ${heldOut.search.map((m) => m.toFixed(2)).join('/')} by question search: ${textRanking}`,
);

// The defaults: chosen the same way on the whole file (no figure of them on it is reported), then
// checked on data they were never chosen on. The code's defaults must be these.
const whole = choose(null);
const wholeSimilar: Setting = { ...whole.unit.setting, textRanking };
const wholeQuery = whole.query.setting;
apply(wholeSimilar, wholeQuery);
// Copies: apply() below puts the code's defaults back into the same objects.
const shipped = {
  unit: { title: unitFieldWeights.title, comments: unitFieldWeights.comments },
  feedback: { ...similarParameters.feedback },
  textRanking: similarParameters.textRanking,
  stem: formWeights.stem,
  blend: { ...similarityBlend },
};
apply();
const code = {
  unit: { title: unitFieldWeights.title, comments: unitFieldWeights.comments },
  feedback: similarParameters.feedback,
  textRanking: similarParameters.textRanking,
  stem: formWeights.stem,
  blend: similarityBlend,
};
console.log(`\nChosen on the whole file: ${describe(shipped)}`);
if (JSON.stringify(code) !== JSON.stringify(shipped))
  console.log(`The code's defaults differ (${describe(code)}): set them to the chosen ones; checked below with the chosen ones.`);
apply(wholeSimilar, wholeQuery);
const checks: Record<string, unknown>[] = [];
for (const name of ['stackexchange-beer', 'stackexchange-quantumcomputing']) {
  const site = await stackExchangeSite(name);
  const store = storeOf(site.questions);
  const title = new Map(site.questions.map((q) => [q.id, q.title]));
  let found = 0;
  let rr = 0;
  for (const { duplicate, original } of site.duplicates) {
    const { items } = matchQuestions(store, { ...matchRequest(title.get(duplicate)!, 11), fields: [...matchRequest('', 0).fields] });
    const at = items.filter((i) => i.id !== duplicate).findIndex((i) => i.id === original);
    if (at >= 0 && at < 10) {
      found++;
      rr += 1 / (at + 1);
    }
  }
  store.close();
  const pairs = site.duplicates.length;
  checks.push({ site: name, pairs, 'recall@10': (found / pairs).toFixed(3), MRR: (rr / pairs).toFixed(3) });
}
report('Duplicate links: GET /questions?query=<duplicate title> finds the original in the top 10', 'pnpm bench:retrieval-cv', checks);

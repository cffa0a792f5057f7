// The parameters of question search and similar questions, each chosen by two-fold cross-validation
// on SemEval-2016 task 3 train-part2 (datasets/README.md): the 67 original questions are cut
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

import type { SearchField } from '@kn/contracts';
import { openEmbedder, quantize } from '@kn/embedding';
import { languages, useStemmers } from '@kn/similarity';
import snowball from 'snowball-stemmers';
import { unitFieldWeights } from '../services/search/src/domain/fields.ts';
import { type FormWeights, formWeights, type SimilarityBlend, similarityBlend } from '../services/search/src/domain/match.ts';
import { blendSimilar, type Meaning, type SemanticWeights, semanticWeights } from '../services/search/src/domain/semantic.ts';
import { type Feedback, relevanceFeedback, similarityOfScore, similarTextRequest } from '../services/search/src/domain/similarity.ts';
import { type MatchOptions, matchQuestions } from '../services/search/src/local/match.ts';
import { similarTo } from '../services/search/src/local/similarity.ts';
import type { SearchStore } from '../services/search/src/local/store.ts';
import { embeddingText } from '../services/search/src/semantic/embeddings.ts';
import { VectorIndex } from '../services/search/src/semantic/vectors.ts';
import { benchData } from './data.ts';
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

// The second site is read after minutes of grid search: one missing is named before it starts.
benchData('stackexchange-quantumcomputing');

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

// The meaning (issue 49): the set-up's sentence encoder (infra/ensure-model.sh), as the service
// embeds them: a related question's title and body as a passage, an original's asked text as a query.
const embedder = await openEmbedder();
const vectors = new VectorIndex(embedder.dimensions);
const made = await embedder.embed(
  relatedQuestions.map((q) => embeddingText(q.title, q.body)),
  'passage',
);
relatedQuestions.forEach((q, i) => {
  vectors.put(q.id, quantize(made[i]!));
});
const askedVectors = new Map<string, Float32Array>();
const queries = await embedder.embed(originals.map(asked));
originals.forEach((o, i) => {
  askedVectors.set(o.id, queries[i]!);
});
const meaningOf = (o: Original): Meaning => vectors.meaning(askedVectors.get(o.id)!);
const matchRequest = (query: string, limit: number) => ({
  query,
  operator: 'OR' as const,
  fields: ['title', 'description', 'tags', 'solutions', 'comments', 'attachments'] as const,
  stop_languages: ['en'],
  filter: { tag_operator: 'AND' as const, include_uncategorized: false, include_deleted: false },
  offset: 0,
  limit,
});

/**
 * What is scored: 'unit', the unit cosine of the text (similarTo, as a question's similar questions
 * are ranked: what the unit weights and feedback are chosen by); 'similar', GET
 * /search/questions-similar of a text as the service answers it (question search of the text);
 * 'query', GET /questions?query=.
 */
type Task = 'unit' | 'similar' | 'query';
/** Scores of an original's related questions by the task's answer, with the parameters of a setting. */
function scoresOf(store: SearchStore, task: Task, o: Original, given: MatchOptions): Map<number, number> {
  const options = { ...given, meaning: given.semantic ? meaningOf(o) : undefined };
  if (task === 'similar') {
    const { items } = matchQuestions(store, similarTextRequest(asked(o), 'en', 1000), options);
    const scored = items.map((i) => ({ id: i.id, score: similarityOfScore(i.score) }));
    return new Map(blendSimilar(scored, options.meaning, options.semantic?.text ?? 0).map((i) => [i.id, i.score]));
  }
  if (task === 'unit')
    return new Map(
      similarTo(store, { text: asked(o), language: 'en' }, 1000, {
        thorough: true,
        feedback: options.feedback,
        meaning: options.meaning,
        semantic: options.semantic,
      }).map((s) => [s.id, s.score]),
    );
  const { items } = matchQuestions(store, { ...matchRequest(asked(o), 1000), fields: [...matchRequest('', 0).fields] }, options);
  return new Map(items.map((i) => [i.id, i.score]));
}

function evaluate(store: SearchStore, task: Task, options: MatchOptions, half: readonly Original[]) {
  let map = 0;
  let mrr = 0;
  for (const o of half) {
    const scores = scoresOf(store, task, o, options);
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
  stem?: number;
  blend?: { weight: number; depth: number; topics: number };
  /** The embeddings' weights; without them the ranking reads the words only. */
  semantic?: SemanticWeights;
}
const describe = (s: Setting) =>
  Object.entries(s)
    .map(([k, v]) => `${k} ${typeof v === 'object' ? Object.values(v).join('/') : v}`)
    .join(', ');

/**
 * The parameters of settings applied in turn on top of the service's own: the unit weights an index
 * is built with, and the options question search and similarTo are passed.
 */
function parametersOf(...settings: Setting[]) {
  const unit: Record<SearchField, number> = { ...unitFieldWeights };
  const options: MatchOptions & { forms: FormWeights; blend: SimilarityBlend; feedback: Feedback } = {
    forms: { ...formWeights },
    blend: { ...similarityBlend },
    feedback: { ...relevanceFeedback },
  };
  for (const s of settings) {
    if (s.unit) Object.assign(unit, s.unit);
    if (s.feedback) options.feedback = { ...s.feedback };
    if (s.stem !== undefined) options.forms.stem = s.stem;
    if (s.blend) options.blend = { ...s.blend };
    if (s.semantic) options.semantic = { ...s.semantic };
  }
  return { unit, options };
}
const stores = new Map<string, SearchStore>();
/** The index for these unit weights (built once per weights). */
function store(unit: Record<SearchField, number>): SearchStore {
  const key = JSON.stringify(unit);
  if (!stores.has(key)) stores.set(key, storeOf(relatedQuestions, { unitWeights: unit }));
  return stores.get(key)!;
}

const product = <T>(...lists: T[][]): T[][] => lists.reduce<T[][]>((acc, list) => acc.flatMap((a) => list.map((x) => [...a, x])), [[]]);
const similarGrid: Setting[] = product<Setting>(
  [1, 2, 3]
    .map((title) => ({ unit: { title, comments: 0.25 } }))
    .flatMap((s) => [0.1, 0.25, 0.5].map((c) => ({ unit: { ...s.unit!, comments: c } }))),
  [{ feedback: { documents: 0, weight: 0 } }, { feedback: { documents: 5, weight: 0.5 } }],
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
    const { unit, options } = parametersOf(base, setting);
    const s = store(unit);
    return { setting, result: halves.map((half) => evaluate(s, task, options, half)) };
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
// parameters on top of them; both reported on the held-out half, with a text's similar questions as
// the service ranks them (question search of the text) with the parameters of both.
const similarScores = scoreGrid('unit', similarGrid);
const rows: Record<string, unknown>[] = [];
/** The unit, feedback and query choices on the whole file (half null) or on one half. */
function choose(half: number | null) {
  const unit = bestOn(similarScores, half);
  const query = bestOn(scoreGrid('query', queryGrid, unit.setting), half);
  return { unit, query };
}
// The meaning's weights on top of the chosen word settings, on the training half: the share of the
// embeddings' cosine in a similar question's score by the unit task, their lift by question search.
const similarWeights = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];
const liftWeights = [0, 1, 2, 4, 6, 8, 12, 16];
function chooseSemantic(base: Setting, half: number | null) {
  const similar = bestOn(
    scoreGrid(
      'unit',
      similarWeights.map((similar) => ({ semantic: { similar, lift: 0, text: 0, experts: 0 } })),
      base,
    ),
    half,
  ).setting.semantic!.similar;
  const lift = bestOn(
    scoreGrid(
      'query',
      liftWeights.map((lift) => ({ semantic: { similar, lift, text: 0, experts: 0 } })),
      base,
    ),
    half,
  ).setting.semantic!.lift;
  const text = bestOn(
    scoreGrid(
      'similar',
      similarWeights.map((text) => ({ semantic: { similar, lift, text, experts: 0 } })),
      base,
    ),
    half,
  ).setting.semantic!.text;
  return { semantic: { similar, lift, text, experts: semanticWeights.experts } };
}
for (const held of [0, 1]) {
  const { unit, query } = choose(1 - held);
  const words = { ...unit.setting, ...query.setting };
  const meaning = chooseSemantic(words, 1 - held);
  const withMeaning = { ...words, ...meaning };
  const [search] = scoreGrid('similar', [query.setting], unit.setting);
  const [unitMeant, searchMeant, queryMeant] = (['unit', 'similar', 'query'] as const).map((task) => scoreGrid(task, [withMeaning])[0]!);
  for (const [task, best] of [
    ['similar questions by the unit cosine (as of a question; chooses unit and feedback)', unit],
    ['GET /search/questions-similar of a text: question search', { ...search!, setting: words }],
    ['GET /questions?query=', query],
    ['similar questions by the unit cosine, words + meaning', unitMeant],
    ['GET /search/questions-similar of a text, words + meaning', searchMeant],
    ['GET /questions?query=, words + meaning', queryMeant],
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

// The defaults: chosen the same way on the whole file (no figure of them on it is reported), then
// checked on data they were never chosen on. The code's defaults must be these.
const whole = choose(null);
const wholeMeaning = chooseSemantic({ ...whole.unit.setting, ...whole.query.setting }, null);
const chosen = parametersOf(whole.unit.setting, whole.query.setting, wholeMeaning);
const service = parametersOf({ semantic: { ...semanticWeights } });
const figures = ({ unit, options }: ReturnType<typeof parametersOf>) => ({
  unit: { title: unit.title, comments: unit.comments },
  feedback: options.feedback,
  stem: options.forms.stem,
  blend: options.blend,
  semantic: options.semantic,
});
console.log(`\nChosen on the whole file: ${describe(figures(chosen))}`);
if (JSON.stringify(figures(service)) !== JSON.stringify(figures(chosen)))
  console.log(
    `The code's defaults differ (${describe(figures(service))}): set them to the chosen ones; checked below with the chosen ones.`,
  );
const checks: Record<string, unknown>[] = [];
for (const name of ['stackexchange-beer', 'stackexchange-quantumcomputing']) {
  const site = await stackExchangeSite(name);
  const store = storeOf(site.questions, { unitWeights: chosen.unit });
  const title = new Map(site.questions.map((q) => [q.id, q.title]));
  const siteVectors = new VectorIndex(embedder.dimensions);
  const passages = await embedder.embed(
    site.questions.map((q) => embeddingText(q.title, q.body)),
    'passage',
  );
  site.questions.forEach((q, i) => {
    siteVectors.put(q.id, quantize(passages[i]!));
  });
  let found = 0;
  let rr = 0;
  for (const { duplicate, original } of site.duplicates) {
    const [query] = await embedder.embed([title.get(duplicate)!]);
    const meaning = siteVectors.meaning(query!);
    const { items } = matchQuestions(
      store,
      { ...matchRequest(title.get(duplicate)!, 11), fields: [...matchRequest('', 0).fields] },
      { ...chosen.options, meaning },
    );
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
await embedder.close();

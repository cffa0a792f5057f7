import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { evaluateRetrieval, fts5Rankings, metricsOf, readBeir } from '../infra/retrieval-eval.ts';
import { type System, startSystem } from './system.ts';

// A tiny BEIR folder, written here: a few documents on brewing, queries that name their topic in
// other inflections (`fermenting` for `fermentation`) or with a typo, graded relevance.
const documents = [
  ['d1', 'Fermentation temperature for ales', 'Keep the fermentation of an ale between 18 and 22 degrees.'],
  ['d2', 'Bottling with priming sugar', 'Add corn sugar before bottling so the bottles carbonate.'],
  ['d3', 'Dry hopping schedule', 'Add the hops for dry hopping after the primary fermentation has slowed.'],
  ['d4', 'Cleaning kegs', 'Clean kegs with PBW and sanitize them with Star San.'],
  ['d5', 'Yeast starters', 'A starter grows healthy yeast cells before pitching.'],
  ['d6', '', 'Lagering means a long cold conditioning after fermentation is complete.'],
  ['d7', 'Water chemistry', 'Calcium and sulfate in brewing water change how bitter a beer tastes.'],
  ['d8', 'Serving temperature', 'Stouts taste better a little warmer than lagers.'],
];
const queries = [
  ['q1', 'fermenting ales warm', { d1: 2, d6: 1 }],
  ['q2', 'bottled beer carbonating', { d2: 2 }],
  ['q3', 'hop schedules', { d3: 2 }],
  ['q4', 'cleaning keg', { d4: 1 }],
  ['q5', 'lagered beers', { d6: 2, d8: 1 }],
  ['q6', 'yeest starter', { d5: 2 }],
] as const;

let system: System;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'kn-beir-'));
  mkdirSync(path.join(dir, 'qrels'));
  writeFileSync(path.join(dir, 'corpus.jsonl'), documents.map(([_id, title, text]) => JSON.stringify({ _id, title, text })).join('\n'));
  writeFileSync(path.join(dir, 'queries.jsonl'), queries.map(([_id, text]) => JSON.stringify({ _id, text })).join('\n'));
  const qrels = queries.flatMap(([q, , relevant]) => Object.entries(relevant).map(([d, grade]) => `${q}\t${d}\t${grade}`));
  writeFileSync(path.join(dir, 'qrels', 'test.tsv'), ['query-id\tcorpus-id\tscore', ...qrels, 'q1\td7\t0'].join('\n'));
  system = await startSystem();
}, 60_000);
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await system?.stop();
});

test('metrics of a ranking: NDCG@10 with graded gains, average precision, reciprocal rank, recall@100', () => {
  const relevant = new Map([
    ['a', 2],
    ['b', 1],
  ]);
  expect(metricsOf(['a', 'b'], relevant)).toEqual({ ndcg: 1, ap: 1, rr: 1, recall10: 1, recall: 1 });
  const m = metricsOf(['x', 'b', 'y'], relevant);
  expect(m.ndcg).toBeCloseTo(1 / Math.log2(3) / (2 + 1 / Math.log2(3)));
  expect(m.ap).toBeCloseTo(0.5 / 2);
  expect(m.rr).toBeCloseTo(0.5);
  expect(m.recall).toBe(0.5);
  expect(metricsOf([], relevant)).toEqual({ ndcg: 0, ap: 0, rr: 0, recall10: 0, recall: 0 });
});

test('a BEIR folder is read with its graded judgements; FTS5 ranks the same texts without stems', () => {
  const corpus = readBeir(dir);
  expect(corpus.documents).toHaveLength(8);
  // A document without a title is titled by its first words, on both sides.
  expect(corpus.documents.find((d) => d.id === 'd6')!.title).toMatch(/^Lagering means/);
  expect(corpus.queries.map((q) => q.id)).toEqual(['q1', 'q2', 'q3', 'q4', 'q5', 'q6']);
  expect(corpus.queries[0]!.relevant).toEqual(
    new Map([
      ['d1', 2],
      ['d6', 1],
    ]),
  );
  const fts5 = fts5Rankings(corpus);
  expect(fts5.get('q4')).toEqual(['d4']);
  expect(fts5.get('q6')).toEqual(['d5']);
});

test('pnpm eval:retrieval loads the folder into the system, asks every query through the API, and beats FTS5', async () => {
  const options = {
    dir,
    bus: system.services.content.runtime.bus,
    api: `${system.url}/api/v1`,
    token: system.adminToken,
    caughtUp: () => system.searchCaughtUp(),
  };
  const result = await evaluateRetrieval(options);
  expect(result.corpus).toMatchObject({ kind: 'beir', documents: 8, queries: 6 });
  for (const side of [result.system, result.fts5])
    for (const value of Object.values(side)) {
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThanOrEqual(1);
    }
  // Stems and typos find what FTS5's exact words miss.
  expect(result.system['NDCG@10']).toBeGreaterThan(1.1 * result.fts5['NDCG@10']);
  expect(result.system['recall@100']).toBe(1);
  // A second run imports nothing again and measures the same.
  const again = await evaluateRetrieval(options);
  expect(again.system).toEqual(result.system);
  const { total } = (await system.api.get('/api/v1/questions?limit=1').set('authorization', `Bearer ${system.adminToken}`)).body as {
    total: number;
  };
  expect(total).toBe(8);
}, 60_000);

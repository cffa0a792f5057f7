// Measures question search on a company's own data (`pnpm eval:retrieval`, docs/search.md): a
// BEIR-format folder (corpus.jsonl, queries.jsonl, qrels/test.tsv) or a Stack Exchange dump
// (duplicate links as the relevant pairs) is loaded into a running system, every query is asked
// through the API (GET /questions?query=), and NDCG@10, MAP, MRR and recall@100 are printed beside
// a BM25 reference computed in the same run by SQLite FTS5 (node:sqlite) over the same texts.

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { type Bus, call } from '@kn/bus';
import { importOperations, type Operation } from '@kn/contracts';
import { indexStatus } from '@kn/search';
import { escapeHtml } from '@kn/service';
import { importDump, readSite, siteName } from '@kn/stackexchange';

/** A judged query: its text, the graded relevant documents, and a document it must not count (itself). */
export interface JudgedQuery {
  id: string;
  text: string;
  relevant: Map<string, number>;
  exclude?: string;
}

export interface Corpus {
  kind: 'beir' | 'stackexchange';
  name: string;
  /** `comments`: imported as the question's comments (a BEIR folder has none; bench/semeval-similar.ts gives them). */
  documents: Array<{ id: string; title: string; texts: string[]; comments?: string[] }>;
  queries: JudgedQuery[];
}

const jsonLines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** A BEIR folder: the corpus, and the queries of qrels/test.tsv with a relevant document (grade > 0). */
export function readBeir(dir: string): Corpus {
  const documents = jsonLines(path.join(dir, 'corpus.jsonl')).map((d) => {
    const text = String(d.text ?? '');
    // A question needs a title: a document without one is titled by its first words (on both sides).
    const title = (String(d.title ?? '').trim() || text.trim().slice(0, 100) || String(d._id)).slice(0, 500);
    return { id: String(d._id), title, texts: [text] };
  });
  const texts = new Map(jsonLines(path.join(dir, 'queries.jsonl')).map((q) => [String(q._id), String(q.text ?? '')]));
  const judged = new Map<string, Map<string, number>>();
  for (const line of readFileSync(path.join(dir, 'qrels', 'test.tsv'), 'utf8')
    .split('\n')
    .slice(1)) {
    const [query, doc, grade] = line.split('\t');
    if (!query || !doc || !(Number(grade) > 0)) continue;
    const relevant = judged.get(query) ?? new Map<string, number>();
    relevant.set(doc, Number(grade));
    judged.set(query, relevant);
  }
  const queries = [...judged].filter(([id]) => texts.has(id)).map(([id, relevant]) => ({ id, text: texts.get(id)!, relevant }));
  return { kind: 'beir', name: path.basename(path.resolve(dir)), documents, queries };
}

/** A Stack Exchange dump: every question (with answers and comments); each duplicate asks with its title for its originals. */
export async function readStackExchange(dir: string): Promise<Corpus> {
  const site = await readSite(dir);
  const byDuplicate = new Map<number, Map<string, number>>();
  for (const { duplicate, original } of site.duplicates) {
    const relevant = byDuplicate.get(duplicate) ?? new Map<string, number>();
    relevant.set(String(original), 1);
    byDuplicate.set(duplicate, relevant);
  }
  const title = new Map(site.questions.map((q) => [q.id, q.title]));
  return {
    kind: 'stackexchange',
    name: site.name,
    documents: site.questions.map((q) => ({ id: String(q.id), title: q.title, texts: [q.body, ...q.tags, ...q.answers, ...q.comments] })),
    queries: [...byDuplicate].map(([duplicate, relevant]) => ({
      id: String(duplicate),
      text: title.get(duplicate)!,
      relevant,
      exclude: String(duplicate),
    })),
  };
}

export const readCorpus = (dir: string): Promise<Corpus> | Corpus =>
  existsSync(path.join(dir, 'corpus.jsonl')) ? readBeir(dir) : readStackExchange(dir);

/** The metrics of one ranking of document ids for a query (at 10 for NDCG, at 100 for the others but recall@10). */
export function metricsOf(ranked: readonly string[], relevant: ReadonlyMap<string, number>) {
  const top = ranked.slice(0, 100);
  let dcg = 0;
  top.slice(0, 10).forEach((id, i) => {
    dcg += (relevant.get(id) ?? 0) / Math.log2(i + 2);
  });
  const ideal = [...relevant.values()]
    .sort((a, b) => b - a)
    .slice(0, 10)
    .reduce((sum, grade, i) => sum + grade / Math.log2(i + 2), 0);
  let hits = 0;
  let hitsAt10 = 0;
  let precisions = 0;
  let reciprocal = 0;
  top.forEach((id, i) => {
    if (!relevant.has(id)) return;
    hits++;
    if (i < 10) hitsAt10++;
    precisions += hits / (i + 1);
    if (hits === 1) reciprocal = 1 / (i + 1);
  });
  return {
    ndcg: ideal > 0 ? dcg / ideal : 0,
    ap: precisions / relevant.size,
    rr: reciprocal,
    recall10: hitsAt10 / relevant.size,
    recall: hits / relevant.size,
  };
}

export type Metrics = { 'NDCG@10': number; MAP: number; MRR: number; 'recall@10': number; 'recall@100': number };

function mean(rows: Array<ReturnType<typeof metricsOf>>): Metrics {
  const avg = (key: keyof ReturnType<typeof metricsOf>) => rows.reduce((s, r) => s + r[key], 0) / Math.max(1, rows.length);
  return { 'NDCG@10': avg('ndcg'), MAP: avg('ap'), MRR: avg('rr'), 'recall@10': avg('recall10'), 'recall@100': avg('recall') };
}

/** A query as both sides get it: the API's limit (1,000 characters). */
const asked = (q: JudgedQuery) => q.text.slice(0, 1000);

/**
 * The BM25 reference: SQLite FTS5 over the same texts (title and the rest as two columns, default
 * weights, unicode61 tokens with diacritics removed, no stemming), the query's words ORed.
 */
export function fts5Rankings(corpus: Corpus): Map<string, string[]> {
  const db = new DatabaseSync(':memory:');
  db.exec(`create virtual table docs using fts5(id unindexed, title, body, tokenize = 'unicode61 remove_diacritics 2')`);
  const insert = db.prepare('insert into docs (id, title, body) values (?, ?, ?)');
  db.exec('begin');
  for (const d of corpus.documents) insert.run(d.id, d.title, d.texts.join('\n'));
  db.exec('commit');
  const search = db.prepare('select id from docs where docs match ? order by bm25(docs) limit 101');
  const out = new Map<string, string[]>();
  for (const q of corpus.queries) {
    const words = [
      ...new Set(
        asked(q)
          .toLowerCase()
          .match(/[\p{L}\p{N}]+/gu) ?? [],
      ),
    ];
    const ranked = words.length
      ? (search.all(words.map((w) => `"${w.replaceAll('"', '""')}"`).join(' OR ')) as Array<{ id: string }>).map((r) => r.id)
      : [];
    out.set(
      q.id,
      ranked.filter((id) => id !== q.exclude),
    );
  }
  db.close();
  return out;
}

const rpc = <O extends Operation>(bus: Bus, name: string, op: O, body: unknown) =>
  call(bus, name, op, { actor: null, params: undefined, query: undefined, body, requestId: `eval-${Date.now()}`, url: '' } as never);

interface LoadOptions {
  bus: Bus;
  authorId: number;
  language: string;
  /** A Stack Exchange corpus: its dump folder, and the importer's state folder. */
  dir?: string;
  stateDir?: string;
}

/**
 * Loads a corpus into the running system through the content service's import (idempotent: a second
 * run creates nothing) and answers the system's question id of each document id (those it knows).
 */
async function load(corpus: Corpus, options: LoadOptions) {
  const docOf = new Map<number, string>();
  let created = 0;
  if (corpus.kind === 'beir') {
    const at = '2020-01-01T00:00:00.000Z';
    let batch: unknown[] = [];
    let bytes = 0;
    const flush = async () => {
      if (!batch.length) return;
      const result = (await rpc(options.bus, 'importQuestions', importOperations.importQuestions, { questions: batch })) as {
        ids: Record<string, number>;
        questions: { created: number };
      };
      created += result.questions.created;
      for (const [external, id] of Object.entries(result.ids)) docOf.set(id, external.slice(`beir:${corpus.name}:`.length));
      batch = [];
      bytes = 0;
    };
    for (const d of corpus.documents) {
      const text = d.texts.join('\n');
      const external = `beir:${corpus.name}:${d.id}`.slice(0, 191);
      const question = {
        external_id: external,
        author_id: options.authorId,
        title: d.title,
        description: `<p>${escapeHtml(text)}</p>`,
        language: options.language,
        created: at,
        comments: (d.comments ?? []).map((comment, i) => ({
          external_id: `${external.slice(0, 180)}:c${i}`,
          author_id: options.authorId,
          description: `<p>${escapeHtml(comment)}</p>`,
          created: at,
          solution_external_id: null,
        })),
      };
      const size = JSON.stringify(question).length;
      if (batch.length >= 200 || bytes + size > 700_000) await flush();
      batch.push(question);
      bytes += size;
    }
    await flush();
  } else {
    if (!options.dir) throw new Error(`${corpus.name}: a Stack Exchange corpus is loaded from its dump folder`);
    const summary = await importDump({ dir: options.dir, bus: options.bus, language: options.language, stateDir: options.stateDir });
    created = summary.questions.created;
    const prefix = `stackexchange:${siteName(options.dir)}:post:`;
    for (let offset = 0; ; offset += 10_000) {
      const links = (await call(options.bus, 'listQuestionLinks', importOperations.listQuestionLinks, {
        actor: null,
        params: undefined,
        query: { kind: 'duplicate', limit: 10_000, offset },
        body: undefined,
        requestId: 'eval',
        url: '',
      })) as {
        items: Array<{
          question_id: number;
          linked_question_id: number;
          question_external_id: string | null;
          linked_external_id: string | null;
        }>;
      };
      for (const l of links.items) {
        if (l.question_external_id?.startsWith(prefix)) docOf.set(l.question_id, l.question_external_id.slice(prefix.length));
        if (l.linked_external_id?.startsWith(prefix)) docOf.set(l.linked_question_id, l.linked_external_id.slice(prefix.length));
      }
      if (links.items.length < 10_000) break;
    }
  }
  return { docOf, created };
}

export interface EvaluationOptions {
  dir: string;
  bus: Bus;
  /** The API base (…/api/v1) and a token of a user who sees every question. */
  api: string;
  token: string;
  /** Language of the corpus (BEIR and dumps do not say). */
  language?: string;
  stateDir?: string;
  /** Resolves when the search index has every change so far (default: polls the index status). */
  caughtUp?: (expected: number) => Promise<void>;
}

/** Polls the search index until it is ready, holds at least `expected` questions, has its topic vectors (when it keeps them) and its embeddings (when it has a model). */
export const pollIndex = (bus: Bus) => async (expected: number) => {
  for (;;) {
    const status = await indexStatus(bus).catch(() => null);
    const embedded =
      status?.embeddings.state === 'unavailable' || (status?.embeddings.state === 'ready' && status.embeddings.embedded >= expected);
    if (status?.ready && status.questions >= expected && !status.topics?.training && embedded) return;
    await new Promise((r) => setTimeout(r, 500));
  }
};

/**
 * Loads a corpus into the running system (load) and waits until the search index has it, its
 * embeddings included (`caughtUp`, by default polling the index status): the system's question id →
 * document id.
 */
export async function loadIndexed(
  corpus: Corpus,
  options: LoadOptions & Pick<EvaluationOptions, 'caughtUp'>,
): Promise<Map<number, string>> {
  const before = (await indexStatus(options.bus)).questions;
  const { docOf, created } = await load(corpus, options);
  await (options.caughtUp ?? pollIndex(options.bus))(before + created);
  return docOf;
}

/** Loads the folder, asks every query through the API and through FTS5, and answers both sides' metrics. */
export async function evaluateRetrieval(options: EvaluationOptions) {
  const corpus = await readCorpus(options.dir);
  const language = options.language ?? 'en';
  const get = async <T>(pathAndQuery: string): Promise<T> => {
    const res = await fetch(`${options.api}${pathAndQuery}`, { headers: { authorization: `Bearer ${options.token}` } });
    if (!res.ok) throw new Error(`GET ${pathAndQuery}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const me = await get<{ id: number }>('/users/me');
  const docOf = await loadIndexed(corpus, { ...options, authorId: me.id, language });

  const started = Date.now();
  const system: Array<ReturnType<typeof metricsOf>> = [];
  for (const q of corpus.queries) {
    const page = await get<{ items: Array<{ id: number }> }>(
      `/questions?limit=100&language_id=${language}&query=${encodeURIComponent(asked(q))}`,
    );
    const ranked = page.items.map((i) => docOf.get(i.id) ?? `question:${i.id}`).filter((id) => id !== q.exclude);
    system.push(metricsOf(ranked, q.relevant));
  }
  const seconds = (Date.now() - started) / 1000;
  const reference = fts5Rankings(corpus);
  const fts5 = corpus.queries.map((q) => metricsOf(reference.get(q.id)!, q.relevant));
  return {
    corpus: { kind: corpus.kind, name: corpus.name, documents: corpus.documents.length, queries: corpus.queries.length },
    system: mean(system),
    fts5: mean(fts5),
    seconds,
  };
}

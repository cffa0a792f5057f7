// Data sets of the retrieval benchmarks (datasets/README.md), and a search index built from
// them in process with the search service's own store and event handlers: SemEval-2016 task 3
// (train-part2), the duplicate links of Stack Exchange dumps, and their answers as an answer-retrieval
// task in BEIR's format.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { EventEnvelope, EventSubject } from '@kn/contracts';
import { dumpFiles, htmlText, parseRow, readRows, readSite, type SiteQuestion } from '@kn/stackexchange';
import { SaxesParser } from 'saxes';
import { handlerOf, indexHandlers } from '../services/search/src/core/events.ts';
import { SearchStore } from '../services/search/src/local/store.ts';
import { benchData } from './data.ts';

export interface Related {
  id: string;
  engineRank: number;
  relevant: boolean;
  subject: string;
  body: string;
  comments: string[];
}
export interface Original {
  id: string;
  subject: string;
  body: string;
  related: Related[];
}

/** SemEval-2016 task 3 train-part2: 67 original questions with 10 related questions each (subtask B). */
export function semevalOriginals(): Original[] {
  const file = path.join(benchData('semeval2016-task3'), 'SemEval2016-Task3-CQA-QL-train-part2.xml');
  const originals = new Map<string, Original>();
  const parser = new SaxesParser({ xmlns: false });
  let original: Original | undefined;
  let related: Related | undefined;
  let text = '';
  parser.on('opentag', (tag) => {
    const a = tag.attributes as Record<string, string>;
    text = '';
    if (tag.name === 'OrgQuestion') {
      const id = a.ORGQ_ID!;
      original = originals.get(id) ?? { id, subject: '', body: '', related: [] };
      originals.set(id, original);
    } else if (tag.name === 'RelQuestion') {
      related = {
        id: a.RELQ_ID!,
        engineRank: Number(a.RELQ_RANKING_ORDER),
        relevant: a.RELQ_RELEVANCE2ORGQ === 'PerfectMatch' || a.RELQ_RELEVANCE2ORGQ === 'Relevant',
        subject: '',
        body: '',
        comments: [],
      };
      original!.related.push(related);
    }
  });
  parser.on('text', (t) => {
    text += t;
  });
  parser.on('closetag', (tag) => {
    if (tag.name === 'OrgQSubject') original!.subject = text.trim();
    else if (tag.name === 'OrgQBody') original!.body = text.trim();
    else if (tag.name === 'RelQSubject') related!.subject = text.trim();
    else if (tag.name === 'RelQBody') related!.body = text.trim();
    else if (tag.name === 'RelCText') related!.comments.push(text.trim());
    text = '';
  });
  parser.write(readFileSync(file, 'utf8')).close();
  const list = [...originals.values()];
  if (list.length !== 67 || list.some((o) => o.related.length !== 10))
    throw new Error(`expected 67 original questions with 10 related each, got ${list.length}`);
  return list;
}

/** Average precision of a ranking (relevance flags, best first); 0 when nothing is relevant (the task's MAP). */
export function averagePrecision(ranked: boolean[]): number {
  let hits = 0;
  let sum = 0;
  ranked.forEach((relevant, i) => {
    if (!relevant) return;
    hits++;
    sum += hits / (i + 1);
  });
  return hits === 0 ? 0 : sum / hits;
}

export function reciprocalRank(ranked: boolean[]): number {
  const first = ranked.indexOf(true);
  return first < 0 ? 0 : 1 / (first + 1);
}

/**
 * Ties (equal scores, e.g. two candidates sharing no word with the question) are broken by a hash
 * of the id, not by the file's order: the file lists each query's related questions in the search
 * engine's order, which would leak that ranking into every method.
 */
export function tieBreak(id: string): number {
  let h = 2166136261;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** Whether each of an original's related questions is relevant, in the order of a scoring: best first, ties by tieBreak. */
export const rankedRelevance = (original: Original, score: (original: Original, related: Related) => number) =>
  original.related
    .map((r) => ({ r, s: score(original, r), t: tieBreak(r.id) }))
    .sort((x, y) => y.s - x.s || x.t - y.t)
    .map(({ r }) => r.relevant);

/**
 * MAP and MRR (in percent, to two places) of a scoring of subtask B: each original's 10 related
 * questions by score (rankedRelevance); an original without a relevant one counts AP 0.
 */
export function evaluate(originals: Original[], score: (original: Original, related: Related) => number) {
  let map = 0;
  let mrr = 0;
  for (const original of originals) {
    const ranked = rankedRelevance(original, score);
    map += averagePrecision(ranked);
    mrr += reciprocalRank(ranked);
  }
  return { MAP: +((100 * map) / originals.length).toFixed(2), MRR: +((100 * mrr) / originals.length).toFixed(2) };
}

/** A question as the benchmarks index it. */
export type BenchQuestion = SiteQuestion & { language?: string };

/**
 * A search index (the search service's store, in memory) holding these questions, fed through its
 * event handlers; `options.unitWeights`: other field weights of the similarity unit than the service's.
 */
export function storeOf(questions: readonly BenchQuestion[], options: ConstructorParameters<typeof SearchStore>[1] = {}): SearchStore {
  const store = new SearchStore(':memory:', options);
  const apply = (subject: EventSubject, data: unknown) => {
    const handler = handlerOf(indexHandlers, subject);
    handler?.(store, { id: '', subject, occurred_at: '', actor_id: null, data } as EventEnvelope);
  };
  const at = '2020-01-01T00:00:00.000Z';
  let part = 1;
  store.transaction(() => {
    for (const q of questions) {
      apply('content.question.imported.v1', {
        question: {
          id: q.id,
          author_id: 1,
          language: q.language ?? 'en',
          title: q.title,
          description_text: q.body,
          tags: q.tags.map((label) => ({ label })),
          category: null,
          knowledge_space: null,
          is_published: true,
          is_deleted: false,
          published: at,
        },
        solutions: q.answers.map((text) => ({
          id: part++,
          question_id: q.id,
          author_id: 1,
          text,
          is_published: true,
          is_deleted: false,
          published: at,
          created: at,
          rating: null,
          rating_count: 0,
          upvote_count: 0,
          accepted_by_question_poser: null,
        })),
        comments: q.comments.map((text) => ({ id: part++, question_id: q.id, author_id: 1, text, is_deleted: false })),
        external_id: String(q.id),
      });
    }
  });
  store.trainTopics();
  return store;
}

/** A Stack Exchange site from its dump folder (benchData): questions with answers and comments, duplicate links. */
export const stackExchangeSite = (name: string) => readSite(benchData(name));

/**
 * SemEval-2016 task 3 train-part2 as a BEIR folder: each original question (subject and body, at
 * most 1,000 characters) asks for its related questions judged PerfectMatch or Relevant, among all
 * 670 (subject and body; the comments left out, as a BEIR folder has none). A retrieval
 * task over the whole file, not the task's re-ranking of each original's own ten.
 */
export function writeSemevalRetrieval(out: string) {
  const originals = semevalOriginals();
  const lines = (rows: unknown[]) => rows.map((row) => `${JSON.stringify(row)}\n`).join('');
  const related = originals.flatMap((o) => o.related);
  mkdirSync(path.join(out, 'qrels'), { recursive: true });
  writeFileSync(path.join(out, 'corpus.jsonl'), lines(related.map((r) => ({ _id: r.id, title: r.subject, text: r.body }))));
  writeFileSync(
    path.join(out, 'queries.jsonl'),
    lines(originals.map((o) => ({ _id: o.id, text: `${o.subject} ${o.body}`.slice(0, 1000) }))),
  );
  const judged = originals.flatMap((o) => o.related.filter((r) => r.relevant).map((r) => `${o.id}\t${r.id}\t1`));
  writeFileSync(path.join(out, 'qrels', 'test.tsv'), ['query-id\tcorpus-id\tscore', ...judged, ''].join('\n'));
}

/**
 * Answer retrieval from a Stack Exchange dump, written as a BEIR folder (corpus.jsonl,
 * queries.jsonl, qrels/test.tsv) in `out`: every answer is a document without a title, every
 * answered question's title asks for its answers (the accepted one graded 2, the others 1). A task
 * unlike the duplicate links (short queries, passages without titles, as many BEIR sets are), on
 * data no parameter was chosen on.
 */
export async function writeAnswerRetrieval(dumpDir: string, out: string) {
  const questions = new Map<number, { title: string; accepted?: number }>();
  const answers: Array<{ id: number; question: number; text: string }> = [];
  for await (const raw of readRows(path.join(dumpDir, dumpFiles.posts.file), dumpFiles.posts.root)) {
    const parsed = parseRow('posts', raw);
    if (!parsed.ok) continue;
    const r = parsed.row;
    if (r.PostTypeId === 1) questions.set(r.Id, { title: r.Title ?? '', accepted: r.AcceptedAnswerId });
    else if (r.PostTypeId === 2 && r.ParentId !== undefined) answers.push({ id: r.Id, question: r.ParentId, text: htmlText(r.Body) });
  }
  const documents = answers.filter((a) => questions.get(a.question)?.title.trim() && a.text.trim());
  const asked = [...new Set(documents.map((a) => a.question))].sort((a, b) => a - b);
  const lines = (rows: unknown[]) => rows.map((row) => `${JSON.stringify(row)}\n`).join('');
  mkdirSync(path.join(out, 'qrels'), { recursive: true });
  writeFileSync(path.join(out, 'corpus.jsonl'), lines(documents.map((a) => ({ _id: `a${a.id}`, title: '', text: a.text }))));
  writeFileSync(path.join(out, 'queries.jsonl'), lines(asked.map((q) => ({ _id: `q${q}`, text: questions.get(q)!.title }))));
  const grade = (a: (typeof documents)[number]) => (questions.get(a.question)!.accepted === a.id ? 2 : 1);
  writeFileSync(
    path.join(out, 'qrels', 'test.tsv'),
    ['query-id\tcorpus-id\tscore', ...documents.map((a) => `q${a.question}\ta${a.id}\t${grade(a)}`), ''].join('\n'),
  );
}

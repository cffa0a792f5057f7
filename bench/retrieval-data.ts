// Data sets of the retrieval benchmarks (../shared/data/README.md), and a search index built from
// them in process with the search service's own store and event handlers: SemEval-2016 task 3
// (train-part2) and the duplicate links of Stack Exchange dumps.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { EventEnvelope, EventSubject } from '@kn/contracts';
import { readSite, type SiteQuestion } from '@kn/stackexchange';
import { sharedData } from '@kn/testing';
import { SaxesParser } from 'saxes';
import { handlerOf, indexHandlers } from '../services/search/src/local/events.ts';
import { SearchStore } from '../services/search/src/local/store.ts';

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
  const file = path.join(sharedData('semeval2016-task3'), 'SemEval2016-Task3-CQA-QL-train-part2.xml');
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

/** A question as the benchmarks index it. */
export type BenchQuestion = SiteQuestion & { language?: string };

/** A search index (the search service's store, in memory) holding these questions, fed through its event handlers. */
export function storeOf(questions: readonly BenchQuestion[]): SearchStore {
  const store = new SearchStore(':memory:');
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

/** A Stack Exchange site from its dump folder (in ../shared/data): questions with answers and comments, duplicate links. */
export const stackExchangeSite = (name: string) => readSite(sharedData(name));

import { z } from 'zod';
import { EventComment } from './comments.ts';
import { Id, Language, Limit, Offset, Timestamp } from './common.ts';
import { operation } from './endpoint.ts';
import { QuestionSnapshot } from './questions.ts';
import { EventSolution } from './solutions.ts';

/*
 * Internal operations for importers (content service): see docs/import.md. Everything is
 * idempotent by external id (`stackexchange:beer:post:123`): a second call creates nothing.
 * Imported content keeps its original dates and authors and is published as it is; its events
 * are `content.question.imported.v1` (one per question, with everything), never the
 * created/published events that notify followers and mentioned users.
 */

const ExternalId = z.string().min(1).max(191);
/** Characters of one imported description at most: an importer reports a longer one as a malformed row. */
export const IMPORTED_HTML_MAX_CHARS = 1_000_000;
const Html = z.string().max(IMPORTED_HTML_MAX_CHARS);

export const ImportedComment = z.object({
  external_id: ExternalId,
  author_id: Id,
  /** HTML (plain text must be escaped by the importer). */
  description: Html,
  created: z.string().datetime(),
  upvote_count: z.number().int().min(0).default(0),
  /** The external id of the commented solution (one of this question's), null on the question. */
  solution_external_id: ExternalId.nullable(),
});

export const ImportedSolution = z.object({
  external_id: ExternalId,
  author_id: Id,
  description: Html,
  created: z.string().datetime(),
  updated: z.string().datetime().nullable().optional(),
  upvote_count: z.number().int().min(0).default(0),
  downvote_count: z.number().int().min(0).default(0),
  /** When the poser accepted it; null when not accepted. */
  accepted: z.string().datetime().nullable().optional(),
});

export const ImportedQuestion = z.object({
  external_id: ExternalId,
  author_id: Id,
  title: z.string().trim().min(1).max(500),
  description: Html,
  language: Language,
  tags: z.array(z.string().trim().min(1).max(191)).max(50).default([]),
  created: z.string().datetime(),
  updated: z.string().datetime().nullable().optional(),
  last_activity: z.string().datetime().nullable().optional(),
  view_count: z.number().int().min(0).default(0),
  upvote_count: z.number().int().min(0).default(0),
  solutions: z.array(ImportedSolution).max(1000).default([]),
  comments: z.array(ImportedComment).max(5000).default([]),
});
export type ImportedQuestion = z.infer<typeof ImportedQuestion>;

const Counts = z.object({ created: z.number().int(), skipped: z.number().int() });

export const QuestionLinkKind = z.enum(['duplicate', 'related']);
export type QuestionLinkKind = z.infer<typeof QuestionLinkKind>;

export const QuestionLink = z
  .object({
    question_id: z.number().int(),
    linked_question_id: z.number().int(),
    kind: QuestionLinkKind,
    question_external_id: z.string().nullable(),
    linked_external_id: z.string().nullable(),
    created: Timestamp,
  })
  .meta({ id: 'QuestionLink' });
export type QuestionLink = z.infer<typeof QuestionLink>;

export const importOperations = {
  importTags: operation({
    service: 'content',
    summary: 'Import tag labels (case-insensitive; existing labels are kept)',
    body: z.object({ labels: z.array(z.string().trim().min(1).max(191)).min(1).max(1000) }),
    response: Counts,
  }),
  importQuestions: operation({
    service: 'content',
    summary: 'Import published questions with their solutions and comments, idempotent by external_id',
    body: z.object({ questions: z.array(ImportedQuestion).min(1).max(500) }),
    response: z.object({
      /** external id → question id, for every question of the batch (created or found). */
      ids: z.record(z.string(), z.number().int()),
      questions: Counts,
      solutions: Counts,
      comments: Counts,
      refused: z
        .array(z.object({ external_id: z.string(), reason: z.string() }))
        .describe(
          'questions, solutions and comments not imported because their description passed a limit (too deep, too costly to sanitize); a refused question takes its solutions and comments along, a refused solution its comments',
        ),
    }),
  }),
  importTagLinks: operation({
    service: 'content',
    summary: 'Add tag links (both directions); existing links are kept',
    body: z.object({
      links: z
        .array(z.object({ label: z.string().min(1), linked_label: z.string().min(1) }))
        .min(1)
        .max(1000),
    }),
    response: Counts,
  }),
  importQuestionLinks: operation({
    service: 'content',
    summary: 'Import links between imported questions (duplicate: question is a duplicate of linked)',
    body: z.object({
      links: z
        .array(z.object({ question_external_id: ExternalId, linked_external_id: ExternalId, kind: QuestionLinkKind }))
        .min(1)
        .max(1000),
    }),
    response: Counts.extend({ unresolved: z.number().int().describe('links naming a question that was not imported') }),
  }),
  getQuestionLinks: operation({
    service: 'content',
    summary: 'Links of a question to other questions (duplicate of, duplicates of it, related), oldest first',
    http: { method: 'GET', path: '/questions/:id/links', auth: 'user', tag: 'Questions' },
    params: z.object({ id: Id }),
    response: z.object({ total: z.number().int(), items: z.array(QuestionLink) }),
  }),
  /** For benchmarks of search quality: duplicates as relevant pairs. */
  listQuestionLinks: operation({
    service: 'content',
    summary: 'Links between questions, oldest first',
    query: z.object({ kind: QuestionLinkKind.optional(), question_id: Id.optional(), limit: Limit(100, 10000), offset: Offset }),
    response: z.object({ total: z.number().int(), items: z.array(QuestionLink) }),
  }),
} as const;

/** Events `content.question.imported.*`. */
export const importEvents = {
  /**
   * One per imported question (and again when a later import adds solutions or comments to it):
   * the question with its published solutions and comments, as full as the published events.
   * Notifications ignore it: an import must not send thousands of messages.
   */
  'content.question.imported.v1': z
    .object({
      question: QuestionSnapshot,
      solutions: z.array(EventSolution).describe('the published solutions'),
      comments: z.array(EventComment).describe("the question's and its solutions' comments"),
      external_id: z.string().describe('names the source (stackexchange:beer:post:1)'),
    })
    .describe(
      'a question was imported, or a later import added solutions or comments to it (then again with the complete, current state); notifies nobody',
    ),
} as const;

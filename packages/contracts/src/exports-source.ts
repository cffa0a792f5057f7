import { z } from 'zod';
import { Id, Timestamp } from './common.ts';
import { operation } from './endpoint.ts';
import { ExportTopic } from './exports.ts';

/*
 * Internal operations of the content service for the exports service (no http): the exports
 * service never reads the content schema, it pages through it by request. Pages are keyset
 * pages by question id, bounded by a count and by a size (a NATS message has a size limit): a
 * text longer than `inline_chars` is cut, and its `*_length` tells the exporter to fetch the
 * rest with `exportSourceText`.
 */

export const SourceUser = z.object({
  id: z.number().int(),
  firstname: z.string(),
  lastname: z.string(),
  is_deleted: z.boolean(),
});
export type SourceUser = z.infer<typeof SourceUser>;

export const SourceComment = z.object({
  id: z.number().int(),
  solution_id: z.number().int().nullable(),
  author_id: z.number().int(),
  description: z.string(),
  /** Length (UTF-16 code units) of the whole description; more than `description.length` means it was cut. */
  description_length: z.number().int(),
  upvote_count: z.number().int(),
  is_deleted: z.boolean(),
  created: Timestamp,
  updated: Timestamp,
});
export type SourceComment = z.infer<typeof SourceComment>;

export const SourceSolution = z.object({
  id: z.number().int(),
  author_id: z.number().int(),
  language: z.string(),
  description: z.string(),
  description_length: z.number().int(),
  is_deleted: z.boolean(),
  published: Timestamp.nullable(),
  created: Timestamp,
  updated: Timestamp,
  rating: z.number().nullable(),
  rating_count: z.number().int(),
  upvote_count: z.number().int(),
  accepted_by_question_poser: Timestamp.nullable(),
  validity_period: z.string().nullable(),
  expires: Timestamp.nullable(),
});
export type SourceSolution = z.infer<typeof SourceSolution>;

export const SourceQuestion = z.object({
  id: z.number().int(),
  author_id: z.number().int(),
  language: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  description_length: z.number().int(),
  published: Timestamp.nullable(),
  created: Timestamp,
  updated: Timestamp,
  is_deleted: z.boolean(),
  view_count: z.number().int(),
  upvote_count: z.number().int(),
  category: z.object({ id: z.number().int(), name: z.string() }).nullable(),
  tags: z.array(z.object({ id: z.string(), label: z.string() })),
  /** Published solutions, by id. */
  solutions: z.array(SourceSolution),
  /** Comments on the question and on its solutions, by id (empty unless `include_comments`). */
  comments: z.array(SourceComment),
});
export type SourceQuestion = z.infer<typeof SourceQuestion>;

export const SourcePageRequest = z.object({
  /** Keyset: questions with a larger id. */
  after: z.number().int().min(0).default(0),
  limit: z.number().int().min(1).max(1000).default(500),
  /** Size budget of the page's JSON; the first question is always sent. */
  max_bytes: z.number().int().min(1000).max(4_000_000).default(400_000),
  /** Texts longer than this are cut (fetch the rest with exportSourceText). */
  inline_chars: z.number().int().min(0).max(1_000_000).default(16_384),
  /** Deleted questions, solutions and comments too (marked is_deleted). */
  include_deleted: z.boolean().default(false),
  include_comments: z.boolean().default(true),
  /** Only questions with a tag whose id is a topic's global_concept_id or whose label is a topic's label (case ignored). */
  topics: z.array(ExportTopic).max(1000).optional(),
});

export const exportsSourceOperations = {
  exportSourcePage: operation({
    service: 'content',
    summary: 'A page of published questions by id with their published solutions, comments, tags, category and authors',
    body: SourcePageRequest,
    response: z.object({
      questions: z.array(SourceQuestion),
      /** The authors of the page as the content service knows them (its users projection); unknown ones are missing. */
      users: z.array(SourceUser),
      /** Pass as `after` for the next page; null when this was the last. */
      next_after: z.number().int().nullable(),
    }),
  }),
  exportSourceText: operation({
    service: 'content',
    summary: 'A slice of a long description (question, solution or comment), in UTF-16 code units',
    body: z.object({
      kind: z.enum(['question', 'solution', 'comment']),
      id: Id,
      offset: z.number().int().min(0),
      length: z.number().int().min(1).max(200_000).default(100_000),
    }),
    response: z.object({ text: z.string(), length: z.number().int() }),
  }),
} as const;

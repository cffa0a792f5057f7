import { z } from 'zod';
import { descriptionAnswers } from './answers.ts';
import { DescriptionBody, Id, List, Mentions, Timestamp } from './common.ts';
import { operation } from './endpoint.ts';
import { QuestionSummary } from './questions.ts';

/** Comments on questions and solutions (content service). */

export const Comment = z
  .object({
    id: z.number().int(),
    description: z.string(),
    language: z.string(),
    question_id: z.number().int(),
    solution_id: z.number().int().nullable().describe('null for a comment on the question'),
    user: z.string().describe('/api/v1/users/<user_id>'),
    upvote_count: z.number().int(),
    is_deleted: z.boolean(),
    created: Timestamp,
    updated: Timestamp,
    content_updated: Timestamp,
  })
  .meta({
    id: 'Comment',
    examples: [
      {
        id: 12,
        description: '<p>Dry hopping helps too.</p>',
        language: 'en',
        question_id: 42,
        solution_id: 7,
        user: '/api/v1/users/5',
        upvote_count: 0,
        is_deleted: false,
        created: '2026-11-21T14:03:55.480Z',
        updated: '2026-11-21T14:03:55.480Z',
        content_updated: '2026-11-21T14:03:55.480Z',
      },
    ],
  });
export type Comment = z.infer<typeof Comment>;

const IdParams = z.object({ id: Id });
const tag = 'Comments';

/** Commenting on a question or a solution: one operation on either. */
const createComment = (target: 'questions' | 'solutions', summary: string) =>
  operation({
    service: 'content',
    summary,
    http: {
      method: 'POST',
      path: `/${target}/:id/comments`,
      status: 201,
      auth: 'user',
      tag,
      answers: { 409: 'the question, or the solution, is deleted or not published', ...descriptionAnswers },
    },
    params: IdParams,
    body: DescriptionBody,
    response: Comment,
  });

export const commentsOperations = {
  createQuestionComment: createComment('questions', 'Comment on a question'),
  listQuestionComments: operation({
    service: 'content',
    summary: 'Comments of a question and of its solutions, oldest first',
    http: { method: 'GET', path: '/questions/:id/comments', auth: 'user', tag },
    params: IdParams,
    response: List(Comment),
  }),
  createSolutionComment: createComment('solutions', 'Comment on a solution'),
  updateComment: operation({
    service: 'content',
    summary: 'Change a comment (author or content_admin)',
    http: { method: 'PUT', path: '/comments/:id', auth: 'user', tag, answers: descriptionAnswers },
    params: IdParams,
    body: DescriptionBody,
    response: Comment,
  }),
  deleteComment: operation({
    service: 'content',
    summary: 'Delete a comment (author or content_admin)',
    http: { method: 'DELETE', path: '/comments/:id', status: 204, auth: 'user', tag },
    params: IdParams,
  }),
} as const;

/** A comment as events carry it. */
export const EventComment = z
  .object({
    id: z.number().int(),
    question_id: z.number().int(),
    solution_id: z.number().int().nullable(),
    solution_author_id: z.number().int().nullable().describe('author of the commented solution, null for question comments'),
    author_id: z.number().int(),
    description: z.string(),
    text: z.string(),
    language: z.string(),
    is_deleted: z.boolean(),
    created: Timestamp,
    updated: Timestamp,
  })
  .meta({ id: 'EventComment', description: 'a comment as events carry it' });

/** Events `content.comment.*`. */
export const commentsEvents = {
  'content.comment.created.v1': z
    .object({ comment: EventComment, question: QuestionSummary, mentions: Mentions })
    .describe('a comment on a question (solution_id null) or on a solution'),
  'content.comment.updated.v1': z
    .object({ comment: EventComment, question: QuestionSummary, mentions: Mentions })
    .describe('a comment changed'),
  'content.comment.deleted.v1': z.object({ comment: EventComment, question: QuestionSummary }).describe('a comment was deleted'),
} as const;

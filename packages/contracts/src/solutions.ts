import { z } from 'zod';
import { descriptionAnswers } from './answers.ts';
import { Attachment } from './attachments.ts';
import { Comment, EventComment } from './comments.ts';
import { DescriptionBody, Id, Mentions, Timestamp } from './common.ts';
import { operation } from './endpoint.ts';
import { Question, QuestionSummary } from './questions.ts';

/** Solutions and their validation (content service). */

export const ValidityPeriods = ['months_three', 'months_six', 'year_one', 'years_two', 'unlimited'] as const;
export const ValidityPeriod = z.enum(ValidityPeriods);
export type ValidityPeriod = z.infer<typeof ValidityPeriod>;

export const Solution = z
  .object({
    id: z.number().int(),
    language: z.string(),
    is_published: z.boolean(),
    published: Timestamp.nullable(),
    rating: z.number().nullable(),
    rating_count: z.number().int(),
    description: z.string(),
    user: z.string().describe('/api/v1/users/<user_id>'),
    is_deleted: z.boolean(),
    created: Timestamp,
    updated: Timestamp,
    content_updated: Timestamp,
    question: z.string().describe('/api/v1/questions/<question_id>'),
    tag_relations: z.array(z.unknown()).describe('deprecated; always empty'),
    attachments: z.string().describe('/api/v1/solutions/<solution_id>/attachments'),
    validity_period: z.string().nullable(),
    expires: Timestamp.nullable(),
    upvote_count: z.number().int(),
    accepted_by_question_poser: Timestamp.nullable().describe('when the question poser accepted the solution'),
  })
  .meta({
    id: 'Solution',
    examples: [
      {
        id: 7,
        language: 'en',
        is_published: true,
        published: '2026-11-21T14:03:55.480Z',
        rating: 4.5,
        rating_count: 2,
        description: '<p>Citra and Mosaic, late in the boil.</p>',
        user: '/api/v1/users/3',
        is_deleted: false,
        created: '2026-11-21T14:03:55.480Z',
        updated: '2026-11-21T14:03:55.480Z',
        content_updated: '2026-11-21T14:03:55.480Z',
        question: '/api/v1/questions/42',
        tag_relations: [],
        attachments: '/api/v1/solutions/7/attachments',
        validity_period: 'months_six',
        expires: '2027-05-21T14:03:55.480Z',
        upvote_count: 1,
        accepted_by_question_poser: null,
      },
    ],
  });
export type Solution = z.infer<typeof Solution>;
/** The create response has no `language`; the draft response has no `accepted_by_question_poser`. */
export const CreatedSolution = Solution.omit({ language: true }).meta({ id: 'CreatedSolution' });
export const DraftSolution = Solution.omit({ accepted_by_question_poser: true }).meta({ id: 'DraftSolution' });

const IdParams = z.object({ id: Id });
const LastRequested = z.object({ last_requested: Timestamp.nullable() }).meta({ id: 'ValidationRequest' });
const tag = 'Solutions';

export const solutionsOperations = {
  createSolution: operation({
    service: 'content',
    summary: 'Create a draft solution (a second call updates the caller’s existing draft)',
    http: {
      method: 'POST',
      path: '/questions/:id/solutions',
      status: 201,
      auth: 'user',
      tag,
      description: 'The question must be published and not deleted (else 409 Conflict). Drafts are not published automatically.',
      answers: { 409: 'the question is not published, or deleted', ...descriptionAnswers },
    },
    params: IdParams,
    body: DescriptionBody,
    response: CreatedSolution,
  }),
  getSolutionDraft: operation({
    service: 'content',
    summary: 'The caller’s draft solution of a question (204 when none)',
    http: {
      method: 'GET',
      path: '/questions/:id/solutions/draft',
      auth: 'user',
      tag,
      answers: { 204: 'the caller has no draft for the question' },
    },
    params: IdParams,
    response: DraftSolution.optional(),
  }),
  getCompleteQuestion: operation({
    service: 'content',
    summary: 'A question with its solutions (best rated first), comments and attachments',
    http: { method: 'GET', path: '/questions/:id/complete', auth: 'user', tag: 'Questions' },
    params: IdParams,
    response: Question.extend({
      solutions: z.array(Solution),
      comments: z.array(Comment),
      attachments: z.array(Attachment).describe('attachments of the question itself'),
    }).meta({ id: 'CompleteQuestion' }),
  }),
  getSolution: operation({
    service: 'content',
    summary: 'Get a solution',
    http: { method: 'GET', path: '/solutions/:id', auth: 'user', tag },
    params: IdParams,
    response: Solution,
  }),
  updateSolution: operation({
    service: 'content',
    summary: 'Change a solution’s description (author or content_admin); restarts its validity period',
    http: { method: 'PUT', path: '/solutions/:id', auth: 'user', tag, answers: { 409: 'the solution is deleted', ...descriptionAnswers } },
    params: IdParams,
    body: DescriptionBody,
    response: Solution,
  }),
  publishSolution: operation({
    service: 'content',
    summary: 'Publish a draft solution (author or content_admin)',
    http: {
      method: 'PUT',
      path: '/solutions/:id/publish',
      auth: 'user',
      tag,
      answers: { 409: 'the solution is deleted or already published, or its question is not open' },
    },
    params: IdParams,
    response: Solution,
  }),
  deleteSolution: operation({
    service: 'content',
    summary: 'Soft-delete a solution (author or content_admin)',
    http: { method: 'DELETE', path: '/solutions/:id', status: 204, auth: 'user', tag },
    params: IdParams,
  }),
  restoreSolution: operation({
    service: 'content',
    summary: 'Restore a deleted solution (author or content_admin); 200 without body',
    http: {
      method: 'PUT',
      path: '/solutions/:id/restore',
      status: 200,
      auth: 'user',
      tag,
      answers: { 409: 'the solution is not deleted, or its author has another draft for the question' },
    },
    params: IdParams,
  }),
  rateSolution: operation({
    service: 'content',
    summary: 'Rate a published solution from 1 to 5 (a second rating replaces the first)',
    http: { method: 'PUT', path: '/solutions/:id/rating', auth: 'user', tag, answers: { 409: 'the solution is deleted or not published' } },
    params: IdParams,
    body: z.object({ rating: z.number().int().min(1).max(5) }),
    response: Solution,
  }),
  acceptSolution: operation({
    service: 'content',
    summary: 'Accept a published solution (the question poser only)',
    http: { method: 'PUT', path: '/solutions/:id/accept', auth: 'user', tag, answers: { 409: 'the solution is deleted or not published' } },
    params: IdParams,
    response: Solution,
  }),
  upvoteSolution: operation({
    service: 'content',
    summary: 'Upvote a published solution (idempotent)',
    http: { method: 'PUT', path: '/solutions/:id/upvote', auth: 'user', tag, answers: { 409: 'the solution is deleted or not published' } },
    params: IdParams,
    response: Solution,
  }),
  removeSolutionUpvote: operation({
    service: 'content',
    summary: 'Take back an upvote (idempotent)',
    http: {
      method: 'DELETE',
      path: '/solutions/:id/upvote',
      auth: 'user',
      tag,
      answers: { 409: 'the solution is deleted or not published' },
    },
    params: IdParams,
    response: Solution,
  }),
  listMyUpvotes: operation({
    service: 'content',
    summary: 'The solutions of a question the caller upvoted',
    http: {
      method: 'GET',
      path: '/questions/:id/upvotes/mine',
      auth: 'user',
      tag,
      description:
        'The ids of the question’s published, live solutions the caller upvoted, in ascending order: the Solution resource does not say whether its reader upvoted it, so a page shows its upvote buttons’ state from this.',
    },
    params: IdParams,
    response: z.object({ solution_ids: z.array(z.number().int()) }).meta({ id: 'MyUpvotes' }),
  }),
  validateSolution: operation({
    service: 'content',
    summary: 'Validate a solution for a period (solution poser or administrator)',
    http: { method: 'POST', path: '/solutions/:id/validate', auth: 'user', tag, answers: { 409: 'the solution is deleted' } },
    params: IdParams,
    body: z.object({ validity: ValidityPeriod }),
    response: Solution,
  }),
  convertCommentToSolution: operation({
    service: 'content',
    summary: 'Turn a comment into a published solution of its question (comment author or content_admin)',
    http: {
      method: 'PUT',
      path: '/comments/:id/to-solution',
      auth: 'user',
      tag: 'Comments',
      answers: { 409: 'the question is not open, or a solution of the comment exists' },
    },
    params: IdParams,
    response: Solution,
  }),
  getValidationRequest: operation({
    service: 'content',
    summary: 'When a validation of the question’s solutions was last requested (null if never)',
    http: { method: 'GET', path: '/questions/:id/request-validation', auth: 'user', tag },
    params: IdParams,
    response: LastRequested,
  }),
  requestValidation: operation({
    service: 'content',
    summary: 'Request a validation: authors of expired solutions are notified',
    http: {
      method: 'PUT',
      path: '/questions/:id/request-validation',
      auth: 'user',
      tag,
      answers: { 409: 'the question is not published, or deleted' },
    },
    params: IdParams,
    response: LastRequested,
  }),
} as const;

/** A solution as events carry it. */
export const EventSolution = z
  .object({
    id: z.number().int(),
    question_id: z.number().int(),
    author_id: z.number().int(),
    description: z.string().describe('sanitized HTML with mention markup'),
    text: z.string().describe('the description as plain text, for search'),
    language: z.string(),
    is_published: z.boolean(),
    published: Timestamp.nullable(),
    is_deleted: z.boolean(),
    rating: z.number().nullable().describe('the average rating, null without ratings'),
    rating_count: z.number().int(),
    upvote_count: z.number().int(),
    accepted_by_question_poser: Timestamp.nullable(),
    validity_period: ValidityPeriod.nullable(),
    expires: Timestamp.nullable(),
    created: Timestamp,
    updated: Timestamp,
    content_updated: Timestamp,
  })
  .meta({ id: 'EventSolution', description: 'a solution as events carry it' });
export type EventSolution = z.infer<typeof EventSolution>;

const solutionEvent = z.object({ solution: EventSolution, question: QuestionSummary });
const UserId = z.number().int();

/** Events `content.solution.*` and the validation request of a question's solutions. */
export const solutionsEvents = {
  'content.solution.created.v1': solutionEvent
    .extend({ mentions: Mentions })
    .describe("a draft solution was created, or the caller's existing draft rewritten by a second create"),
  'content.solution.updated.v1': solutionEvent
    .extend({ mentions: Mentions, previous_description: z.string() })
    .describe(
      'the description changed, draft or published (restarts the validity period: expires is the new end); when solution.is_published, notify question.followers',
    ),
  'content.solution.published.v1': solutionEvent
    .extend({ mentions: Mentions })
    .describe('a draft solution was published; notify question.author_id and question.followers'),
  'content.solution.deleted.v1': solutionEvent.describe('a solution was soft-deleted'),
  'content.solution.restored.v1': solutionEvent.describe('a deleted solution was restored'),
  'content.solution.rated.v1': solutionEvent
    .extend({
      rater_id: UserId,
      rating: z.number().int().describe('1 to 5'),
      by_question_poser: z.boolean(),
      raters: z.array(UserId).describe('every user who has rated the solution, this rater included'),
    })
    .describe('a user rated a solution (or changed their rating)'),
  'content.solution.accepted.v1': solutionEvent.describe(
    'the question poser accepted the solution (acceptance of another solution of the question is withdrawn)',
  ),
  'content.solution.upvoted.v1': solutionEvent.extend({ user_id: UserId }).describe('a user upvoted (not repeated for a second upvote)'),
  'content.solution.upvote-removed.v1': solutionEvent.extend({ user_id: UserId }).describe('a user took the upvote back'),
  'content.solution.validated.v1': solutionEvent.extend({ validated_by: UserId }).describe('POST /solutions/:id/validate'),
  'content.solution.expired.v1': solutionEvent.describe(
    'the expiry job found expires passed while solution_validation_enabled is on; once per expiry (actor_id null); notify solution.author_id',
  ),
  'content.comment.converted.v1': z
    .object({ comment: EventComment, solution: EventSolution, question: QuestionSummary })
    .describe(
      "PUT /comments/:id/to-solution: the comment became a published solution by the comment's author (notify comment.author_id); the comment is deleted, with no separate comment.deleted or solution.published event",
    ),
  'content.question.validation-requested.v1': z
    .object({
      question: QuestionSummary,
      requested_by: UserId,
      last_requested: Timestamp,
      expired_solutions: z
        .array(z.object({ id: z.number().int(), author_id: UserId }))
        .describe('expired, published solutions of the question and their authors: they are asked to validate'),
    })
    .describe(
      'PUT /questions/:id/request-validation: notify the authors of expired_solutions; the search service routes the question again (search.experts.found.v1)',
    ),
} as const;

import { z } from 'zod';
import { Id, Timestamp } from './common.ts';
import { operation } from './endpoint.ts';
import { Question } from './questions.ts';
import { User } from './users.ts';

/** Operations on solutions, comments, attachments, forwards, shares and validation (content service). */

export const ValidityPeriods = ['months_three', 'months_six', 'year_one', 'years_two', 'unlimited'] as const;
export const ValidityPeriod = z.enum(ValidityPeriods);
export type ValidityPeriod = z.infer<typeof ValidityPeriod>;

/** Attachment bytes live in one JetStream object store bucket per system (namespace). */
export const attachmentBucket = (contentStreamName: string) => `${contentStreamName}_ATTACHMENTS`;

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
  .meta({ id: 'Solution' });
export type Solution = z.infer<typeof Solution>;
/** The create response has no `language`; the draft response has no `accepted_by_question_poser`. */
export const CreatedSolution = Solution.omit({ language: true }).meta({ id: 'CreatedSolution' });
export const DraftSolution = Solution.omit({ accepted_by_question_poser: true }).meta({ id: 'DraftSolution' });

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
  .meta({ id: 'Comment' });
export type Comment = z.infer<typeof Comment>;

export const Attachment = z
  .object({
    id: z.number().int(),
    name: z.string(),
    mime_type: z.string(),
    size: z.number().int(),
    hash: z.string().describe('sha256 of the bytes, hex'),
    link: z.string().describe('/api/v1/attachments/<id>/file'),
    created: Timestamp,
  })
  .meta({ id: 'Attachment' });
export type Attachment = z.infer<typeof Attachment>;

const List = <T extends z.ZodType>(item: T) => z.object({ total: z.number().int(), items: z.array(item) });

/** Metadata of an upload the gateway has put into the object store. */
export const AttachmentUpload = z.object({
  object: z.string().min(1).max(200),
  name: z.string().min(1).max(255),
  mime_type: z.string().min(1).max(255),
  size: z.number().int().min(1),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
});
/** Where stored bytes are: the gateway streams them from this object in the owning service's bucket. */
export const AttachmentDownload = z.object({
  object: z.string(),
  name: z.string(),
  mime_type: z.string(),
  size: z.number().int(),
  /** The bucket: attachments (content, the default) or export files (exports). */
  bucket: z.enum(['attachments', 'exports']).optional(),
});

const Description = z.string().min(1, 'description must not be empty');
const DescriptionBody = z.object({ description: Description });
const IdParams = z.object({ id: Id });
const Recipients = z.array(Id).min(1).max(1000);
const Message = z.string().max(10000).optional();
const ShareBody = z.object({ recipients: Recipients, message: Message });
const LastRequested = z.object({ last_requested: Timestamp.nullable() }).meta({ id: 'ValidationRequest' });

export const ForwardItem = z
  .object({
    user_id: z.number().int().describe('deprecated: use user.id'),
    user: User,
    count: z.number().int(),
  })
  .meta({ id: 'ForwardItem' });

const tag = 'Solutions';
const comments = 'Comments';
const attachments = 'Attachments';
const sharing = 'Forward and share';

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
    },
    params: IdParams,
    body: DescriptionBody,
    response: CreatedSolution,
  }),
  getSolutionDraft: operation({
    service: 'content',
    summary: 'The caller’s draft solution of a question (204 when none)',
    http: { method: 'GET', path: '/questions/:id/solutions/draft', auth: 'user', tag },
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
    http: { method: 'PUT', path: '/solutions/:id', auth: 'user', tag },
    params: IdParams,
    body: DescriptionBody,
    response: Solution,
  }),
  publishSolution: operation({
    service: 'content',
    summary: 'Publish a draft solution (author or content_admin)',
    http: { method: 'PUT', path: '/solutions/:id/publish', auth: 'user', tag },
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
    http: { method: 'PUT', path: '/solutions/:id/restore', status: 200, auth: 'user', tag },
    params: IdParams,
  }),
  rateSolution: operation({
    service: 'content',
    summary: 'Rate a published solution from 1 to 5 (a second rating replaces the first)',
    http: { method: 'PUT', path: '/solutions/:id/rating', auth: 'user', tag },
    params: IdParams,
    body: z.object({ rating: z.number().int().min(1).max(5) }),
    response: Solution,
  }),
  acceptSolution: operation({
    service: 'content',
    summary: 'Accept a published solution (the question poser only)',
    http: { method: 'PUT', path: '/solutions/:id/accept', auth: 'user', tag },
    params: IdParams,
    response: Solution,
  }),
  upvoteSolution: operation({
    service: 'content',
    summary: 'Upvote a published solution (idempotent)',
    http: { method: 'PUT', path: '/solutions/:id/upvote', auth: 'user', tag },
    params: IdParams,
    response: Solution,
  }),
  removeSolutionUpvote: operation({
    service: 'content',
    summary: 'Take back an upvote (idempotent)',
    http: { method: 'DELETE', path: '/solutions/:id/upvote', auth: 'user', tag },
    params: IdParams,
    response: Solution,
  }),
  validateSolution: operation({
    service: 'content',
    summary: 'Validate a solution for a period (solution poser or administrator)',
    http: { method: 'POST', path: '/solutions/:id/validate', auth: 'user', tag },
    params: IdParams,
    body: z.object({ validity: ValidityPeriod }),
    response: Solution,
  }),
  shareSolution: operation({
    service: 'content',
    summary: 'Share a published solution with users',
    http: { method: 'POST', path: '/solutions/:id/share', status: 200, auth: 'user', tag: sharing },
    params: IdParams,
    body: ShareBody,
  }),

  createQuestionComment: operation({
    service: 'content',
    summary: 'Comment on a question',
    http: { method: 'POST', path: '/questions/:id/comments', status: 201, auth: 'user', tag: comments },
    params: IdParams,
    body: DescriptionBody,
    response: Comment,
  }),
  listQuestionComments: operation({
    service: 'content',
    summary: 'Comments of a question and of its solutions, oldest first',
    http: { method: 'GET', path: '/questions/:id/comments', auth: 'user', tag: comments },
    params: IdParams,
    response: List(Comment),
  }),
  createSolutionComment: operation({
    service: 'content',
    summary: 'Comment on a solution',
    http: { method: 'POST', path: '/solutions/:id/comments', status: 201, auth: 'user', tag: comments },
    params: IdParams,
    body: DescriptionBody,
    response: Comment,
  }),
  convertCommentToSolution: operation({
    service: 'content',
    summary: 'Turn a comment into a published solution of its question (comment author or content_admin)',
    http: { method: 'PUT', path: '/comments/:id/to-solution', auth: 'user', tag: comments },
    params: IdParams,
    response: Solution,
  }),
  updateComment: operation({
    service: 'content',
    summary: 'Change a comment (author or content_admin)',
    http: { method: 'PUT', path: '/comments/:id', auth: 'user', tag: comments },
    params: IdParams,
    body: DescriptionBody,
    response: Comment,
  }),
  deleteComment: operation({
    service: 'content',
    summary: 'Delete a comment (author or content_admin)',
    http: { method: 'DELETE', path: '/comments/:id', status: 204, auth: 'user', tag: comments },
    params: IdParams,
  }),

  addQuestionAttachment: operation({
    service: 'content',
    summary: 'Attach a file to a question (multipart/form-data, field file)',
    http: {
      method: 'POST',
      path: '/questions/:id/attachments',
      status: 201,
      auth: 'user',
      tag: attachments,
      upload: true,
      description:
        'multipart/form-data with one file in the field `file`; at most ATTACHMENT_MAX_BYTES (413 FileTooLarge); empty files are refused.',
    },
    params: IdParams,
    body: AttachmentUpload,
    response: Attachment,
  }),
  listQuestionAttachments: operation({
    service: 'content',
    summary: 'Attachments of a question',
    http: { method: 'GET', path: '/questions/:id/attachments', auth: 'user', tag: attachments },
    params: IdParams,
    response: List(Attachment),
  }),
  addSolutionAttachment: operation({
    service: 'content',
    summary: 'Attach a file to a solution (multipart/form-data, field file)',
    http: {
      method: 'POST',
      path: '/solutions/:id/attachments',
      status: 201,
      auth: 'user',
      tag: attachments,
      upload: true,
      description:
        'multipart/form-data with one file in the field `file`; at most ATTACHMENT_MAX_BYTES (413 FileTooLarge); empty files are refused.',
    },
    params: IdParams,
    body: AttachmentUpload,
    response: Attachment,
  }),
  listSolutionAttachments: operation({
    service: 'content',
    summary: 'Attachments of a solution',
    http: { method: 'GET', path: '/solutions/:id/attachments', auth: 'user', tag: attachments },
    params: IdParams,
    response: List(Attachment),
  }),
  downloadAttachment: operation({
    service: 'content',
    summary: 'The bytes of an attachment, with their content type',
    http: { method: 'GET', path: '/attachments/:id/file', auth: 'user', tag: attachments, download: true },
    params: IdParams,
    response: AttachmentDownload,
  }),
  deleteAttachment: operation({
    service: 'content',
    summary: 'Delete an attachment (uploader or content_admin)',
    http: { method: 'DELETE', path: '/attachments/:id', status: 204, auth: 'user', tag: attachments },
    params: IdParams,
  }),

  forwardQuestion: operation({
    service: 'content',
    summary: 'Recommend a question to a user who might answer it',
    http: { method: 'POST', path: '/questions/:id/forward', status: 200, auth: 'user', tag: sharing },
    params: IdParams,
    body: z
      .object({ recipient: Id.optional(), user_id: Id.optional().describe('deprecated: use recipient'), message: Message })
      .refine((b) => b.recipient !== undefined || b.user_id !== undefined, { message: 'recipient is required', path: ['recipient'] }),
  }),
  listQuestionForwards: operation({
    service: 'content',
    summary: 'Users a question was forwarded to, with how often',
    http: { method: 'GET', path: '/questions/:id/forward', auth: 'user', tag: sharing },
    params: IdParams,
    response: List(ForwardItem),
  }),
  shareQuestion: operation({
    service: 'content',
    summary: 'Share a question with users',
    http: { method: 'POST', path: '/questions/:id/share', status: 200, auth: 'user', tag: sharing },
    params: IdParams,
    body: ShareBody,
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
    http: { method: 'PUT', path: '/questions/:id/request-validation', auth: 'user', tag },
    params: IdParams,
    response: LastRequested,
  }),
} as const;

/** The question as events about its solutions, comments and attachments carry it. */
export const EventQuestion = z.object({
  id: z.number().int(),
  title: z.string(),
  author_id: z.number().int(),
  is_published: z.boolean(),
  knowledge_space_id: z.number().int().nullable(),
  /** Users following the question when the event happened. */
  followers: z.array(z.number().int()),
});
export type EventQuestion = z.infer<typeof EventQuestion>;

export const EventSolution = z.object({
  id: z.number().int(),
  question_id: z.number().int(),
  author_id: z.number().int(),
  description: z.string(),
  /** The description as plain text, for search. */
  text: z.string(),
  language: z.string(),
  is_published: z.boolean(),
  published: Timestamp.nullable(),
  is_deleted: z.boolean(),
  rating: z.number().nullable(),
  rating_count: z.number().int(),
  upvote_count: z.number().int(),
  accepted_by_question_poser: Timestamp.nullable(),
  validity_period: ValidityPeriod.nullable(),
  expires: Timestamp.nullable(),
  created: Timestamp,
  updated: Timestamp,
  content_updated: Timestamp,
});
export type EventSolution = z.infer<typeof EventSolution>;

export const EventComment = z.object({
  id: z.number().int(),
  question_id: z.number().int(),
  solution_id: z.number().int().nullable(),
  /** Author of the commented solution, null for question comments. */
  solution_author_id: z.number().int().nullable(),
  author_id: z.number().int(),
  description: z.string(),
  text: z.string(),
  language: z.string(),
  is_deleted: z.boolean(),
  created: Timestamp,
  updated: Timestamp,
});

export const EventAttachment = z.object({
  id: z.number().int(),
  question_id: z.number().int(),
  solution_id: z.number().int().nullable(),
  uploader_id: z.number().int(),
  name: z.string(),
  mime_type: z.string(),
  size: z.number().int(),
  hash: z.string(),
  created: Timestamp,
});

const Mentions = z.array(z.number().int()).describe('ids of users mentioned in the description');
const solutionEvent = z.object({ solution: EventSolution, question: EventQuestion });

/** Events `content.solution.*`, `content.comment.*`, `content.attachment.*` and forward, share, validation request. */
export const solutionsEvents = {
  'content.solution.created.v1': solutionEvent.extend({ mentions: Mentions }),
  'content.solution.updated.v1': solutionEvent.extend({ mentions: Mentions, previous_description: z.string() }),
  'content.solution.published.v1': solutionEvent.extend({ mentions: Mentions }),
  'content.solution.deleted.v1': solutionEvent,
  'content.solution.restored.v1': solutionEvent,
  'content.solution.rated.v1': solutionEvent.extend({
    rater_id: z.number().int(),
    rating: z.number().int(),
    by_question_poser: z.boolean(),
    /** Every user who has rated the solution, including this rater. */
    raters: z.array(z.number().int()),
  }),
  'content.solution.accepted.v1': solutionEvent,
  'content.solution.upvoted.v1': solutionEvent.extend({ user_id: z.number().int() }),
  'content.solution.upvote-removed.v1': solutionEvent.extend({ user_id: z.number().int() }),
  'content.solution.validated.v1': solutionEvent.extend({ validated_by: z.number().int() }),
  'content.solution.expired.v1': solutionEvent,
  'content.solution.shared.v1': solutionEvent.extend({
    sender_id: z.number().int(),
    recipients: z.array(z.number().int()),
    message: z.string().nullable(),
  }),
  'content.comment.created.v1': z.object({ comment: EventComment, question: EventQuestion, mentions: Mentions }),
  'content.comment.updated.v1': z.object({ comment: EventComment, question: EventQuestion, mentions: Mentions }),
  'content.comment.deleted.v1': z.object({ comment: EventComment, question: EventQuestion }),
  'content.comment.converted.v1': z.object({ comment: EventComment, solution: EventSolution, question: EventQuestion }),
  'content.attachment.added.v1': z.object({
    attachment: EventAttachment,
    question: EventQuestion,
    /** Text extracted from plain text, HTML, PDF and DOCX files (empty otherwise), at most 100,000 characters. */
    text: z.string(),
  }),
  'content.attachment.deleted.v1': z.object({ attachment: EventAttachment, question: EventQuestion }),
  'content.question.forwarded.v1': z.object({
    question: EventQuestion,
    sender_id: z.number().int(),
    recipient_id: z.number().int(),
    message: z.string().nullable(),
  }),
  'content.question.shared.v1': z.object({
    question: EventQuestion,
    sender_id: z.number().int(),
    recipients: z.array(z.number().int()),
    message: z.string().nullable(),
  }),
  'content.question.validation-requested.v1': z.object({
    question: EventQuestion,
    requested_by: z.number().int(),
    last_requested: Timestamp,
    /** Expired, published solutions of the question and their authors: they are asked to validate. */
    expired_solutions: z.array(z.object({ id: z.number().int(), author_id: z.number().int() })),
  }),
} as const;

import { z } from 'zod';
import { Id, List } from './common.ts';
import { operation } from './endpoint.ts';
import { QuestionSummary } from './questions.ts';
import { EventSolution } from './solutions.ts';
import { User } from './users.ts';

/** Forwarding a question to someone who might answer it, sharing questions and solutions (content service). */

export const ForwardItem = z
  .object({
    user_id: z.number().int().describe('deprecated: use user.id'),
    user: User,
    count: z.number().int(),
  })
  .meta({ id: 'ForwardItem' });

const IdParams = z.object({ id: Id });
const Message = z.string().max(10000).optional();
const ShareBody = z.object({ recipients: z.array(Id).min(1).max(1000), message: Message });
const tag = 'Forward and share';

export const sharingOperations = {
  forwardQuestion: operation({
    service: 'content',
    summary: 'Recommend a question to a user who might answer it',
    http: {
      method: 'POST',
      path: '/questions/:id/forward',
      status: 200,
      auth: 'user',
      tag,
      answers: { 404: 'a recipient does not exist (NotFound, naming the field)', 409: 'the question is not published, or deleted' },
    },
    params: IdParams,
    body: z
      .object({ recipient: Id.optional(), user_id: Id.optional().describe('deprecated: use recipient'), message: Message })
      .refine((b) => b.recipient !== undefined || b.user_id !== undefined, { message: 'recipient is required', path: ['recipient'] })
      // What the refine says, for the OpenAPI document.
      .meta({ anyOf: [{ required: ['recipient'] }, { required: ['user_id'] }] }),
  }),
  declineQuestion: operation({
    service: 'content',
    summary: 'Not me: the caller will not answer this question (routing passes it on); once per person and question',
    http: {
      method: 'POST',
      path: '/questions/:id/decline',
      status: 204,
      auth: 'user',
      tag,
      answers: { 409: 'the question is not published, or deleted, or it is the caller’s own' },
    },
    params: IdParams,
  }),
  listQuestionForwards: operation({
    service: 'content',
    summary: 'Users a question was forwarded to, with how often',
    http: { method: 'GET', path: '/questions/:id/forward', auth: 'user', tag },
    params: IdParams,
    response: List(ForwardItem),
  }),
  shareQuestion: operation({
    service: 'content',
    summary: 'Share a question with users',
    http: {
      method: 'POST',
      path: '/questions/:id/share',
      status: 200,
      auth: 'user',
      tag,
      answers: { 404: 'a recipient does not exist (NotFound, naming the field)', 409: 'the question is not published, or deleted' },
    },
    params: IdParams,
    body: ShareBody,
  }),
  shareSolution: operation({
    service: 'content',
    summary: 'Share a published solution with users',
    http: {
      method: 'POST',
      path: '/solutions/:id/share',
      status: 200,
      auth: 'user',
      tag,
      answers: { 404: 'a recipient does not exist (NotFound, naming the field)', 409: 'the solution is deleted or not published' },
    },
    params: IdParams,
    body: ShareBody,
  }),
} as const;

const UserId = z.number().int();
const SentMessage = z.string().nullable();

/** Events of forwarding and sharing. */
export const sharingEvents = {
  'content.question.forwarded.v1': z
    .object({ question: QuestionSummary, sender_id: UserId, recipient_id: UserId, message: SentMessage })
    .describe('POST /questions/:id/forward: notify recipient_id (question_forwarded)'),
  'content.question.declined.v1': z
    .object({ question: QuestionSummary, user_id: UserId.describe('who declined') })
    .describe('POST /questions/:id/decline ("not me", also from chat): the first decline of the question by user_id; notifies nobody'),
  'content.question.shared.v1': z
    .object({
      question: QuestionSummary,
      sender_id: UserId,
      recipients: z.array(UserId).describe('distinct, existing users'),
      message: SentMessage,
    })
    .describe('POST /questions/:id/share: notify each recipient (share_question)'),
  'content.solution.shared.v1': z
    .object({
      solution: EventSolution,
      question: QuestionSummary,
      sender_id: UserId,
      recipients: z.array(UserId).describe('distinct, existing users'),
      message: SentMessage,
    })
    .describe('POST /solutions/:id/share: notify each recipient (share_solution)'),
} as const;

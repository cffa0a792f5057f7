import { z } from 'zod';
import { attachmentTextAnswers } from './answers.ts';
import { Id, List, Timestamp } from './common.ts';
import { operation } from './endpoint.ts';
import { QuestionSummary } from './questions.ts';

/** Attachments of questions and solutions (content service); their bytes live in the JetStream object store. */

/** Attachment bytes live in one JetStream object store bucket per system (namespace). */
export const attachmentBucket = (contentStreamName: string) => `${contentStreamName}_ATTACHMENTS`;

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
  .meta({
    id: 'Attachment',
    examples: [
      {
        id: 3,
        name: 'recipe.pdf',
        mime_type: 'application/pdf',
        size: 48213,
        hash: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
        link: '/api/v1/attachments/3/file',
        created: '2026-11-20T09:15:02.123Z',
      },
    ],
  });
export type Attachment = z.infer<typeof Attachment>;

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

const IdParams = z.object({ id: Id });
const tag = 'Attachments';

/** Attaching a file to a question or a solution: one upload operation on either. */
const addAttachment = (target: 'questions' | 'solutions', summary: string) =>
  operation({
    service: 'content',
    summary,
    http: {
      method: 'POST',
      path: `/${target}/:id/attachments`,
      status: 201,
      auth: 'user',
      tag,
      upload: true,
      description:
        'multipart/form-data with one file in the field `file`; at most ATTACHMENT_MAX_BYTES (413 FileTooLarge); empty files are refused.',
      answers: { 409: 'the question, or the solution, is deleted', ...attachmentTextAnswers },
    },
    params: IdParams,
    body: AttachmentUpload,
    response: Attachment,
  });

export const attachmentsOperations = {
  addQuestionAttachment: addAttachment('questions', 'Attach a file to a question (multipart/form-data, field file)'),
  listQuestionAttachments: operation({
    service: 'content',
    summary: 'Attachments of a question',
    http: { method: 'GET', path: '/questions/:id/attachments', auth: 'user', tag },
    params: IdParams,
    response: List(Attachment),
  }),
  addSolutionAttachment: addAttachment('solutions', 'Attach a file to a solution (multipart/form-data, field file)'),
  listSolutionAttachments: operation({
    service: 'content',
    summary: 'Attachments of a solution',
    http: { method: 'GET', path: '/solutions/:id/attachments', auth: 'user', tag },
    params: IdParams,
    response: List(Attachment),
  }),
  downloadAttachment: operation({
    service: 'content',
    summary: 'The bytes of an attachment, with their content type',
    http: { method: 'GET', path: '/attachments/:id/file', auth: 'user', tag, download: '*/*' },
    params: IdParams,
    response: AttachmentDownload,
  }),
  deleteAttachment: operation({
    service: 'content',
    summary: 'Delete an attachment (uploader or content_admin)',
    http: { method: 'DELETE', path: '/attachments/:id', status: 204, auth: 'user', tag },
    params: IdParams,
  }),
} as const;

/** An attachment as events carry it. */
export const EventAttachment = z
  .object({
    id: z.number().int(),
    question_id: z.number().int(),
    solution_id: z.number().int().nullable(),
    uploader_id: z.number().int(),
    name: z.string(),
    mime_type: z.string(),
    size: z.number().int(),
    hash: z.string().describe('sha256 of the bytes, hex'),
    created: Timestamp,
  })
  .meta({ id: 'EventAttachment', description: 'an attachment as events carry it (its bytes stay in the object store)' });

/** Events `content.attachment.*`. */
export const attachmentsEvents = {
  'content.attachment.added.v1': z
    .object({
      attachment: EventAttachment,
      question: QuestionSummary,
      text: z.string().describe('text extracted from plain text, HTML, PDF and DOCX files (empty otherwise), at most 100,000 characters'),
    })
    .describe('a file was attached to a question or solution'),
  'content.attachment.deleted.v1': z
    .object({ attachment: EventAttachment, question: QuestionSummary })
    .describe('an attachment was deleted'),
} as const;

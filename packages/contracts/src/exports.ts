import { z } from 'zod';
import { AttachmentDownload } from './attachments.ts';
import { Id, QueryBoolean, Timestamp } from './common.ts';
import { operation } from './endpoint.ts';
import { trimmedText } from './text.ts';

/**
 * Exports (exports service, docs/exports.md): a topic-content export (UTF-16LE tab-separated text)
 * and a content export (zipped XML with its XSD). Triggering answers at once with the record in
 * status `processing`; a worker writes the file into the exports bucket of the JetStream object
 * store, where it stays.
 */

export const ExportStatuses = ['processing', 'success', 'error'] as const;
export const ExportStatus = z.enum(ExportStatuses);
export type ExportStatus = z.infer<typeof ExportStatus>;

export const ExportKinds = ['topic_content', 'content'] as const;
export const ExportKind = z.enum(ExportKinds);
export type ExportKind = z.infer<typeof ExportKind>;

export const ExportRecord = z
  .object({
    export_id: z.number().int(),
    status: ExportStatus,
    start_date: Timestamp,
    end_date: Timestamp.nullable().describe('set when finished successfully'),
    file_size: z.number().int().nullable().describe('bytes; set on success'),
    count: z
      .number()
      .int()
      .nullable()
      .describe('exported questions (content export) or rows (topic-content export, header row not counted); set on success'),
    filename: z.string(),
    message: z.string().nullable().describe('why the export failed (status error)'),
    user_id: z.number().int().describe('who triggered it'),
  })
  .meta({
    id: 'ExportRecord',
    examples: [
      {
        export_id: 5,
        status: 'success',
        start_date: '2026-11-20T09:15:02.123Z',
        end_date: '2026-11-21T14:03:55.480Z',
        file_size: 120334,
        count: 1029,
        filename: 'Knowledge Network_content_export_20261120-091502.xml.zip',
        message: null,
        user_id: 1,
      },
    ],
  });
export type ExportRecord = z.infer<typeof ExportRecord>;

export const ExportTopic = z
  .object({
    global_concept_id: trimmedText({ min: 1, max: 191 }).describe('a tag id (the concept_id of `concepts` on questions)'),
    label: trimmedText({ min: 1, max: 191 }).describe('the topic label; also matches a tag of that label (case ignored)'),
  })
  .meta({ id: 'ExportTopic' });
export type ExportTopic = z.infer<typeof ExportTopic>;

export const TopicContentExportRequest = z.object({ topics: z.array(ExportTopic).min(1).max(1000) });

export const ContentExportOptions = z.object({
  anonymised: z.boolean().optional().describe('default true: question posers are not exposed'),
  exclude_deleted: z.boolean().optional().describe('default false: deleted questions, solutions and comments are exported, marked'),
});
const ContentExportQuery = z.object({
  anonymised: QueryBoolean.optional().describe('default true; the body field wins when both are sent'),
  exclude_deleted: QueryBoolean.optional().describe('default false; the body field wins when both are sent'),
});

/** The parameters a job keeps (resolved defaults). */
export const ExportParameters = z.union([
  z.object({ topics: z.array(ExportTopic) }),
  z.object({ anonymised: z.boolean(), exclude_deleted: z.boolean() }),
]);
export type ExportParameters = z.infer<typeof ExportParameters>;

/** Export files live in one JetStream object store bucket per system (namespace), kept indefinitely. */
export const exportBucket = (exportsStreamName: string) => `${exportsStreamName}_FILES`;

const IdParams = z.object({ id: Id });
const tag = 'Exports';
const admin = ['super_admin'] as const;
/** Reading content exports: super_admin, and content_admin (who sees all content anyway); triggering needs super_admin. */
const contentReaders = ['super_admin', 'content_admin'] as const;

export const exportsOperations = {
  createTopicContentExport: operation({
    service: 'exports',
    summary: 'Start a topic-content export (UTF-16LE tab-separated text of the questions with the given topics)',
    http: {
      method: 'POST',
      path: '/export/topic-content',
      status: 201,
      auth: 'user',
      roles: admin,
      tag,
      description: 'Answers at once with the record in status processing; poll it until success or error.',
    },
    body: TopicContentExportRequest,
    response: ExportRecord,
  }),
  listTopicContentExports: operation({
    service: 'exports',
    summary: 'Topic-content exports, newest first',
    http: { method: 'GET', path: '/export/topic-content', auth: 'user', roles: admin, tag },
    response: z.array(ExportRecord),
  }),
  getTopicContentExport: operation({
    service: 'exports',
    summary: 'One topic-content export',
    http: { method: 'GET', path: '/export/topic-content/:id', auth: 'user', roles: admin, tag },
    params: IdParams,
    response: ExportRecord,
  }),
  downloadTopicContentExport: operation({
    service: 'exports',
    summary: 'The file of a topic-content export (text/csv, UTF-16LE with BOM, TAB-separated); 409 until status is success',
    http: {
      method: 'GET',
      path: '/export/topic-content/:id/file',
      auth: 'user',
      roles: admin,
      tag,
      download: 'text/csv',
      answers: { 409: 'the export has not succeeded (yet)' },
    },
    params: IdParams,
    response: AttachmentDownload,
  }),
  createContentExport: operation({
    service: 'exports',
    summary: 'Start a content export (zipped XML of every question with solutions, comments, tags, category and authors)',
    http: {
      method: 'POST',
      path: '/export/content',
      status: 201,
      auth: 'user',
      roles: admin,
      tag,
      description:
        'anonymised (default true) and exclude_deleted (default false) as JSON body fields or query parameters. Answers at once with the record in status processing.',
    },
    query: ContentExportQuery,
    body: ContentExportOptions,
    response: ExportRecord,
  }),
  listContentExports: operation({
    service: 'exports',
    summary: 'Content exports, newest first',
    http: { method: 'GET', path: '/export/content', auth: 'user', roles: contentReaders, tag },
    response: z.array(ExportRecord),
  }),
  getContentExport: operation({
    service: 'exports',
    summary: 'One content export',
    http: { method: 'GET', path: '/export/content/:id', auth: 'user', roles: contentReaders, tag },
    params: IdParams,
    response: ExportRecord,
  }),
  downloadContentExport: operation({
    service: 'exports',
    summary: 'The file of a content export (application/zip holding one XML file); 409 until status is success',
    http: {
      method: 'GET',
      path: '/export/content/:id/file',
      auth: 'user',
      roles: contentReaders,
      tag,
      download: 'application/zip',
      answers: { 409: 'the export has not succeeded (yet)' },
    },
    params: IdParams,
    response: AttachmentDownload,
  }),
  getContentExportSchema: operation({
    service: 'exports',
    summary: 'The XSD every content export validates against (application/xml)',
    http: { method: 'GET', path: '/public/export/content_export.xsd', auth: 'public', tag, download: 'application/xml' },
    response: AttachmentDownload,
  }),
} as const;

const ExportEvent = z.object({
  export: ExportRecord,
  kind: ExportKind,
  parameters: ExportParameters.describe('the request with its defaults resolved'),
});

/** Events of the exports service (subjects `exports.*`); composed into the catalogue in events.ts. */
export const exportsEvents = {
  'exports.export.requested.v1': ExportEvent.describe(
    'an administrator triggered an export (the record is processing); the workers take jobs from this subject (durable consumer exports-worker)',
  ),
  'exports.export.succeeded.v1': ExportEvent.describe(
    'the file is stored and downloadable (status success, end_date, file_size, count); once per export, even when a worker died on the way',
  ),
  'exports.export.failed.v1': ExportEvent.describe('the export gave up (status error; message says why); once per export'),
} as const;

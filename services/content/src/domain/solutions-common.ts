import { writeEvent } from '@kn/bus';
import type {
  Attachment,
  Comment,
  EventPayload,
  EventSolution,
  EventSubject,
  QuestionSummary,
  Solution,
  ValidityPeriod,
} from '@kn/contracts';
import { type Executor, sql, type Tx } from '@kn/db';
import type { QuestionRow } from '../db/questions-tables.ts';
import type { ContentSchema } from '../db/schema.ts';
import type { AttachmentRow, CommentRow, SolutionRow } from '../db/solutions-tables.ts';
import { questionSummary } from './question-presenters.ts';

/** Links in responses carry the API prefix (docs/api.md, "Every request"). */
export const API = '/api/v1';

/** A timestamp as the API writes it. */
export const iso = (d: Date) => d.toISOString();
/** A timestamp or null as the API writes it. */
export const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

export function presentSolution(row: SolutionRow): Solution {
  return {
    id: row.id,
    language: row.language,
    is_published: row.is_published,
    published: isoOrNull(row.published),
    rating: row.rating === null ? null : Math.round(row.rating * 100) / 100,
    rating_count: row.rating_count,
    description: row.description,
    user: `${API}/users/${row.author_id}`,
    is_deleted: row.is_deleted,
    created: iso(row.created),
    updated: iso(row.updated),
    content_updated: iso(row.content_updated),
    question: `${API}/questions/${row.question_id}`,
    tag_relations: [],
    attachments: `${API}/solutions/${row.id}/attachments`,
    validity_period: row.validity_period,
    expires: isoOrNull(row.expires),
    upvote_count: row.upvote_count,
    accepted_by_question_poser: isoOrNull(row.accepted_by_question_poser),
  };
}

export function eventSolution(row: SolutionRow): EventSolution {
  return {
    id: row.id,
    question_id: row.question_id,
    author_id: row.author_id,
    description: row.description,
    text: row.text,
    language: row.language,
    is_published: row.is_published,
    published: isoOrNull(row.published),
    is_deleted: row.is_deleted,
    rating: row.rating,
    rating_count: row.rating_count,
    upvote_count: row.upvote_count,
    accepted_by_question_poser: isoOrNull(row.accepted_by_question_poser),
    validity_period: row.validity_period as ValidityPeriod | null,
    expires: isoOrNull(row.expires),
    created: iso(row.created),
    updated: iso(row.updated),
    content_updated: iso(row.content_updated),
  };
}

/** The subjects whose payload is a solution and its question, with what each adds. */
type SolutionEventSubject = {
  [S in EventSubject]: EventPayload<S> extends { solution: EventSolution; question: QuestionSummary } ? S : never;
}[EventSubject];

/**
 * Writes a solution event (in the transaction of the change): the solution and its question as
 * events carry them, from their rows, beside what the subject adds.
 */
export async function writeSolutionEvent<S extends SolutionEventSubject>(
  tx: Tx<ContentSchema>,
  subject: S,
  data: Omit<EventPayload<S>, 'solution' | 'question'> & { solution: SolutionRow; question: QuestionRow },
  options: { actorId: number | null },
) {
  const { solution, question, ...rest } = data;
  const payload = { solution: eventSolution(solution), question: await questionSummary(tx, question), ...rest };
  return writeEvent(tx, subject, payload as EventPayload<S>, options);
}

export function presentComment(row: CommentRow): Comment {
  return {
    id: row.id,
    description: row.description,
    language: row.language,
    question_id: row.question_id,
    solution_id: row.solution_id,
    user: `${API}/users/${row.author_id}`,
    upvote_count: row.upvote_count,
    is_deleted: row.is_deleted,
    created: iso(row.created),
    updated: iso(row.updated),
    content_updated: iso(row.content_updated),
  };
}

export function eventComment(row: CommentRow, solutionAuthorId: number | null) {
  return {
    id: row.id,
    question_id: row.question_id,
    solution_id: row.solution_id,
    solution_author_id: solutionAuthorId,
    author_id: row.author_id,
    description: row.description,
    text: row.text,
    language: row.language,
    is_deleted: row.is_deleted,
    created: iso(row.created),
    updated: iso(row.updated),
  };
}

export function presentAttachment(row: AttachmentRow): Attachment {
  return {
    id: row.id,
    name: row.name,
    mime_type: row.mime_type,
    size: row.size,
    hash: row.hash,
    link: `${API}/attachments/${row.id}/file`,
    created: iso(row.created),
  };
}

export function eventAttachment(row: AttachmentRow) {
  return {
    id: row.id,
    question_id: row.question_id,
    solution_id: row.solution_id,
    uploader_id: row.uploader_id,
    name: row.name,
    mime_type: row.mime_type,
    size: row.size,
    hash: row.hash,
    created: iso(row.created),
  };
}

/** Moves the question's last_activity and recounts its published, live solutions (same transaction). */
export async function touchQuestion(db: Executor<ContentSchema>, questionId: number, options: { activity?: boolean } = { activity: true }) {
  await db
    .updateTable('questions')
    .set({
      solution_count: sql<number>`(select count(*) from solutions s where s.question_id = ${questionId} and s.is_published and not s.is_deleted)::int`,
      ...(options.activity === false ? {} : { last_activity: new Date() }),
    })
    .where('id', '=', questionId)
    .execute();
}

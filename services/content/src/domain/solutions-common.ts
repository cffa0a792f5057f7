import type { Attachment, Comment, EventSolution, Solution, ValidityPeriod } from '@kn/contracts';
import { type Executor, sql } from '@kn/db';
import type { ContentSchema } from '../db/schema.ts';
import type { AttachmentRow, CommentRow, SolutionRow } from '../db/solutions-tables.ts';

/** Links in responses carry the API prefix (CONTRACT preamble). */
export const API = '/api/v1';
export type Ex = Executor<ContentSchema>;

/** A timestamp as the API writes it. */
export const iso = (d: Date) => d.toISOString();
const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

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
export async function touchQuestion(ex: Ex, questionId: number, options: { activity?: boolean } = { activity: true }) {
  await ex
    .updateTable('questions')
    .set({
      solution_count: sql<number>`(select count(*) from solutions s where s.question_id = ${questionId} and s.is_published and not s.is_deleted)::int`,
      ...(options.activity === false ? {} : { last_activity: new Date() }),
    })
    .where('id', '=', questionId)
    .execute();
}

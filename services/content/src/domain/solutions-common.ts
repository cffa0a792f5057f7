import type { Actor, Attachment, Comment, EventQuestion, EventSolution, Solution, ValidityPeriod } from '@kn/contracts';
import { conflict, notFound } from '@kn/contracts';
import { type Executor, sql } from '@kn/db';
import type { QuestionRow } from '../db/questions-tables.ts';
import type { ContentSchema } from '../db/schema.ts';
import type { AttachmentRow, CommentRow, SolutionRow } from '../db/solutions-tables.ts';
import { canView } from './questions.ts';

/** Links in responses carry the API prefix (CONTRACT preamble). */
export const API = '/api/v1';
export type Ex = Executor<ContentSchema>;

/** "Admin" for content is content_admin; super_admin may do everything. */
export const isContentAdmin = (actor: Pick<Actor, 'roles'>) => actor.roles.includes('content_admin') || actor.roles.includes('super_admin');

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

/** The question with its followers, as events carry it. */
export async function eventQuestion(ex: Ex, q: QuestionRow): Promise<EventQuestion> {
  const followers = await ex.selectFrom('question_follows').select('user_id').where('question_id', '=', q.id).orderBy('user_id').execute();
  return {
    id: q.id,
    title: q.title,
    author_id: q.author_id,
    is_published: q.is_published,
    knowledge_space_id: q.knowledge_space_id,
    followers: followers.map((f) => f.user_id),
  };
}

/** Whether the caller may see the question: the questions half's rule (drafts to authors, closed spaces to members). */
export const canSeeQuestion = (ex: Ex, q: QuestionRow, actor: Actor) => canView(ex, q, actor);

/** The question, or 404 when it does not exist or the caller may not see it. */
export async function visibleQuestion(ex: Ex, id: number, actor: Actor, options: { lock?: boolean } = {}): Promise<QuestionRow> {
  let query = ex.selectFrom('questions').selectAll().where('id', '=', id);
  if (options.lock) query = query.forUpdate();
  const q = await query.executeTakeFirst();
  if (!q || !(await canSeeQuestion(ex, q, actor))) throw notFound('question');
  return q;
}

/** New answers, comments, shares need a live, published question: 409 otherwise (documented in docs/solutions.md). */
export function requireOpenQuestion(q: QuestionRow) {
  if (q.is_deleted) throw conflict('the question is deleted');
  if (!q.is_published) throw conflict('the question is not published');
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

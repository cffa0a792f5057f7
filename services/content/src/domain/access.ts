import { type Actor, conflict, notFound } from '@kn/contracts';
import { type Executor, sql } from '@kn/db';
import type { QuestionRow } from '../db/questions-tables.ts';
import type { ContentSchema } from '../db/schema.ts';
import type { SolutionRow } from '../db/solutions-tables.ts';
import { type QuestionRowWithRelations, questionsWithRelations } from './question-presenters.ts';

/**
 * Who may see and change what in the content service: the one place of these rules. "Admin" for
 * content is content_admin; super_admin may do everything.
 */
export const isContentAdmin = (actor: Pick<Actor, 'roles'> | null) =>
  !!actor && (actor.roles.includes('content_admin') || actor.roles.includes('super_admin'));

/**
 * Whether the caller may see content of a knowledge space: open spaces for everyone, closed ones
 * for members and content administrators.
 */
export async function canSeeSpace(db: Executor<ContentSchema>, spaceId: number | null, actor: Actor | null): Promise<boolean> {
  if (spaceId === null || isContentAdmin(actor)) return true;
  const row = await db
    .selectFrom('knowledge_spaces')
    .select(['is_closed'])
    .select((eb) =>
      eb
        .exists(
          eb
            .selectFrom('knowledge_space_members')
            .select('user_id')
            .where('knowledge_space_id', '=', spaceId)
            .where('user_id', '=', actor?.id ?? -1),
        )
        .as('member'),
    )
    .where('id', '=', spaceId)
    .executeTakeFirst();
  return !!row && (!row.is_closed || !!row.member);
}

/** The closed spaces whose questions the caller may not see (usually none: then lists need no condition). */
export async function hiddenSpaces(db: Executor<ContentSchema>, actor: Actor | null): Promise<number[]> {
  if (isContentAdmin(actor)) return [];
  const rows = await db
    .selectFrom('knowledge_spaces')
    .select('id')
    .where('is_closed', '=', true)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('knowledge_space_members as m')
            .select('m.user_id')
            .whereRef('m.knowledge_space_id', '=', 'knowledge_spaces.id')
            .where('m.user_id', '=', actor?.id ?? -1),
        ),
      ),
    )
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Whether the caller may see the question: content administrators see everything, the author
 * their own drafts and deleted questions, everyone else published, live questions of spaces they
 * may see.
 */
export async function canView(db: Executor<ContentSchema>, row: QuestionRow, actor: Actor | null): Promise<boolean> {
  if (isContentAdmin(actor)) return true;
  if (actor && row.author_id === actor.id) return true;
  if (!row.is_published || row.is_deleted) return false;
  return canSeeSpace(db, row.knowledge_space_id, actor);
}

/** The author and content administrators may change a question, solution or comment. */
export const canEdit = (row: { author_id: number }, actor: Actor) => row.author_id === actor.id || isContentAdmin(actor);

/** The question if the caller may see it, else 404 (an invisible question does not exist for them); `lock`: for update. */
export async function visibleQuestion(
  db: Executor<ContentSchema>,
  id: number,
  actor: Actor | null,
  options: { lock?: boolean } = {},
): Promise<QuestionRow> {
  let query = db.selectFrom('questions').selectAll().where('id', '=', id);
  if (options.lock) query = query.forUpdate();
  return visibleOrNotFound(db, await query.executeTakeFirst(), actor);
}

/**
 * `visibleQuestion` with its tags and category, read in the same statement: for answers that show
 * the question (each statement is a round trip, and its socket writes cost more CPU than its work).
 */
export async function visibleQuestionWithRelations(
  db: Executor<ContentSchema>,
  id: number,
  actor: Actor | null,
): Promise<QuestionRowWithRelations> {
  const { rows } = await sql<QuestionRowWithRelations>`${questionsWithRelations(sql`q.id = ${id}`)}`.execute(db);
  return visibleOrNotFound(db, rows[0], actor);
}

/** The row if the caller may see its question, else 404: an invisible question does not exist for them. */
async function visibleOrNotFound<R extends QuestionRow>(db: Executor<ContentSchema>, row: R | undefined, actor: Actor | null): Promise<R> {
  if (!row || !(await canView(db, row, actor))) throw notFound('question');
  return row;
}

/** New answers, comments, shares need a live, published question: 409 otherwise (documented in docs/solutions.md). */
export function requireOpenQuestion(q: QuestionRow) {
  if (q.is_deleted) throw conflict('the question is deleted');
  if (!q.is_published) throw conflict('the question is not published');
}

/**
 * The solution and its question, or 404 when the caller may not see it: drafts and deleted
 * solutions are visible to their author and content admins only.
 */
export async function visibleSolution(db: Executor<ContentSchema>, id: number, actor: Actor, options: { lock?: boolean } = {}) {
  let query = db.selectFrom('solutions').selectAll().where('id', '=', id);
  if (options.lock) query = query.forUpdate();
  const solution = await query.executeTakeFirst();
  if (!solution) throw notFound('solution');
  const question = await db.selectFrom('questions').selectAll().where('id', '=', solution.question_id).executeTakeFirstOrThrow();
  if (solution.author_id !== actor.id && !isContentAdmin(actor)) {
    if (!solution.is_published || solution.is_deleted || !(await canView(db, question, actor))) throw notFound('solution');
  }
  return { solution, question };
}

export function requireLiveSolution(s: SolutionRow) {
  if (s.is_deleted) throw conflict('the solution is deleted');
}

/** Ratings, upvotes, comments and shares need a live, published solution: 409 otherwise. */
export function requirePublishedSolution(s: SolutionRow) {
  requireLiveSolution(s);
  if (!s.is_published) throw conflict('the solution is not published');
}

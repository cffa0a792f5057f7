import type { EventPayload } from '@kn/contracts';
import { type Executor, sql } from '@kn/db';
import type { AnalyticsSchema } from '../db/schema.ts';

type Db = Executor<AnalyticsSchema>;
type QuestionSnapshot = EventPayload<'content.question.published.v1'>['question'];
type EventSolution = EventPayload<'content.solution.published.v1'>['solution'];
type KnowledgeSpace = EventPayload<'content.knowledge-space.created.v1'>['knowledge_space'];
type UserSnapshot = EventPayload<'users.user.created.v1'>['user'];

const date = (iso: string | null | undefined) => (iso ? new Date(iso) : null);

/** A question counts from its publishing on; a draft is not asked yet. */
export async function putQuestion(db: Db, q: QuestionSnapshot) {
  if (!q.is_published) return;
  const row = {
    author_id: q.author_id,
    title: q.title,
    asked_at: new Date(q.published ?? q.created),
    is_deleted: q.is_deleted,
    knowledge_space_id: q.knowledge_space_id,
    category_id: q.category?.id ?? null,
    category_name: q.category?.name ?? null,
    tags: q.tags.map((t) => t.label),
  };
  await db
    .insertInto('questions')
    .values({ id: q.id, ...row })
    .onConflict((c) => c.column('id').doUpdateSet(row))
    .execute();
}

export async function setQuestionDeleted(db: Db, id: number, deleted: boolean) {
  await db.updateTable('questions').set({ is_deleted: deleted }).where('id', '=', id).execute();
}

/** Records a solution as an event describes it; `renewed` marks a validation or an edit (answers a validation request). */
export async function putSolution(db: Db, s: EventSolution, options: { renewed?: Date } = {}) {
  const row = {
    question_id: s.question_id,
    author_id: s.author_id,
    published_at: s.is_published ? date(s.published ?? s.created) : null,
    is_deleted: s.is_deleted,
    accepted_at: date(s.accepted_by_question_poser),
    expires: date(s.expires),
    ...(options.renewed ? { renewed_at: options.renewed } : {}),
  };
  await db
    .insertInto('solutions')
    .values({ id: s.id, ...row })
    .onConflict((c) => c.column('id').doUpdateSet(row))
    .execute();
}

/** An acceptance withdraws any other of the question (no event says so for the other). */
export async function acceptSolution(db: Db, s: EventSolution) {
  await db.updateTable('solutions').set({ accepted_at: null }).where('question_id', '=', s.question_id).where('id', '!=', s.id).execute();
  await putSolution(db, s);
}

/** The question's first solution and acceptance, from its solutions as they stand now. */
export async function settleQuestion(db: Db, questionId: number) {
  await sql`
    update questions q set
      first_solution_at = s.first_at,
      accepted_at = s.accepted_at
    from (
      select min(published_at) as first_at, max(accepted_at) as accepted_at
        from solutions
       where question_id = ${questionId} and not is_deleted and published_at is not null
    ) s
    where q.id = ${questionId}`.execute(db);
}

export async function putValidationRequest(db: Db, questionId: number, requestedAt: Date, requestedBy: number) {
  const row = { requested_at: requestedAt, requested_by: requestedBy };
  await db
    .insertInto('validation_requests')
    .values({ question_id: questionId, ...row })
    .onConflict((c) => c.column('question_id').doUpdateSet(row))
    .execute();
}

export async function putRouting(db: Db, r: EventPayload<'search.experts.found.v1'>, at: Date) {
  await db
    .insertInto('routings')
    .values({ id: r.routing_id, question_id: r.question.id, reason: r.reason, routed_at: at, expert_ids: r.experts.map((e) => e.user_id) })
    .onConflict((c) => c.column('id').doNothing())
    .execute();
}

export async function putForward(db: Db, eventId: string, f: EventPayload<'content.question.forwarded.v1'>, at: Date) {
  await db
    .insertInto('forwards')
    .values({ event_id: eventId, question_id: f.question.id, sender_id: f.sender_id, recipient_id: f.recipient_id, forwarded_at: at })
    .onConflict((c) => c.column('event_id').doNothing())
    .execute();
}

export async function putSpace(db: Db, space: KnowledgeSpace) {
  const row = { name: space.name, is_closed: space.is_closed, member_ids: space.member_ids };
  await db
    .insertInto('spaces')
    .values({ id: space.id, ...row })
    .onConflict((c) => c.column('id').doUpdateSet(row))
    .execute();
}

export async function putPerson(db: Db, user: UserSnapshot) {
  const row = {
    department: user.department,
    location: user.location,
    space_ids: (user as { group_knowledge_spaces?: number[] }).group_knowledge_spaces ?? [],
    is_deleted: user.is_deleted,
  };
  await db
    .insertInto('people')
    .values({ id: user.id, ...row })
    .onConflict((c) => c.column('id').doUpdateSet(row))
    .execute();
}

export async function setPersonDeleted(db: Db, id: number) {
  await db.updateTable('people').set({ is_deleted: true }).where('id', '=', id).execute();
}

/** Category changes the question snapshots do not repeat: a rename, and a deletion (its questions become uncategorized). */
export async function renameCategory(db: Db, id: number, name: string) {
  await db.updateTable('questions').set({ category_name: name }).where('category_id', '=', id).execute();
}

export async function dropCategory(db: Db, id: number) {
  await db.updateTable('questions').set({ category_id: null, category_name: null }).where('category_id', '=', id).execute();
}

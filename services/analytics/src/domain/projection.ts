import type { EventPayload } from '@kn/contracts';
import { sql } from '@kn/db';
import type { Insertable, Transaction } from 'kysely';
import type { AnalyticsSchema, PeopleTable, QuestionsTable, SolutionsTable } from '../db/schema.ts';

type Tx = Transaction<AnalyticsSchema>;
type QuestionSnapshot = EventPayload<'content.question.published.v1'>['question'];
type EventSolution = EventPayload<'content.solution.published.v1'>['solution'];
type KnowledgeSpace = EventPayload<'content.knowledge-space.created.v1'>['knowledge_space'];
type UserSnapshot = EventPayload<'users.user.created.v1'>['user'];

const date = (iso: string | null | undefined) => (iso ? new Date(iso) : null);
/** Rows per statement: well below Postgres's 65,535 parameters. */
const CHUNK = 1000;

/**
 * What a batch of events changes, folded in memory and written with a few statements: a catch-up
 * of millions of events costs a handful of round trips per batch, not several per event. A later
 * event of the batch overrides an earlier one about the same row, as applying them one by one
 * would.
 */
export function projectionBatch() {
  const questions = new Map<number, Insertable<QuestionsTable>>();
  const questionDeleted = new Map<number, boolean>();
  const solutions = new Map<number, Insertable<SolutionsTable>>();
  /** Per question, the solution whose acceptance came last: any other's is withdrawn. */
  const acceptedOf = new Map<number, number>();
  /** Questions whose first solution and acceptance are computed again. */
  const settle = new Set<number>();
  const requests = new Map<number, { requested_at: Date; requested_by: number }>();
  const routings = new Map<number, { question_id: number; reason: string; routed_at: Date; expert_ids: number[] }>();
  const forwards = new Map<string, { question_id: number; sender_id: number; recipient_id: number; forwarded_at: Date }>();
  const spaces = new Map<number, { name: string; is_closed: boolean; member_ids: number[] }>();
  const people = new Map<number, Insertable<PeopleTable>>();
  const personDeleted = new Set<number>();
  const declines = new Map<string, { question_id: number; user_id: number; declined_at: Date }>();
  /** Views per day and question, added to what is stored (several events may count the same day). */
  const views = new Map<string, { day: string; question_id: number; views: number; solved_views: number }>();
  const drafts = new Map<number, { author_id: number; knowledge_space_id: number | null; shown_at: Date }>();
  /** Category changes the question snapshots do not repeat; applied after the questions. */
  const categories: Array<{ id: number; name: string | null }> = [];

  const putSolution = (s: EventSolution, renewed?: Date) => {
    const before = solutions.get(s.id)?.renewed_at as Date | null | undefined;
    solutions.set(s.id, {
      id: s.id,
      question_id: s.question_id,
      author_id: s.author_id,
      published_at: s.is_published ? date(s.published ?? s.created) : null,
      is_deleted: s.is_deleted,
      accepted_at: date(s.accepted_by_question_poser),
      expires: date(s.expires),
      renewed_at: renewed ?? before ?? null,
    });
    settle.add(s.question_id);
  };

  return {
    /** A question counts from its publishing on; a draft is not asked yet. */
    question(q: QuestionSnapshot) {
      if (!q.is_published) return;
      questions.set(q.id, {
        id: q.id,
        author_id: q.author_id,
        title: q.title,
        asked_at: new Date(q.published ?? q.created),
        is_deleted: q.is_deleted,
        knowledge_space_id: q.knowledge_space_id,
        category_id: q.category?.id ?? null,
        category_name: q.category?.name ?? null,
        tags: q.tags.map((t) => t.label),
      });
      questionDeleted.delete(q.id);
      settle.add(q.id);
    },
    questionDeleted(id: number, deleted: boolean) {
      const known = questions.get(id);
      if (known) known.is_deleted = deleted;
      else questionDeleted.set(id, deleted);
    },
    /** `renewed`: a validation or an edit, which answers a validation request made before it. */
    solution: putSolution,
    accepted(s: EventSolution) {
      for (const other of solutions.values()) if (other.question_id === s.question_id && other.id !== s.id) other.accepted_at = null;
      putSolution(s);
      acceptedOf.set(s.question_id, s.id);
    },
    validationRequest(questionId: number, requestedAt: Date, requestedBy: number) {
      requests.set(questionId, { requested_at: requestedAt, requested_by: requestedBy });
    },
    routing(r: EventPayload<'search.experts.found.v1'>, at: Date) {
      routings.set(r.routing_id, {
        question_id: r.question.id,
        reason: r.reason,
        routed_at: at,
        expert_ids: r.experts.map((e) => e.user_id),
      });
    },
    forward(eventId: string, f: EventPayload<'content.question.forwarded.v1'>, at: Date) {
      forwards.set(eventId, { question_id: f.question.id, sender_id: f.sender_id, recipient_id: f.recipient_id, forwarded_at: at });
    },
    space(ks: KnowledgeSpace) {
      spaces.set(ks.id, { name: ks.name, is_closed: ks.is_closed, member_ids: ks.member_ids });
    },
    person(user: UserSnapshot) {
      people.set(user.id, {
        id: user.id,
        department: user.department,
        location: user.location,
        // Events from before identity-provider groups could give memberships lack it.
        space_ids: (user as { group_knowledge_spaces?: number[] }).group_knowledge_spaces ?? [],
        is_deleted: user.is_deleted,
        roles: user.roles,
      });
      personDeleted.delete(user.id);
    },
    personDeleted(id: number) {
      const known = people.get(id);
      if (known) known.is_deleted = true;
      else personDeleted.add(id);
    },
    decline(questionId: number, userId: number, at: Date) {
      const key = `${questionId} ${userId}`;
      if (!declines.has(key)) declines.set(key, { question_id: questionId, user_id: userId, declined_at: at });
    },
    /** Views counted up to `until`: they count on its day (the job sends them every minute or so). */
    viewsCounted(until: Date, counted: Array<{ question_id: number; views: number; solved_views: number }>) {
      const day = until.toISOString().slice(0, 10);
      for (const c of counted) {
        const key = `${day} ${c.question_id}`;
        const known = views.get(key);
        if (known) {
          known.views += c.views;
          known.solved_views += c.solved_views;
        } else views.set(key, { day, question_id: c.question_id, views: c.views, solved_views: c.solved_views });
      }
    },
    similarShown(draft: { id: number; author_id: number; knowledge_space_id: number | null }, at: Date) {
      if (!drafts.has(draft.id))
        drafts.set(draft.id, { author_id: draft.author_id, knowledge_space_id: draft.knowledge_space_id, shown_at: at });
    },
    /** A renamed category (name), or a deleted one (null: its questions become uncategorized). */
    category(id: number, name: string | null) {
      categories.push({ id, name });
    },

    async write(tx: Tx) {
      await upsert(tx, 'questions', [...questions.values()], 'id', [
        'author_id',
        'title',
        'asked_at',
        'is_deleted',
        'knowledge_space_id',
        'category_id',
        'category_name',
        'tags',
      ]);
      await setFlags(tx, 'questions', questionDeleted);
      await upsert(tx, 'solutions', [...solutions.values()], 'id', [
        'question_id',
        'author_id',
        'published_at',
        'is_deleted',
        'accepted_at',
        'expires',
      ]);
      // An edit or validation seen before stays when a later event of another kind rewrites the row.
      const renewed = [...solutions.values()].filter((s) => s.renewed_at);
      if (renewed.length)
        await sql`update solutions s set renewed_at = greatest(s.renewed_at, v.at)
                    from unnest(${renewed.map((s) => s.id)}::int[], ${renewed.map((s) => s.renewed_at)}::timestamptz[]) as v(id, at)
                   where s.id = v.id`.execute(tx);
      if (acceptedOf.size)
        await sql`update solutions s set accepted_at = null
                    from unnest(${[...acceptedOf.keys()]}::int[], ${[...acceptedOf.values()]}::int[]) as a(question_id, id)
                   where s.question_id = a.question_id and s.id <> a.id and s.accepted_at is not null`.execute(tx);
      await upsert(
        tx,
        'validation_requests',
        [...requests].map(([question_id, r]) => ({ question_id, ...r })),
        'question_id',
        ['requested_at', 'requested_by'],
      );
      await upsert(
        tx,
        'routings',
        [...routings].map(([id, r]) => ({ id, ...r })),
        'id',
        [],
      );
      await upsert(
        tx,
        'forwards',
        [...forwards].map(([event_id, f]) => ({ event_id, ...f })),
        'event_id',
        [],
      );
      await upsert(
        tx,
        'spaces',
        [...spaces].map(([id, s]) => ({ id, ...s })),
        'id',
        ['name', 'is_closed', 'member_ids'],
      );
      await upsert(tx, 'people', [...people.values()], 'id', ['department', 'location', 'space_ids', 'is_deleted', 'roles']);
      await upsert(tx, 'declines', [...declines.values()], ['question_id', 'user_id'], []);
      await upsert(
        tx,
        'drafts_shown',
        [...drafts].map(([question_id, d]) => ({ question_id, ...d })),
        'question_id',
        [],
      );
      const viewRows = [...views.values()];
      for (let i = 0; i < viewRows.length; i += CHUNK) {
        const chunk = viewRows.slice(i, i + CHUNK);
        await sql`insert into question_views (day, question_id, views, solved_views)
                  select * from unnest(${chunk.map((v) => v.day)}::date[], ${chunk.map((v) => v.question_id)}::int[],
                                       ${chunk.map((v) => v.views)}::int[], ${chunk.map((v) => v.solved_views)}::int[])
                  on conflict (day, question_id) do update
                    set views = question_views.views + excluded.views, solved_views = question_views.solved_views + excluded.solved_views`.execute(
          tx,
        );
      }
      if (personDeleted.size)
        await tx
          .updateTable('people')
          .set({ is_deleted: true })
          .where('id', 'in', [...personDeleted])
          .execute();
      for (const c of categories)
        await tx
          .updateTable('questions')
          .set(c.name === null ? { category_id: null, category_name: null } : { category_name: c.name })
          .where('category_id', '=', c.id)
          .execute();
      if (settle.size)
        await sql`
          update questions q set first_solution_at = s.first_at, accepted_at = s.accepted_at
            from (select i.id,
                         (select min(published_at) from solutions where question_id = i.id and not is_deleted and published_at is not null) as first_at,
                         (select max(accepted_at) from solutions where question_id = i.id and not is_deleted and published_at is not null) as accepted_at
                    from unnest(${[...settle]}::int[]) as i(id)) s
           where q.id = s.id`.execute(tx);
      await refreshTags(tx, [...new Set([...questions.keys(), ...questionDeleted.keys(), ...settle])]);
    },
  };
}
export type ProjectionBatch = ReturnType<typeof projectionBatch>;

/** Inserts rows, or updates `columns` of the row with the same key (none: the first one stays). */
async function upsert<T extends keyof AnalyticsSchema>(tx: Tx, table: T, rows: object[], key: string | string[], columns: string[]) {
  const keys = typeof key === 'string' ? [key] : key;
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK);
    await (tx as Transaction<any>)
      .insertInto(table)
      .values(chunk)
      .onConflict((c) =>
        columns.length
          ? c.columns(keys).doUpdateSet(Object.fromEntries(columns.map((col) => [col, sql.ref(`excluded.${col}`)])) as never)
          : c.columns(keys).doNothing(),
      )
      .execute();
  }
}

async function setFlags(tx: Tx, table: 'questions', flags: Map<number, boolean>) {
  if (!flags.size) return;
  await sql`update ${sql.table(table)} t set is_deleted = f.deleted
              from unnest(${[...flags.keys()]}::int[], ${[...flags.values()]}::boolean[]) as f(id, deleted)
             where t.id = f.id`.execute(tx);
}

/** The per-tag rows of these questions again, from `questions` as the batch left it. */
async function refreshTags(tx: Tx, ids: number[]) {
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    await sql`delete from question_tags where id = any(${chunk}::int[])`.execute(tx);
    await sql`insert into question_tags (id, label, asked_at, author_id, is_deleted, knowledge_space_id, first_solution_at, accepted_at)
              select distinct q.id, t.label, q.asked_at, q.author_id, q.is_deleted, q.knowledge_space_id, q.first_solution_at, q.accepted_at
                from questions q cross join lateral unnest(q.tags) as t(label)
               where q.id = any(${chunk}::int[])`.execute(tx);
  }
}

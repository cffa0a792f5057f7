import { type Bus, type EventHandlers, startConsumer } from '@kn/bus';
import type { EventSolution, QuestionSnapshot, QuestionSummary } from '@kn/contracts';
import type { Db, Tx } from '@kn/db';
import type { NotificationsSchema } from '../db/schema.ts';
import { type Cause, type Draft, type NotifyHooks, notify, type Target } from '../domain/notify.ts';

type T = Tx<NotificationsSchema>;
type Comment = {
  id: number;
  question_id: number;
  solution_id: number | null;
  author_id: number;
  description: string;
  created: string;
  updated: string;
};

const MENTION = /data-mention-user-id="(\d+)"/g;
const mentionsIn = (html: string | null) => new Set([...(html ?? '').matchAll(MENTION)].map((m) => Number(m[1])));

const questionTarget = (q: { id: number; title: string }, extra: Record<string, unknown> = {}): Target => ({
  target_type: 'question',
  target_id: q.id,
  target_object: { id: q.id, title: q.title, ...extra },
});
const snapshotTarget = (q: QuestionSnapshot) =>
  questionTarget(q, {
    slug: q.slug,
    language: q.language,
    description: q.description,
    is_published: q.is_published,
    published: q.published,
    tags: q.tags.map((t) => t.label),
    category: q.category,
    created: q.created,
    updated: q.updated,
  });
const eventQuestionTarget = (q: QuestionSummary) =>
  questionTarget(q, { is_published: q.is_published, knowledge_space_id: q.knowledge_space_id });
const solutionTarget = (s: EventSolution): Target => {
  const { text: _text, ...solution } = s;
  return { target_type: 'solution', target_id: s.id, target_object: solution };
};
const commentTarget = (c: Comment): Target => ({
  target_type: 'comment',
  target_id: c.id,
  target_object: {
    id: c.id,
    question_id: c.question_id,
    solution_id: c.solution_id,
    author_id: c.author_id,
    description: c.description,
    created: c.created,
    updated: c.updated,
  },
});

const cause = (
  { id: eventId, occurred_at: occurredAt }: { id: string; occurred_at: string },
  actorId: number | null,
  question: { id: number; title: string; author_id: number; knowledge_space_id: number | null },
  target: Target,
  anonymous = false,
): Cause => ({
  eventId,
  occurredAt,
  actorId,
  anonymous,
  question: { id: question.id, title: question.title, knowledge_space_id: question.knowledge_space_id },
  ...target,
});

const each = (ids: Iterable<number>, type: Draft['type']): Draft[] => [...ids].map((user_id) => ({ user_id, type }));

async function rememberSolution(tx: T, s: EventSolution) {
  await tx
    .insertInto('solution_projection')
    .values({ id: s.id, question_id: s.question_id, author_id: s.author_id, raters: [] })
    .onConflict((c) => c.column('id').doNothing())
    .execute();
}

/**
 * Content events that notify nobody: drafts, deletions, flags, follows, categories, tags,
 * acceptance and upvotes, comment deletions, attachments, imports (bulk imports notify nobody),
 * and what only the figures count (declines, views, similar questions shown to drafts).
 */
const ignored = [
  'content.question.created.v1',
  'content.question.deleted.v1',
  'content.question.restored.v1',
  'content.question.flagged.v1',
  'content.question.followed.v1',
  'content.question.unfollowed.v1',
  'content.category.created.v1',
  'content.category.updated.v1',
  'content.category.deleted.v1',
  'content.tag.created.v1',
  'content.tag.updated.v1',
  'content.tag.links-updated.v1',
  'content.solution.created.v1',
  'content.solution.accepted.v1',
  'content.solution.upvoted.v1',
  'content.solution.upvote-removed.v1',
  'content.comment.deleted.v1',
  'content.attachment.added.v1',
  'content.attachment.deleted.v1',
  'content.question.imported.v1',
  'content.question.declined.v1',
  'content.question.views-counted.v1',
  'content.question.similar-shown.v1',
] as const;

/** Turns content events into notifications (see docs/notifications.md for the table of who gets what). */
export function contentHandlers(hooks: NotifyHooks): EventHandlers<'content', (typeof ignored)[number]> {
  return {
    'content.question.published.v1': async (tx, { id, occurred_at, actor_id, data: { question } }) => {
      const actor = actor_id ?? question.author_id;
      // The experts hear of it from the search service's routing (consumers/search.ts).
      const drafts = each(question.mentions, 'mention_in_question');
      await notify(
        tx as T,
        cause({ id, occurred_at }, actor, question, snapshotTarget(question), actor === question.author_id),
        drafts,
        hooks,
      );
    },
    'content.question.updated.v1': async (tx, { id, occurred_at, actor_id, data: { question, new_mentions } }) => {
      if (!question.is_published || question.is_deleted) return;
      const actor = actor_id ?? question.author_id;
      const solutionAuthors = await (tx as T)
        .selectFrom('solution_projection')
        .select('author_id')
        .where('question_id', '=', question.id)
        .execute();
      const drafts: Draft[] = [
        { user_id: question.author_id, type: 'question_edited' },
        ...each(new_mentions, 'mention_in_question'),
        ...each(
          solutionAuthors.map((s) => s.author_id),
          'question_changed_to_solution_author',
        ),
      ];
      await notify(
        tx as T,
        cause({ id, occurred_at }, actor, question, snapshotTarget(question), actor === question.author_id),
        drafts,
        hooks,
      );
    },
    'content.solution.published.v1': async (tx, { id, occurred_at, data: { solution, question, mentions } }) => {
      await rememberSolution(tx as T, solution);
      const drafts: Draft[] = [
        { user_id: question.author_id, type: 'new_solution_to_your_question' },
        ...each(mentions, 'mention_in_solution'),
        ...each(question.followers, 'new_solution'),
      ];
      await notify(tx as T, cause({ id, occurred_at }, solution.author_id, question, solutionTarget(solution)), drafts, hooks);
    },
    'content.solution.updated.v1': async (
      tx,
      { id, occurred_at, actor_id, data: { solution, question, mentions, previous_description } },
    ) => {
      if (!solution.is_published || solution.is_deleted) return;
      const actor = actor_id ?? solution.author_id;
      const before = mentionsIn(previous_description);
      const known = await (tx as T).selectFrom('solution_projection').select('raters').where('id', '=', solution.id).executeTakeFirst();
      const drafts: Draft[] = [
        { user_id: solution.author_id, type: 'solution_edited' },
        { user_id: question.author_id, type: 'solution_changed_to_question_poser' },
        ...each(
          mentions.filter((m) => !before.has(m)),
          'mention_in_solution',
        ),
        ...each(known?.raters ?? [], 'solution_changed_to_solution_rater'),
        ...each(question.followers, 'solution_edited'),
      ];
      const anonymous = actor === question.author_id && actor !== solution.author_id;
      await notify(tx as T, cause({ id, occurred_at }, actor, question, solutionTarget(solution), anonymous), drafts, hooks);
    },
    'content.solution.deleted.v1': async (tx, { data: { solution } }) => {
      await (tx as T).deleteFrom('solution_projection').where('id', '=', solution.id).execute();
    },
    'content.solution.restored.v1': async (tx, { data: { solution } }) => {
      if (solution.is_published) await rememberSolution(tx as T, solution);
    },
    'content.solution.rated.v1': async (tx, { id, occurred_at, data: { solution, question, rater_id, by_question_poser, raters } }) => {
      await (tx as T)
        .insertInto('solution_projection')
        .values({ id: solution.id, question_id: solution.question_id, author_id: solution.author_id, raters })
        .onConflict((c) => c.column('id').doUpdateSet({ raters }))
        .execute();
      const type = by_question_poser ? 'solution_rated_by_question_poser' : 'solution_rated';
      await notify(
        tx as T,
        cause({ id, occurred_at }, rater_id, question, solutionTarget(solution), by_question_poser),
        [{ user_id: solution.author_id, type }],
        hooks,
      );
    },
    'content.solution.validated.v1': async (tx, { id, occurred_at, data: { solution, question, validated_by } }) => {
      const drafts = each([solution.author_id, question.author_id], 'validation_confirmation');
      const anonymous = validated_by === question.author_id && validated_by !== solution.author_id;
      await notify(tx as T, cause({ id, occurred_at }, validated_by, question, solutionTarget(solution), anonymous), drafts, hooks);
    },
    'content.solution.expired.v1': async (tx, { id, occurred_at, data: { solution, question } }) => {
      await notify(
        tx as T,
        cause({ id, occurred_at }, null, question, solutionTarget(solution)),
        [{ user_id: solution.author_id, type: 'solution_expired' }],
        hooks,
      );
    },
    'content.solution.shared.v1': async (tx, { id, occurred_at, data: { solution, question, sender_id, recipients, message } }) => {
      await notify(
        tx as T,
        { ...cause({ id, occurred_at }, sender_id, question, solutionTarget(solution)), message },
        each(recipients, 'share_solution'),
        hooks,
      );
    },
    'content.question.shared.v1': async (tx, { id, occurred_at, data: { question, sender_id, recipients, message } }) => {
      await notify(
        tx as T,
        { ...cause({ id, occurred_at }, sender_id, question, eventQuestionTarget(question)), message },
        each(recipients, 'share_question'),
        hooks,
      );
    },
    'content.question.forwarded.v1': async (tx, { id, occurred_at, data: { question, sender_id, recipient_id, message } }) => {
      await notify(
        tx as T,
        { ...cause({ id, occurred_at }, sender_id, question, eventQuestionTarget(question)), message },
        [{ user_id: recipient_id, type: 'question_forwarded' }],
        hooks,
      );
    },
    'content.question.validation-requested.v1': async (tx, { id, occurred_at, data: { question, requested_by, expired_solutions } }) => {
      const drafts: Draft[] = [
        ...expired_solutions.map((s) => ({
          user_id: s.author_id,
          type: 'validation_request' as const,
          target: {
            target_type: 'solution' as const,
            target_id: s.id,
            target_object: { id: s.id, question_id: question.id, author_id: s.author_id },
          },
        })),
      ];
      const anonymous = requested_by === question.author_id;
      await notify(tx as T, cause({ id, occurred_at }, requested_by, question, eventQuestionTarget(question), anonymous), drafts, hooks);
    },
    'content.comment.created.v1': async (tx, { id, occurred_at, data: { comment, question, mentions } }) => {
      const onSolution = comment.solution_id !== null;
      const drafts: Draft[] = onSolution
        ? [
            ...(comment.solution_author_id ? [{ user_id: comment.solution_author_id, type: 'new_comment_to_your_solution' as const }] : []),
            ...each(mentions, 'mention_in_comment'),
            { user_id: question.author_id, type: 'new_comment_to_solution' },
            ...each(question.followers, 'new_comment_to_solution'),
          ]
        : [
            { user_id: question.author_id, type: 'new_comment_to_your_question' },
            ...each(mentions, 'mention_in_comment'),
            ...each(question.followers, 'new_comment_to_question'),
          ];
      await notify(tx as T, cause({ id, occurred_at }, comment.author_id, question, commentTarget(comment)), drafts, hooks);
    },
    'content.comment.updated.v1': async (tx, { id, occurred_at, actor_id, data: { comment, question, mentions } }) => {
      if (mentions.length === 0) return;
      // Only users mentioned for the first time: an edit must not repeat earlier mentions.
      const told = await (tx as T)
        .selectFrom('notifications')
        .select('user_id')
        .where('type', '=', 'mention_in_comment')
        .where('target_type', '=', 'comment')
        .where('target_id', '=', comment.id)
        .execute();
      const already = new Set(told.map((t) => t.user_id));
      const drafts = each(
        mentions.filter((m) => !already.has(m)),
        'mention_in_comment',
      );
      await notify(tx as T, cause({ id, occurred_at }, actor_id ?? comment.author_id, question, commentTarget(comment)), drafts, hooks);
    },
    'content.comment.converted.v1': async (tx, { id, occurred_at, actor_id, data: { comment, solution, question } }) => {
      await rememberSolution(tx as T, solution);
      const actor = actor_id ?? question.author_id;
      const drafts: Draft[] = [
        { user_id: comment.author_id, type: 'solution_from_comment' },
        { user_id: question.author_id, type: 'new_solution_to_your_question' },
        ...each(question.followers, 'new_solution'),
      ];
      await notify(
        tx as T,
        cause({ id, occurred_at }, actor, question, solutionTarget(solution), actor === question.author_id),
        drafts,
        hooks,
      );
    },
    'content.knowledge-space.created.v1': async (tx, { data: { knowledge_space: s } }) => upsertSpace(tx as T, s),
    'content.knowledge-space.updated.v1': async (tx, { data: { knowledge_space: s } }) => upsertSpace(tx as T, s),
  };
}

async function upsertSpace(tx: T, s: { id: number; is_closed: boolean; member_ids: number[] }) {
  await tx
    .insertInto('space_projection')
    .values({ id: s.id, is_closed: s.is_closed, member_ids: s.member_ids })
    .onConflict((c) => c.column('id').doUpdateSet({ is_closed: s.is_closed, member_ids: s.member_ids }))
    .execute();
}

export function startContentConsumer(options: { bus: Bus; db: Db<NotificationsSchema>; hooks: NotifyHooks }) {
  return startConsumer({
    bus: options.bus,
    db: options.db,
    durable: 'notifications-content',
    stream: 'content',
    ignore: ignored,
    handlers: contentHandlers(options.hooks),
  });
}

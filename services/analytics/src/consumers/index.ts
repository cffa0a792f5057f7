import type { EventHandlers } from '@kn/bus';
import type { Transaction } from 'kysely';
import type { AnalyticsSchema } from '../db/schema.ts';
import * as project from '../domain/projection.ts';

type Tx = Transaction<AnalyticsSchema>;
const tx = (t: Transaction<any>) => t as Tx;

/** What the figures never depend on: drafts, comments, attachments, follows, votes, tags, settings. */
export const contentIgnored = [
  'content.question.created.v1',
  'content.question.flagged.v1',
  'content.question.followed.v1',
  'content.question.unfollowed.v1',
  'content.question.shared.v1',
  'content.category.created.v1',
  'content.tag.created.v1',
  'content.tag.updated.v1',
  'content.tag.links-updated.v1',
  'content.solution.created.v1',
  'content.solution.rated.v1',
  'content.solution.upvoted.v1',
  'content.solution.upvote-removed.v1',
  'content.solution.shared.v1',
  'content.comment.created.v1',
  'content.comment.updated.v1',
  'content.comment.deleted.v1',
  'content.attachment.added.v1',
  'content.attachment.deleted.v1',
] as const;

const solutionChanged = async (t: Transaction<any>, data: { solution: Parameters<typeof project.putSolution>[1] }, renewed?: Date) => {
  await project.putSolution(tx(t), data.solution, { renewed });
  await project.settleQuestion(tx(t), data.solution.question_id);
};

export const contentHandlers: EventHandlers<'content', (typeof contentIgnored)[number]> = {
  'content.question.published.v1': (t, e) => project.putQuestion(tx(t), e.data.question),
  'content.question.updated.v1': (t, e) => project.putQuestion(tx(t), e.data.question),
  'content.question.deleted.v1': (t, e) => project.setQuestionDeleted(tx(t), e.data.question.id, true),
  'content.question.restored.v1': (t, e) => project.setQuestionDeleted(tx(t), e.data.question.id, false),
  'content.question.imported.v1': async (t, e) => {
    await project.putQuestion(tx(t), e.data.question);
    for (const s of e.data.solutions) await project.putSolution(tx(t), s);
    await project.settleQuestion(tx(t), e.data.question.id);
  },
  'content.question.forwarded.v1': (t, e) => project.putForward(tx(t), e.id, e.data, new Date(e.occurred_at)),
  'content.question.validation-requested.v1': (t, e) =>
    project.putValidationRequest(tx(t), e.data.question.id, new Date(e.data.last_requested), e.data.requested_by),
  'content.category.updated.v1': (t, e) => project.renameCategory(tx(t), e.data.category.id, e.data.category.name),
  'content.category.deleted.v1': (t, e) => project.dropCategory(tx(t), e.data.category.id),
  'content.knowledge-space.created.v1': (t, e) => project.putSpace(tx(t), e.data.knowledge_space),
  'content.knowledge-space.updated.v1': (t, e) => project.putSpace(tx(t), e.data.knowledge_space),
  'content.solution.published.v1': (t, e) => solutionChanged(t, e.data),
  // An edit restarts the validity period: it answers a validation request like a validation does.
  'content.solution.updated.v1': (t, e) => solutionChanged(t, e.data, new Date(e.occurred_at)),
  'content.solution.validated.v1': (t, e) => solutionChanged(t, e.data, new Date(e.occurred_at)),
  'content.solution.deleted.v1': (t, e) => solutionChanged(t, e.data),
  'content.solution.restored.v1': (t, e) => solutionChanged(t, e.data),
  'content.solution.expired.v1': (t, e) => solutionChanged(t, e.data),
  'content.comment.converted.v1': (t, e) => solutionChanged(t, e.data),
  'content.solution.accepted.v1': async (t, e) => {
    await project.acceptSolution(tx(t), e.data.solution);
    await project.settleQuestion(tx(t), e.data.solution.question_id);
  },
};

export const usersIgnored = ['users.settings.updated.v1', 'users.network-settings.updated.v1'] as const;

export const usersHandlers: EventHandlers<'users', (typeof usersIgnored)[number]> = {
  'users.user.created.v1': (t, e) => project.putPerson(tx(t), e.data.user),
  'users.user.updated.v1': (t, e) => project.putPerson(tx(t), e.data.user),
  'users.user.deleted.v1': (t, e) => project.setPersonDeleted(tx(t), e.data.user_id),
};

export const searchHandlers: EventHandlers<'search'> = {
  'search.experts.found.v1': (t, e) => project.putRouting(tx(t), e.data, new Date(e.occurred_at)),
};

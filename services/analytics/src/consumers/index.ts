import type { EventEnvelope, ServiceName, StreamSubject } from '@kn/contracts';
import type { ProjectionBatch } from '../domain/projection.ts';

/**
 * What an event changes in the batch being applied: a handler for every subject of the stream
 * but those named as ignored, so that a new event fails type-checking here until it is decided
 * (as `EventHandlers` of @kn/bus does for durable consumers).
 */
export type BatchHandlers<St extends ServiceName, Ignored extends StreamSubject<St> = never> = {
  [S in Exclude<StreamSubject<St>, Ignored>]: (batch: ProjectionBatch, event: EventEnvelope<S>) => void;
};

/** What the figures never depend on: drafts, comments, attachments, follows, votes, tags, shares. */
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

const at = (e: { occurred_at: string }) => new Date(e.occurred_at);

export const contentHandlers: BatchHandlers<'content', (typeof contentIgnored)[number]> = {
  'content.question.published.v1': (b, e) => b.question(e.data.question),
  'content.question.updated.v1': (b, e) => b.question(e.data.question),
  'content.question.deleted.v1': (b, e) => b.questionDeleted(e.data.question.id, true),
  'content.question.restored.v1': (b, e) => b.questionDeleted(e.data.question.id, false),
  'content.question.imported.v1': (b, e) => {
    b.question(e.data.question);
    for (const s of e.data.solutions) b.solution(s);
  },
  'content.question.forwarded.v1': (b, e) => b.forward(e.id, e.data, at(e)),
  'content.question.validation-requested.v1': (b, e) =>
    b.validationRequest(e.data.question.id, new Date(e.data.last_requested), e.data.requested_by),
  'content.category.updated.v1': (b, e) => b.category(e.data.category.id, e.data.category.name),
  'content.category.deleted.v1': (b, e) => b.category(e.data.category.id, null),
  'content.knowledge-space.created.v1': (b, e) => b.space(e.data.knowledge_space),
  'content.knowledge-space.updated.v1': (b, e) => b.space(e.data.knowledge_space),
  'content.solution.published.v1': (b, e) => b.solution(e.data.solution),
  // An edit restarts the validity period: it answers a validation request as a validation does.
  'content.solution.updated.v1': (b, e) => b.solution(e.data.solution, at(e)),
  'content.solution.validated.v1': (b, e) => b.solution(e.data.solution, at(e)),
  'content.solution.deleted.v1': (b, e) => b.solution(e.data.solution),
  'content.solution.restored.v1': (b, e) => b.solution(e.data.solution),
  'content.solution.expired.v1': (b, e) => b.solution(e.data.solution),
  'content.comment.converted.v1': (b, e) => b.solution(e.data.solution),
  'content.solution.accepted.v1': (b, e) => b.accepted(e.data.solution),
  'content.question.declined.v1': (b, e) => b.decline(e.data.question.id, e.data.user_id, at(e)),
  'content.question.views-counted.v1': (b, e) => b.viewsCounted(new Date(e.data.until), e.data.questions),
  'content.question.similar-shown.v1': (b, e) => b.similarShown(e.data.question, at(e)),
};

export const usersIgnored = ['users.settings.updated.v1', 'users.network-settings.updated.v1'] as const;

export const usersHandlers: BatchHandlers<'users', (typeof usersIgnored)[number]> = {
  'users.user.created.v1': (b, e) => b.person(e.data.user),
  'users.user.updated.v1': (b, e) => b.person(e.data.user),
  'users.user.deleted.v1': (b, e) => b.personDeleted(e.data.user_id),
};

export const searchHandlers: BatchHandlers<'search'> = {
  'search.experts.found.v1': (b, e) => b.routing(e.data, at(e)),
};

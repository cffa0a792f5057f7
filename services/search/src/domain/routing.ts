import { type Bus, call, writeEvent } from '@kn/bus';
import { type Actor, type ExpertResult, type RoutedQuestion, usersOperations } from '@kn/contracts';
import type { Tx } from '@kn/db';
import type { SearchBackend } from '../backend.ts';
import type { SearchSchema } from '../db/schema.ts';
import type { FoundExperts } from './experts.ts';

export interface RoutingRequest {
  event_id: string;
  reason: 'published' | 'validation';
  question: RoutedQuestion;
  requested_by: number | null;
}

/**
 * The routing decision for a published question or a validation request, made once per causing
 * event (the content service asks when it publishes; the routing consumer asks for every event, in
 * case that call never came): recorded with `search.experts.found.v1` in the caller's transaction.
 * A validation request goes to experts the question was not sent to before.
 */
export async function routeQuestion(tx: Tx<SearchSchema>, backend: SearchBackend, request: RoutingRequest, limit: number) {
  const earlier = await tx
    .selectFrom('routings')
    .select(['source_event_id', 'experts'])
    .where('question_id', '=', request.question.id)
    .execute();
  const same = earlier.find((r) => r.source_event_id === request.event_id);
  const decided = (experts: Array<{ user_id: number; score: number }>) => ({
    experts: experts.map(({ user_id, score }) => ({ user_id, score })),
  });
  if (same) return decided(same.experts);
  const before = request.reason === 'validation' ? earlier.flatMap((r) => r.experts.map((e) => e.user_id)) : [];
  const found = await backend.expertsOn(request.question, limit, before);
  const experts = found.experts.map((e) => ({
    user_id: e.user_id,
    score: e.score,
    expert_tags: e.details.expert_tags.map((t) => t.label),
  }));
  const inserted = await tx
    .insertInto('routings')
    .values({
      source_event_id: request.event_id,
      question_id: request.question.id,
      reason: request.reason,
      requested_by: request.requested_by,
      tags: JSON.stringify(found.tags),
      experts: JSON.stringify(experts),
    })
    .onConflict((c) => c.column('source_event_id').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!inserted) {
    // Decided meanwhile by the other path (the call or the consumer): that decision stands.
    const row = await tx.selectFrom('routings').select('experts').where('source_event_id', '=', request.event_id).executeTakeFirstOrThrow();
    return decided(row.experts);
  }
  const { id, title, author_id, knowledge_space_id } = request.question;
  await writeEvent(
    tx,
    'search.experts.found.v1',
    {
      routing_id: inserted.id,
      reason: request.reason,
      source_event_id: request.event_id,
      question: { id, title, author_id, knowledge_space_id },
      requested_by: request.requested_by,
      tags: found.tags,
      experts,
    },
    { actorId: request.requested_by ?? author_id },
  );
  return decided(experts);
}

/** Experts with their users as the caller sees them (users the users service does not know, or deleted, are left out). */
export async function presentExperts(bus: Bus, actor: Actor, found: FoundExperts, requestId: string): Promise<ExpertResult[]> {
  if (!found.experts.length) return [];
  const { items } = await call(bus, 'getUsers', usersOperations.getUsers, {
    actor,
    params: undefined,
    query: undefined,
    body: { ids: found.experts.map((e) => e.user_id) },
    requestId,
    url: '',
  });
  const users = new Map(items.filter((u) => !u.is_deleted).map((u) => [u.id, u]));
  return found.experts.flatMap((e) => {
    const user = users.get(e.user_id);
    return user ? [{ user, details: e.details }] : [];
  });
}

import { type Bus, call, writeEvent } from '@kn/bus';
import { type Actor, type ExpertResult, type RoutedQuestion, usersOperations } from '@kn/contracts';
import { type Db, sql, type Tx } from '@kn/db';
import type { SearchSchema } from '../db/schema.ts';
import { RESPONSE_WINDOW_MS } from './expert-history.ts';
import type { ExpertSearch, FoundExperts } from './expert-search.ts';
import type { RoutingResponse } from './experts.ts';

const WEEK_MS = 7 * 86_400_000;

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
 * A validation request goes to experts the question was not sent to before. Someone who was sent
 * the network's `routings_per_expert_per_week` questions in the last 7 days is passed over for the
 * next best.
 */
export async function routeQuestion(tx: Tx<SearchSchema>, search: ExpertSearch, cap: number, request: RoutingRequest, limit: number) {
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
  // Enough of the next best to fill the places of those at the cap.
  const found = await search.on(request.question, cap > 0 ? 3 * limit + 10 : limit, before, null);
  const full =
    cap > 0
      ? await atCap(
          tx,
          found.experts.map((e) => e.user_id),
          cap,
        )
      : new Set<number>();
  const experts = found.experts
    .filter((e) => !full.has(e.user_id))
    .slice(0, limit)
    .map((e) => ({
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
  if (experts.length)
    await tx
      .insertInto('routed_experts')
      .values(
        experts.map((e) => ({ routing_id: inserted.id, question_id: request.question.id, user_id: e.user_id, routed_at: new Date() })),
      )
      .execute();
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

/** The users who were sent `cap` questions or more in the last 7 days. */
async function atCap(tx: Tx<SearchSchema>, users: readonly number[], cap: number): Promise<Set<number>> {
  if (!users.length) return new Set();
  const rows = await tx
    .selectFrom('routed_experts')
    .select(['user_id', (eb) => eb.fn.countAll<string>().as('routed')])
    .where('user_id', 'in', users)
    .where('routed_at', '>', new Date(Date.now() - WEEK_MS))
    .groupBy('user_id')
    .execute();
  return new Set(rows.filter((r) => Number(r.routed) >= cap).map((r) => r.user_id));
}

/** A solution was published: its author answered the routings of that question to them (the first answer counts). */
export async function markAnswered(tx: Tx<SearchSchema>, questionId: number, userId: number, at: Date) {
  await tx
    .updateTable('routed_experts')
    .set({ answered_at: at })
    .where('question_id', '=', questionId)
    .where('user_id', '=', userId)
    .where('answered_at', 'is', null)
    .where('routed_at', '<=', at)
    .execute();
}

/**
 * How each user responded to the routings whose answer window has closed (routed, answered within
 * it), read from the database at most once a `ttlMs`: a feature of the expert ranking.
 */
export function routingResponses(db: Db<SearchSchema>, ttlMs = 60_000) {
  let cached: { at: number; value: Map<number, RoutingResponse> } | null = null;
  let reading: Promise<Map<number, RoutingResponse>> | null = null;
  const read = async () => {
    const { rows } = await sql<{ user_id: number; routed: string; answered: string }>`
      select user_id, count(*) as routed,
             count(*) filter (where answered_at is not null and answered_at <= routed_at + ${`${RESPONSE_WINDOW_MS} milliseconds`}::interval) as answered
        from routed_experts where routed_at < now() - ${`${RESPONSE_WINDOW_MS} milliseconds`}::interval group by user_id`.execute(db);
    return new Map(rows.map((r) => [r.user_id, { routed: Number(r.routed), answered: Number(r.answered) }]));
  };
  return async (users: readonly number[]): Promise<Map<number, RoutingResponse>> => {
    if (!cached || Date.now() - cached.at > ttlMs) {
      reading ??= read().finally(() => {
        reading = null;
      });
      cached = { at: Date.now(), value: await reading };
    }
    const all = cached.value;
    return new Map(users.flatMap((u) => (all.has(u) ? [[u, all.get(u)!] as const] : [])));
  };
}

/**
 * Experts with their users as the caller sees them (users the users service does not know, deleted
 * or system users are left out: the ranking leaves them out already, as the index knew them).
 */
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
  const users = new Map(items.filter((u) => !u.is_deleted && !u.is_system).map((u) => [u.id, u]));
  return found.experts.flatMap((e) => {
    const user = users.get(e.user_id);
    return user ? [{ user, details: e.details }] : [];
  });
}

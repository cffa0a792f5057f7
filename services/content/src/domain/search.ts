import { type Bus, call } from '@kn/bus';
import { type Actor, searchOperations } from '@kn/contracts';
import type { Logger } from '@kn/telemetry';
import type { z } from 'zod';

type Ops = typeof searchOperations;
/** Characters of a description sent for tag suggestions. */
const SUGGESTION_TEXT_LIMIT = 100_000;
type BodyOf<K extends keyof Ops> = Ops[K] extends { body: infer B extends z.ZodType } ? z.input<B> : never;

/** The content service's calls to the search service (ranking lives there; visibility and paging here). */
export function searchClient(bus: Bus, logger: Logger) {
  const ask = <
    K extends 'matchQuestions' | 'highlightQuestions' | 'similarQuestions' | 'suggestTags' | 'routeQuestion' | 'expertsForQuestion',
  >(
    name: K,
    body: BodyOf<K>,
    actor: Actor | null,
    requestId: string,
  ) =>
    call(
      bus,
      name,
      searchOperations[name] as Ops[K],
      {
        actor,
        params: undefined,
        query: undefined,
        body,
        requestId,
        url: '',
      } as never,
    );

  return {
    match: (body: BodyOf<'matchQuestions'>, actor: Actor, requestId: string) => ask('matchQuestions', body, actor, requestId),
    highlight: (body: BodyOf<'highlightQuestions'>, actor: Actor, requestId: string) => ask('highlightQuestions', body, actor, requestId),
    similar: (body: BodyOf<'similarQuestions'>, actor: Actor, requestId: string) => ask('similarQuestions', body, actor, requestId),
    experts: (body: BodyOf<'expertsForQuestion'>, actor: Actor, requestId: string) => ask('expertsForQuestion', body, actor, requestId),
    /**
     * Sends a published question to its experts; the experts it went to. When search cannot
     * answer, nobody is told now: the search service routes the question from its event as soon
     * as it can, and the publish answers 0 experts.
     */
    async route(body: BodyOf<'routeQuestion'>, actor: Actor, requestId: string) {
      try {
        return (await ask('routeQuestion', body, actor, requestId)).experts;
      } catch (err) {
        logger.warn({ err: (err as Error).message, question_id: body.question.id }, 'no routing now: search did not answer');
        return [];
      }
    },
    /**
     * Tags for a draft published without any. Publishing must not fail because search is down,
     * still loading or cannot take the text: the question is then published without suggested tags.
     */
    async suggestTags(text: { title: string; description: string }, actor: Actor, requestId: string): Promise<string[]> {
      try {
        // The beginning of a long description says what it is about; all of it might not fit a NATS message.
        const description = text.description.slice(0, SUGGESTION_TEXT_LIMIT);
        const result = await ask('suggestTags', { title: text.title, description, limit: 5 }, actor, requestId);
        return result.items;
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'no tag suggestions: search did not answer');
        return [];
      }
    },
  };
}

export type SearchClient = ReturnType<typeof searchClient>;

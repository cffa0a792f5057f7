import type { Bus } from '@kn/bus';
import type { Handlers, searchOperations } from '@kn/contracts';
import type { Db } from '@kn/db';
import type { SearchConfig } from '../config.ts';
import type { SearchBackend } from '../core/backend.ts';
import type { SearchSchema } from '../db/schema.ts';
import { type ExpertModel, FEATURES } from '../domain/expert-model.ts';
import type { ExpertSearch } from '../domain/expert-search.ts';
import { presentExperts, routeQuestion } from '../domain/routing.ts';
import { blendSimilar, semanticWeights } from '../domain/semantic.ts';
import { similarityOfScore, similarTextRequest } from '../domain/similarity.ts';
import { NOBODY } from '../domain/visibility.ts';
import type { ExpertModels } from '../jobs/expert-models.ts';
import type { Embeddings } from '../semantic/embeddings.ts';

/** A text's similar questions: this many of question search's best are blended with the meaning. */
const SIMILAR_TEXT_DEPTH = 50;

/** The model as GET /search/experts/model shows it. */
const modelView = (m: ExpertModel) => ({
  status: m.status,
  fitted_at: m.fitted_at,
  questions: m.questions,
  // A model stored before a feature existed weighs it 0 (weightVector), and says so.
  features: FEATURES.map((name) => ({ name, weight: m.weights[name] ?? 0 })),
  validation: m.validation,
});

export function createHandlers(deps: {
  db: Db<SearchSchema>;
  bus: Bus;
  backend: SearchBackend;
  experts: ExpertSearch;
  models: ExpertModels;
  embeddings: Embeddings;
  config: Pick<SearchConfig, 'ROUTING_EXPERTS'>;
}): Handlers<typeof searchOperations> {
  const { db, bus, backend, experts, models, embeddings, config } = deps;
  return {
    matchQuestions: async ({ body }) => {
      const result = await backend.match(body);
      if (!body.log) return result;
      const logged = await db
        .insertInto('search_queries')
        .values({ user_id: body.log.user_id, query: body.query, type: body.log.type })
        .returning('id')
        .executeTakeFirstOrThrow();
      return { ...result, search_query_id: logged.id };
    },
    highlightQuestions: async ({ body }) => {
      const highlights = await backend.highlight(body, body.ids);
      return { items: body.ids.map((id, i) => ({ id, highlighting: highlights[i]! })) };
    },
    similarQuestions: async ({ body }) => {
      // A question's unit holds its answers, which a text has not: a text is ranked by question search.
      if (body.question_id !== undefined || body.text === undefined) return { items: await backend.similar(body, body.limit) };
      // Question search of the text, blended with the meaning (the blend reorders the depth it lifts).
      const request = similarTextRequest(body.text, body.language, Math.max(body.limit, SIMILAR_TEXT_DEPTH));
      const { items } = await backend.match({ ...request, highlight: false });
      const meaning = await embeddings.meaningOf({ text: request.query });
      const scored = items.map((item) => ({ id: item.id, score: similarityOfScore(item.score) }));
      return { items: blendSimilar(scored, meaning, semanticWeights.text).slice(0, body.limit) };
    },
    autocompleteQuestions: async ({ query }) => backend.autocomplete(query.query, query.limit),
    suggestTags: async ({ body, actor }) =>
      backend.suggestTags(`${body.title}\n${body.description ?? ''}`, body.limit, await backend.hiddenSpaces(actor ?? NOBODY)),
    findExperts: async ({ body, actor, requestId }) => {
      const found = await experts.find({ text: body.query, limit: body.limit, asker: actor.id }, actor);
      return { tags: found.tags, experts: await presentExperts(bus, actor, found, requestId) };
    },
    expertsForQuestion: async ({ body, actor, requestId }) => {
      const found = await experts.on(body.question, body.limit, [], actor ?? NOBODY);
      return { tags: found.tags, experts: await presentExperts(bus, actor!, found, requestId) };
    },
    routeQuestion: async ({ body }) => {
      const cap = await backend.routingsPerExpertPerWeek();
      return db.transaction().execute((tx) => routeQuestion(tx, experts, cap, body, config.ROUTING_EXPERTS));
    },
    getExpertModel: async () => modelView(models.current()),
    fitExpertModel: async () => modelView(await models.fit()),
    indexStatus: async () => backend.status(),
  };
}

import { z } from 'zod';
import { Id, Limit, Offset, Timestamp } from './common.ts';
import { operation } from './endpoint.ts';
import { Question, QuestionSnapshot, SearchField, SearchFieldNames } from './questions.ts';
import { TagLabel } from './tags.ts';
import { trimmedText } from './text.ts';
import { User } from './users.ts';

const tag = 'Search';

/** A similar-question result: the Question with `search_metadata.score`, a similarity in [0, 1] (docs/search.md, "Similar questions"). */
const SimilarPage = z.object({
  total: z.number().int(),
  items: z.array(Question),
});
const SimilarQuery = z.object({ limit: Limit(10, 100), offset: Offset });

/** The filters of `GET /questions` that the index applies before ranking (the content service re-checks all of them). */
const MatchFilter = z.object({
  languages: z.array(z.string()).optional(),
  /** Closed knowledge spaces the caller is not a member of. */
  hidden_spaces: z.array(z.number().int()).optional(),
  tags: z.array(z.string()).optional(),
  tag_operator: z.enum(['AND', 'OR']).default('AND'),
  categories: z.array(z.number().int()).optional(),
  include_uncategorized: z.boolean().default(false),
  knowledge_space: z.number().int().optional(),
  include_deleted: z.boolean().default(false),
});

const Scored = z.object({ id: z.number().int(), score: z.number() });

const Highlighting = z.object({
  query_field: SearchField,
  id: z.number().int(),
  fragment: z.string(),
  start: z.boolean(),
  end: z.boolean(),
});

/** An expert and their record on the tags of the search (interface: Expert search result). */
export const ExpertResult = z
  .object({
    user: User,
    details: z.object({
      /** Published solutions on questions with any of the tags. */
      solution_count: z.number().int(),
      /** Mean of the ratings of those solutions, null without ratings. */
      average_rating: z.number().nullable(),
      /** Forwards to the user of questions with any of the tags, also of questions deleted since. */
      recommendation_count: z.number().int(),
      /** The tags of the search the user has a record on. */
      expert_tags: z.array(z.object({ label: TagLabel })),
      reasons: z
        .object({
          tags: z
            .array(z.object({ label: TagLabel, weight: z.number().describe('how surely the text is about the tag, 0 to 1') }))
            .describe('the tags of the search the user has a record on, surest first'),
          similar_questions: z
            .array(z.object({ id: z.number().int(), title: z.string(), similarity: z.number().describe('cosine similarity, 0 to 1') }))
            .describe('up to three questions like this one the user answered (that the caller can see), most similar first'),
        })
        .describe('why this person: an addition to the interface, beside its fields'),
    }),
  })
  .meta({ id: 'ExpertResult' });
export type ExpertResult = z.infer<typeof ExpertResult>;

/** The expert ranking's model (docs/search.md, "Expert search"). */
export const ExpertModel = z
  .object({
    status: z.enum(['default', 'fitted']).describe('default: too little history yet (or no fit so far), the built-in weights'),
    fitted_at: Timestamp.nullable(),
    questions: z.number().int().describe('answered questions the fit learned from'),
    features: z.array(z.object({ name: z.string(), weight: z.number() })),
    validation: z
      .object({
        queries: z.number().int(),
        mrr: z.number().nullable(),
        popularity_mrr: z.number().nullable(),
      })
      .describe('the fit on the earlier 80% of the questions, asked the latest 20%; beside it, ranking people by their number of answers'),
  })
  .meta({ id: 'ExpertModel' });

const ExpertsFound = z.object({ tags: z.array(TagLabel), experts: z.array(ExpertResult) });

/** A question as routing needs it: its text, its tags, who asked it. */
const RoutedQuestion = z.object({
  id: z.number().int(),
  title: z.string(),
  /** The description as plain text. */
  text: z.string(),
  tags: z.array(z.string()),
  language: z.string(),
  author_id: z.number().int(),
  knowledge_space_id: z.number().int().nullable(),
});
export type RoutedQuestion = z.infer<typeof RoutedQuestion>;

export const RoutingReason = z.enum(['published', 'validation']);

/** Operations of the search service. The similar-question endpoints answer with Questions, so the content service owns them. */
export const searchOperations = {
  matchQuestions: operation({
    service: 'search',
    summary: 'Internal: the best matches of a full-text query, calibrated scores, best first',
    body: z.object({
      query: z.string().max(10000),
      operator: z.enum(['AND', 'OR']).default('OR'),
      fields: z.array(SearchField).default([...SearchFieldNames]),
      /** Stop words of these languages are left out of the query. */
      stop_languages: z.array(z.string()).default(['en']),
      filter: MatchFilter.default({ tag_operator: 'AND', include_uncategorized: false, include_deleted: false }),
      /** The page of the ranking to answer (the ranking holds at most the best 1,000 matches; `total` counts them). */
      offset: z.number().int().min(0).default(0),
      limit: z.number().int().min(0).max(1000).default(1000),
      /** Adds the highlighting of each question answered. */
      highlight: z.boolean().default(false),
      /** Logs the query (`log_query_type`) and answers its id. */
      log: z.object({ type: z.enum(['manual', 'autocomplete', 'url', 'tag']), user_id: z.number().int() }).optional(),
    }),
    response: z.object({
      total: z.number().int(),
      items: z.array(Scored.extend({ is_relevant: z.boolean(), highlighting: Highlighting.nullable().optional() })),
      search_query_id: z.number().int().optional(),
    }),
  }),
  highlightQuestions: operation({
    service: 'search',
    summary: 'Internal: the highlighting of the given questions for a query',
    body: z.object({
      query: z.string().max(10000),
      fields: z.array(SearchField).default([...SearchFieldNames]),
      stop_languages: z.array(z.string()).default(['en']),
      ids: z.array(z.number().int()).max(1000),
    }),
    response: z.object({
      items: z.array(
        z.object({
          id: z.number().int(),
          highlighting: Highlighting.nullable(),
        }),
      ),
    }),
  }),
  similarQuestions: operation({
    service: 'search',
    summary: 'Internal: questions similar to a question or a text, with a similarity in [0, 1], best first',
    body: z.object({
      question_id: z.number().int().optional(),
      text: z.string().max(100000).optional(),
      language: z.string().optional(),
      limit: z.number().int().min(1).max(1000).default(200),
    }),
    response: z.object({ items: z.array(Scored) }),
  }),
  autocompleteQuestions: operation({
    service: 'search',
    summary: 'Titles of published questions that complete the text (the last word as a prefix)',
    http: { method: 'GET', path: '/search/questions-autocomplete', auth: 'user', tag },
    query: z.object({ query: z.string().max(1000).default(''), limit: Limit(4, 100) }),
    response: z.object({ total: z.number().int(), items: z.array(z.string()) }),
  }),
  suggestTags: operation({
    service: 'search',
    summary: 'Existing tags that fit a question text, best first (never new tags)',
    http: { method: 'POST', path: '/search/tags/suggestions', auth: 'user', tag },
    body: z.object({
      title: z.string().max(1000),
      description: z.string().max(1000000).optional(),
      limit: z.number().int().min(1).max(100).default(5),
    }),
    response: z.object({ total: z.number().int(), items: z.array(TagLabel) }),
  }),
  findExperts: operation({
    service: 'search',
    summary: 'Experts on what a text is about, best first, with the existing tags used (both empty when no tag fits)',
    http: { method: 'POST', path: '/search/experts', auth: 'user', tag },
    body: z.object({ query: trimmedText({ min: 1, max: 1000 }), limit: z.number().int().min(0).max(100).default(10) }),
    response: ExpertsFound,
  }),
  expertsForQuestion: operation({
    service: 'search',
    summary: 'Internal: the experts on a question (its text and tags; never its poser)',
    body: z.object({ question: RoutedQuestion, limit: z.number().int().min(0).max(100).default(10) }),
    response: ExpertsFound,
  }),
  routeQuestion: operation({
    service: 'search',
    summary:
      'Internal: the routing decision for a published question or a validation request (once per event: asked again, it answers the same)',
    body: z.object({
      /** The content event that asks for the routing; the decision is kept under its id. */
      event_id: z.string().uuid(),
      reason: RoutingReason,
      question: RoutedQuestion,
      /** Who asked for a validation (null on publishing). */
      requested_by: z.number().int().nullable(),
    }),
    response: z.object({ experts: z.array(z.object({ user_id: z.number().int(), score: z.number() })) }),
  }),
  getExpertModel: operation({
    service: 'search',
    summary: "The expert ranking's model: its weights and how well it predicted the latest questions",
    http: { method: 'GET', path: '/search/experts/model', auth: 'user', roles: ['super_admin'], tag },
    response: ExpertModel,
  }),
  fitExpertModel: operation({
    service: 'search',
    summary: "Fit the expert ranking's model now, on everything the network knows; answers the model when done",
    http: { method: 'POST', path: '/search/experts/model/fit', auth: 'user', roles: ['super_admin'], tag, timeoutMs: 120_000 },
    response: ExpertModel,
  }),
  indexStatus: operation({
    service: 'search',
    summary:
      "The search index of the instance that answers: whether it has caught up, its stream positions, and the question embeddings' model, state and backfill",
    http: { method: 'GET', path: '/search/index', auth: 'user', roles: ['super_admin'], tag },
    response: z.object({
      ready: z.boolean(),
      questions: z.number().int(),
      /** The topic vectors: how many questions they were last trained on, and whether a training is running or due (null: a backend without them). */
      topics: z.object({ trained_on: z.number().int(), training: z.boolean() }).nullable(),
      streams: z.record(z.string(), z.object({ applied: z.number().int(), target: z.number().int() })),
      embeddings: z.object({
        model: z.string().nullable().describe('the sentence encoder in use; null: none could be loaded, search is lexical'),
        state: z.enum(['unavailable', 'backfilling', 'ready']),
        reason: z.string().nullable().describe('why there is no model'),
        embedded: z.number().int().describe('questions with a vector of the model in this instance'),
        questions: z.number().int().describe('questions with a text to embed'),
      }),
    }),
  }),
} as const;

/**
 * Events of the search service (subjects `search.*`). `experts.found` is a routing decision: the
 * experts a question was sent to, with their scores, when it was published (`new_question`) or a
 * validation was requested (`validation_new_expert`: only experts not sent it before).
 */
export const searchEvents = {
  'search.experts.found.v1': z
    .object({
      routing_id: z.number().int(),
      reason: RoutingReason,
      source_event_id: z.string().uuid().describe('the content event that caused the decision'),
      question: QuestionSnapshot.pick({ id: true, title: true, author_id: true, knowledge_space_id: true }),
      requested_by: z.number().int().nullable().describe('who asked for the validation; null on publishing'),
      tags: z.array(z.string()).describe('the existing tags the decision used'),
      experts: z
        .array(z.object({ user_id: z.number().int(), score: z.number(), expert_tags: z.array(z.string()) }))
        .describe('best first; may be empty; the scale of score is not a contract'),
    })
    .describe(
      'a routing decision: the experts a question goes to, once per content.question.published.v1 (reason published: notify them new_question) and per content.question.validation-requested.v1 (reason validation: only experts not sent it before; notify them validation_new_expert)',
    ),
} as const;

/** Similar-question endpoints (docs/search.md, "Similar questions"): served by the content service, ranked by the search service. */
export const similarOperations = {
  similarToQuestion: operation({
    service: 'content',
    summary: 'Questions similar to a published question (overall topic, cosine similarity)',
    http: { method: 'GET', path: '/questions/:id/similar', auth: 'user', tag },
    params: z.object({ id: Id }),
    query: SimilarQuery,
    response: SimilarPage,
  }),
  similarToText: operation({
    service: 'content',
    summary: "Questions similar to a text (question search's ranking of it, score s / (1 + s))",
    http: {
      method: 'GET',
      path: '/search/questions-similar',
      auth: 'user',
      tag,
      answers: { 404: 'draft is not a question of the caller' },
    },
    query: SimilarQuery.extend({
      query: trimmedText({ min: 1, max: 10000 }),
      draft: Id.optional().describe(
        "the caller's draft being written: the first answer with results for it is recorded (content.question.similar-shown.v1), for the reuse figures",
      ),
    }),
    response: SimilarPage,
  }),
  getQuestionExperts: operation({
    service: 'content',
    summary: 'Experts on a published question (its text and tags), best first; 404 for a missing or unpublished question',
    http: { method: 'GET', path: '/questions/:id/experts', auth: 'user', tag },
    params: z.object({ id: Id }),
    query: z.object({ limit: Limit(10, 100) }),
    response: z.object({ total: z.number().int(), items: z.array(ExpertResult) }),
  }),
} as const;

/**
 * Asks every search instance (a core NATS subject, no queue group) to drop its index and replay
 * the streams (`pnpm search:rebuild`). Outside every stream's subjects: it is a command, not an event.
 */
export const SEARCH_REBUILD_SUBJECT = 'control.search.rebuild';

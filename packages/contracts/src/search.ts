import { z } from 'zod';
import { Id, Limit, Offset } from './common.ts';
import { operation } from './endpoint.ts';
import { Question, TagLabel } from './questions.ts';

export const SearchFieldNames = ['title', 'description', 'tags', 'solutions', 'comments', 'attachments'] as const;
export const SearchField = z.enum(SearchFieldNames);
export type SearchField = z.infer<typeof SearchField>;

const tag = 'Search';

/** A similar-question result: the Question with `search_metadata.score`, the cosine similarity in [0, 1]. */
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
    summary: 'Internal: questions similar to a question or a text, cosine similarity, best first',
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
  indexStatus: operation({
    service: 'search',
    summary: 'Internal: whether this instance has caught up, and its stream positions',
    response: z.object({
      ready: z.boolean(),
      questions: z.number().int(),
      streams: z.record(z.string(), z.object({ applied: z.number().int(), target: z.number().int() })),
    }),
  }),
} as const;

/** Similar-question endpoints (CONTRACT section 6): served by the content service, ranked by the search service. */
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
    summary: 'Questions similar to a text (overall topic, cosine similarity)',
    http: { method: 'GET', path: '/search/questions-similar', auth: 'user', tag },
    query: SimilarQuery.extend({ query: z.string().trim().min(1).max(10000) }),
    response: SimilarPage,
  }),
} as const;

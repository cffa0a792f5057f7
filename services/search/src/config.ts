import { BaseConfig, parseConfig } from '@kn/service';
import { z } from 'zod';

export const SearchConfig = BaseConfig.extend({
  SEARCH_INDEX_PATH: z
    .string()
    .min(1)
    .default('data/search/index.sqlite')
    .describe(
      "The instance's own index file (SQLite), rebuilt from the event streams when missing. Two instances on one host need two paths.",
    ),
  ELASTICSEARCH_URL: z
    .preprocess(
      (v) => (v === '' ? undefined : v),
      z
        .string()
        .refine((v) => v.split(',').every((u) => z.url({ protocol: /^https?$/ }).safeParse(u.trim()).success), {
          message: 'one http(s) URL or several, comma-separated',
        })
        .optional(),
    )
    .describe(
      'An Elasticsearch 8/9 or OpenSearch 2 cluster (`http://host:9200`, or several nodes comma-separated): when set, every instance searches one shared index there instead of its own file (docs/search.md, "The Elasticsearch engine"). Empty counts as unset.',
    ),
  ELASTICSEARCH_INDEX_PREFIX: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]*$/)
    .default('kn')
    .describe('The prefix of the Elasticsearch indices (`<prefix>-questions`, `-state`, `-control`): one per network.'),
  EMBEDDING_MODEL_PATH: z
    .preprocess((v) => (v === '' ? undefined : v), z.string().optional())
    .describe(
      'A sentence-encoder folder (docs/embedding.md) for similar questions, question search and routing; unset: the model infra/ensure-model.sh set up (`$KN_MODEL_CACHE/all-MiniLM-L6-v2-int8`). Without a usable model search is lexical.',
    ),
  EMBEDDING_MODEL_RETRY_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(60_000)
    .describe('Without a usable model, how often (ms) the instance looks for it again (it is picked up without a restart).'),
  EMBEDDING_POLL_MS: z.coerce
    .number()
    .int()
    .min(50)
    .default(1000)
    .describe('How often (ms) an instance loads new question embeddings and the embedding job looks for texts to embed.'),
  ROUTING_EXPERTS: z.coerce
    .number()
    .int()
    .min(0)
    .max(100)
    .default(10)
    .describe('How many experts a published question (or a validation request) is sent to.'),
  ROUTING_MAX_EVENT_AGE_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(86_400_000)
    .describe(
      'Questions published (validations requested) longer ago than this (ms) are not routed (first start on a long stream); one day.',
    ),
  EXPERT_MODEL_CHECK_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(60_000)
    .describe(
      'How often (ms) an instance reads the expert model in force again (another instance may have fitted it) and checks whether a fit is due.',
    ),
  EXPERT_MODEL_REFIT_MS: z.coerce
    .number()
    .int()
    .min(60_000)
    .default(86_400_000)
    .describe('The expert model is fitted again after this long (ms) at the latest; one day.'),
  EXPERT_MODEL_REFIT_ANSWERED: z.coerce
    .number()
    .int()
    .min(1)
    .default(50)
    .describe('The expert model is fitted again once the network has this many more accepted answers than at the last fit.'),
});
export type SearchConfig = z.infer<typeof SearchConfig>;

export const loadConfig = (env?: Record<string, string | undefined>) => parseConfig(SearchConfig, env);

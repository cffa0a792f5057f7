import { BaseConfig, parseConfig } from '@kn/service';
import { z } from 'zod';

export const SearchConfig = BaseConfig.extend({
  /**
   * The instance's own index file (SQLite), rebuilt from the event streams when missing. Two
   * instances on one host need two paths.
   */
  SEARCH_INDEX_PATH: z.string().min(1).default('data/search/index.sqlite'),
  /**
   * An Elasticsearch 8 node (`http://host:9200`): when set, every instance searches one shared
   * index there instead of its own file (docs/search.md, "Elasticsearch backend"). Empty counts as
   * unset (docker-compose passes it through either way).
   */
  ELASTICSEARCH_URL: z.preprocess((v) => (v === '' ? undefined : v), z.url().optional()),
  /** The prefix of the Elasticsearch indices (`<prefix>-questions`, `-state`, `-control`): one per network. */
  ELASTICSEARCH_INDEX_PREFIX: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]*$/)
    .default('kn'),
  /** How many experts a published question (or a validation request) is sent to. */
  ROUTING_EXPERTS: z.coerce.number().int().min(0).max(100).default(10),
  /** Questions published (validations requested) longer ago than this are not routed (first start on a long stream); one day. */
  ROUTING_MAX_EVENT_AGE_MS: z.coerce.number().int().min(1).default(86_400_000),
});
export type SearchConfig = z.infer<typeof SearchConfig>;

export const loadConfig = (env?: Record<string, string | undefined>) => parseConfig(SearchConfig, env);

import { BaseConfig, parseConfig } from '@kn/service';
import { z } from 'zod';

export const SearchConfig = BaseConfig.extend({
  /**
   * The instance's own index file (SQLite), rebuilt from the event streams when missing. Two
   * instances on one host need two paths.
   */
  SEARCH_INDEX_PATH: z.string().min(1).default('data/search/index.sqlite'),
});
export type SearchConfig = z.infer<typeof SearchConfig>;

export const loadConfig = (env?: Record<string, string | undefined>) => parseConfig(SearchConfig, env);

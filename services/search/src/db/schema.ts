import type { BusTables } from '@kn/bus';
import type { Generated } from 'kysely';

/** Queries logged with `log_query_type`, for learning from what users look for. */
export interface SearchQueryTable {
  id: Generated<number>;
  user_id: number;
  query: string;
  type: string;
  created: Generated<Date>;
}

export interface SearchSchema extends BusTables {
  search_queries: SearchQueryTable;
}

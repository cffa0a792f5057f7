import type { BusTables } from '@kn/bus';
import type { Json } from '@kn/db';
import type { Generated } from 'kysely';

/** Queries logged with `log_query_type`, for learning from what users look for. */
export interface SearchQueryTable {
  id: Generated<number>;
  user_id: number;
  query: string;
  type: string;
  created: Generated<Date>;
}

/** A routing decision (event `search.experts.found.v1`), kept so that it is made once per causing event. */
export interface RoutingTable {
  id: Generated<number>;
  source_event_id: string;
  question_id: number;
  reason: 'published' | 'validation';
  requested_by: number | null;
  tags: Json<string[]>;
  experts: Json<Array<{ user_id: number; score: number; expert_tags: string[] }>>;
  created: Generated<Date>;
}

export interface SearchSchema extends BusTables {
  search_queries: SearchQueryTable;
  routings: RoutingTable;
}

import type { BusTables } from '@kn/bus';
import type { Json } from '@kn/db';
import type { Generated } from 'kysely';
import type { ExpertModel } from '../domain/expert-model.ts';

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

/** A fit's outcome (jobs/expert-models.ts); the latest is the model in force. */
export interface ExpertModelTable {
  id: Generated<number>;
  model: Json<ExpertModel>;
  /** The index's count of accepted answers when the fit ran: a refit is due after enough new ones. */
  answered: number;
  created: Generated<Date>;
}

/** One expert a routing went to, and when they answered the question (the cap and the response feature count these). */
export interface RoutedExpertTable {
  routing_id: number;
  question_id: number;
  user_id: number;
  routed_at: Date;
  answered_at: Date | null;
}

/** The text a question's embedding is made from (title and description), as its latest event says. */
export interface QuestionTextTable {
  question_id: number;
  text: string;
  source_hash: string;
  updated: Generated<Date>;
}

/** A question's embedding by a model: one signed byte a dimension times `scale` (semantic/vectors.ts). */
export interface QuestionEmbeddingTable {
  model: string;
  question_id: number;
  /** The source_hash of the text it was made from: a newer text is embedded again. */
  source_hash: string;
  scale: number;
  vector: Buffer;
  /** Written order: instances load the rows past the last they read. */
  seq: Generated<string>;
}

export interface SearchSchema extends BusTables {
  search_queries: SearchQueryTable;
  routings: RoutingTable;
  expert_models: ExpertModelTable;
  routed_experts: RoutedExpertTable;
  question_texts: QuestionTextTable;
  question_embeddings: QuestionEmbeddingTable;
}

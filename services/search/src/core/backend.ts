import type { RoutedQuestion, SearchField } from '@kn/contracts';
import type { NetworkHistory } from '../domain/expert-history.ts';
import type { ExpertEvidence } from '../domain/experts.ts';
import type { Highlighting } from '../domain/highlight.ts';
import type { Match, MatchRequest } from '../domain/match.ts';
import type { Viewer } from '../domain/visibility.ts';
import type { EmbeddingStatus } from '../semantic/embeddings.ts';

/** A user's record on the tags of an expert search (interface: the expert result's details). */
export interface ExpertRecord {
  solution_count: number;
  average_rating: number | null;
  recommendation_count: number;
  /** Lower-case labels of the tags (of those asked about) the user has a record on. */
  expert_tags: string[];
}

/** How far an index has followed the streams. */
export interface IndexStatus {
  ready: boolean;
  questions: number;
  /** The topic vectors: how many questions they were last trained on, and whether a training is running or due (null: a backend without them). */
  topics: { trained_on: number; training: boolean } | null;
  streams: Record<string, { applied: number; target: number }>;
  /** The question embeddings (semantic/embeddings.ts): the model, its state and the backfill's progress. */
  embeddings: EmbeddingStatus;
}

/** A query's words and where to look for them, for highlighting. */
export interface HighlightRequest {
  query: string;
  fields: SearchField[];
  stop_languages: string[];
}

/**
 * What the search service's operations ask of an index. Two backends answer it: the local one
 * (`local/backend.ts`, the default: an in-memory index over an SQLite file per instance) and
 * Elasticsearch (`elasticsearch/`, when `ELASTICSEARCH_URL` is set: one index shared by every
 * instance, for networks that outgrow one machine). Both are fed from the same events and pass the
 * same contract tests (test/search.test.ts, test/experts.test.ts).
 *
 * Every query fails with `SearchIndexLoading` until the backend has caught up with the streams.
 */
export interface SearchBackend {
  /** Starts following the events; the catch-up runs in the background. */
  open(): Promise<void>;
  close(): Promise<void>;
  /** True once the index has caught up with the streams as they were at open (or rebuild). */
  readonly ready: boolean;
  status(): IndexStatus;
  /** Resolves once every event in the streams at call time is in the index (tests, benchmarks). */
  caughtUp(): Promise<void>;
  /** Drops the index and builds it again from the streams; queries answer SearchIndexLoading meanwhile. */
  rebuild(): Promise<void>;

  /** The best matches of a full-text query: `total` (at most 1,000) and the page asked for, highlighted when asked. */
  match(
    request: MatchRequest & { highlight: boolean },
  ): Promise<{ total: number; items: Array<Match & { highlighting?: Highlighting | null }> }>;
  highlight(request: HighlightRequest, ids: readonly number[]): Promise<Array<Highlighting | null>>;
  /** Published, live questions similar to a question or a text by their units' cosine in [0, 1], best first (a text's are ranked by question search unless similarParameters.textRanking says otherwise: handlers/index.ts). */
  similar(source: { question_id?: number; text?: string; language?: string }, limit: number): Promise<Array<{ id: number; score: number }>>;
  autocomplete(text: string, limit: number): Promise<{ total: number; items: string[] }>;
  /** Existing tags for a text; the questions of the `hidden` knowledge spaces lend none, and tags used only there are never suggested. */
  suggestTags(text: string, limit: number, hidden: readonly number[]): Promise<{ total: number; items: string[] }>;
  /**
   * What expert search reads (domain/experts.ts ranks with it, whichever backend supplies it);
   * without anything of the `hidden` knowledge spaces (a caller's closed ones) when given.
   */
  evidence(hidden?: readonly number[]): ExpertEvidence;
  /**
   * Users' records on a set of tags (lower-case), each solution and recommendation counted once,
   * and which of the tags they have a record on; the questions of the `hidden` spaces left out.
   */
  expertRecords(users: readonly number[], tags: ReadonlySet<string>, hidden?: readonly number[]): Promise<Map<number, ExpertRecord>>;
  /** The closed knowledge spaces whose content the viewer may not read (domain/visibility.ts). */
  hiddenSpaces(viewer: Viewer): Promise<number[]>;
  /** Titles of questions by id (those the index has). */
  titles(ids: readonly number[]): Promise<Map<number, string>>;
  /** The members of a closed knowledge space; undefined when the space is open or unknown. */
  closedSpaceMembers(id: number): Promise<ReadonlySet<number> | undefined>;
  /** The network's past up to `cutoff` (ms), for the expert model's fit (domain/expert-history.ts); read without holding up searches. */
  history(cutoff: number): Promise<Omit<NetworkHistory, 'routings'>>;
  /** Accepted live solutions on live questions: the expert model is fitted again after enough new ones. */
  acceptedAnswers(): Promise<number>;
  /** The network's cap on routings per person and week (0: none), as the settings events said. */
  routingsPerExpertPerWeek(): Promise<number>;
  /** A question as the index knows it (for routing a validation request), or undefined. */
  question(id: number): Promise<RoutedQuestion | undefined>;
}

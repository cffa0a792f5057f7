import type { BusTables } from '@kn/bus';

/** How far each stream is applied: the projection and its position change in one transaction. */
export interface FeedPositionsTable {
  stream: string;
  seq: string | number;
}

/** A published question, as the events of its content last described it. */
export interface QuestionsTable {
  id: number;
  author_id: number;
  title: string;
  /** When it was published (imported questions: their original date). */
  asked_at: Date;
  is_deleted: boolean;
  knowledge_space_id: number | null;
  category_id: number | null;
  category_name: string | null;
  tags: string[];
  /** The earliest published solution that is not deleted; null: unanswered. */
  first_solution_at: Date | null;
  accepted_at: Date | null;
}

export interface SolutionsTable {
  id: number;
  question_id: number;
  author_id: number;
  /** null: a draft. */
  published_at: Date | null;
  is_deleted: boolean;
  accepted_at: Date | null;
  expires: Date | null;
  /** The last validation or edit: it answers a validation request made before it. */
  renewed_at: Date | null;
}

export interface ValidationRequestsTable {
  question_id: number;
  requested_at: Date;
  requested_by: number;
}

/** One routing decision of the search service. */
export interface RoutingsTable {
  id: number;
  question_id: number;
  reason: string;
  routed_at: Date;
  expert_ids: number[];
}

export interface ForwardsTable {
  event_id: string;
  question_id: number;
  sender_id: number;
  recipient_id: number;
  forwarded_at: Date;
}

export interface SpacesTable {
  id: number;
  name: string;
  is_closed: boolean;
  member_ids: number[];
}

/** The directory's attributes of a person, and the spaces their groups make them a member of. */
export interface PeopleTable {
  id: number;
  department: string | null;
  location: string | null;
  space_ids: number[];
  is_deleted: boolean;
  roles: string[];
}

/** A question once per tag, with what flow by tag reads (kept by the feed from `questions`). */
export interface QuestionTagsTable {
  id: number;
  label: string;
  asked_at: Date;
  author_id: number;
  is_deleted: boolean;
  knowledge_space_id: number | null;
  first_solution_at: Date | null;
  accepted_at: Date | null;
}

/** "Not me": who declined which question. */
export interface DeclinesTable {
  question_id: number;
  user_id: number;
  declined_at: Date;
}

/** Views of a question counted on a day (UTC), and of those while it had a solution. */
export interface QuestionViewsTable {
  day: string | Date;
  question_id: number;
  views: number;
  solved_views: number;
}

/** A draft that was shown similar questions; it is published when `questions` has it. */
export interface DraftsShownTable {
  question_id: number;
  author_id: number;
  knowledge_space_id: number | null;
  shown_at: Date;
}

/** Who asked for the weekly digest (not rebuilt from the streams: it is the person's setting). */
export interface DigestSettingsTable {
  user_id: number;
  weekly: boolean;
}

/** The weeks each person's digest was handed to the notifications service. */
export interface DigestsSentTable {
  user_id: number;
  week: string | Date;
  sent_at: Date;
}

export interface AnalyticsSchema extends BusTables {
  feed_positions: FeedPositionsTable;
  questions: QuestionsTable;
  solutions: SolutionsTable;
  validation_requests: ValidationRequestsTable;
  routings: RoutingsTable;
  forwards: ForwardsTable;
  spaces: SpacesTable;
  people: PeopleTable;
  declines: DeclinesTable;
  question_tags: QuestionTagsTable;
  question_views: QuestionViewsTable;
  drafts_shown: DraftsShownTable;
  digest_settings: DigestSettingsTable;
  digests_sent: DigestsSentTable;
}

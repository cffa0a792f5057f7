import type { Json } from '@kn/db';
import type { Generated, Selectable } from 'kysely';

export interface QuestionsTable {
  id: Generated<number>;
  author_id: number;
  is_published: Generated<boolean>;
  published: Date | null;
  language: string;
  title: string;
  slug: string;
  /** Sanitized HTML with mention markup (domain/html.ts). */
  description: string | null;
  /** Plain text of the description, for events, language detection and tag matching. */
  description_text: Generated<string>;
  mentions: Generated<number[]>;
  category_id: number | null;
  knowledge_space_id: number | null;
  /** Kept up to date by the solutions half (publish, delete, restore of solutions). */
  solution_count: Generated<number>;
  view_count: Generated<number>;
  upvote_count: Generated<number>;
  flag_count: Generated<number>;
  /** Stored machine or human translations: [{language, title, description}]. */
  translations: Json<Array<{ language: string; title: string; description: string | null }>>;
  is_deleted: Generated<boolean>;
  created: Generated<Date>;
  updated: Generated<Date>;
  content_updated: Generated<Date>;
  /** Moved by edits, publishing, and by the solutions half on solution and comment activity. */
  last_activity: Generated<Date>;
}
export type QuestionRow = Selectable<QuestionsTable>;

export interface CategoriesTable {
  id: Generated<number>;
  name: string;
  description: string;
  color: string;
  translations: Json<Array<{ language: string; name: string; description: string }>>;
  created: Generated<Date>;
  updated: Generated<Date>;
}
export type CategoryRow = Selectable<CategoriesTable>;

export interface TagsTable {
  id: Generated<string>;
  label: string;
  excluded_from_suggestions: Generated<boolean>;
  created: Generated<Date>;
}
export type TagRow = Selectable<TagsTable>;

export interface QuestionTagsTable {
  question_id: number;
  tag_id: string;
  position: number;
}

export interface TagLinksTable {
  tag_id: string;
  linked_tag_id: string;
}

export interface QuestionFollowsTable {
  question_id: number;
  user_id: number;
  created: Generated<Date>;
}

export interface QuestionFlagsTable {
  id: Generated<number>;
  question_id: number;
  user_id: number;
  message: string | null;
  created: Generated<Date>;
}

export interface KnowledgeSpacesTable {
  id: Generated<number>;
  name: string;
  description: string | null;
  is_closed: Generated<boolean>;
  automatic_new_user_assignment: Generated<boolean>;
  created: Generated<Date>;
  updated: Generated<Date>;
}
export type KnowledgeSpaceRow = Selectable<KnowledgeSpacesTable>;

export interface KnowledgeSpaceMembersTable {
  knowledge_space_id: number;
  user_id: number;
  /** Set by an administrator (or the automatic assignment of new users). */
  by_hand: Generated<boolean>;
  /** Given by the person's identity-provider groups (idp_group_mappings); the row stays while either holds. */
  by_groups: Generated<boolean>;
}

/** Projection of users.* events: who exists, for mentions and defaults. */
export interface UserProjectionTable {
  id: number;
  firstname: string;
  lastname: string;
  is_deleted: Generated<boolean>;
  /** The user's resolved content languages; null until the user changed settings (then: all). */
  content_languages: string[] | null;
  has_all_languages: Generated<boolean>;
}

/** Projection of users.network-settings.updated.v1; one row (id 1) once the first event arrived. */
export interface NetworkProjectionTable {
  id: number;
  settings: Json<Record<string, unknown>>;
}

/** Published, live questions per language and knowledge space (0 = none); kept by a trigger. */
export interface QuestionCountsTable {
  language: string;
  knowledge_space_id: number;
  n: number;
}

/** Tables of questions, categories, tags, tag links, knowledge spaces, follows, flags, projections. */
/** Who viewed a question on a day (UTC): views count once per person, question and day. */
export interface QuestionViewsTable {
  day: string;
  question_id: number;
  user_id: number;
}

/** Views counted since the last views event (jobs/view-events.ts sends and removes them). */
export interface QuestionViewTalliesTable {
  question_id: number;
  views: number;
  solved_views: number;
}

/** Drafts that were shown similar questions (the first time only). */
export interface DraftSimilarShownTable {
  question_id: number;
  shown_at: Date;
}

/** "Not me": who will not answer which question. */
export interface QuestionDeclinesTable {
  question_id: number;
  user_id: number;
  declined_at: Date;
}

export type QuestionTables = {
  question_view_tallies: QuestionViewTalliesTable;
  draft_similar_shown: DraftSimilarShownTable;
  question_declines: QuestionDeclinesTable;
  questions: QuestionsTable;
  categories: CategoriesTable;
  tags: TagsTable;
  question_tags: QuestionTagsTable;
  tag_links: TagLinksTable;
  question_follows: QuestionFollowsTable;
  question_views: QuestionViewsTable;
  question_flags: QuestionFlagsTable;
  knowledge_spaces: KnowledgeSpacesTable;
  knowledge_space_members: KnowledgeSpaceMembersTable;
  user_projection: UserProjectionTable;
  network_projection: NetworkProjectionTable;
  question_counts: QuestionCountsTable;
};

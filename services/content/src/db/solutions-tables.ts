import type { ColumnType, Generated, Selectable } from 'kysely';

type Created = ColumnType<Date, Date | undefined, Date>;

export interface SolutionsTable {
  id: Generated<number>;
  question_id: number;
  author_id: number;
  description: string;
  /** The description as plain text (search, language detection). */
  text: string;
  language: string;
  is_published: Generated<boolean>;
  published: Date | null;
  is_deleted: Generated<boolean>;
  deleted: Date | null;
  /** Average of the ratings, null without any. */
  rating: number | null;
  rating_count: Generated<number>;
  upvote_count: Generated<number>;
  accepted_by_question_poser: Date | null;
  validity_period: string | null;
  expires: Date | null;
  /** When the expiry job announced the expiry. */
  expired: Date | null;
  created: Created;
  updated: Created;
  content_updated: Created;
}
export type SolutionRow = Selectable<SolutionsTable>;

export interface CommentsTable {
  id: Generated<number>;
  question_id: number;
  solution_id: number | null;
  author_id: number;
  description: string;
  text: string;
  language: string;
  upvote_count: Generated<number>;
  is_deleted: Generated<boolean>;
  converted_solution_id: number | null;
  created: Created;
  updated: Created;
  content_updated: Created;
}
export type CommentRow = Selectable<CommentsTable>;

export interface AttachmentsTable {
  id: Generated<number>;
  question_id: number;
  solution_id: number | null;
  uploader_id: number;
  name: string;
  mime_type: string;
  size: number;
  hash: string;
  object_name: string;
  is_deleted: Generated<boolean>;
  created: Created;
}
export type AttachmentRow = Selectable<AttachmentsTable>;

/** Tables of solutions, ratings, upvotes, comments, attachments, forwards, shares, validation requests. */
export type SolutionTables = {
  solutions: SolutionsTable;
  solution_ratings: { solution_id: number; user_id: number; rating: number; created: Created; updated: Created };
  solution_upvotes: { solution_id: number; user_id: number; created: Created };
  comments: CommentsTable;
  attachments: AttachmentsTable;
  question_forwards: {
    id: Generated<number>;
    question_id: number;
    sender_id: number;
    recipient_id: number;
    message: string | null;
    created: Created;
  };
  shares: {
    id: Generated<number>;
    question_id: number;
    solution_id: number | null;
    sender_id: number;
    recipients: number[];
    message: string | null;
    created: Created;
  };
  validation_requests: { question_id: number; requested_by: number; last_requested: Date };
};

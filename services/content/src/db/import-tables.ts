import type { Generated } from 'kysely';

/** Tables and columns of imports (docs/import.md). */
export interface QuestionLinksTable {
  question_id: number;
  linked_question_id: number;
  /** duplicate: question_id is a duplicate of linked_question_id. related: a "see also". */
  kind: 'duplicate' | 'related';
  created: Generated<Date>;
}

/** The external id column the import migration adds to questions, solutions and comments. */
export interface ExternalIdColumn {
  /** `stackexchange:<site>:post:<id>` and the like; null for content written here. */
  external_id: Generated<string | null>;
}

export type ImportTables = { question_links: QuestionLinksTable };

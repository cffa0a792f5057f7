import type { BusTables } from '@kn/bus';
import type { ExternalIdColumn, ImportTables } from './import-tables.ts';
import type { QuestionsTable, QuestionTables } from './questions-tables.ts';
import type { CommentsTable, SolutionsTable, SolutionTables } from './solutions-tables.ts';

/** The content schema: questions and their surroundings, solutions and theirs, imports. */
export interface ContentSchema extends BusTables, QuestionTables, SolutionTables, ImportTables {
  questions: QuestionsTable & ExternalIdColumn;
  solutions: SolutionsTable & ExternalIdColumn;
  comments: CommentsTable & ExternalIdColumn;
}

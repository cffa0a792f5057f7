import type { BusTables } from '@kn/bus';
import type { QuestionTables } from './questions-tables.ts';
import type { SolutionTables } from './solutions-tables.ts';

/** The content schema: questions and their surroundings, solutions and theirs. */
export interface ContentSchema extends BusTables, QuestionTables, SolutionTables {}

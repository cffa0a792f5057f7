import type { Migration } from '@kn/db';
import * as m202611221000 from './2026112210_questions.ts';
import * as m202611222000 from './2026112220_solutions.ts';
import * as m202611223000 from './2026112230_import_external_ids.ts';
import * as m202611230200 from './2026112302_request_keys.ts';
import * as m2026112701 from './2026112701_question_views.ts';
import * as m2026120601 from './2026120601_attachment_names.ts';
import * as m2026120602 from './2026120602_group_space_members.ts';
import * as m2026120662 from './2026120662_reuse_and_declines.ts';

/** Applied in key order. `pnpm migration:new content <name>` adds a file and its line here. */
export const migrations: Record<string, Migration> = {
  '2026112210_questions': m202611221000,
  '2026112220_solutions': m202611222000,
  '2026112230_import_external_ids': m202611223000,
  '2026112302_request_keys': m202611230200,
  '2026112701_question_views': m2026112701,
  '2026120601_attachment_names': m2026120601,
  '2026120602_group_space_members': m2026120602,
  '2026120662_reuse_and_declines': m2026120662,
};

import type { Migration } from '@kn/db';
import * as m2026120640 from './2026120640_init.ts';
import * as m2026120662 from './2026120662_reuse_declines_digest.ts';
import * as m2026120663 from './2026120663_question_tags.ts';

/** Applied in key order. `pnpm migration:new analytics <name>` adds a file and its line here. */
export const migrations: Record<string, Migration> = {
  '2026120640_init': m2026120640,
  '2026120662_reuse_declines_digest': m2026120662,
  '2026120663_question_tags': m2026120663,
};

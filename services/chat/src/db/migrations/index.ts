import type { Migration } from '@kn/db';
import * as m2026120601 from './2026120601_init.ts';
import * as m2026120701 from './2026120701_teams_personal_chats.ts';
import * as m2026120702 from './2026120702_link_code_names.ts';

/** Applied in key order. `pnpm migration:new chat <name>` adds a file and its line here. */
export const migrations: Record<string, Migration> = {
  '2026120601_init': m2026120601,
  '2026120701_teams_personal_chats': m2026120701,
  '2026120702_link_code_names': m2026120702,
};

import type { Migration } from '@kn/db';
import * as m2026120640 from './2026120640_init.ts';

/** Applied in key order. `pnpm migration:new analytics <name>` adds a file and its line here. */
export const migrations: Record<string, Migration> = {
  '2026120640_init': m2026120640,
};

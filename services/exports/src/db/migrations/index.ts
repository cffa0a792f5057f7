import type { Migration } from '@kn/db';
import * as m2026112270 from './2026112270_init.ts';

/** Applied in key order. `pnpm migration:new exports <name>` adds a file and its line here. */
export const migrations: Record<string, Migration> = {
  '2026112270_init': m2026112270,
};

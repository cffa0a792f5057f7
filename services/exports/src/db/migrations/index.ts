import type { Migration } from '@kn/db';
import * as m2026112270 from './2026112270_init.ts';
import * as m202611230500 from './2026112305_request_keys.ts';

/** Applied in key order. `pnpm migration:new exports <name>` adds a file and its line here. */
export const migrations: Record<string, Migration> = {
  '2026112270_init': m2026112270,
  '2026112305_request_keys': m202611230500,
};

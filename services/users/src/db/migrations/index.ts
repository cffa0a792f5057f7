import type { Migration } from '@kn/db';
import * as m2026112201 from './2026112201_init.ts';
import * as m2026112230 from './2026112230_external_ids.ts';
import * as m202611230100 from './2026112301_request_keys.ts';
import * as m2026112701 from './2026112701_search_text_without_email.ts';
import * as m2026120601 from './2026120601_token_last_used.ts';
import * as m2026120620 from './2026120620_identities.ts';
import * as m2026120630 from './2026120630_scim.ts';
import * as m2026120631 from './2026120631_group_spaces.ts';

/** Applied in key order. `pnpm migration:new users <name>` adds a file and its line here. */
export const migrations: Record<string, Migration> = {
  '2026112201_init': m2026112201,
  '2026112230_external_ids': m2026112230,
  '2026112301_request_keys': m202611230100,
  '2026112701_search_text_without_email': m2026112701,
  '2026120601_token_last_used': m2026120601,
  '2026120620_identities': m2026120620,
  '2026120630_scim': m2026120630,
  '2026120631_group_spaces': m2026120631,
};

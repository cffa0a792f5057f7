import type { Migration } from '@kn/db';
import * as m2026112240 from './2026112240_init.ts';
import * as m202611230300 from './2026112303_request_keys.ts';
import * as m2026120601 from './2026120601_notification_message.ts';
import * as m2026120662 from './2026120662_analytics_digest.ts';

/** Applied in key order. `pnpm migration:new notifications <name>` adds a file and its line here. */
export const migrations: Record<string, Migration> = {
  '2026112240_init': m2026112240,
  '2026112303_request_keys': m202611230300,
  '2026120601_notification_message': m2026120601,
  '2026120662_analytics_digest': m2026120662,
};

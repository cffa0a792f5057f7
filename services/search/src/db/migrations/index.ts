import type { Migration } from '@kn/db';
import * as m2026112260 from './2026112260_init.ts';
import * as m2026112261 from './2026112261_routings.ts';
import * as m202611230400 from './2026112304_request_keys.ts';
import * as m2026112401 from './2026112401_expert_models.ts';
import * as m2026112701 from './2026112701_embeddings.ts';
import * as m2026120701 from './2026120701_texts_walk_index.ts';

/** Applied in key order. `pnpm migration:new search <name>` adds a file and its line here. */
export const migrations: Record<string, Migration> = {
  '2026112260_init': m2026112260,
  '2026112261_routings': m2026112261,
  '2026112304_request_keys': m202611230400,
  '2026112401_expert_models': m2026112401,
  '2026112701_embeddings': m2026112701,
  '2026120701_texts_walk_index': m2026120701,
};

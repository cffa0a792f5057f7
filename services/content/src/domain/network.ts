import { NETWORK_SETTINGS_DEFAULTS, type NetworkSettings } from '@kn/contracts';
import type { Executor } from '@kn/db';
import type { ContentSchema } from '../db/schema.ts';

export type ContentNetworkSettings = Omit<NetworkSettings, 'webhook_secret_set'>;

/** The network settings as the content service last learned them from events (projection). */
export async function getNetworkSettings(db: Executor<ContentSchema>): Promise<ContentNetworkSettings> {
  const row = await db.selectFrom('network_projection').select('settings').where('id', '=', 1).executeTakeFirst();
  return { ...NETWORK_SETTINGS_DEFAULTS, ...((row?.settings ?? {}) as Partial<ContentNetworkSettings>) };
}

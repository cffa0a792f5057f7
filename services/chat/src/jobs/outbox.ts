import { sleeper } from '@kn/bus';
import type { Db } from '@kn/db';
import type { Logger } from '@kn/telemetry';
import type { ChatConfig } from '../config.ts';
import type { ChatSchema, MessageRow } from '../db/schema.ts';
import { claimMessages, markFailed, markSent, nextDueInMs, postedAs } from '../domain/outbox.ts';

export type Send = (
  platform: 'slack' | 'teams',
  row: MessageRow,
  original: { channel: string | null; ts: string | null } | null,
) => Promise<{
  channel: string | null;
  ts: string | null;
}>;

/**
 * Drains the messages table: claims what is due, sends each with its platform and records where
 * it went, or when to try again. Sleeps until the next message is due, the poll interval, or a
 * wake (a transaction committed new messages), whichever comes first.
 */
export function startOutbox(deps: { db: Db<ChatSchema>; config: ChatConfig; logger: Logger; send: Send }) {
  const { db, config } = deps;
  const log = deps.logger.child({ job: 'chat-outbox' });
  const policy = { baseMs: config.CHAT_RETRY_BASE_MS, maxMs: config.CHAT_RETRY_MAX_MS, maxAttempts: config.CHAT_MAX_ATTEMPTS };
  const pause = sleeper();
  const platforms = new Map<number, 'slack' | 'teams'>();
  const metrics = { sent: 0, retried: 0, failed: 0 };

  const platformOf = async (installationId: number) => {
    let platform = platforms.get(installationId);
    if (!platform) {
      const row = await db.selectFrom('installations').select('platform').where('id', '=', installationId).executeTakeFirstOrThrow();
      platform = row.platform;
      platforms.set(installationId, platform);
    }
    return platform;
  };

  const deliver = async (row: MessageRow) => {
    try {
      const original = row.edits ? await postedAs(db, row.edits) : null;
      const where = await deps.send(await platformOf(row.installation_id), row, original);
      await markSent(db, row.id, where);
      metrics.sent++;
    } catch (err) {
      const { giveUp } = await markFailed(db, row, err, policy);
      if (giveUp) {
        metrics.failed++;
        log.error({ err, message_id: row.id, key: row.key }, 'chat message given up');
      } else metrics.retried++;
    }
  };

  let round: Promise<number> | undefined;
  const runRound = async () => {
    round = (async () => {
      const claimed = await claimMessages(db, config.CHAT_DELIVERY_LEASE_MS);
      await Promise.all(claimed.map(deliver));
      return claimed.length;
    })();
    try {
      return await round;
    } catch (err) {
      log.warn({ err }, 'chat outbox round failed');
      return 0;
    } finally {
      round = undefined;
    }
  };

  const loop = (async () => {
    while (!pause.stopped) {
      pause.clear();
      if ((await runRound()) > 0) continue;
      const due = await nextDueInMs(db).catch(() => null);
      await pause.sleep(Math.min(config.CHAT_OUTBOX_POLL_MS, due ?? Number.POSITIVE_INFINITY));
    }
  })();

  return {
    metrics,
    wake: () => pause.wake(),
    /** Runs rounds until nothing is due now (tests; a message waiting for its Retry-After is not due). */
    async drain() {
      while (round) await round.catch(() => 0);
      while ((await runRound()) > 0) {}
    },
    async stop() {
      pause.stop();
      await loop;
    },
  };
}

import { backoff } from '@kn/bus';
import { afterCommit, type Db, type Executor, json, sql } from '@kn/db';
import type { ChatSchema, MessageRow } from '../db/schema.ts';

/** The platform will take the message later: after `retryAfterMs` when it said so (Retry-After). */
export class RetryLater extends Error {
  override name = 'RetryLater';
  readonly statusCode: number | null;
  readonly retryAfterMs: number | null;
  constructor(message: string, statusCode: number | null, retryAfterMs: number | null) {
    super(message);
    this.statusCode = statusCode;
    this.retryAfterMs = retryAfterMs;
  }
}

export interface NewMessage {
  key: string;
  installationId: number;
  recipient: string;
  /** Teams: the person whose personal chat is to be created before posting (see MessagesTable). */
  personalOf?: string;
  kind: MessageRow['kind'];
  edits?: string;
  questionId?: number | null;
  payload: Record<string, unknown>;
}

export interface Outbox {
  /** Writes messages in the caller's transaction; a key already written is dropped (never posted twice). */
  enqueue(tx: Executor<ChatSchema>, messages: NewMessage[]): Promise<number>;
}

export function outbox(wake: () => void): Outbox {
  return {
    async enqueue(tx, messages) {
      if (messages.length === 0) return 0;
      const rows = await tx
        .insertInto('messages')
        .values(
          messages.map((m) => ({
            key: m.key,
            installation_id: m.installationId,
            recipient: m.recipient,
            personal_of: m.personalOf ?? null,
            kind: m.kind,
            edits: m.edits ?? null,
            question_id: m.questionId ?? null,
            payload: json(m.payload),
            locked_until: null,
            last_status_code: null,
            last_error: null,
            channel: null,
            ts: null,
            sent: null,
          })),
        )
        .onConflict((c) => c.column('key').doNothing())
        .returning('id')
        .execute();
      if (rows.length) afterCommit(tx, wake);
      return rows.length;
    },
  };
}

/**
 * Takes due messages for this instance, oldest first: a lease (another instance takes one only
 * once it ran out, after a crash) and one attempt more each. SKIP LOCKED: instances never wait on
 * each other. An edit waits for the message it edits to be sent.
 */
export function claimMessages(db: Db<ChatSchema>, leaseMs: number, limit = 50) {
  return db
    .updateTable('messages')
    .set({ locked_until: sql<Date>`now() + ${`${leaseMs} milliseconds`}::interval`, attempts: sql<number>`attempts + 1` })
    .where(
      'id',
      'in',
      db
        .selectFrom('messages')
        .select('id')
        .where('status', '=', 'pending')
        .where('next_attempt', '<=', sql<Date>`now()`)
        .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', sql<Date>`now()`)]))
        .orderBy('next_attempt')
        .orderBy('id')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .returningAll()
    .execute();
}

/** Where the message an edit changes was posted; null while it is not yet. */
export async function postedAs(db: Executor<ChatSchema>, key: string) {
  const row = await db.selectFrom('messages').select(['channel', 'ts', 'status']).where('key', '=', key).executeTakeFirst();
  return row?.status === 'sent' && row.channel && row.ts ? { channel: row.channel, ts: row.ts } : null;
}

export async function markSent(db: Executor<ChatSchema>, id: number, where: { channel: string | null; ts: string | null }) {
  await db
    .updateTable('messages')
    .set({ status: 'sent', sent: sql<Date>`now()`, locked_until: null, last_error: null, channel: where.channel, ts: where.ts })
    .where('id', '=', id)
    .execute();
}

/**
 * A failed attempt: again after the platform's Retry-After when it gave one (never sooner, never
 * later than `maxMs`), else after the backoff; failed for good after `maxAttempts` or when the
 * platform refused the message itself (kept, for an operator to see).
 */
export async function markFailed(
  db: Executor<ChatSchema>,
  row: Pick<MessageRow, 'id' | 'attempts'>,
  err: unknown,
  policy: { baseMs: number; maxMs: number; maxAttempts: number },
) {
  const retry = err instanceof RetryLater ? err : null;
  const giveUp = !retry || row.attempts >= policy.maxAttempts;
  const waitMs =
    retry?.retryAfterMs != null ? Math.min(retry.retryAfterMs, policy.maxMs) : backoff(row.attempts, policy.baseMs, policy.maxMs);
  await db
    .updateTable('messages')
    .set({
      status: giveUp ? 'failed' : 'pending',
      next_attempt: sql<Date>`now() + ${`${waitMs} milliseconds`}::interval`,
      locked_until: null,
      last_status_code: retry?.statusCode ?? null,
      last_error: (err as Error).message ?? String(err),
    })
    .where('id', '=', row.id)
    .execute();
  return { giveUp, waitMs };
}

/** How long until the next pending message is due (null: none is). */
export async function nextDueInMs(db: Executor<ChatSchema>) {
  const row = await db
    .selectFrom('messages')
    .select(sql<number | null>`extract(epoch from (min(next_attempt) - now())) * 1000`.as('ms'))
    .where('status', '=', 'pending')
    .executeTakeFirst();
  // Clamped here, not with SQL's greatest(0, …): that ignores a null, so "nothing pending" read as
  // "due now" and the outbox asked again at once, round after round, on an idle system.
  return row?.ms == null ? null : Math.max(0, Number(row.ms));
}

import { webApi } from '@slack/bolt';
import type { MessageRow } from '../../db/schema.ts';
import { RetryLater } from '../outbox.ts';

export type SlackClient = InstanceType<typeof webApi.WebClient>;

/**
 * The Web API client of the app: no retries of its own and 429 rejected at once, so that the
 * outbox decides when to try again (with the Retry-After Slack sent) and a crash loses nothing.
 */
export function slackClient(options: { token: string; apiUrl: string; timeoutMs?: number }): SlackClient {
  return new webApi.WebClient(options.token, {
    slackApiUrl: options.apiUrl,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: options.timeoutMs ?? 10_000,
    logLevel: webApi.LogLevel.ERROR,
  });
}

/** A Web API failure as the outbox sees it: RetryLater for 429, 5xx and the network, else the error itself (given up). */
export function slackFailure(err: unknown): Error {
  const e = err as { code?: string; retryAfter?: number; statusCode?: number; headers?: Record<string, string>; message?: string };
  if (e.code === webApi.ErrorCode.RateLimitedError) return new RetryLater('Slack answered 429', 429, (e.retryAfter ?? 1) * 1000);
  if (e.code === webApi.ErrorCode.HTTPError && (e.statusCode ?? 0) >= 500) {
    const after = Number(e.headers?.['retry-after']);
    return new RetryLater(
      `Slack answered ${e.statusCode}`,
      e.statusCode ?? null,
      Number.isFinite(after) && after >= 0 ? after * 1000 : null,
    );
  }
  if (e.code === webApi.ErrorCode.RequestError) return new RetryLater(`Slack could not be reached: ${e.message}`, null, null);
  return err instanceof Error ? err : new Error(String(err));
}

interface Posted {
  channel: string | null;
  ts: string | null;
}

/** Sends one outbox message with the Web API: a post (a DM opened on the user's id), an ephemeral one, an edit, an unfurl. */
export async function sendSlack(client: SlackClient, row: MessageRow, original: Posted | null): Promise<Posted> {
  const payload = row.payload as { text: string; blocks?: unknown[]; channel?: string; ts?: string; unfurls?: Record<string, unknown> };
  const content = { text: payload.text, blocks: payload.blocks as never };
  try {
    switch (row.kind) {
      case 'post': {
        const res = await client.chat.postMessage({ channel: row.recipient, ...content });
        return { channel: res.channel ?? null, ts: res.ts ?? null };
      }
      case 'ephemeral': {
        await client.chat.postEphemeral({ channel: payload.channel!, user: row.recipient, ...content });
        return { channel: payload.channel ?? null, ts: null };
      }
      case 'update': {
        if (!original) throw new RetryLater('the message to edit is not posted yet', null, null);
        await client.chat.update({ channel: original.channel!, ts: original.ts!, ...content });
        return original;
      }
      case 'unfurl': {
        await client.chat.unfurl({ channel: payload.channel!, ts: payload.ts!, unfurls: payload.unfurls as never });
        return { channel: payload.channel ?? null, ts: payload.ts ?? null };
      }
    }
  } catch (err) {
    throw err instanceof RetryLater ? err : slackFailure(err);
  }
}

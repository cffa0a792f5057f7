import { createHmac } from 'node:crypto';
import { type Fault, type RecordedCall, startRecordingServer } from './chat-stand-in.ts';

/**
 * A local stand-in of Slack's Web API (`SLACK_API_URL`), as the chat service's Web API client
 * talks to it: form-encoded calls to /api/<method>, answers `{ ok: true, … }`. It records every
 * call, can answer 429 with Retry-After (or a 5xx) to the calls a test chooses, and knows the
 * profiles users.info answers with.
 */
export interface SlackCall extends RecordedCall {
  method: string;
  args: Record<string, any>;
  /** The body of a successful answer (a posted message's channel and ts). */
  answer?: Record<string, unknown>;
}

export async function startSlackStandIn() {
  const profiles = new Map<string, { email: string; confirmed: boolean }>();
  let ts = 1_700_000_000;
  /** Decides the answer of each Web API call: null is a normal answer. */
  let fault: (method: string, args: Record<string, any>, n: number) => Fault = () => null;
  let count = 0;

  const server = await startRecordingServer<SlackCall>('Slack', (req, raw, res, record) => {
    const method = (req.url ?? '').replace(/^\/api\//, '').split('?')[0]!;
    const args: Record<string, any> = {};
    const typed = (req.headers['content-type'] ?? '').startsWith('application/json');
    for (const [k, v] of typed ? Object.entries(JSON.parse(raw || '{}')) : new URLSearchParams(raw)) {
      // The client sends nested arguments (blocks, view, unfurls) as JSON text.
      try {
        args[k] = typeof v === 'string' && /^[[{]/.test(v) ? JSON.parse(v) : v;
      } catch {
        args[k] = v;
      }
    }
    const failure = fault(method, args, ++count);
    const call = record({ method, args, status: failure?.status ?? 200, at: performance.now() });
    if (failure) {
      res.writeHead(failure.status, failure.retryAfter === undefined ? {} : { 'retry-after': String(failure.retryAfter) });
      res.end(JSON.stringify({ ok: false, error: failure.status === 429 ? 'ratelimited' : 'internal_error' }));
      return;
    }
    const answer = (body: Record<string, unknown>) => {
      call.answer = body;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, ...body }));
    };
    switch (method) {
      case 'chat.postMessage':
        // A message to a user's id lands in the app's direct message with them.
        return answer({ channel: String(args.channel).replace(/^U/, 'D'), ts: `${++ts}.000100`, message: { text: args.text } });
      case 'chat.postEphemeral':
        return answer({ message_ts: `${++ts}.000200` });
      case 'chat.update':
        return answer({ channel: args.channel, ts: args.ts });
      case 'users.info': {
        const p = profiles.get(String(args.user));
        return answer({ user: { id: args.user, is_email_confirmed: p?.confirmed ?? false, profile: { email: p?.email } } });
      }
      case 'views.open':
        return answer({ view: { id: `V${++ts}` } });
      default:
        return answer({});
    }
  });

  return {
    url: `${server.base}/api/`,
    calls: server.calls,
    profiles,
    /** Calls of a Web API method so far (with their answers), oldest first. */
    of: (method: string) => server.calls.filter((c) => c.method === method),
    /** Makes the stand-in answer with a failure whenever `decide` says so; null: every call succeeds. */
    failWhen(decide: ((method: string, args: Record<string, any>, n: number) => Fault) | null) {
      fault = decide ?? (() => null);
    },
    /** Resolves once `probe` holds of the calls, checking after each call. */
    until: server.until,
    close: server.close,
  };
}
export type SlackStandIn = Awaited<ReturnType<typeof startSlackStandIn>>;

/** The headers Slack signs a request with: v0 HMAC-SHA256 of `v0:<timestamp>:<body>` with the signing secret. */
export function slackSignature(secret: string, body: string, timestamp = Math.floor(Date.now() / 1000)) {
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return { 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signature };
}

/** A slash command's form body, as Slack posts it. */
export function slashCommand(fields: { command: string; text: string; team_id: string; user_id: string; channel_id?: string }) {
  return new URLSearchParams({
    token: 'deprecated',
    team_id: fields.team_id,
    team_domain: 'acme',
    channel_id: fields.channel_id ?? 'C0GENERAL',
    channel_name: 'general',
    user_id: fields.user_id,
    user_name: fields.user_id.toLowerCase(),
    command: fields.command,
    text: fields.text,
    api_app_id: 'A0KN',
    response_url: 'https://hooks.slack.invalid/commands/1',
    trigger_id: `trigger-${Math.random().toString(36).slice(2)}`,
  }).toString();
}

/** An interactivity payload (a button, a shortcut, a modal submission) as Slack posts it: one form field. */
export const interaction = (payload: Record<string, unknown>) => new URLSearchParams({ payload: JSON.stringify(payload) }).toString();

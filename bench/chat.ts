// Chat (docs/chat.md): the time from a question's publication (PUT /questions/:id/publish sent) to
// its expert's direct message reaching Slack (the Web API stand-in answering chat.postMessage with
// 200), under a burst of N routings (default 1,000) published CONCURRENCY at a time, while the
// stand-in answers 429 (Retry-After: 1) to one Web API call in ten. Users, content, search, chat
// and the gateway run as separate processes; the stand-in runs in this process.
// Run: npx pnpm@10.34.8 exec node bench/chat.ts   (N=100 for a quick run)
import { rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import pg from 'pg';
import { slackSignature, slashCommand, startSlackStandIn } from '../test/slack-stand-in.ts';
import { benchSpace, login, report, serviceEnv, startProcess, stopProcess } from './lib.ts';

const N = Number(process.env.N ?? 1000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 10);
const EXPERTS = 5;
const SECRET = 'bench-signing-secret';
const space = await benchSpace();
const slack = await startSlackStandIn();
// One Web API call in ten is refused with 429, whatever it is: the outbox waits the second it asks for.
slack.failWhen((_method, _args, n) => (n % 10 === 0 ? { status: 429, retryAfter: 1 } : null));
const dir = `/tmp/kn-bench-chat-${space.id}`;
// A free port: other benchmarks may hold the usual ones.
const port = await new Promise<number>((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port: free } = probe.address() as AddressInfo;
    probe.close(() => resolve(free));
  });
});
const env = {
  ...serviceEnv(space, port),
  SCRYPT_COST: '1024',
  SEARCH_INDEX_PATH: `${dir}/index.sqlite`,
  EMBEDDING_MODEL_PATH: `${dir}/no-model`,
  SLACK_SIGNING_SECRET: SECRET,
  SLACK_BOT_TOKEN: 'xoxb-bench',
  SLACK_API_URL: slack.url,
  PUBLIC_URL: 'http://kn.bench',
};
const processes = [
  await startProcess('services/users/src/main.ts', env, 'users service ready'),
  await startProcess('services/content/src/main.ts', env, 'content service ready'),
  await startProcess('services/search/src/main.ts', env, 'search service ready'),
  await startProcess('services/chat/src/main.ts', env, 'chat service ready'),
  await startProcess('gateway/src/main.ts', env, 'gateway listening'),
];
const base = `http://127.0.0.1:${port}`;
try {
  const admin = await login(`${base}/api/v1`);
  // Every routing reaches all the experts: no weekly cap per expert for the burst.
  await admin.call('updateNetworkSettings', { body: { routings_per_expert_per_week: 0 } });
  // A request the loaded machine could not serve (5xx) is sent again, a few times.
  const post = async (path: string, token: string, body: unknown, method = 'POST'): Promise<any> => {
    for (let attempt = 1; ; attempt++) {
      const r = await fetch(`${base}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (r.status < 300) return r.json();
      const text = await r.text();
      if (r.status < 500 || attempt === 5) throw new Error(`${method} ${path}: ${r.status} ${text}`);
    }
  };
  const person = async (i: string) => {
    const email = `chat-bench-${i}@example.com`;
    await admin.call('createUser', {
      body: { email, firstname: 'Bench', lastname: i, language: 'en', password: 'bench-password', roles: ['user', 'api_user'] },
    });
    const { token } = await fetch(`${base}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'bench-password' }),
    }).then((r) => r.json() as Promise<{ token: string }>);
    return token;
  };
  // Experts on one tag, each linked to a Slack user the way a person links: the app's link, then the web app.
  const asker = await person('asker');
  const seed = await post('/questions', asker, {
    title: 'Which mash temperature for a dry beer?',
    description: '<p>mash</p>',
    tags: ['mashing'],
  });
  await post(`/questions/${seed.id}/publish`, asker, undefined, 'PUT');
  for (let e = 0; e < EXPERTS; e++) {
    const token = await person(`expert${e}`);
    const draft = await post(`/questions/${seed.id}/solutions`, token, { description: '<p>Mash low, around 64 °C, for a dry beer.</p>' });
    await post(`/solutions/${draft.id}/publish`, token, undefined, 'PUT');
    const body = slashCommand({ command: '/kn', text: 'search mash', team_id: 'T0BENCH', user_id: `U0EXPERT${e}` });
    // The link offer is one call, not a Web API call: the stand-in's faults do not touch it.
    const prompt = await fetch(`${base}/integrations/slack/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...slackSignature(SECRET, body) },
      body,
    }).then((r) => r.text());
    const code = /code=([A-Za-z0-9_-]+)/.exec(prompt)![1];
    await post('/chat/links', token, { code });
  }
  // The burst starts once the search index knows all the experts (their solutions are indexed).
  for (let found = 0; found < EXPERTS; ) {
    const experts = await fetch(`${base}/api/v1/questions/${seed.id}/experts?limit=10`, {
      headers: { authorization: `Bearer ${asker}` },
    }).then((r) => r.json() as Promise<{ total: number }>);
    found = experts.total;
    if (found < EXPERTS) await new Promise((r) => setTimeout(r, 200));
  }

  const published = new Map<number, number>();
  const titles = ['mash temperature', 'mash thickness', 'mash out', 'mash pH', 'mash time'];
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < N) {
        const i = next++;
        const q = await post('/questions', asker, {
          title: `Question ${i} on ${titles[i % titles.length]}?`,
          description: '<p>mash</p>',
          tags: ['mashing'],
        });
        published.set(q.id, performance.now());
        // A publish the loaded machine failed (5xx) is sent again, timed from the first: 409 says an earlier one took effect.
        for (;;) {
          const res = await fetch(`${base}/api/v1/questions/${q.id}/publish`, {
            method: 'PUT',
            headers: { authorization: `Bearer ${asker}` },
          });
          await res.arrayBuffer();
          if (res.status === 200 || res.status === 409) break;
          if (res.status < 500) throw new Error(`publishing ${q.id}: ${res.status}`);
        }
      }
    }),
  );
  const publishedIn = performance.now() - started;
  // First 200 of a direct message per question (to any of its experts: the first that reached Slack).
  const arrived = new Map<number, number>();
  // Each call is looked at once: the stand-in answers in this process, and a scan of every call
  // after each call would slow its answers as the calls pile up.
  let looked = 0;
  const seen = () => {
    for (; looked < slack.calls.length; looked++) {
      const c = slack.calls[looked]!;
      if (c.method !== 'chat.postMessage' || c.status !== 200 || !/^U0EXPERT/.test(String(c.args.channel))) continue;
      const id = Number(/questions\/(\d+)\|/.exec(String(c.args.text))?.[1]);
      if (published.has(id) && !arrived.has(id)) arrived.set(id, c.at);
    }
    return arrived.size >= published.size;
  };
  await slack.until(seen, 600_000);
  const latencies = [...arrived].map(([id, at]) => at - published.get(id)!).sort((a, b) => a - b);
  const pct = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!);
  // Where the time goes, stage by stage, from the databases' clocks (one Postgres): the publication
  // (content) → the routing decision (search) → its message written by the chat's consumer →
  // taken by Slack (sent). Each stage's p50 / p99 over the first direct message of each question.
  const db = new pg.Client({ connectionString: space.databaseUrl });
  await db.connect();
  const stages = await db.query<Record<string, number>>(
    `with first as (
       select m.question_id, min(m.created) as written, min(m.sent) as sent
         from chat.messages m where m.kind = 'post' and m.status = 'sent' group by m.question_id),
     t as (
       select extract(epoch from r.created - q.published) * 1000 as routing,
              extract(epoch from f.written - r.created) * 1000 as consumer,
              extract(epoch from f.sent - f.written) * 1000 as outbox
         from first f
         join content.questions q on q.id = f.question_id
         join search.routings r on r.question_id = f.question_id and r.reason = 'published')
     select ${['routing', 'consumer', 'outbox']
       .map(
         (c) =>
           `percentile_cont(0.5) within group (order by ${c}) as ${c}_p50, percentile_cont(0.99) within group (order by ${c}) as ${c}_p99`,
       )
       .join(', ')} from t`,
  );
  const stage = (name: string) => Math.round(Number(stages.rows[0]![name]));
  await db.end();
  const refused = slack.calls.filter((c) => c.status === 429).length;
  const posts = slack.calls.filter((c) => c.method === 'chat.postMessage' && c.status === 200).length;
  report('Chat: publication → expert direct message in Slack', 'npx pnpm@10.34.8 exec node bench/chat.ts', [
    {
      routings: N,
      experts_per_question: EXPERTS,
      published_in_ms: Math.round(publishedIn),
      p50_ms: pct(50),
      p90_ms: pct(90),
      p99_ms: pct(99),
      max_ms: Math.round(latencies.at(-1)!),
      routing_p50_ms: stage('routing_p50'),
      routing_p99_ms: stage('routing_p99'),
      consumer_p50_ms: stage('consumer_p50'),
      consumer_p99_ms: stage('consumer_p99'),
      outbox_p50_ms: stage('outbox_p50'),
      outbox_p99_ms: stage('outbox_p99'),
      web_api_calls: slack.calls.length,
      answered_429: refused,
      messages_posted: posts,
    },
  ]);
} finally {
  for (const p of processes.reverse()) await stopProcess(p);
  await slack.close();
  await space.drop();
  rmSync(dir, { recursive: true, force: true });
}

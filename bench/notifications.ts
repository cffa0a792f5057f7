// Notifications: (1) latency from PUT /solutions/:id/publish to the poser's notification being
// readable through GET /notifications, over N publishes (default 1,000), one at a time;
// (2) fan-out: one solution published to a question with FOLLOWERS followers (default 1,000):
// time until every follower's notification is readable, and until every email and webhook is out.
// Users, content, notifications and the gateway run as separate processes; a real SMTP server and
// a webhook receiver run in this process. Run: npx pnpm@10.34.8 exec node bench/notifications.ts (N=200 FOLLOWERS=200 for a quick run).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import { benchSpace, login, report, serviceEnv, startProcess, stopProcess } from './lib.ts';

const N = Number(process.env.N ?? 1000);
const FOLLOWERS = Number(process.env.FOLLOWERS ?? 1000);
const GAP_MS = Number(process.env.GAP_MS ?? 0);
const space = await benchSpace();
const { id, databaseUrl } = space;

let mailsReceived = 0;
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  onData(stream, _session, callback) {
    stream.on('data', () => {});
    stream.on('end', () => {
      mailsReceived++;
      callback();
    });
  },
});
let hooksReceived = 0;
const receiver = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    hooksReceived++;
    res.end('ok');
  });
});
await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));

const env = {
  ...serviceEnv({ databaseUrl, namespace: space.namespace }, 18091),
  SCRYPT_COST: '1024',
  // The webhook receiver is this process, on 127.0.0.1.
  WEBHOOK_ALLOW_INTERNAL: 'true',
  SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
};
const base = 'http://127.0.0.1:18091/api/v1';
const users = await startProcess('services/users/src/main.ts', env, 'users service ready');
const content = await startProcess('services/content/src/main.ts', env, 'content service ready');
const notifications = await startProcess('services/notifications/src/main.ts', env, 'notifications service ready');
const gateway = await startProcess('gateway/src/main.ts', env, 'gateway listening');
const db = new pg.Client({ connectionString: databaseUrl });
await db.connect();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;

try {
  const admin = await login(base);
  await admin.call('updateNetworkSettings', {
    body: {
      webhook_enabled: true,
      webhook_url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      webhook_secret: 'bench-webhook-secret-0123456789',
    },
  });
  const person = async (name: string) => {
    const email = `${name}-${id}@example.com`;
    const user = await admin.call('createUser', {
      body: { email, firstname: 'Bench', lastname: name, language: 'en', password: 'password-1234', roles: ['user', 'api_user'] },
    });
    return { id: user.id, client: await login(base, email, 'password-1234') };
  };
  const poser = await person('poser');
  const author = await person('author');
  const question = async () => {
    const q = await poser.client.call('createQuestion', {
      body: { title: 'How do I make the build faster?', description: '<p>It is slow.</p>' },
    });
    await poser.client.call('publishQuestion', { params: { id: q.id } });
    return q.id;
  };

  // 1. Latency, one publish at a time.
  const q = await question();
  const latencies: number[] = [];
  for (let i = 0; i < N; i++) {
    const draft = await author.client.call('createSolution', {
      params: { id: q },
      body: { description: `<p>Try remote caching, variant ${i}.</p>` },
    });
    // GAP_MS > 0 lets the content outbox relay go idle after the draft's event (diagnosis only).
    if (GAP_MS) await sleep(GAP_MS);
    const t0 = performance.now();
    await author.client.call('publishSolution', { params: { id: draft.id } });
    for (;;) {
      const page = await poser.client.call('listNotifications', { query: { limit: 1 } });
      if (page.items[0]?.target_id === draft.id) break;
      await sleep(1);
    }
    latencies.push(performance.now() - t0);
  }
  latencies.sort((a, b) => a - b);

  // 2. Fan-out to FOLLOWERS followers (created and following through the API, on behalf).
  const fq = await question();
  const followers: number[] = [];
  for (let i = 0; i < FOLLOWERS; i++) {
    const u = await admin.call('createUser', {
      body: { email: `f${i}-${id}@example.com`, firstname: 'Follower', lastname: String(i), language: i % 2 ? 'de' : 'en' },
    });
    followers.push(u.id);
    await admin.call('followQuestion', { params: { id: fq } }, { onBehalfOf: { userId: u.id } });
  }
  const last = followers[followers.length - 1] as number;
  await sleep(2000);
  const mailsBefore = mailsReceived;
  const hooksBefore = hooksReceived;
  const draft = await author.client.call('createSolution', { params: { id: fq }, body: { description: '<p>Cache everything.</p>' } });
  const t0 = performance.now();
  await author.client.call('publishSolution', { params: { id: draft.id } });
  let readable = 0;
  let emailsOut = 0;
  let hooksOut = 0;
  while (!readable || !emailsOut || !hooksOut) {
    const now = performance.now() - t0;
    if (!readable) {
      const count = await admin.call('countUnreadNotifications', { query: { user_id: last } });
      if (count.notifications >= 1) {
        const { rows } = await db.query(
          `select count(*)::int as n from notifications.notifications where target_type = 'solution' and target_id = $1`,
          [draft.id],
        );
        if (rows[0].n >= FOLLOWERS) readable = now;
      }
    }
    if (!emailsOut && mailsReceived - mailsBefore >= FOLLOWERS) emailsOut = now;
    if (!hooksOut && hooksReceived - hooksBefore >= FOLLOWERS + 1) hooksOut = now;
    if (now > 300_000)
      throw new Error(
        `fan-out did not finish: readable ${readable}, mails ${mailsReceived - mailsBefore}, hooks ${hooksReceived - hooksBefore}`,
      );
    await sleep(5);
  }

  report(
    'Notifications: publish → readable latency, and fan-out',
    `N=${N} FOLLOWERS=${FOLLOWERS} GAP_MS=${GAP_MS} npx pnpm@10.34.8 exec node bench/notifications.ts`,
    [
      {
        measure: `publish → GET /notifications shows it (${N} publishes, sequential)`,
        p50_ms: Math.round(percentile(latencies, 50)),
        p99_ms: Math.round(percentile(latencies, 99)),
        max_ms: Math.round(latencies[latencies.length - 1] as number),
      },
      {
        measure: `fan-out to ${FOLLOWERS} followers: all notifications readable`,
        ms: Math.round(readable),
        per_second: Math.round((FOLLOWERS / readable) * 1000),
      },
      {
        measure: `fan-out: ${FOLLOWERS} emails accepted by SMTP`,
        ms: Math.round(emailsOut),
        per_second: Math.round((FOLLOWERS / emailsOut) * 1000),
      },
      {
        measure: `fan-out: ${FOLLOWERS + 1} webhooks delivered`,
        ms: Math.round(hooksOut),
        per_second: Math.round(((FOLLOWERS + 1) / hooksOut) * 1000),
      },
    ],
  );
} finally {
  await db.end();
  for (const p of [gateway, notifications, content, users]) await stopProcess(p);
  smtp.close();
  receiver.close();
  await space.drop();
}

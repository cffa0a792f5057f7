// Faults with nothing lost: the system as separate processes on a NATS server of its own, a
// workload of people asking, answering, commenting, rating, sharing and searching, faults while
// it runs (a process killed with SIGKILL, NATS killed and restarted, Postgres connections cut or
// the server restarted), and a checker that compares what the API acknowledged with what every
// service holds afterwards. Used by test/faults.test.ts (short) and bench/faults.ts (long).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Answer, KnClient, type OperationName } from '@kn/client';
import { freePort, isolation, startNatsServer, waitFor } from '@kn/testing';
import JSZip from 'jszip';
import pg from 'pg';

const ADMIN = { email: 'admin@example.com', password: 'faults-admin-password' };
const TAGS = ['hops', 'yeast', 'barrel', 'cider'];
const PARTS = ['users', 'content', 'notifications', 'search', 'exports', 'gateway'] as const;
type Part = (typeof PARTS)[number];
const entry = (part: Part) => (part === 'gateway' ? 'gateway/src/main.ts' : `services/${part}/src/main.ts`);
const readyLine = (part: Part) => (part === 'gateway' ? 'gateway listening' : `${part} service ready`);

/** The system as separate processes, each of which a fault may kill. */
export async function startFaultySystem() {
  const space = isolation();
  const { databaseUrl } = space;
  const dir = mkdtempSync(path.join(tmpdir(), 'kn-faults-'));
  const nats = await startNatsServer();
  const port = await freePort();
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATABASE_URL: databaseUrl,
    NATS_URL: nats.url,
    NATS_NAMESPACE: space.namespace,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    SCRYPT_COST: '1024',
    PORT: String(port),
    HOST: '127.0.0.1',
    METRICS_PORT: '0',
    LOG_LEVEL: 'info',
    SEARCH_INDEX_PATH: path.join(dir, 'index.sqlite'),
    // Lexical search (as test/system.ts): a marker is found by its words alone, never beside
    // markers of other questions whose embeddings happen to be close.
    EMBEDDING_MODEL_PATH: path.join(dir, 'no-embedding-model'),
    // No mail server: emails wait in their outbox and are retried.
    SMTP_URL: 'smtp://127.0.0.1:1',
    // A fault stops a service for seconds; the gateway answers 503 sooner and the client retries.
    RPC_TIMEOUT_MS: '5000',
  };
  const processes = new Map<Part, ChildProcess>();
  /** Processes that exited without being killed by a fault: each is a bug. */
  const crashes: string[] = [];
  let stopping = false;

  function start(part: Part): Promise<void> {
    const child = spawn(process.execPath, [entry(part)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    processes.set(part, child);
    let output = '';
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL' || stopping) return;
      // A crash is a bug (recorded); like a supervisor (docker's restart policy), start it again.
      crashes.push(`${part} exited (${signal ?? code}): ${output.slice(-1500)}`);
      if (process.env.FAULTS_VERBOSE) console.log(crashes.at(-1));
      setTimeout(() => void start(part).catch(() => {}), 1000);
    });
    return new Promise((resolve, reject) => {
      const seen = (chunk: Buffer) => {
        output = (output + chunk.toString()).slice(-20_000);
        if (output.includes(readyLine(part))) resolve();
      };
      child.stdout!.on('data', seen);
      child.stderr!.on('data', seen);
      child.once('exit', (code) => reject(new Error(`${part} exited with ${code} before it was ready: ${output.slice(-2000)}`)));
    });
  }
  const stopPart = (part: Part, signal: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      const child = processes.get(part);
      if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
    });

  async function stop() {
    stopping = true;
    for (const part of [...PARTS].reverse()) await stopPart(part, 'SIGTERM');
    await space.drop(nats.url).catch(() => {});
    await nats.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
  try {
    for (const part of PARTS) await start(part);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    api: `http://127.0.0.1:${port}/api/v1`,
    databaseUrl,
    crashes,
    /** Kills a process with SIGKILL (nothing drained) and starts it again after `downMs`. */
    async kill(part: Part, downMs = 1000) {
      await stopPart(part, 'SIGKILL');
      await new Promise((r) => setTimeout(r, downMs));
      await start(part);
    },
    /** Kills the NATS server (SIGKILL) and starts it again on the same store after `downMs`. */
    async restartNats(downMs = 1000) {
      await nats.stop().catch(() => {});
      await new Promise((r) => setTimeout(r, downMs));
      await nats.restart('SIGKILL');
    },
    /**
     * Postgres going away: `restart` restarts the server of this machine (pg_ctlcluster; only
     * where nothing else uses it), otherwise every connection to this system's database is cut,
     * which is what the services see of a restart.
     */
    async restartPostgres(mode: 'cut' | 'restart') {
      if (mode === 'restart') {
        const version = execFileSync('ls', ['/etc/postgresql']).toString().trim().split('\n').sort().pop()!;
        execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'restart']);
        return;
      }
      const client = new pg.Client({ connectionString: databaseUrl.replace(/\/[^/]+$/, '/postgres') });
      await client.connect();
      try {
        await client.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [
          new URL(databaseUrl).pathname.slice(1),
        ]);
      } finally {
        await client.end();
      }
    },
    stop,
  };
}
export type FaultySystem = Awaited<ReturnType<typeof startFaultySystem>>;

/**
 * A client as a careful integration writes one (@kn/client): every request is retried until it
 * gets an answer that is not 5xx or 429 (a fault may last seconds), POSTs with one Idempotency-Key
 * for all their attempts, so that a retry of a request whose answer was lost changes nothing.
 */
export const faultTolerantClient = (api: string, token?: string) =>
  new KnClient({
    baseUrl: api,
    token,
    timeoutMs: 20_000,
    retry: { attempts: Number.POSITIVE_INFINITY, deadlineMs: 60_000, delayMs: 300, maxDelayMs: 300, statuses: [429, 500, 502, 503, 504] },
  });

/** What the API acknowledged (answered with 2xx). */
export interface Acknowledged {
  questions: Map<number, { author: number; tag: string; marker: string; published: boolean }>;
  solutions: Map<number, { question: number; author: number; published: boolean }>;
  comments: Map<number, { question: number }>;
  /** The last rating each user gave each solution (acknowledged, or carried out before with its answer lost): `${solution}:${user}` → rating. */
  ratings: Map<string, number>;
  /** Shares per question and recipient (acknowledged, or carried out before with the answer lost): `${question}:${recipient}` → count. */
  shares: Map<string, number>;
  searches: number;
  /**
   * Requests whose change was made but whose answer was lost for good: the process stopped between
   * committing the change and keeping its answer, and the retry was told so (409). Not
   * acknowledged, so not looked for; that nothing is duplicated is still checked.
   */
  answersLost: number;
  /** Requests answered with an unexpected 4xx (each is a failure of the run). */
  rejected: string[];
}

export interface Actor {
  id: number;
  client: KnClient;
}

/** Creates the administrator's client (rate limits lifted) and `count` people who use the network. */
export async function people(api: string, count: number): Promise<{ admin: KnClient; actors: Actor[] }> {
  const anonymous = faultTolerantClient(api);
  const admin = await anonymous.login(ADMIN.email, ADMIN.password);
  await admin.call('updateNetworkSettings', { body: { rate_limit_per_minute: 0, login_attempts_per_minute: 0 } });
  const actors: Actor[] = [];
  for (let i = 0; i < count; i++) {
    const email = `person${i}-${randomBytes(3).toString('hex')}@faults.invalid`;
    const created = await admin.call('createUser', {
      body: {
        email,
        firstname: 'Person',
        lastname: `Number ${i}`,
        language: 'en',
        password: 'a-long-password',
        roles: ['user', 'api_user'],
      },
    });
    actors.push({ id: created.id, client: await anonymous.login(email, 'a-long-password') });
  }
  return { admin, actors };
}

/** A fault in a schedule: what it does, when (ms after the start of the workload). */
export interface Fault {
  at: number;
  what: string;
  run(system: FaultySystem): Promise<void>;
}

/** The faults of a run, one after another: each process killed, NATS restarted, Postgres cut or restarted. */
export function schedule(options: { everyMs: number; rounds: number; postgres: 'cut' | 'restart' }): Fault[] {
  const kinds: Array<Omit<Fault, 'at'>> = [
    { what: 'kill content', run: (s) => s.kill('content') },
    { what: 'kill search', run: (s) => s.kill('search') },
    { what: 'restart NATS', run: (s) => s.restartNats() },
    { what: `Postgres (${options.postgres})`, run: (s) => s.restartPostgres(options.postgres) },
    { what: 'kill notifications', run: (s) => s.kill('notifications') },
    { what: 'kill gateway', run: (s) => s.kill('gateway') },
    { what: 'kill users', run: (s) => s.kill('users') },
    { what: 'kill exports', run: (s) => s.kill('exports') },
  ];
  const faults: Fault[] = [];
  for (let round = 0; round < options.rounds; round++)
    for (const kind of kinds) faults.push({ ...kind, at: (faults.length + 1) * options.everyMs });
  return faults;
}

/** Runs the faults at their times (each after the one before has finished); resolves with what happened. */
export async function inject(system: FaultySystem, faults: Fault[]): Promise<string[]> {
  const started = Date.now();
  const log: string[] = [];
  for (const fault of faults) {
    const wait = started + fault.at - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t = Date.now();
    await fault.run(system);
    log.push(`${((t - started) / 1000).toFixed(1)} s: ${fault.what} (back in ${((Date.now() - t) / 1000).toFixed(1)} s)`);
    if (process.env.FAULTS_VERBOSE) console.log(log.at(-1));
  }
  return log;
}

/** Runs `workers` people's work for `ms` milliseconds and returns what was acknowledged. */
export async function workload(actors: Actor[], options: { ms: number; workers: number; run: string }): Promise<Acknowledged> {
  const ack: Acknowledged = {
    questions: new Map(),
    solutions: new Map(),
    comments: new Map(),
    ratings: new Map(),
    shares: new Map(),
    searches: 0,
    answersLost: 0,
    rejected: [],
  };
  const pick = <T>(list: T[]) => list[Math.floor(Math.random() * list.length)];
  const published = () => [...ack.questions.entries()].filter(([, q]) => q.published);
  let made = 0;
  const end = Date.now() + options.ms;
  /** 409 "carried out before": an earlier attempt of the request made its change, and its answer was lost. */
  const carriedOutBefore = <N extends OperationName>(reply: Answer<N>) =>
    !reply.ok && reply.status === 409 && /carried out before/.test(reply.error.message);
  const expect = <N extends OperationName>(what: string, reply: Answer<N>, status: number): reply is Answer<N> & { ok: true } => {
    if (reply.ok && reply.status === status) return true;
    if (carriedOutBefore(reply)) {
      ack.answersLost++;
      return false;
    }
    ack.rejected.push(`${what}: ${reply.status} ${JSON.stringify(reply.ok ? reply.data : reply.error.body).slice(0, 200)}`);
    return false;
  };

  async function step(me: Actor) {
    const roll = Math.random();
    const questions = published();
    if (roll < 0.3 || questions.length < 3) {
      const marker = `fz${options.run}n${String(made++).padStart(6, '0')}`;
      const tag = pick(TAGS)!;
      const created = await me.client.send('createQuestion', {
        body: {
          title: `How does ${tag} change a brew? ${marker}`,
          description: `<p>Asked while faults happen: ${marker}.</p>`,
          tags: [tag],
        },
      });
      if (!expect('ask', created, 201)) return;
      const question = { author: me.id, tag, marker, published: false };
      ack.questions.set(created.data.id, question);
      const publish = await me.client.send('publishQuestion', { params: { id: created.data.id } });
      // A retried publish whose first attempt went through answers that it is published already.
      if (publish.status === 200 || (publish.status === 409 && (await isPublished(me, 'question', created.data.id))))
        question.published = true;
      else expect('publish question', publish, 200);
      return;
    }
    const [questionId, question] = pick(questions)!;
    if (roll < 0.55) {
      if (question.author === me.id) return;
      const created = await me.client.send('createSolution', {
        params: { id: questionId },
        body: { description: `<p>Try more ${question.tag}.</p>` },
      });
      if (!expect('answer', created, 201)) return;
      const solution = { question: questionId, author: me.id, published: false };
      ack.solutions.set(created.data.id, solution);
      const publish = await me.client.send('publishSolution', { params: { id: created.data.id } });
      if (publish.status === 200 || (publish.status === 409 && (await isPublished(me, 'solution', created.data.id))))
        solution.published = true;
      else expect('publish solution', publish, 200);
    } else if (roll < 0.7) {
      const created = await me.client.send('createQuestionComment', {
        params: { id: questionId },
        body: { description: '<p>Good question.</p>' },
      });
      if (expect('comment', created, 201)) ack.comments.set(created.data.id, { question: questionId });
    } else if (roll < 0.85) {
      const solutions = [...ack.solutions.entries()].filter(([, s]) => s.published && s.author !== me.id);
      if (!solutions.length) return;
      const [solutionId] = pick(solutions)!;
      const rating = 1 + Math.floor(Math.random() * 5);
      const rated = await me.client.send('rateSolution', { params: { id: solutionId }, body: { rating } });
      // Carried out before (its answer lost): the rating was given all the same.
      if (expect('rate', rated, 200) || carriedOutBefore(rated)) ack.ratings.set(`${solutionId}:${me.id}`, rating);
    } else if (roll < 0.95) {
      const recipient = pick(actors.filter((a) => a.id !== me.id))!;
      const shared = await me.client.send('shareQuestion', { params: { id: questionId }, body: { recipients: [recipient.id] } });
      // A share carried out before (its answer lost) notified its recipient too: what it did is known without its answer.
      const key = `${questionId}:${recipient.id}`;
      if (expect('share', shared, 200) || carriedOutBefore(shared)) ack.shares.set(key, (ack.shares.get(key) ?? 0) + 1);
    } else {
      const found = await me.client.send('listQuestions', { query: { query: `${question.tag} brew` } });
      // 503 SearchIndexLoading while a restarted search instance catches up is retried by send.
      if (expect('search', found, 200)) ack.searches++;
    }
  }

  await Promise.all(
    Array.from({ length: options.workers }, async (_, w) => {
      const me = actors[w % actors.length]!;
      while (Date.now() < end)
        await step(me).catch((err: Error) => {
          ack.rejected.push(err.message);
        });
    }),
  );
  return ack;
}

async function isPublished(actor: Actor, kind: 'question' | 'solution', id: number) {
  const res = await (kind === 'question'
    ? actor.client.send('getQuestion', { params: { id } })
    : actor.client.send('getSolution', { params: { id } }));
  return res.ok && res.data.is_published;
}

/** What a check found: each line a difference between the acknowledged operations and a service. */
export interface Findings {
  checked: Record<string, number>;
  differences: string[];
}

/**
 * Compares what was acknowledged with what every service holds, once the system has settled
 * (retrying until `settleMs`: events still on their way are not differences).
 */
export async function check(
  system: FaultySystem,
  admin: KnClient,
  actors: Actor[],
  ack: Acknowledged,
  settleMs = 60_000,
): Promise<Findings> {
  // The last check's findings (none when it failed): past the deadline, its differences are the result.
  let last: Findings | undefined;
  return waitFor(
    async () => {
      last = undefined;
      last = await checkOnce(system, admin, actors, ack, settleMs);
      return !last.differences.length && last;
    },
    { timeoutMs: settleMs, intervalMs: 1000, what: 'every service to hold what was acknowledged' },
  ).catch((err) => {
    if (last) return last;
    throw err;
  });
}

async function checkOnce(system: FaultySystem, admin: KnClient, actors: Actor[], ack: Acknowledged, timeoutMs: number): Promise<Findings> {
  const differences: string[] = [];
  const checked: Record<string, number> = {};
  const count = (what: string) => {
    checked[what] = (checked[what] ?? 0) + 1;
  };
  const db = new pg.Client({ connectionString: system.databaseUrl });
  await db.connect();
  try {
    // Content: every acknowledged question, solution and comment once, in the state acknowledged.
    const rows = await db.query<{ id: number; title: string; is_published: boolean }>(
      'select id, title, published is not null as is_published from content.questions',
    );
    const byMarker = new Map<string, number[]>();
    for (const row of rows.rows) {
      const marker = row.title.match(/fz\w+n\d{6}/)?.[0];
      if (marker) byMarker.set(marker, [...(byMarker.get(marker) ?? []), row.id]);
    }
    for (const [id, q] of ack.questions) {
      count('content questions');
      const held = byMarker.get(q.marker) ?? [];
      if (held.length !== 1 || held[0] !== id) differences.push(`content: question ${q.marker} acknowledged as ${id}, held as [${held}]`);
      const row = rows.rows.find((r) => r.id === id);
      if (row && q.published && !row.is_published) differences.push(`content: question ${id} acknowledged published, held as a draft`);
    }
    const duplicates = [...byMarker].filter(([, ids]) => ids.length > 1);
    for (const [marker, ids] of duplicates) differences.push(`content: question ${marker} held ${ids.length} times (${ids})`);
    const solutions = await db.query<{ id: number; question_id: number; is_published: boolean }>(
      'select id, question_id, published is not null as is_published from content.solutions',
    );
    const solutionRows = new Map(solutions.rows.map((r) => [r.id, r]));
    for (const [id, s] of ack.solutions) {
      count('content solutions');
      const row = solutionRows.get(id);
      if (!row) differences.push(`content: solution ${id} acknowledged, not held`);
      else if (s.published && !row.is_published) differences.push(`content: solution ${id} acknowledged published, held as a draft`);
    }
    const comments = await db.query<{ id: number }>('select id from content.comments');
    const commentIds = new Set(comments.rows.map((r) => r.id));
    for (const id of ack.comments.keys()) {
      count('content comments');
      if (!commentIds.has(id)) differences.push(`content: comment ${id} acknowledged, not held`);
    }
    const ratings = await db.query<{ solution_id: number; user_id: number; rating: number }>(
      'select solution_id, user_id, rating from content.solution_ratings',
    );
    const heldRatings = new Map(ratings.rows.map((r) => [`${r.solution_id}:${r.user_id}`, r.rating]));
    for (const [key, rating] of ack.ratings) {
      count('content ratings');
      if (heldRatings.get(key) !== rating) differences.push(`content: rating ${key} acknowledged ${rating}, held ${heldRatings.get(key)}`);
    }

    // Search: every acknowledged published question is found by its marker, once.
    for (const [id, q] of ack.questions) {
      if (!q.published) continue;
      count('search index');
      const found = await admin.send('listQuestions', { query: { query: q.marker, limit: 5 } });
      const ids = found.ok ? found.data.items.map((i) => i.id) : [];
      if (ids.length !== 1 || ids[0] !== id) differences.push(`search: ${q.marker} (question ${id}) found as [${ids}] (${found.status})`);
    }

    // Notifications: each acknowledged share notified its recipient once.
    const notes = await db.query<{ user_id: number; question_id: number; n: number }>(
      "select user_id, question_id, count(*)::int as n from notifications.notifications where type = 'share_question' group by user_id, question_id",
    );
    const heldShares = new Map(notes.rows.map((r) => [`${r.question_id}:${r.user_id}`, r.n]));
    for (const [key, n] of ack.shares) {
      count('notifications');
      if (heldShares.get(key) !== n)
        differences.push(`notifications: share ${key} acknowledged ${n} times, notified ${heldShares.get(key) ?? 0}`);
    }

    // Expert statistics: each person's published solutions per tag, as the search service counts them.
    const expected = new Map<string, number>();
    for (const s of ack.solutions.values()) {
      const q = ack.questions.get(s.question);
      if (!s.published || !q) continue;
      expected.set(`${q.tag}:${s.author}`, (expected.get(`${q.tag}:${s.author}`) ?? 0) + 1);
    }
    for (const tag of TAGS) {
      const found = await admin.send('findExperts', { body: { query: tag, limit: 100 } });
      const held = new Map<number, number>(found.ok ? found.data.experts.map((e) => [e.user.id, e.details.solution_count]) : []);
      for (const actor of actors) {
        count('expert statistics');
        const want = expected.get(`${tag}:${actor.id}`) ?? 0;
        const got = held.get(actor.id) ?? 0;
        if (want !== got) differences.push(`experts: ${tag} solutions of user ${actor.id}: acknowledged ${want}, counted ${got}`);
      }
    }
  } finally {
    await db.end();
  }

  // Exports: a content export holds every question once.
  const started = await admin.send('createContentExport', { body: {} });
  if (!started.ok) differences.push(`exports: ${started.status}`);
  else {
    const record = await waitFor(
      async () => {
        const polled = await admin.call('getContentExport', { params: { id: started.data.export_id } });
        return polled.status !== 'processing' && polled;
      },
      { timeoutMs, intervalMs: 300, what: `content export ${started.data.export_id}` },
    );
    count('exports');
    const file = await admin.call('downloadContentExport', { params: { id: record.export_id } });
    const zip = await JSZip.loadAsync(file.bytes);
    const xml = (await Promise.all(Object.values(zip.files).map((f) => f.async('string')))).join('\n');
    for (const q of ack.questions.values()) {
      const times = xml.split(q.marker).length - 1;
      // The marker is in the title and in the description.
      if (times !== 2) differences.push(`exports: ${q.marker} appears ${times / 2} times in the content export`);
    }
  }
  return { checked, differences };
}

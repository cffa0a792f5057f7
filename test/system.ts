import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as analytics from '@kn/analytics';
import * as chat from '@kn/chat';
import * as content from '@kn/content';
import * as exportsModule from '@kn/exports';
import { loadConfig as loadGatewayConfig, start as startGateway } from '@kn/gateway';
import * as notifications from '@kn/notifications';
import * as search from '@kn/search';
import { isolation, type NatsAuth, testClock, testNatsUrl, waitFor } from '@kn/testing';
import * as users from '@kn/users';
import pg from 'pg';
import supertest from 'supertest';
import { recordAnswers } from './answers.ts';

export const ADMIN = { email: 'admin@example.com', password: 'admin-password-for-tests' };

/**
 * The whole system as production runs it (each service's `start`, the gateway's `start`) inside
 * the test process, against the machine's real Postgres and NATS, in a database and NATS
 * namespace of this test file's own, both dropped by `stop()`.
 */
export type Part = 'gateway' | 'users' | 'content' | 'notifications' | 'search' | 'exports' | 'analytics' | 'chat';

export async function startSystem(
  overrides: Record<string, string> = {},
  options: {
    /** Settings of one part only (its NATS user on a locked bus, say). */
    partEnv?: (part: Part) => Record<string, string>;
    /** A NATS user that may drop the namespace at stop (a locked bus). */
    natsAdmin?: NatsAuth;
  } = {},
) {
  const space = isolation();
  // Time-dependent rules (token expiry) follow this clock: a test moves it instead of waiting.
  const clock = testClock();
  const { databaseUrl, namespace } = space;
  const indexDir = mkdtempSync(join(tmpdir(), 'kn-search-'));
  const env = {
    DATABASE_URL: databaseUrl,
    NATS_URL: testNatsUrl(),
    NATS_NAMESPACE: namespace,
    LOG_LEVEL: 'silent',
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    // Cheap password hashing: tests create many users; the production cost is tested in its own unit.
    SCRYPT_COST: '1024',
    PORT: '0',
    HOST: '127.0.0.1',
    SEARCH_INDEX_PATH: join(indexDir, 'index.sqlite'),
    // Lexical search, whatever the machine has set up: rankings do not depend on how far the
    // background embedding got. test/semantic-search.test.ts names the real model.
    EMBEDDING_MODEL_PATH: join(indexDir, 'no-embedding-model'),
    // Every service of the file runs in this process: each serves its metrics on a free port.
    METRICS_PORT: '0',
    // Webhook receivers of the tests listen on 127.0.0.1 (test/webhook-targets.test.ts runs without this).
    WEBHOOK_ALLOW_INTERNAL: 'true',
    // With ELASTICSEARCH_URL in the environment the search service runs on Elasticsearch, in
    // indices of this file's own (dropped at stop).
    ...(process.env.ELASTICSEARCH_URL
      ? { ELASTICSEARCH_URL: process.env.ELASTICSEARCH_URL, ELASTICSEARCH_INDEX_PREFIX: `kn-test-${namespace}` }
      : {}),
    ...overrides,
  };
  const dropSearchIndices = async () => {
    if (env.ELASTICSEARCH_URL) await search.dropElasticsearchIndices(env.ELASTICSEARCH_URL, env.ELASTICSEARCH_INDEX_PREFIX!);
  };
  // What started is stopped again if a later part fails to start: no loop may outlive the file.
  const started: Array<{ stop(): Promise<void> }> = [];
  const begin = async <T extends { stop(): Promise<void> }>(starting: Promise<T>) => {
    const part = await starting;
    started.unshift(part);
    return part;
  };
  let usersService: Awaited<ReturnType<typeof users.start>>;
  let contentService: Awaited<ReturnType<typeof content.start>>;
  let notificationsService: Awaited<ReturnType<typeof notifications.start>>;
  let searchService: Awaited<ReturnType<typeof search.start>>;
  let exportsService: Awaited<ReturnType<typeof exportsModule.start>>;
  let chatService: Awaited<ReturnType<typeof chat.start>>;
  let analyticsService: Awaited<ReturnType<typeof analytics.start>>;
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  try {
    const of = (part: Part) => ({ ...env, ...options.partEnv?.(part) });
    usersService = await begin(users.start(users.loadConfig(of('users')), { clock }));
    contentService = await begin(content.start(content.loadConfig(of('content'))));
    notificationsService = await begin(notifications.start(notifications.loadConfig(of('notifications'))));
    searchService = await begin(search.start(search.loadConfig(of('search'))));
    exportsService = await begin(exportsModule.start(exportsModule.loadConfig(of('exports'))));
    chatService = await begin(chat.start(chat.loadConfig(of('chat')), { clock }));
    analyticsService = await begin(analytics.start(analytics.loadConfig(of('analytics')), { clock }));
    gateway = await begin(startGateway(loadGatewayConfig(of('gateway')), { clock }));
  } catch (err) {
    for (const part of started) await part.stop().catch(() => {});
    await space.drop(env.NATS_URL, options.natsAdmin).catch(() => {});
    await dropSearchIndices().catch(() => {});
    rmSync(indexDir, { recursive: true, force: true });
    throw err;
  }
  const api = supertest(gateway.url);

  const login = async (email: string, password: string) => {
    const res = await api.post('/api/v1/auth/login').send({ email, password });
    if (res.status !== 200) throw new Error(`login of ${email} failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.token as string;
  };
  const adminToken = await login(ADMIN.email, ADMIN.password);
  let counter = 0;

  return {
    env,
    api,
    clock,
    url: gateway.url,
    gateway,
    services: {
      users: usersService,
      content: contentService,
      notifications: notificationsService,
      search: searchService,
      exports: exportsService,
      analytics: analyticsService,
      chat: chatService,
    },
    /** Waits until every content and user change so far is in the search index. */
    async searchCaughtUp() {
      await Promise.all([contentService.runtime.relay.flush(), usersService.runtime.relay.flush()]);
      await searchService.backend.caughtUp();
    },
    /**
     * searchCaughtUp, and every question's text embedded and loaded (a system with one search
     * instance: the texts' consumer is a durable the instances share).
     */
    async embeddingsCaughtUp() {
      await this.searchCaughtUp();
      await searchService.questionTexts.caughtUp();
      await searchService.embeddings.caughtUp();
    },
    /** Waits until every event so far of content, users and routing is in the analytics figures. */
    async analyticsCaughtUp() {
      await Promise.all([contentService.runtime.relay.flush(), usersService.runtime.relay.flush(), searchService.runtime.relay.flush()]);
      await analyticsService.feed.caughtUp();
    },
    /** Waits until every question published so far is routed and its experts are notified. */
    async routed() {
      await contentService.runtime.relay.flush();
      await searchService.routing.caughtUp();
      await searchService.runtime.relay.flush();
      await notificationsService.consumers.search.caughtUp();
    },
    /** Waits until the chat service has turned every event so far into its messages, and sent those that are due. */
    async chatCaughtUp() {
      // What the platforms' requests go on doing after their answer comes first: it publishes and posts.
      await chatService.requests.settled();
      await this.routed();
      await Promise.all([contentService.runtime.relay.flush(), usersService.runtime.relay.flush()]);
      await Promise.all(Object.values(chatService.consumers).map((c) => c.caughtUp()));
      await chatService.outbox.drain();
    },
    adminToken,
    login,
    /**
     * Holds requests inside their transactions: locks a table of a service's schema
     * (`content.solutions`, say) until `run` is done, so that every write (or read) to it waits, as it would
     * behind a slow disk. `waiting(kind)` resolves once a backend of this system waits for a lock
     * of that kind (`relation`: the held table, `advisory`: an advisory lock).
     */
    async holding<T>(
      table: string,
      run: (waiting: (kind: string) => Promise<void>) => Promise<T>,
      /** `access exclusive` holds reads too. */
      mode: 'exclusive' | 'access exclusive' = 'exclusive',
    ): Promise<T> {
      const holder = new pg.Client({ connectionString: databaseUrl });
      // Another connection watches: inside a transaction pg_stat_activity stays as it was first read.
      const watcher = new pg.Client({ connectionString: databaseUrl });
      await Promise.all([holder.connect(), watcher.connect()]);
      try {
        await holder.query('begin');
        await holder.query(`lock table ${table} in ${mode} mode`);
        const waiting = async (kind: string) => {
          await waitFor(
            async () =>
              (
                await watcher.query<{ n: number }>(
                  `select count(*)::int as n from pg_stat_activity
                    where datname = current_database() and wait_event_type = 'Lock' and wait_event = $1`,
                  [kind],
                )
              ).rows[0]!.n > 0,
            { what: `a request waiting for a ${kind} lock` },
          );
        };
        return await run(waiting);
      } finally {
        await holder.query('rollback').catch(() => {});
        await Promise.all([holder.end(), watcher.end()]);
      }
    },
    /** Writes out what every process's logger holds (a test reading the logs waits for this). */
    async flushLogs() {
      const loggers = [gateway.logger, ...Object.values(this.services).map((s) => s.runtime.logger)];
      await Promise.all(loggers.map((l) => new Promise<void>((resolve) => l.flush(() => resolve()))));
    },
    /** A user who can log in (api_user plus the given roles) and their token. */
    async createUser(fields: Record<string, unknown> = {}, roles: string[] = ['user']) {
      counter++;
      const password = 'password-1234';
      const body = {
        email: `user${counter}-${Math.random().toString(36).slice(2, 8)}@example.com`,
        firstname: 'Test',
        lastname: `User${counter}`,
        language: 'en',
        password,
        roles: [...new Set(['api_user', ...roles])],
        ...fields,
      };
      const res = await api.post('/api/v1/users').set('authorization', `Bearer ${adminToken}`).send(body);
      if (res.status !== 201) throw new Error(`creating a user failed: ${res.status} ${JSON.stringify(res.body)}`);
      const token = await login(body.email, password);
      return { user: res.body, token, auth: ['authorization', `Bearer ${token}`] as [string, string] };
    },
    /** Stops everything even when one part fails to stop, so no loop outlives the test file. */
    async stop() {
      // What the gateway answered, for the run's check that every status is declared (answers.ts).
      const results = await Promise.allSettled([recordAnswers(gateway.metricsUrl)]);
      results.push(...(await Promise.allSettled([gateway.stop()])));
      results.push(
        ...(await Promise.allSettled([
          analyticsService.stop(),
          chatService.stop(),
          exportsService.stop(),
          searchService.stop(),
          notificationsService.stop(),
          contentService.stop(),
          usersService.stop(),
        ])),
      );
      results.push(...(await Promise.allSettled([space.drop(env.NATS_URL, options.natsAdmin), dropSearchIndices()])));
      rmSync(indexDir, { recursive: true, force: true });
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    },
  };
}

export type System = Awaited<ReturnType<typeof startSystem>>;
export const bearer = (token: string): [string, string] => ['authorization', `Bearer ${token}`];

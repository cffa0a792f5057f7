import { createServer as createHttpServer, type Server } from 'node:http';
import { createConnection, createServer, type Socket } from 'node:net';
import * as search from '@kn/search';
import { waitFor } from '@kn/testing';
import { API, newQuestion } from './fixtures.ts';
import { type System, startSystem } from './system.ts';

/**
 * The Elasticsearch backend when its engine is not there, goes away, comes back, or is not an
 * engine we support. The engine (the cluster of ELASTICSEARCH_URL, which infra/test.sh starts) is
 * reached through a TCP relay this file opens and closes: closed, the engine is gone for the
 * service as it would be behind a failed network. Runs in the OpenSearch pass of infra/test.sh.
 */
const engineUrl = process.env.ELASTICSEARCH_URL?.split(',')[0];
if (!engineUrl)
  throw new Error(
    'this file needs a search engine: ELASTICSEARCH_URL=$(bash infra/search-cluster.sh start) pnpm test test/search-engine-faults.test.ts',
  );

/** A relay to the engine on a port of its own, opened and closed at will. */
function relay() {
  const target = new URL(engineUrl!);
  const sockets = new Set<Socket>();
  let server: ReturnType<typeof createServer> | null = null;
  let port = 0;
  const open = () =>
    new Promise<void>((resolve, reject) => {
      if (server) return resolve();
      server = createServer((client) => {
        const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => {});
        }
        client.pipe(upstream).pipe(client);
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  const close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      if (!server) return resolve();
      server.close(() => resolve());
      server = null;
    });
  return { open, close, url: () => `http://127.0.0.1:${port}` };
}

/** An HTTP server that answers every request with this status and body: not an engine we support. */
async function impostor(status: number, body: string, type = 'application/json') {
  const server: Server = createHttpServer((_, res) => res.writeHead(status, { 'content-type': type }).end(body));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => new Promise((r) => server.close(r)) };
}

const engine = relay();
let system: System;

beforeAll(async () => {
  // A port of the relay's own, free again: nothing answers there when the system starts.
  await engine.open();
  await engine.close();
  system = await startSystem({ ELASTICSEARCH_URL: engine.url() });
});
afterAll(async () => {
  // Open for the indices' drop at stop.
  await engine.open();
  await system?.stop();
  await engine.close();
});

const find = (user: { auth: [string, string] }) => system.api.get(`${API}/questions?query=relay`).set(...user.auth);

test('an engine absent at start, lost while running and back again: 503 meanwhile with a clear code, and nothing lost', async () => {
  const user = await system.createUser();
  // Started without its engine: search says it is loading.
  const loading = await find(user);
  expect(loading.status).toBe(503);
  expect(loading.body.code).toBe('SearchIndexLoading');
  expect(loading.headers['retry-after']).toBe('2');
  await newQuestion(system, user.token, { title: 'Written before the engine came: relay', description: '<p>first</p>' });

  // The engine comes: the feed starts and catches up.
  await engine.open();
  await system.searchCaughtUp();
  await waitFor(async () => (await find(user)).body.total === 1, { what: 'the first question found' });

  // The engine goes away: search answers 503 ServiceUnavailable; writes go on.
  await engine.close();
  await waitFor(async () => (await find(user)).status === 503, { what: 'search noticing the engine gone' });
  const gone = await find(user);
  expect(gone.body.code).toBe('ServiceUnavailable');
  expect(gone.headers['retry-after']).toBeDefined();
  await newQuestion(system, user.token, { title: 'Written while the engine was gone: relay', description: '<p>second</p>' });

  // Back: the feed resumes where it stopped.
  await engine.open();
  await system.searchCaughtUp();
  await waitFor(async () => (await find(user)).body.total === 2, { what: 'both questions found' });
});

test.each([
  ['another program', 404, '<html>not found</html>', 'text/html', 'answers HTTP 404, not as Elasticsearch or OpenSearch'],
  [
    'a server that answers JSON without a version',
    200,
    '{"ok":true}',
    'application/json',
    'not as Elasticsearch or OpenSearch (no version',
  ],
  ['Elasticsearch 7', 200, '{"version":{"number":"7.17.9"}}', 'application/json', 'is Elasticsearch 7.17.9; this backend needs'],
  ['OpenSearch 1', 200, '{"version":{"number":"1.3.19","distribution":"opensearch"}}', 'application/json', 'is OpenSearch 1.3.19'],
])('%s at ELASTICSEARCH_URL stops the start with one line naming the setting', async (_, status, body, type, message) => {
  const server = await impostor(status, body, type);
  try {
    const starting = search.start(
      search.loadConfig({ ...system.env, ELASTICSEARCH_URL: server.url, ELASTICSEARCH_INDEX_PREFIX: 'kn-impostor' }),
    );
    await expect(starting).rejects.toMatchObject({ name: 'StartError', setting: 'ELASTICSEARCH_URL' });
    await expect(starting).rejects.toThrow(message);
  } finally {
    await server.close();
  }
});

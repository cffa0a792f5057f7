import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Bus, connectBus } from '@kn/bus';
import { createLogger } from '@kn/telemetry';
import { isolation, testNatsUrl } from '@kn/testing';
import { indexHandlers } from '../src/core/events.ts';
import { startLocalFeed } from '../src/local/feed.ts';
import { SearchStore } from '../src/local/store.ts';

/** The local engine's feed on the real NATS server, in a namespace of this file's own. */
const space = isolation();
const dir = mkdtempSync(join(tmpdir(), 'kn-local-feed-'));
let bus: Bus;
let store: SearchStore;

beforeAll(async () => {
  bus = await connectBus({
    url: testNatsUrl(),
    namespace: space.namespace,
    name: 'local-feed-test',
    logger: createLogger('test', 'silent'),
  });
  store = new SearchStore(join(dir, 'index.sqlite'));
});
afterAll(async () => {
  store?.close();
  await bus?.close();
  await space.drop();
  rmSync(dir, { recursive: true, force: true });
});

test('a feed stopped while it is still setting up its pulls stops, also on streams with nothing new', async () => {
  // Empty streams: nothing will arrive that could end a pull that began after the stop.
  const feed = await startLocalFeed({ bus, store, streams: ['content', 'users'], handlers: indexHandlers });
  await feed.stop();
  expect(feed.status()).toEqual({ content: { applied: 0, target: 0 }, users: { applied: 0, target: 0 } });
}, 20_000);

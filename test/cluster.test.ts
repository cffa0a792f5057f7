import { connectBus } from '@kn/bus';
import { createLogger } from '@kn/telemetry';
import { startNatsCluster, waitFor } from '@kn/testing';
import { newQuestion } from './fixtures.ts';
import { type System, startSystem } from './system.ts';

/**
 * The system on a three-node NATS cluster with NATS_REPLICAS=3, as docker-compose.yml runs it:
 * every stream, consumer and bucket is kept on three nodes, and the system goes on when one node
 * stops.
 */
let cluster: Awaited<ReturnType<typeof startNatsCluster>>;
let system: System;

beforeAll(async () => {
  cluster = await startNatsCluster();
  // The JetStream cluster elects its leader before it takes streams.
  await waitFor(
    async () => {
      const bus = await connectBus({ url: cluster.url, name: 'probe', logger: createLogger('probe', 'silent') });
      try {
        return (await bus.jsm.getAccountInfo()).streams >= 0;
      } finally {
        await bus.close();
      }
    },
    { timeoutMs: 20_000, what: 'a JetStream cluster leader' },
  );
  system = await startSystem({ NATS_URL: cluster.url, NATS_REPLICAS: '3' });
}, 90_000);
afterAll(async () => {
  await system?.stop();
  await cluster?.destroy();
});

test('streams, consumers and buckets have three replicas, and one node down loses nothing', async () => {
  const { bus } = system.services.content.runtime;
  const stream = await bus.jsm.streams.info(bus.streamName('content'));
  expect(stream.config.num_replicas).toBe(3);
  expect(stream.cluster?.replicas).toHaveLength(2);
  const consumer = await bus.jsm.consumers.info(bus.streamName('content'), 'notifications-content');
  expect(consumer.cluster?.replicas).toHaveLength(2);

  const user = await system.createUser();
  const ask = (title: string) => newQuestion(system, user.token, { title, tags: ['cluster'] });
  await ask('Written while the whole cluster is up');
  // Take down the node that leads the content stream: another takes over.
  const leader = stream.cluster!.leader!;
  await cluster.stopNode(Number(leader.replace('node-', '')));
  await waitFor(
    async () => {
      const res = await system.api.get('/api/v1/questions?limit=1').set(...user.auth);
      return res.status === 200;
    },
    { timeoutMs: 20_000, what: 'the API through the remaining nodes' },
  );
  await waitFor(
    async () => {
      await ask('Written while one node is down');
      return true;
    },
    { timeoutMs: 20_000, what: 'a write with one node down' },
  );
  await system.searchCaughtUp();
  const found = await system.api.get('/api/v1/questions?query=written%20node').set(...user.auth);
  expect(found.body.total).toBe(2);
}, 90_000);

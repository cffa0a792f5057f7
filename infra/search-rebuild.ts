// Rebuilds the search index of every running search instance from the event streams, and waits
// until the index answers again. Usage: pnpm search:rebuild (NATS_URL, NATS_NAMESPACE as the services).
import { connectBus } from '@kn/bus';
import { indexStatus, REBUILD_SUBJECT } from '@kn/search';
import { createLogger } from '@kn/telemetry';

const bus = await connectBus({
  url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  namespace: process.env.NATS_NAMESPACE ?? '',
  name: 'search-rebuild',
  logger: createLogger('search-rebuild', 'warn'),
});
const started = Date.now();
// No queue group: every instance hears it and rebuilds its own index.
bus.nc.publish(bus.subject(REBUILD_SUBJECT), '{}');
await bus.nc.flush();
await new Promise((r) => setTimeout(r, 500));
for (;;) {
  const status = await indexStatus(bus);
  if (status.ready) {
    console.log(`search index rebuilt: ${status.questions} questions in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    break;
  }
  await new Promise((r) => setTimeout(r, 1000));
}
await bus.close();

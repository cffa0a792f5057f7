// Rebuilds the search index of every running search instance from the event streams, and waits
// until the index answers again. Usage: pnpm search:rebuild (NATS_URL, NATS_NAMESPACE, NATS_USER as the services).
import { connectBus } from '@kn/bus';
import { SEARCH_REBUILD_SUBJECT } from '@kn/contracts';
import { indexStatus } from '@kn/search';
import { BaseConfig, parseConfig } from '@kn/service';
import { createLogger } from '@kn/telemetry';

const config = parseConfig(BaseConfig);
const bus = await connectBus({
  url: config.NATS_URL,
  user: config.NATS_USER,
  password: config.NATS_PASSWORD,
  namespace: config.NATS_NAMESPACE,
  name: 'search-rebuild',
  logger: createLogger('search-rebuild', 'warn'),
});
const started = Date.now();
// No queue group: every instance hears it and rebuilds its own index.
bus.nc.publish(bus.subject(SEARCH_REBUILD_SUBJECT), '{}');
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

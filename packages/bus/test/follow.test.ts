import { type Bus, connectBus, ensureStream, followStream } from '@kn/bus';
import { createLogger } from '@kn/telemetry';
import { isolation, testNatsUrl, waitFor } from '@kn/testing';
import type { JsMsg } from '@nats-io/jetstream';

/** The stream follower on the real NATS server, in a namespace of this file's own. */
const space = isolation();
let bus: Bus;
const warnings: string[] = [];

beforeAll(async () => {
  const logger = createLogger('follow-test', 'silent');
  logger.warn = ((_: unknown, message: string) => void warnings.push(message)) as typeof logger.warn;
  bus = await connectBus({ url: testNatsUrl(), namespace: space.namespace, name: 'follow-test', logger });
  await ensureStream(bus, 'users');
  for (let i = 1; i <= 7; i++) await bus.js.publish(bus.subject('users.user.deleted.v1'), JSON.stringify({ i }));
});
afterAll(async () => {
  await bus?.close();
  await space.drop();
});

/** A follower of the users stream from the position after `applied`, recording the batches it applies. */
function follower(options: { batch: number; failOnce?: boolean }) {
  const batches: Array<{ seqs: number[]; live: boolean }> = [];
  let applied = 0;
  let failed = false;
  const following = followStream({
    bus,
    consumer: () => bus.js.consumers.get(bus.streamName('users'), { opt_start_seq: applied + 1 }),
    pull: 10,
    batch: options.batch,
    apply: (messages: JsMsg[], live: boolean) => {
      if (options.failOnce && !failed && applied > 0) {
        failed = true;
        throw new Error('the index went away');
      }
      batches.push({ seqs: messages.map((m) => m.info.streamSequence), live });
      applied = messages[messages.length - 1]!.info.streamSequence;
    },
    what: 'test feed',
    log: bus.logger,
  });
  return { batches, following, applied: () => applied };
}

test('batches of at most `batch`; the last as soon as nothing more waits, as live', async () => {
  const { batches, following, applied } = follower({ batch: 3 });
  await waitFor(() => applied() === 7, { what: 'every message applied' });
  await following.stop();
  expect(batches).toEqual([
    { seqs: [1, 2, 3], live: false },
    { seqs: [4, 5, 6], live: false },
    { seqs: [7], live: true },
  ]);
});

test('an apply that fails is logged, and the follower reads again from where it applied', async () => {
  const { batches, following, applied } = follower({ batch: 3, failOnce: true });
  await waitFor(() => applied() === 7, { what: 'every message applied' });
  await following.stop();
  expect(batches.flatMap((b) => b.seqs)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  expect(warnings).toContain('test feed interrupted; resuming');
});

test('a stop ends a follower waiting on a quiet stream at once, also one stopped again', async () => {
  const { following, applied } = follower({ batch: 3 });
  await waitFor(() => applied() === 7, { what: 'every message applied' });
  await Promise.all([following.stop(), following.stop()]);
});

// Last: it publishes more to the stream the tests above read.
test('messages that come while an apply runs are applied together, as one live batch', async () => {
  let release = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  const batches: Array<{ seqs: number[]; live: boolean }> = [];
  const following = followStream({
    bus,
    consumer: () => bus.js.consumers.get(bus.streamName('users'), { opt_start_seq: 7 }),
    pull: 10,
    batch: 100,
    apply: async (messages: JsMsg[], live: boolean) => {
      batches.push({ seqs: messages.map((m) => m.info.streamSequence), live });
      if (batches.length === 1) await held;
    },
    what: 'test feed',
    log: bus.logger,
  });
  try {
    await waitFor(() => batches.length === 1, { what: 'the first batch applied' });
    for (let i = 8; i <= 10; i++) await bus.js.publish(bus.subject('users.user.deleted.v1'), JSON.stringify({ i }));
    // Delivered by the server (its consumer says so), then received here: a round trip on the same connection.
    await waitFor(
      async () => {
        for await (const c of bus.jsm.consumers.list(bus.streamName('users'))) if (c.delivered.stream_seq === 10) return true;
        return false;
      },
      { what: 'the new messages delivered' },
    );
    await bus.nc.flush();
    release();
    await waitFor(() => batches.flatMap((b) => b.seqs).includes(10), { what: 'every message applied' });
  } finally {
    release();
    await following.stop();
  }
  expect(batches).toEqual([
    { seqs: [7], live: true },
    { seqs: [8, 9, 10], live: true },
  ]);
});

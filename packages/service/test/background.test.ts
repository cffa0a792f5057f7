import { createDb, ensureDatabase } from '@kn/db';
import { intervalJob, lockedJob, serviceParts } from '@kn/service';
import { createLogger } from '@kn/telemetry';
import { isolation } from '@kn/testing';
import type { Kysely } from 'kysely';

const logger = createLogger('background-test', 'silent');
/** A timer that never fires during a test: the tests run the rounds themselves. */
const NEVER = 2_147_483_647;

/** A promise and what settles it. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

describe('lockedJob, on the real Postgres', () => {
  const space = isolation();
  // Two instances of a service: each its own pool of the same database.
  let first: Kysely<unknown>;
  let second: Kysely<unknown>;
  beforeAll(async () => {
    await ensureDatabase(space.databaseUrl);
    first = createDb({ url: space.databaseUrl, schema: 'public' });
    second = createDb({ url: space.databaseUrl, schema: 'public' });
  });
  afterAll(async () => {
    await first?.destroy();
    await second?.destroy();
    await space.drop();
  });

  test('of two instances rounds at the same time, one works and the other answers busy', async () => {
    const inRound = gate();
    const finish = gate();
    const rounds: string[] = [];
    const job = (db: Kysely<unknown>, name: string) =>
      lockedJob({
        name,
        db,
        lock: 'test.locked-job',
        everyMs: NEVER,
        logger,
        busy: 'busy',
        round: async () => {
          rounds.push(name);
          inRound.open();
          await finish.opened;
          return name;
        },
      });
    const a = job(first, 'a');
    const b = job(second, 'b');
    const fromA = a.runOnce();
    await inRound.opened;
    expect(await b.runOnce()).toBe('busy');
    finish.open();
    expect(await fromA).toBe('a');
    // The lock went with a's transaction.
    expect(await b.runOnce()).toBe('b');
    expect(rounds).toEqual(['a', 'b']);
    await Promise.all([a.stop(), b.stop()]);
  });
});

describe('intervalJob', () => {
  test('one round at a time: a round asked for during another runs after it, with its own argument', async () => {
    const inFirst = gate();
    const finish = gate();
    const log: string[] = [];
    const job = intervalJob<number, number>({
      name: 'test job',
      everyMs: NEVER,
      logger,
      round: async (n = 0) => {
        log.push(`start ${n}`);
        if (n === 1) {
          inFirst.open();
          await finish.opened;
        }
        log.push(`end ${n}`);
        return n * 10;
      },
    });
    const one = job.runOnce(1);
    const two = job.runOnce(2);
    await inFirst.opened;
    expect(log).toEqual(['start 1']);
    finish.open();
    expect(await Promise.all([one, two])).toEqual([10, 20]);
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2']);
    await job.stop();
  });

  /** A job whose rounds answer their number, `more` deciding whether the next follows at once; `reached` opens at round `until`. */
  const countingJob = (until: number, more: (round: number) => boolean) => {
    const counted = { rounds: 0, reached: gate() };
    const job = intervalJob<number>({
      name: 'test job',
      everyMs: NEVER,
      logger,
      round: async () => {
        counted.rounds++;
        if (counted.rounds === until) counted.reached.open();
        return counted.rounds;
      },
      more,
    });
    return { job, counted };
  };

  test('a round whose result says more waits is followed at once, until one says none', async () => {
    const { job, counted } = countingJob(3, (done) => done < 3);
    expect(await job.runOnce()).toBe(1);
    await counted.reached.opened;
    await job.stop();
    expect(counted.rounds).toBe(3);
  });

  test('stop ends the rounds that follow one another', async () => {
    const { job, counted } = countingJob(2, () => true);
    await job.runOnce();
    await counted.reached.opened;
    await job.stop();
    const stoppedAt = counted.rounds;
    // Whatever was under way when stop() was called has ended with it, and nothing follows.
    await new Promise((resolve) => setImmediate(resolve));
    expect(counted.rounds).toBe(stoppedAt);
    expect(counted.rounds).toBeLessThanOrEqual(3);
  });

  test('the timer runs rounds; a failed one is logged and the next runs', async () => {
    let rounds = 0;
    const warnings: string[] = [];
    const second = gate();
    const job = intervalJob({
      name: 'test job',
      everyMs: 5,
      logger: { warn: (_: unknown, message: string) => warnings.push(message) } as unknown as typeof logger,
      round: async () => {
        rounds++;
        if (rounds === 1) throw new Error('first fails');
        second.open();
      },
    });
    await second.opened;
    await job.stop();
    expect(warnings).toEqual(['test job failed']);
  });

  test('stop waits for the round under way; a second stop returns the same promise', async () => {
    const inRound = gate();
    const finish = gate();
    let ended = false;
    const job = intervalJob({
      name: 'test job',
      everyMs: NEVER,
      logger,
      round: async () => {
        inRound.open();
        await finish.opened;
        ended = true;
      },
    });
    void job.runOnce();
    await inRound.opened;
    const stopping = job.stop();
    expect(job.stop()).toBe(stopping);
    finish.open();
    await stopping;
    expect(ended).toBe(true);
  });
});

describe('serviceParts', () => {
  test('stops the parts newest first, each even after a failure, then the runtime; twice is once', async () => {
    const stopped: string[] = [];
    const part = (name: string, fails = false) => ({
      stop: async () => {
        stopped.push(name);
        if (fails) throw new Error(`${name} failed`);
      },
    });
    const parts = serviceParts(part('runtime'));
    parts.add(part('consumer'));
    parts.add(part('job', true));
    parts.add(part('operations'));
    const stopping = parts.stop();
    expect(parts.stop()).toBe(stopping);
    await expect(stopping).rejects.toThrow('job failed');
    expect(stopped).toEqual(['operations', 'job', 'consumer', 'runtime']);
  });

  test('a start that fails stops what started and the runtime, and throws', async () => {
    const stopped: string[] = [];
    const parts = serviceParts({ stop: async () => void stopped.push('runtime') });
    await expect(
      parts.starting(async () => {
        parts.add({ stop: async () => void stopped.push('consumer') });
        throw new Error('no bus');
      }),
    ).rejects.toThrow('no bus');
    expect(stopped).toEqual(['consumer', 'runtime']);
  });
});

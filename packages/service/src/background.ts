import { whenLockFree } from '@kn/db';
import type { Logger } from '@kn/telemetry';
import type { Kysely, Transaction } from 'kysely';

/** A part of a running service: its operations, a consumer, a job. */
export interface Stoppable {
  stop(): Promise<void>;
}

/** Work a service does every so often by itself. */
export interface IntervalJob<T, Arg = void> {
  /**
   * One round now (tests; work asked for). It runs after the rounds asked for before it and the
   * timer's round under way: a caller then finds the effect of the round it waited for.
   */
  runOnce(arg?: Arg): Promise<T>;
  /** Ends the timer and waits for the rounds under way. Again: the same promise. */
  stop(): Promise<void>;
}

/**
 * Runs `round` every `everyMs`, one round at a time: a tick that finds a round under way or
 * waiting is dropped, since it would only repeat it. A failed round of the timer is logged
 * (`<name> failed`) and the next tick tries again. A round whose result says that more work waits
 * (`more`) is followed at once by another, not at the next tick, until one says none or the job stops.
 */
export function intervalJob<T, Arg = void>(options: {
  name: string;
  everyMs: number;
  logger: Logger;
  round: (arg?: Arg) => Promise<T>;
  more?: (result: T) => boolean;
}): IntervalJob<T, Arg> {
  let queue: Promise<unknown> = Promise.resolve();
  let waiting = 0;
  let stopping: Promise<void> | undefined;
  const runOnce = (arg?: Arg): Promise<T> => {
    waiting++;
    const result = queue
      .then(() => options.round(arg))
      .then((value) => {
        // Asked for before this round ends: stop() then waits for it too.
        if (!stopping && waiting === 1 && options.more?.(value)) background();
        return value;
      })
      .finally(() => waiting--);
    queue = result.catch(() => {});
    return result;
  };
  const background = () => runOnce().catch((err) => options.logger.warn({ err }, `${options.name} failed`));
  const timer = setInterval(() => {
    if (waiting === 0) background();
  }, options.everyMs);
  // A process is kept alive by what it serves, not by a job's timer.
  timer.unref();
  return {
    runOnce,
    stop: () => {
      stopping ??= (async () => {
        clearInterval(timer);
        await queue;
      })();
      return stopping;
    },
  };
}

/**
 * An interval job of which one instance of the service does a round at a time, whichever
 * instances run it: every round is a transaction that holds the advisory lock `lock`, and one that
 * finds it held answers `busy` without doing anything. What the round changes must be safe to do
 * again (it marks what it did): a round of another instance follows it.
 */
export function lockedJob<S, T, Arg = void>(options: {
  name: string;
  db: Kysely<S>;
  lock: string;
  everyMs: number;
  logger: Logger;
  busy: T;
  round: (tx: Transaction<S>, arg?: Arg) => Promise<T>;
  more?: (result: T) => boolean;
}): IntervalJob<T, Arg> {
  const { db, lock, busy } = options;
  return intervalJob<T, Arg>({
    name: options.name,
    everyMs: options.everyMs,
    logger: options.logger,
    round: (arg) => whenLockFree(db, lock, busy, (tx) => options.round(tx, arg)),
    more: options.more,
  });
}

/**
 * The parts a service starts, stopped the way every service stops. `add` each part as it starts,
 * the operations last: nothing answers a request before what it relies on runs. `stop()` stops the
 * parts newest first (the operations stop taking requests before what they use goes), each even
 * when one before it failed, then the runtime, also after a failure: no connection may keep the
 * process alive. The first failure is thrown after that. A second `stop()` returns the first's
 * promise: a test's cleanup and a signal may both stop a service.
 */
export function serviceParts(runtime: Stoppable) {
  const parts: Stoppable[] = [];
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      let failure: { err: unknown } | undefined;
      for (const part of [...parts].reverse()) {
        try {
          await part.stop();
        } catch (err) {
          failure ??= { err };
        }
      }
      try {
        await runtime.stop();
      } catch (err) {
        failure ??= { err };
      }
      if (failure) throw failure.err;
    })();
    return stopping;
  };
  return {
    add<P extends Stoppable>(part: P): P {
      parts.push(part);
      return part;
    },
    stop,
    /** Runs the start of the parts; when it fails, what started and the runtime are stopped before the error is thrown. */
    async starting<R>(start: () => Promise<R>): Promise<R> {
      try {
        return await start();
      } catch (err) {
        await stop().catch(() => {});
        throw err;
      }
    },
  };
}

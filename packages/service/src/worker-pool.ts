// Work a request starts that may take long or much memory (parsing what users upload and write)
// runs in worker threads with a budget, so that one request cannot hold a process's event loop or
// grow its heap until it dies. Both sides are here: `startWorkerPool` in the service, `serveJobs`
// in the worker's module. This module imports nothing else of @kn/service, so a worker loads little.
import { parentPort, Worker, workerData } from 'node:worker_threads';

/** What ended a job before its worker answered. */
export type WorkerLimit = 'time' | 'memory' | 'busy' | 'deadline';

/**
 * A job passed its budget (`time`, `memory`: its thread was ended), found every thread busy and
 * the queue full (`busy`), or outlived its caller's deadline (`deadline`).
 */
export class WorkerLimitError extends Error {
  override name = 'WorkerLimitError';
  readonly limit: WorkerLimit;
  constructor(limit: WorkerLimit, message: string) {
    super(message);
    this.limit = limit;
  }
}

/** A job's own failure in its worker (an exception of the worker's code), carried across as name and message. */
export class WorkerJobError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

export interface WorkerPoolOptions {
  /** The worker's module, an absolute path (a package's `location.cjs` says where its sources are). */
  file: string;
  /** Names the pool in errors. */
  name: string;
  /** Threads at most; each is started when work finds none idle, and kept while it behaves. */
  threads: number;
  /** How long one job may run in its thread (ms); past it the thread is ended. */
  timeLimitMs: number;
  /** The heap plus array buffers one thread may hold (MiB); past it the thread is ended. */
  memoryLimitMb: number;
  /** Jobs waiting for a thread at most; one more is refused at once (`busy`). */
  maxWaiting: number;
  /** Given to `serveJobs`'s handler with every job (the worker's settings). */
  setup?: unknown;
}

export interface WorkerPool<In, Out> {
  /**
   * The worker's answer to `input`. Fails with WorkerLimitError when a limit ended it, with
   * WorkerJobError when the worker's code threw. `timeLimitMs` overrides the pool's for this job;
   * `deadline` (epoch ms) is when the caller stops waiting: a job still queued then is dropped, and
   * a running one gets at most until then.
   */
  run(input: In, options?: { timeLimitMs?: number; deadline?: number }): Promise<Out>;
  /** Refuses new jobs, fails the waiting ones and ends the threads. */
  stop(): Promise<void>;
}

type Message<Out> = { id: number; output: Out } | { id: number; error: { name: string; message: string } };

interface Job<In, Out> {
  id: number;
  input: In;
  timeLimitMs: number;
  deadline: number;
  resolve(output: Out): void;
  reject(error: Error): void;
}

interface Thread<In, Out> {
  worker: Worker;
  job: Job<In, Out> | null;
  /** Set once the thread is ended (limit, crash, stop): it takes no more jobs. */
  ended: boolean;
}

/**
 * How often a running job's memory is read (ms). V8's own limit (resourceLimits) bounds the heap
 * exactly; array buffers (inflated streams, decoded bytes) are outside it, so they are read from
 * the thread's heap statistics while it works, which answer even while it computes.
 */
const MEMORY_CHECK_MS = 50;

export function startWorkerPool<In, Out>(options: WorkerPoolOptions): WorkerPool<In, Out> {
  const threads: Array<Thread<In, Out>> = [];
  const waiting: Array<Job<In, Out>> = [];
  let nextId = 1;
  let stopped = false;
  const limitBytes = options.memoryLimitMb * 1024 * 1024;

  function startThread(): Thread<In, Out> {
    const worker = new Worker(options.file, {
      workerData: options.setup,
      resourceLimits: {
        maxOldGenerationSizeMb: options.memoryLimitMb,
        maxYoungGenerationSizeMb: Math.min(32, Math.max(4, Math.floor(options.memoryLimitMb / 8))),
        stackSizeMb: 4,
      },
    });
    // An idle thread does not keep a process alive that has nothing else to do.
    worker.unref();
    const thread: Thread<In, Out> = { worker, job: null, ended: false };
    worker.on('message', (message: Message<Out>) => {
      const job = thread.job;
      if (!job || job.id !== message.id) return;
      thread.job = null;
      if ('error' in message) job.reject(new WorkerJobError(message.error.name, message.error.message));
      else job.resolve(message.output);
      pump();
    });
    worker.on('error', (err: Error & { code?: string }) => {
      end(
        thread,
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new WorkerLimitError('memory', `${options.name}: the work needed more than ${options.memoryLimitMb} MiB`)
          : err,
      );
    });
    worker.on('exit', (code) => end(thread, new Error(`${options.name}: the worker thread ended (exit code ${code})`)));
    threads.push(thread);
    return thread;
  }

  /** Ends a thread: its job (if any) fails with `error`, and the next job gets a new thread. */
  function end(thread: Thread<In, Out>, error: Error) {
    if (thread.ended) return;
    thread.ended = true;
    threads.splice(threads.indexOf(thread), 1);
    const job = thread.job;
    thread.job = null;
    void thread.worker.terminate();
    job?.reject(error);
    pump();
  }

  function dispatch(thread: Thread<In, Out>, job: Job<In, Out>) {
    thread.job = job;
    const byDeadline = job.deadline - Date.now() < job.timeLimitMs;
    const budget = Math.max(0, Math.min(job.timeLimitMs, job.deadline - Date.now()));
    const timer = setTimeout(() => {
      if (thread.job !== job) return;
      end(
        thread,
        byDeadline
          ? new WorkerLimitError('deadline', `${options.name}: the caller's time ran out`)
          : new WorkerLimitError('time', `${options.name}: the work took longer than ${job.timeLimitMs} ms`),
      );
    }, budget);
    timer.unref();
    const watch = setInterval(() => {
      if (thread.job !== job) return;
      thread.worker.getHeapStatistics().then(
        (s) => {
          if (thread.job === job && s.used_heap_size + (s.external_memory ?? 0) > limitBytes)
            end(thread, new WorkerLimitError('memory', `${options.name}: the work needed more than ${options.memoryLimitMb} MiB`));
        },
        () => {},
      );
    }, MEMORY_CHECK_MS);
    watch.unref();
    const settled = () => {
      clearTimeout(timer);
      clearInterval(watch);
    };
    const { resolve, reject } = job;
    job.resolve = (output) => {
      settled();
      resolve(output);
    };
    job.reject = (error) => {
      settled();
      reject(error);
    };
    thread.worker.postMessage({ id: job.id, input: job.input });
  }

  function pump() {
    while (waiting.length && !stopped) {
      const job = waiting[0]!;
      if (job.deadline <= Date.now()) {
        waiting.shift();
        job.reject(new WorkerLimitError('deadline', `${options.name}: the caller's time ran out while the work waited`));
        continue;
      }
      const idle = threads.find((t) => !t.ended && !t.job) ?? (threads.length < options.threads ? startThread() : undefined);
      if (!idle) return;
      waiting.shift();
      dispatch(idle, job);
    }
  }

  return {
    run(input, runOptions = {}) {
      return new Promise<Out>((resolve, reject) => {
        if (stopped) return reject(new WorkerLimitError('busy', `${options.name} is stopped`));
        if (waiting.length >= options.maxWaiting)
          return reject(new WorkerLimitError('busy', `${options.name}: ${waiting.length} jobs wait already`));
        waiting.push({
          id: nextId++,
          input,
          timeLimitMs: runOptions.timeLimitMs ?? options.timeLimitMs,
          deadline: runOptions.deadline ?? Number.POSITIVE_INFINITY,
          resolve,
          reject,
        });
        pump();
      });
    },
    async stop() {
      stopped = true;
      for (const job of waiting.splice(0)) job.reject(new WorkerLimitError('busy', `${options.name} is stopped`));
      await Promise.all(
        [...threads].map(async (thread) => {
          end(thread, new WorkerLimitError('busy', `${options.name} is stopped`));
          await thread.worker.terminate();
        }),
      );
    },
  };
}

/**
 * The worker's side: answers each job the pool sends with `handle(input, setup)` (`setup` is the
 * pool's). An exception goes back as WorkerJobError; one job at a time reaches a thread.
 */
export function serveJobs<In, Out, Setup = unknown>(handle: (input: In, setup: Setup) => Out | Promise<Out>): void {
  const port = parentPort;
  if (!port) throw new Error('serveJobs runs in a worker thread of startWorkerPool');
  const setup = workerData as Setup;
  port.on('message', async ({ id, input }: { id: number; input: In }) => {
    let message: Message<Out>;
    try {
      message = { id, output: await handle(input, setup) };
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      message = { id, error: { name: error.name, message: error.message } };
    }
    port.postMessage(message);
  });
}

// A sentence encoder run in this process by onnxruntime: text → WordPiece ids → the model's token
// vectors → pooled, unit-length vectors. What the model is comes from its folder's manifest.json.
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { defaultModelPath } from './config.ts';
import sourceFolder from './location.cjs';
import { type Manifest, manifestSchema } from './manifest.ts';
import { type Tokenizer, wordPieceTokenizer } from './tokenizer.ts';
import type { WorkerReply, WorkerRequest, WorkerSetup } from './worker.ts';

/** A text embedded as what is looked for or as what is looked in (models such as e5 prefix them differently). */
export type TextKind = 'query' | 'passage';

export interface Embedder {
  /** The model's name: store it with the vectors, since vectors of two models do not compare. */
  readonly model: string;
  readonly dimensions: number;
  /** Tokens read of a text (with [CLS] and [SEP]); the rest of a longer text is ignored. */
  readonly maxTokens: number;
  readonly languages: readonly string[];
  /** The model's folder. */
  readonly path: string;
  /**
   * One unit-length vector a text, in order. Queries and passages run on threads of their own
   * (modelEmbedder); the texts of calls made meanwhile share the next batches.
   */
  embed(texts: readonly string[], kind?: TextKind): Promise<Float32Array[]>;
  /** Frees the model's memory; embed() fails afterwards. */
  close(): Promise<void>;
}

export interface EmbedderOptions {
  /** The model's folder (a search service passes EMBEDDING_MODEL_PATH); by default the default model in the set-up's cache. */
  path?: string;
  /** Cores a query runs on (1 by default): see DEFAULT_THREADS. */
  threads?: number;
  /** Threads that embed passages at once, a text each, at the lowest priority (by default one a core, at most MAX_PASSAGE_THREADS). */
  passageThreads?: number;
  /** The passages' threads stop this long (ms) after the last passage (PASSAGE_IDLE_MS). */
  passageIdleMs?: number;
  /** Texts run through the model together (by default the manifest's batch_size); longer batches pad more. */
  batchSize?: number;
}

/** A model folder that is there but cannot be used (unreadable manifest or vocabulary, corrupt graph, wrong dimensions). */
export class EmbeddingModelError extends Error {
  override name = 'EmbeddingModelError';
}

/**
 * A query on one core: on the int8 graph it takes about 1.2 ms of CPU on one thread and 1.5 ms on
 * two, no faster in wall time (the matrices of a short text are too small to share).
 * Measurements: docs/measurements.md (2026-12-06).
 */
const DEFAULT_THREADS = 1;
/** Passages embedded at once at most: each takes a copy of the model (about 70 MiB) while it runs. */
const MAX_PASSAGE_THREADS = 4;
/**
 * Queries and passages run on model threads of their own, one batch at a time each; texts that
 * arrive while batches run wait for the next. A person waits for a query, so a query never waits
 * behind a passage (a passage of 256 tokens takes twenty times a query's time). Passages run on
 * `passageThreads` threads at once, one text each (a text of the int8 graph gains little from a
 * second core: 13.4 → 11.7 ms), at the lowest CPU priority: they take what requests leave, every
 * core when nothing else runs. They are started at the first passage and stopped PASSAGE_IDLE_MS
 * after the last, so that a service that embeds nothing holds one copy of the model.
 */
const PASSAGE_IDLE_MS = 30_000;
/**
 * Passages also wait while queries come: one starts once no query has run for QUERIES_QUIET_MS, or
 * PASSAGE_FLOOR_MS after the last one started whatever the queries, so that new questions get
 * their vectors under any load. At 16 connections a backfill then embeds about 3 texts a second
 * (45 ms of CPU a second) instead of 16, and the query p99 is the same with these passages as
 * without any (docs/measurements.md, 2026-12-07, stop 71).
 */
const QUERIES_QUIET_MS = 100;
const PASSAGE_FLOOR_MS = 250;

/** Opens the model of a folder, or throws EmbeddingModelError saying what is wrong with it. */
export async function openEmbedder(options: EmbedderOptions = {}): Promise<Embedder> {
  const folder = path.resolve(options.path ?? defaultModelPath());
  const fail = (what: string, cause?: unknown): never => {
    const detail = cause instanceof Error ? `: ${cause.message.split('\n')[0]}` : '';
    throw new EmbeddingModelError(`the embedding model at ${folder} cannot be used: ${what}${detail}`, { cause });
  };
  let manifest: Manifest;
  try {
    manifest = manifestSchema.parse(JSON.parse(readFileSync(path.join(folder, 'manifest.json'), 'utf8')));
  } catch (error) {
    return fail('manifest.json is missing or invalid', error);
  }
  let tokenizer: Tokenizer;
  try {
    const vocab = readFileSync(path.join(folder, manifest.tokenizer.vocab), 'utf8').split(/\r?\n/);
    if (vocab.at(-1) === '') vocab.pop();
    tokenizer = wordPieceTokenizer({ vocab, lowercase: manifest.tokenizer.lowercase });
  } catch (error) {
    return fail(`its vocabulary ${manifest.tokenizer.vocab} cannot be read`, error);
  }
  const setup = {
    onnx: path.join(folder, manifest.onnx),
    threads: Math.max(1, options.threads ?? DEFAULT_THREADS),
    output: manifest.output,
    pooling: manifest.pooling,
    normalize: manifest.normalize,
    background: false,
  };
  const passages = Math.max(1, options.passageThreads ?? Math.min(MAX_PASSAGE_THREADS, availableParallelism()));
  let model: ModelThread;
  try {
    model = await startModelThread(setup);
  } catch (error) {
    return fail(`${manifest.onnx} does not load`, error);
  }
  const missing = ['input_ids', 'attention_mask'].filter((name) => !model.inputs.includes(name));
  if (missing.length || !model.outputs.includes(manifest.output)) {
    await model.stop();
    return fail(`${manifest.onnx} has inputs ${model.inputs.join(', ')} and outputs ${model.outputs.join(', ')}`);
  }
  const startPassages = () => startModelThread({ ...setup, threads: 1, background: true });
  const embedder = modelEmbedder(
    folder,
    manifest,
    tokenizer,
    { query: model, startPassages, passages },
    options.batchSize ?? manifest.batch_size,
    options.passageIdleMs ?? PASSAGE_IDLE_MS,
  );
  // A graph can load and still be wrong for its manifest: one text through it says.
  try {
    const [probe] = await embedder.embed(['probe']);
    if (probe!.length !== manifest.dimensions)
      throw new Error(`vectors of ${probe!.length} dimensions, the manifest says ${manifest.dimensions}`);
    if (!probe!.every(Number.isFinite)) throw new Error('vectors that are not finite numbers');
  } catch (error) {
    await model.stop();
    return fail(`${manifest.onnx} does not run`, error);
  }
  return embedder;
}

/**
 * The model of a folder, or null when there is none or it cannot be used: the caller serves lexical
 * search and says so once (`onUnavailable` is told why).
 */
export async function loadEmbedder(options: EmbedderOptions & { onUnavailable?: (reason: string) => void } = {}): Promise<Embedder | null> {
  const folder = path.resolve(options.path ?? defaultModelPath());
  if (!existsSync(path.join(folder, 'manifest.json'))) {
    options.onUnavailable?.(`no embedding model at ${folder} (no manifest.json there): infra/ensure-model.sh sets one up`);
    return null;
  }
  try {
    return await openEmbedder({ ...options, path: folder });
  } catch (error) {
    options.onUnavailable?.(error instanceof Error ? error.message : String(error));
    return null;
  }
}

interface ModelThread {
  inputs: string[];
  outputs: string[];
  /** Pooled vectors of a padded batch, row after row. */
  run(ids: BigInt64Array, lengths: number[], width: number): Promise<{ vectors: Float32Array; dimensions: number }>;
  stop(): Promise<void>;
}

/** The worker thread that holds the ONNX session (worker.ts), once its session is created. */
function startModelThread(setup: WorkerSetup): Promise<ModelThread> {
  const worker = new Worker(path.join(sourceFolder, 'worker.ts'), { workerData: setup });
  // An idle model does not keep a process alive that has nothing else to do.
  worker.unref();
  const pending = new Map<number, { resolve: (reply: WorkerReply) => void; reject: (error: Error) => void }>();
  let next = 1;
  let failure: Error | undefined;
  const failAll = (error: Error) => {
    failure ??= error;
    for (const { reject } of pending.values()) reject(failure);
    pending.clear();
  };
  worker.on('message', (reply: WorkerReply) => {
    const waiting = pending.get(reply.id);
    pending.delete(reply.id);
    waiting?.resolve(reply);
  });
  worker.on('error', failAll);
  worker.on('exit', (code) => failAll(new Error(`the embedding model's thread ended (exit code ${code})`)));
  const request = (id: number, message?: WorkerRequest) =>
    new Promise<WorkerReply>((resolve, reject) => {
      if (failure) return reject(failure);
      pending.set(id, { resolve, reject });
      if (message) worker.postMessage(message);
    });
  return request(0).then(async (ready) => {
    if ('error' in ready) {
      await worker.terminate();
      throw new Error(ready.error);
    }
    return {
      inputs: 'inputs' in ready ? ready.inputs : [],
      outputs: 'outputs' in ready ? ready.outputs : [],
      async run(ids, lengths, width) {
        const id = next++;
        const reply = await request(id, { id, ids, lengths, width });
        if ('error' in reply) throw new Error(reply.error);
        if (!('vectors' in reply)) throw new Error("the embedding model's thread answered out of turn");
        return reply;
      },
      async stop() {
        await worker.terminate();
      },
    };
  });
}

/** A text waiting for the model, and where its vector goes. */
interface Waiting {
  tokens: number[];
  done(vector: Float32Array): void;
  fail(error: Error): void;
}

/** A model thread and the batch it runs; a passages' thread is started at its first batch and stopped when idle. */
interface Lane {
  running: Promise<void> | null;
  thread(): Promise<ModelThread>;
  stop(): Promise<void>;
}

function modelEmbedder(
  folder: string,
  manifest: Manifest,
  tokenizer: Tokenizer,
  threads: { query: ModelThread; startPassages: () => Promise<ModelThread>; passages: number },
  batchSize: number,
  passageIdleMs: number,
): Embedder {
  let closed = false;
  let idle: NodeJS.Timeout | undefined;
  const waiting: Record<TextKind, Waiting[]> = { query: [], passage: [] };
  const passageLane = (): Lane => {
    let thread: Promise<ModelThread> | null = null;
    return {
      running: null,
      // A passages' thread that cannot start (no memory for another copy) leaves them to the queries' thread.
      thread: () => (thread ??= threads.startPassages().catch(() => threads.query)),
      async stop() {
        const started = await thread;
        thread = null;
        if (started && started !== threads.query) await started.stop();
      },
    };
  };
  const lanes: Record<TextKind, Lane[]> = {
    query: [{ running: null, thread: async () => threads.query, stop: () => threads.query.stop() }],
    passage: Array.from({ length: threads.passages }, passageLane),
  };
  const stopPassages = () => Promise.all(lanes.passage.map((lane) => lane.stop()));

  async function run(lane: Lane, batch: Waiting[]) {
    const width = Math.max(...batch.map((w) => w.tokens.length));
    const ids = new BigInt64Array(batch.length * width).fill(BigInt(tokenizer.padId));
    batch.forEach(({ tokens }, row) => {
      tokens.forEach((id, i) => {
        ids[row * width + i] = BigInt(id);
      });
    });
    try {
      const model = await lane.thread();
      const { vectors, dimensions } = await model.run(
        ids,
        batch.map((w) => w.tokens.length),
        width,
      );
      batch.forEach((w, row) => {
        w.done(vectors.slice(row * dimensions, (row + 1) * dimensions));
      });
    } catch (error) {
      for (const w of batch) w.fail(error instanceof Error ? error : new Error(String(error)));
    }
  }
  let lastQuery = Number.NEGATIVE_INFINITY;
  let lastPassage = Number.NEGATIVE_INFINITY;
  let gate: NodeJS.Timeout | undefined;
  /** Whether a passage may start now; if not, the pump is asked again when it may. */
  function passageMayStart() {
    const wait = Math.min(lastQuery + QUERIES_QUIET_MS, lastPassage + PASSAGE_FLOOR_MS) - performance.now();
    if (wait <= 0) return true;
    gate ??= setTimeout(() => {
      gate = undefined;
      pump('passage');
    }, wait);
    return false;
  }
  function pump(kind: TextKind) {
    for (const lane of lanes[kind]) {
      if (!waiting[kind].length || closed) return;
      if (lane.running) continue;
      if (kind === 'passage') {
        if (!passageMayStart()) return;
        clearTimeout(idle);
        lastPassage = performance.now();
      } else lastQuery = performance.now();
      lane.running = run(lane, waiting[kind].splice(0, batchSize)).finally(() => {
        lane.running = null;
        if (kind === 'query') lastQuery = performance.now();
        pump(kind);
        if (kind === 'passage' && !closed && lanes.passage.every((l) => !l.running)) idle = setTimeout(stopPassages, passageIdleMs).unref();
      });
    }
  }

  return {
    model: manifest.model,
    dimensions: manifest.dimensions,
    maxTokens: manifest.max_tokens,
    languages: manifest.languages,
    path: folder,
    async embed(texts, kind = 'query') {
      if (closed) throw new Error(`the embedding model ${manifest.model} is closed`);
      const prefix = manifest.prefixes[kind];
      const encoded = texts.map((text) => tokenizer.encode(prefix + text, manifest.max_tokens));
      // Texts of about the same length share a batch: little of it is padding.
      const order = encoded.map((_, i) => i).sort((a, b) => encoded[b]!.length - encoded[a]!.length);
      const vectors: Float32Array[] = new Array(texts.length);
      const all = order.map(
        (i) =>
          new Promise<void>((done, fail) => {
            const vectorOf = (vector: Float32Array) => {
              vectors[i] = vector;
              done();
            };
            waiting[kind].push({ tokens: encoded[i]!, done: vectorOf, fail });
          }),
      );
      pump(kind);
      await Promise.all(all);
      return vectors;
    },
    async close() {
      closed = true;
      clearTimeout(idle);
      clearTimeout(gate);
      // What waits is not run: its callers learn it at once.
      const gone = new Error(`the embedding model ${manifest.model} is closed`);
      for (const w of [...waiting.query.splice(0), ...waiting.passage.splice(0)]) w.fail(gone);
      const all = [...lanes.query, ...lanes.passage];
      while (all.some((lane) => lane.running)) await Promise.all(all.map((lane) => lane.running));
      await Promise.all(all.map((lane) => lane.stop()));
    },
  };
}

// A sentence encoder run in this process by onnxruntime: text → WordPiece ids → the model's token
// vectors → pooled, unit-length vectors. What the model is comes from its folder's manifest.json.
import { existsSync, readFileSync } from 'node:fs';
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
   * One unit-length vector a text, in order. The model runs one batch at a time on at most `threads`
   * cores; the texts of calls made meanwhile share the next batch (queries before passages).
   */
  embed(texts: readonly string[], kind?: TextKind): Promise<Float32Array[]>;
  /** Frees the model's memory; embed() fails afterwards. */
  close(): Promise<void>;
}

export interface EmbedderOptions {
  /** The model's folder (a search service passes EMBEDDING_MODEL_PATH); by default the default model in the set-up's cache. */
  path?: string;
  /** Cores the model runs on (1 by default): see DEFAULT_THREADS. */
  threads?: number;
  /** Texts run through the model together (by default the manifest's batch_size); longer batches pad more. */
  batchSize?: number;
}

/** A model folder that is there but cannot be used (unreadable manifest or vocabulary, corrupt graph, wrong dimensions). */
export class EmbeddingModelError extends Error {
  override name = 'EmbeddingModelError';
}

/**
 * One core: a query on the int8 graph takes about 1.2 ms of CPU on one thread and 1.5 ms on two
 * (no faster in wall time: the matrices of a short text are too small to share), and a backfill on
 * one thread leaves the other cores to requests while it runs at about 150 texts a CPU second.
 * Measurements: docs/measurements.md (2026-12-06).
 */
const DEFAULT_THREADS = 1;

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
  const threads = Math.max(1, options.threads ?? DEFAULT_THREADS);
  let model: ModelThread;
  try {
    model = await startModelThread({
      onnx: path.join(folder, manifest.onnx),
      threads,
      output: manifest.output,
      pooling: manifest.pooling,
      normalize: manifest.normalize,
    });
  } catch (error) {
    return fail(`${manifest.onnx} does not load`, error);
  }
  const missing = ['input_ids', 'attention_mask'].filter((name) => !model.inputs.includes(name));
  if (missing.length || !model.outputs.includes(manifest.output)) {
    await model.stop();
    return fail(`${manifest.onnx} has inputs ${model.inputs.join(', ')} and outputs ${model.outputs.join(', ')}`);
  }
  const embedder = modelEmbedder(folder, manifest, tokenizer, model, options.batchSize ?? manifest.batch_size);
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

/**
 * The model's calls, one at a time; texts that arrive while a batch runs wait for the next. Queries
 * go before passages (a person waits for a query; a backfill does not), but every
 * QUERY_BATCHES_IN_A_ROW query batches a waiting passage batch has its turn, so that a steady
 * stream of queries does not stop a backfill. A batch holds one kind, so that short queries are not
 * padded to a passage's length.
 */
const QUERY_BATCHES_IN_A_ROW = 4;

function modelEmbedder(folder: string, manifest: Manifest, tokenizer: Tokenizer, model: ModelThread, batchSize: number): Embedder {
  const waiting: Record<TextKind, Waiting[]> = { query: [], passage: [] };
  let running: Promise<void> | null = null;
  let queryBatches = 0;
  let closed = false;

  async function run(batch: Waiting[]) {
    const width = Math.max(...batch.map((w) => w.tokens.length));
    const ids = new BigInt64Array(batch.length * width).fill(BigInt(tokenizer.padId));
    batch.forEach(({ tokens }, row) => {
      tokens.forEach((id, i) => {
        ids[row * width + i] = BigInt(id);
      });
    });
    try {
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
  function pump() {
    if (running) return;
    const passageTurn = waiting.passage.length > 0 && (!waiting.query.length || queryBatches >= QUERY_BATCHES_IN_A_ROW);
    const kind: TextKind | null = passageTurn ? 'passage' : waiting.query.length ? 'query' : null;
    if (!kind) return;
    queryBatches = kind === 'query' ? queryBatches + 1 : 0;
    const batch = waiting[kind].splice(0, batchSize);
    running = run(batch).finally(() => {
      running = null;
      pump();
    });
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
      pump();
      await Promise.all(all);
      return vectors;
    },
    async close() {
      closed = true;
      while (running) await running;
      await model.stop();
    },
  };
}

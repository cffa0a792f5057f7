// The ONNX session in a thread of its own: onnxruntime-node runs a graph synchronously on the thread
// that calls it, and a batch takes tens to hundreds of milliseconds, which the search process's
// event loop must not wait for. Messages: WorkerRequest in, WorkerReply out (embedder.ts).
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { InferenceSession, Tensor } from 'onnxruntime-node';

export interface WorkerSetup {
  onnx: string;
  threads: number;
  /** Runs at the lowest CPU priority (passages): the threads the session starts inherit it. */
  background: boolean;
  output: string;
  pooling: 'mean' | 'cls';
  normalize: boolean;
}
/** A batch of token ids, padded: `lengths[row]` tokens of each row are real. */
export interface WorkerRequest {
  id: number;
  ids: BigInt64Array;
  lengths: number[];
  width: number;
}
export type WorkerReply =
  | { id: 0; ready: true; inputs: string[]; outputs: string[] }
  | { id: number; vectors: Float32Array; dimensions: number }
  | { id: number; error: string };

const setup = workerData as WorkerSetup;
const port = parentPort!;

function pool(data: Float32Array, lengths: number[], width: number, dimensions: number): Float32Array {
  const out = new Float32Array(lengths.length * dimensions);
  lengths.forEach((length, row) => {
    const vector = out.subarray(row * dimensions, (row + 1) * dimensions);
    const base = row * width * dimensions;
    if (setup.pooling === 'cls') vector.set(data.subarray(base, base + dimensions));
    else {
      for (let t = 0; t < length; t++) {
        const at = base + t * dimensions;
        for (let d = 0; d < dimensions; d++) vector[d]! += data[at + d]!;
      }
      for (let d = 0; d < dimensions; d++) vector[d]! /= length;
    }
    if (setup.normalize) {
      let norm = 0;
      for (const x of vector) norm += x * x;
      norm = Math.sqrt(norm) || 1;
      for (let d = 0; d < dimensions; d++) vector[d]! /= norm;
    }
  });
  return out;
}

try {
  // This thread only (Linux's priority is a thread's), before the session starts its threads.
  if (setup.background) setPriority(19);
  const session = await InferenceSession.create(setup.onnx, {
    intraOpNumThreads: setup.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    // Idle threads sleep instead of spinning: spinning burns a core between the short calls of
    // queries, on a machine whose cores serve requests.
    extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
  });
  const typeIds = session.inputNames.includes('token_type_ids');
  port.postMessage({ id: 0, ready: true, inputs: [...session.inputNames], outputs: [...session.outputNames] } satisfies WorkerReply);
  port.on('message', async ({ id, ids, lengths, width }: WorkerRequest) => {
    try {
      const shape = [lengths.length, width];
      const mask = new BigInt64Array(ids.length);
      lengths.forEach((length, row) => {
        mask.fill(1n, row * width, row * width + length);
      });
      const feeds: Record<string, Tensor> = {
        input_ids: new Tensor('int64', ids, shape),
        attention_mask: new Tensor('int64', mask, shape),
      };
      if (typeIds) feeds.token_type_ids = new Tensor('int64', new BigInt64Array(ids.length), shape);
      const hidden = (await session.run(feeds))[setup.output];
      if (hidden?.dims.length !== 3) throw new Error(`the graph's ${setup.output} is not [batch, sequence, dimensions]`);
      const dimensions = hidden.dims[2]!;
      const vectors = pool(hidden.data as Float32Array, lengths, width, dimensions);
      port.postMessage({ id, vectors, dimensions } satisfies WorkerReply, [vectors.buffer as ArrayBuffer]);
    } catch (error) {
      port.postMessage({ id, error: error instanceof Error ? error.message : String(error) } satisfies WorkerReply);
    }
  });
} catch (error) {
  port.postMessage({ id: 0, error: error instanceof Error ? error.message.split('\n')[0]! : String(error) } satisfies WorkerReply);
}

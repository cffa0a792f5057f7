// The sentence encoder's cost around embed() alone, in figures a busy shared machine blurs little:
// CPU time of the whole process (process.cpuUsage counts the model's threads) over many texts, one
// at a time as search requests ask them, and the resident memory the model adds. bench:encoder-cost
// tabulates it per model and setting; bench:search's headline puts it beside the lexical figures.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { defaultModelPath, type Embedder, type EmbedderOptions, openEmbedder } from '../packages/embedding/src/index.ts';

const rss = () => process.memoryUsage().rss / 2 ** 20;
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

export interface QueryCost {
  /** CPU ms a query (all threads of the process), and wall ms p50 / p99. */
  cpuMs: number;
  p50: number;
  p99: number;
}

/** Embeds each text alone, one after the other (a fresh query each: the service's cache is not in the way). */
export async function queryCost(embedder: Embedder, texts: readonly string[]): Promise<QueryCost> {
  const walls: number[] = [];
  const before = cpuMs();
  for (const text of texts) {
    const started = performance.now();
    await embedder.embed([text]);
    walls.push(performance.now() - started);
  }
  return { cpuMs: (cpuMs() - before) / texts.length, p50: percentile(walls, 0.5), p99: percentile(walls, 0.99) };
}

/** Passages as the backfill gives them (calls of 8, one at a time): texts a CPU second and a second. */
export async function passageRate(embedder: Embedder, texts: readonly string[]) {
  const before = cpuMs();
  const started = performance.now();
  for (let i = 0; i < texts.length; i += 8) await embedder.embed(texts.slice(i, i + 8), 'passage');
  return { perCpuSecond: texts.length / ((cpuMs() - before) / 1000), perSecond: texts.length / ((performance.now() - started) / 1000) };
}

/**
 * The model of a folder (the set-up's by default) opened, warmed up and handed to `use`; with the
 * RSS (MiB) it added to the process once loaded. Null when there is no model there.
 */
export async function withEncoder<T>(
  options: EmbedderOptions,
  use: (embedder: Embedder, loadedMiB: number) => Promise<T>,
): Promise<T | null> {
  const folder = options.path ?? defaultModelPath();
  if (!existsSync(path.join(folder, 'manifest.json'))) return null;
  const bare = rss();
  const embedder = await openEmbedder({ ...options, path: folder });
  try {
    const loaded = rss() - bare;
    // The first calls pay for onnxruntime's allocations: not what a query costs.
    for (const text of ['warm up', 'the model runs once', 'before it is measured']) await embedder.embed([text]);
    return await use(embedder, loaded);
  } finally {
    await embedder.close();
  }
}

export const costText = (c: QueryCost) => `${c.cpuMs.toFixed(2)} / ${c.p50.toFixed(1)} / ${c.p99.toFixed(1)}`;

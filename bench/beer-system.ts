// The whole system as separate processes in a database and NATS namespace of its own, optionally
// with the beer Stack Exchange site imported and the search index caught up: the ground the quality
// benchmarks stand on.

import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { type Bus, connectBus } from '@kn/bus';
import type { KnClient } from '@kn/client';
import { dropElasticsearchIndices, indexStatus } from '@kn/search';
import { createLogger } from '@kn/telemetry';
import { dataset } from '@kn/testing';
import { benchSpace, login, startProcess, stopProcess } from './lib.ts';

export interface BeerSystem {
  /** The environment of its processes (NATS_NAMESPACE, DATABASE_URL, …) for commands run beside it. */
  env: Record<string, string>;
  /** The gateway (http://127.0.0.1:<port>). */
  base: string;
  bus: Bus;
  /** The administrator's client of the API. */
  api: KnClient;
  stop(): Promise<void>;
}

/** The system with the beer site imported. */
export const startBeerSystem = (port: number) => startBenchSystem(port, { beer: true });

export async function startBenchSystem(port: number, options: { beer: boolean }): Promise<BeerSystem> {
  const space = await benchSpace();
  const { id, databaseUrl } = space;
  const dir = `/tmp/kn-bench-beer-${id}`;
  const env = {
    DATABASE_URL: databaseUrl,
    NATS_NAMESPACE: space.namespace,
    LOG_LEVEL: 'warn',
    ADMIN_PASSWORD: 'bench-admin-password',
    PORT: String(port),
    HOST: '127.0.0.1',
    SCRYPT_COST: '1024',
    SEARCH_INDEX_PATH: `${dir}/index.sqlite`,
    // ELASTICSEARCH_URL=… runs search on that engine, in indices of this run's own (dropped at stop).
    ...(process.env.ELASTICSEARCH_URL ? { ELASTICSEARCH_INDEX_PREFIX: `kn-bench-${id}` } : {}),
  };
  // The ready lines are logged at info.
  const processEnv = { ...env, LOG_LEVEL: 'info' };
  const processes = [
    await startProcess('services/users/src/main.ts', processEnv, 'users service ready'),
    await startProcess('services/content/src/main.ts', processEnv, 'content service ready'),
    await startProcess('services/search/src/main.ts', processEnv, 'search service ready'),
    await startProcess('gateway/src/main.ts', processEnv, 'gateway listening'),
  ];
  const bus = await connectBus({
    url: 'nats://127.0.0.1:4222',
    namespace: env.NATS_NAMESPACE,
    name: 'bench',
    logger: createLogger('bench', 'warn'),
  });
  const stop = async () => {
    for (const p of processes.reverse()) await stopProcess(p);
    await bus.close();
    await space.drop();
    if (process.env.ELASTICSEARCH_URL) await dropElasticsearchIndices(process.env.ELASTICSEARCH_URL, `kn-bench-${id}`);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (options.beer)
      await new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, ['packages/stackexchange/src/main.ts', dataset('stackexchange-beer')], {
          env: { ...process.env, ...env, IMPORT_STATE_DIR: `${dir}/import` },
          stdio: ['ignore', 'ignore', 'inherit'],
        });
        child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`import exited with ${code}`))));
      });
    // Wait until the index has every imported question.
    for (; options.beer; ) {
      const status = await indexStatus(bus).catch(() => null);
      const stream = await bus.jsm.streams.info(bus.streamName('content'));
      const embedded =
        status?.embeddings.state === 'unavailable' ||
        (status?.embeddings.state === 'ready' && status.embeddings.embedded >= status.questions);
      if (status?.ready && (status.streams.content?.applied ?? 0) >= stream.state.last_seq && embedded) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const base = `http://127.0.0.1:${port}`;
    const api = await login(`${base}/api/v1`);
    return { env, base, bus, api, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

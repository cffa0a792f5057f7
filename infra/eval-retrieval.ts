// pnpm eval:retrieval <folder> [--language en]
// Measures question search on your own data (docs/search.md, "Measuring search on your data"):
// loads a BEIR folder or a Stack Exchange dump into the running system, asks every query through
// the API and prints NDCG@10, MAP, MRR and recall@100 beside SQLite FTS5's BM25 over the same texts.
// The system: NATS_URL, NATS_NAMESPACE as the services; API_URL; ADMIN_EMAIL and ADMIN_PASSWORD
// (or API_TOKEN) of a user who sees every question.
import { connectBus } from '@kn/bus';
import { BaseConfig, parseConfig } from '@kn/service';
import { createLogger } from '@kn/telemetry';
import { z } from 'zod';
import { evaluateRetrieval, type Metrics } from './retrieval-eval.ts';

const Config = BaseConfig.extend({
  API_URL: z.string().url().default('http://127.0.0.1:8080/api/v1'),
  API_TOKEN: z.string().optional(),
  ADMIN_EMAIL: z.string().default('admin@example.com'),
  ADMIN_PASSWORD: z.string().default('change-me-now'),
  IMPORT_STATE_DIR: z.string().optional(),
});

const args = process.argv.slice(2).filter((a) => a !== '--');
const at = args.indexOf('--language');
const language = at >= 0 ? args.splice(at, 2)[1] : 'en';
const dir = args[0];
if (!dir || args.length > 1 || !/^[a-z]{2}$/.test(language ?? '')) {
  console.error('usage: pnpm eval:retrieval <BEIR folder | Stack Exchange dump folder> [--language en]');
  process.exit(2);
}
const config = parseConfig(Config);
let token = config.API_TOKEN;
if (!token) {
  const res = await fetch(`${config.API_URL}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: config.ADMIN_EMAIL, password: config.ADMIN_PASSWORD }),
  });
  if (!res.ok) throw new Error(`log-in at ${config.API_URL} failed: ${res.status} (set ADMIN_EMAIL and ADMIN_PASSWORD, or API_TOKEN)`);
  token = ((await res.json()) as { token: string }).token;
}
const bus = await connectBus({
  url: config.NATS_URL,
  namespace: config.NATS_NAMESPACE,
  name: 'eval-retrieval',
  logger: createLogger('eval', 'warn'),
});
try {
  const result = await evaluateRetrieval({ dir, bus, api: config.API_URL, token, language, stateDir: config.IMPORT_STATE_DIR });
  const row = (name: string, m: Metrics) => ({
    ranking: name,
    'NDCG@10': m['NDCG@10'].toFixed(3),
    MAP: m.MAP.toFixed(3),
    MRR: m.MRR.toFixed(3),
    'recall@10': m['recall@10'].toFixed(3),
    'recall@100': m['recall@100'].toFixed(3),
  });
  console.log(
    `\n${result.corpus.name} (${result.corpus.kind}): ${result.corpus.documents} documents, ${result.corpus.queries} queries, asked in ${result.seconds.toFixed(1)} s`,
  );
  console.log(`command: pnpm eval:retrieval ${process.argv.slice(2).join(' ')}`);
  console.table([row('GET /questions?query= (this system)', result.system), row('SQLite FTS5 bm25() over the same texts', result.fts5)]);
  const gain = result.fts5['NDCG@10'] > 0 ? (result.system['NDCG@10'] / result.fts5['NDCG@10'] - 1) * 100 : Number.NaN;
  console.log(`NDCG@10 ${gain >= 0 ? '+' : ''}${gain.toFixed(1)}% against FTS5`);
} finally {
  await bus.close();
}

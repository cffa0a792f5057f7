// Scale-out: requests per second of a mixed read/write workload at 64 connections with one
// instance of every service and gateway, then with two (separate processes against the same
// Postgres and NATS, the connections split over the gateways). Each run starts on a network of
// QUESTIONS questions (default 10,000, with three solutions each) and 1,000 users.
// Run: pnpm bench:scale   (BENCH_SECONDS=20 by default, INSTANCES=1,2)
import { type LoadResult, load, report } from './lib.ts';
import { mixedRound, startBenchSystem } from './workload.ts';

const QUESTIONS = Number(process.env.QUESTIONS ?? 10_000);
const CONNECTIONS = 64;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const INSTANCES = (process.env.INSTANCES ?? '1,2').split(',').map(Number);
async function measure(instances: number): Promise<Record<string, unknown>> {
  const system = await startBenchSystem({ instances, questions: QUESTIONS });
  try {
    const headers = { authorization: `Bearer ${system.token}` };
    const run = async (seconds: number) => {
      const results: LoadResult[] = await Promise.all(
        system.gateways.map((url) =>
          load({ url, connections: CONNECTIONS / instances, seconds, headers, requests: mixedRound(QUESTIONS) }),
        ),
      );
      return {
        requests_per_second: results.reduce((sum, r) => sum + r.requests_per_second, 0),
        p50_ms: Math.max(...results.map((r) => r.p50_ms)),
        p99_ms: Math.max(...results.map((r) => r.p99_ms)),
        errors: results.reduce((sum, r) => sum + r.errors, 0),
        non_2xx: results.reduce((sum, r) => sum + r.non_2xx, 0),
      };
    };
    await run(3);
    return { instances_of_each: instances, gateways: instances, ...(await run(SECONDS)) };
  } finally {
    await system.stop();
  }
}

const rows = [];
for (const instances of INSTANCES) rows.push(await measure(instances));
report(
  `Mixed workload (7 reads, 5 writes in 12), ${CONNECTIONS} connections, ${SECONDS} s, ${QUESTIONS} questions`,
  'pnpm bench:scale',
  rows,
);
if (rows.length === 2)
  console.log(`ratio two instances / one: ${(Number(rows[1]!.requests_per_second) / Number(rows[0]!.requests_per_second)).toFixed(2)}`);
process.exit(0);

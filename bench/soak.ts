// Soak: a steady mixed read/write load (SOAK_RATE requests per second, default 150, about half
// of what the system answers at most here; 7 reads and 5 writes in 12) for SOAK_MINUTES (default
// 10) on one instance of everything, reported per 30 s window: latency, errors and the memory of
// every process. No growth and no errors is the expectation. Run: pnpm bench:soak
import { readFileSync } from 'node:fs';
import { load, report } from './lib.ts';
import { mixedRound, startBenchSystem } from './workload.ts';

const QUESTIONS = 10_000;
const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const RATE = Number(process.env.SOAK_RATE ?? 150);
const WINDOW_S = 30;

const rssMiB = (pid: number) => Math.round(Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/)![1]) / 1024);

const system = await startBenchSystem({ instances: 1, questions: QUESTIONS });
try {
  const headers = { authorization: `Bearer ${system.token}` };
  const memory = () => Object.fromEntries(system.processes.map((p) => [`${p.name}_MiB`, rssMiB(p.child.pid!)]));
  const rows: Record<string, unknown>[] = [{ minute: 0, ...memory() }];
  for (let window = 1; window <= (MINUTES * 60) / WINDOW_S; window++) {
    const result = await load({
      url: system.gateways[0]!,
      connections: 16,
      seconds: WINDOW_S,
      rate: RATE,
      headers,
      requests: mixedRound(QUESTIONS),
    });
    rows.push({ minute: (window * WINDOW_S) / 60, ...result, ...memory() });
  }
  report(`Soak: ${RATE} requests/s of the mixed workload for ${MINUTES} minutes, ${QUESTIONS} questions to start`, 'pnpm bench:soak', rows);
} finally {
  await system.stop();
}

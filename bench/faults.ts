// Faults with nothing lost, the long run: people ask, answer, comment, rate, share and search for
// FAULTS_MINUTES (default 5) while, every FAULT_EVERY_S seconds (default 8), a process is killed
// with SIGKILL, NATS is killed and restarted, or Postgres restarts (pg_ctlcluster: this machine's
// server, so nothing else may use it meanwhile; FAULTS_POSTGRES=cut only cuts the connections).
// Then every acknowledged operation is looked for in every service. Run: pnpm bench:faults
import { cpus } from 'node:os';
import { check, inject, people, schedule, startFaultySystem, workload } from '../test/faults.ts';

const minutes = Number(process.env.FAULTS_MINUTES ?? 5);
const everyMs = Number(process.env.FAULT_EVERY_S ?? 8) * 1000;
const postgres = process.env.FAULTS_POSTGRES === 'cut' ? 'cut' : 'restart';
const faults = schedule({ everyMs, rounds: Math.ceil((minutes * 60_000) / everyMs / 8), postgres }).filter((f) => f.at < minutes * 60_000);

const system = await startFaultySystem();
try {
  const { admin, actors } = await people(system.api, 6);
  const started = Date.now();
  const [ack, log] = await Promise.all([
    workload(actors, { ms: minutes * 60_000, workers: 8, run: Math.random().toString(36).slice(2, 8) }),
    inject(system, faults),
  ]);
  const ran = (Date.now() - started) / 1000;
  const findings = await check(system, admin, actors, ack, 120_000);
  const attempts = actors.reduce((n, a) => n + a.client.stats.attempts, 0);
  const retries = actors.reduce((n, a) => n + a.client.stats.retries, 0);
  console.log(
    `\nFaults with nothing lost\ncommand: pnpm bench:faults (FAULTS_MINUTES=${minutes}, FAULT_EVERY_S=${everyMs / 1000}, FAULTS_POSTGRES=${postgres})`,
  );
  console.log(`machine: ${cpus().length} cores, node ${process.version}; workload ${ran.toFixed(0)} s, ${log.length} faults\n`);
  console.table([
    {
      questions: ack.questions.size,
      solutions: ack.solutions.size,
      comments: ack.comments.size,
      ratings: ack.ratings.size,
      shares: [...ack.shares.values()].reduce((a, b) => a + b, 0),
      searches: ack.searches,
      answers_lost: ack.answersLost,
      requests: attempts,
      retried: retries,
    },
  ]);
  console.log('checked (acknowledged operations found in each service):');
  console.table([findings.checked]);
  const faultCounts = new Map<string, number>();
  for (const line of log) {
    const what = line.replace(/^[\d.]+ s: /, '').replace(/ \(back in.*$/, '');
    faultCounts.set(what, (faultCounts.get(what) ?? 0) + 1);
  }
  console.log('faults:', Object.fromEntries(faultCounts));
  console.log(`rejected requests: ${ack.rejected.length}; crashes: ${system.crashes.length}; differences: ${findings.differences.length}`);
  for (const line of [...ack.rejected, ...system.crashes.map((c) => c.slice(0, 300)), ...findings.differences].slice(0, 30))
    console.log(`  ${line}`);
  process.exitCode = ack.rejected.length + system.crashes.length + findings.differences.length ? 1 : 0;
} finally {
  await system.stop();
}

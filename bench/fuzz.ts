// Fuzzing at scale: `node bench/fuzz.ts [requests]` (default 50,000; or FUZZ_REQUESTS) starts the
// system as the tests do (test/system.ts) and sends fast-check requests built from
// docs/openapi.json to every endpoint (test/fuzz.ts): a third are requests that must be refused,
// in batches checked to change no table, the rest anything at all. Prints the requests sent, by
// status class, the 5xx, hung requests and the slowest request.
import {
  changedTables,
  describe,
  FUZZ_SETTINGS,
  type FuzzResult,
  fuzzFixtures,
  generate,
  keepActors,
  loadOperations,
  sendAll,
  snapshot,
  summarize,
} from '../test/fuzz.ts';
import { startSystem } from '../test/system.ts';

const total = Number(process.argv[2] ?? process.env.FUZZ_REQUESTS ?? 50_000);
const seed = Number(process.env.FUZZ_SEED ?? 20260101);
const concurrency = Number(process.env.FUZZ_CONCURRENCY ?? 16);
const CHUNK = 1000;

const system = await startSystem(FUZZ_SETTINGS);
try {
  const { actors, ctx, protectedUserIds } = await fuzzFixtures(system);
  const ops = loadOperations();
  // Bounded: a consumer that never catches up is a finding to print, not a benchmark that hangs.
  const quiet = async () => {
    const settle = (async () => {
      await Promise.all(Object.values(system.services).map((s) => s.runtime.relay.flush()));
      await system.searchCaughtUp();
      await system.routed();
    })();
    const timedOut = await Promise.race([settle.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), 30_000).unref())]);
    if (timedOut) throw new Error(`the system did not settle within 30 s after ${sent} requests (relays, search index, routing)`);
  };
  const byClass: Record<string, number> = {};
  const serverErrors: FuzzResult[] = [];
  const hung: FuzzResult[] = [];
  const transport: FuzzResult[] = [];
  const badShape: FuzzResult[] = [];
  const undeclared: FuzzResult[] = [];
  const acceptedInvalid: FuzzResult[] = [];
  const changes: string[] = [];
  let sent = 0;
  let slowest: FuzzResult | undefined;
  const started = performance.now();
  for (let chunk = 0; sent < total; chunk++) {
    // Every third chunk: requests that must be refused, and the tables must not change.
    const refused = chunk % 3 === 0;
    const count = Math.min(CHUNK, total - sent);
    const requests = refused
      ? generate(ops, ctx, 'rejected', count, seed + chunk)
      : keepActors(generate(ops, ctx, 'any', count, seed + chunk), protectedUserIds);
    if (refused) await quiet();
    const before = refused ? await snapshot(system.env.DATABASE_URL) : undefined;
    const results = await sendAll(system.api, actors, requests, { concurrency });
    sent += results.length;
    const s = summarize(results, ops);
    for (const [k, v] of Object.entries(s.byClass)) byClass[k] = (byClass[k] ?? 0) + v;
    serverErrors.push(...s.serverErrors);
    hung.push(...s.hung);
    transport.push(...s.transportErrors);
    badShape.push(...s.badErrorShape);
    undeclared.push(...s.undeclared);
    if (s.slowest && (!slowest || s.slowest.ms > slowest.ms)) slowest = s.slowest;
    if (before) {
      const accepted = results.filter((r) => r.status >= 200 && r.status < 400);
      acceptedInvalid.push(...accepted);
      await quiet();
      const changed = changedTables(before, await snapshot(system.env.DATABASE_URL));
      if (changed.length && !accepted.length) changes.push(`chunk ${chunk}: ${changed.join('; ')}`);
    }
    process.stderr.write(`\r${sent}/${total} sent, ${serverErrors.length} 5xx`);
  }
  process.stderr.write('\n');
  const seconds = (performance.now() - started) / 1000;
  const list = (title: string, results: FuzzResult[]) => {
    console.log(`${title}: ${results.length}`);
    for (const r of results.slice(0, 20)) console.log(`  ${describe(r)}`);
  };
  console.log(`command: node bench/fuzz.ts ${total} (FUZZ_SEED=${seed}, FUZZ_CONCURRENCY=${concurrency})`);
  console.log(`operations fuzzed: ${ops.length}`);
  console.log(`requests sent: ${sent} in ${seconds.toFixed(1)} s (${Math.round(sent / seconds)}/s)`);
  console.log(`by status class: ${JSON.stringify(byClass)}`);
  list('5xx', serverErrors);
  list('hung (no answer within 10 s)', hung);
  list('broken connections', transport);
  list('4xx without the error shape', badShape);
  list('statuses their operation does not declare', undeclared);
  list('invalid requests accepted', acceptedInvalid);
  console.log(`refused batches that changed data: ${changes.length}`);
  for (const c of changes.slice(0, 20)) console.log(`  ${c}`);
  if (slowest) console.log(`slowest request: ${describe(slowest)}`);
  process.exitCode = serverErrors.length || hung.length || changes.length || undeclared.length ? 1 : 0;
} finally {
  await system.stop();
}

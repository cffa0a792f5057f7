// Usage: pnpm scale <service|gateway> <instances> [<service> <instances> …]
//
// Starts more instances of services (or gateways) beside a running system (`bash infra/up.sh`),
// against the same Postgres and NATS and with the same settings from the environment. NATS spreads
// requests over the instances of a service (queue group) and events over them (shared durable
// consumers); scheduled jobs still run once (a Postgres advisory lock). Each instance gets its own
// metrics port (9500…), a search instance its own index file, a gateway its own HTTP port
// (8081…). Ctrl-C drains and stops them (SIGTERM: no new requests, the ones under way finish).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { databaseUrlOnThisMachine } from './local-postgres.ts';
import { run, waitReady } from './processes.ts';

const args = process.argv.slice(2);
if (!args.length || args.length % 2) {
  console.error('usage: pnpm scale <service|gateway> <instances> [<service> <instances> …]');
  process.exit(2);
}
const databaseUrl = await databaseUrlOnThisMachine();
let metricsPort = 9500;
let gatewayPort = 8081;
const started: string[] = [];
for (let i = 0; i < args.length; i += 2) {
  const name = args[i]!;
  const count = Number(args[i + 1]);
  const entry = name === 'gateway' ? path.join('gateway', 'src', 'main.ts') : path.join('services', name, 'src', 'main.ts');
  if (!existsSync(entry) || !Number.isInteger(count) || count < 1) {
    console.error(`no such service, or not a number of instances: ${name} ${args[i + 1]}`);
    process.exit(2);
  }
  for (let n = 1; n <= count; n++) {
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, METRICS_PORT: String(metricsPort++) };
    if (name === 'search') env.SEARCH_INDEX_PATH = path.join('data', 'search', `index-${process.pid}-${n}.sqlite`);
    if (name === 'gateway') env.PORT = String(gatewayPort++);
    run(`${name} +${n}`, entry, env);
    started.push(
      `${name} +${n}: metrics http://127.0.0.1:${env.METRICS_PORT}/metrics${name === 'gateway' ? `, API http://127.0.0.1:${env.PORT}/api/v1` : ''}`,
    );
  }
}
// The instances are ready when a gateway says every service answers.
if (await waitReady(`http://127.0.0.1:${process.env.PORT ?? 8080}/readyz`))
  console.log(`\n  started:\n    ${started.join('\n    ')}\n  (Ctrl-C drains and stops them)\n`);

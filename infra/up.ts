// Starts every service (services/*/src/main.ts) and then the gateway as separate processes, the way
// they run in production, prints where the API listens and how to log in, and stops them all on
// Ctrl-C. Configuration comes from the environment (docs/operations.md, "Configuration reference").
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { databaseUrlOnThisMachine, postgresAt } from './local-postgres.ts';
import { run, stop, waitReady } from './processes.ts';

const root = process.cwd();
const port = process.env.PORT ?? '8080';
const databaseUrl = await databaseUrlOnThisMachine();
const env = {
  ...process.env,
  DATABASE_URL: databaseUrl,
  ADMIN_EMAIL: process.env.ADMIN_EMAIL ?? 'admin@example.com',
  ADMIN_PASSWORD: process.env.ADMIN_PASSWORD ?? 'change-me-now',
  PORT: port,
};
const services = readdirSync(path.join(root, 'services'))
  .filter((name) => existsSync(path.join(root, 'services', name, 'src', 'main.ts')))
  .sort((a, b) => (a === 'users' ? -1 : b === 'users' ? 1 : a.localeCompare(b)));

// `--demo`: once the system is ready, import the Beer, Wine & Spirits Stack Exchange dump of the
// repository (datasets/stackexchange-beer, CC BY-SA: its README) as demo data; `--demo=<folder>`
// imports another dump folder.
const demoArg = process.argv.slice(2).find((a) => a === '--demo' || a.startsWith('--demo='));
const demo = demoArg ? demoArg.slice('--demo='.length) || path.join('datasets', 'stackexchange-beer') : undefined;

// Each process serves its Prometheus metrics on a port of its own: 9100 the gateway, 9101… the services.
for (const [i, name] of services.entries())
  run(name, path.join('services', name, 'src', 'main.ts'), { ...env, METRICS_PORT: String(9101 + i) });
run('gateway', path.join('gateway', 'src', 'main.ts'), { ...env, METRICS_PORT: '9100' });

function importDemo(dir: string) {
  return new Promise<number | null>((resolve) => {
    // The heap limits of `pnpm import:stackexchange` (docs/import.md, "Memory stays flat").
    const flags = ['--max-semi-space-size=2', '--max-old-space-size=128'];
    const child = spawn(process.execPath, [...flags, path.join('packages', 'stackexchange', 'src', 'main.ts'), dir], {
      env,
      stdio: 'inherit',
    });
    child.on('exit', (code) => resolve(code));
  });
}

const base = `http://127.0.0.1:${port}`;
if (await waitReady(`${base}/readyz`)) {
  if (demo) {
    console.log(`importing the demo data from ${demo} (Stack Exchange, CC BY-SA: see its README.md and docs/import.md)`);
    const code = await importDemo(demo);
    if (code !== 0) console.error(`the demo import stopped (exit ${code}); run it again with: pnpm import:stackexchange ${demo}`);
  }
  console.log(`
  Web app:                 ${base}/   (sign in with any user's email and password)
  Knowledge network is up: ${base}/api/v1   (services: ${services.join(', ')})
  Postgres:                ${postgresAt(databaseUrl)}
  API reference:           ${base}/api/v1/docs   (OpenAPI: ${base}/api/v1/openapi.json)

  Log in as the administrator (created on first start; ADMIN_EMAIL / ADMIN_PASSWORD):
    curl -s -X POST ${base}/api/v1/auth/login -H 'content-type: application/json' \\
      -d '{"email":"${env.ADMIN_EMAIL}","password":"${process.env.ADMIN_PASSWORD ? '<ADMIN_PASSWORD>' : env.ADMIN_PASSWORD}"}'
  then send the token as: Authorization: Bearer <token>      (Ctrl-C stops everything)
`);
} else {
  console.error(`the system did not become ready at ${base}/readyz within a minute`);
  await stop(1);
}

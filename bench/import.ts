// Import time and peak memory of `pnpm import:stackexchange`: the beer dump, then a synthetic dump
// ten times larger (bench/stackexchange-synth.ts), each into a fresh system (users, content and
// gateway as separate processes). Run: pnpm bench:import   (SCALE=10 by default; ONLY_BEER=1)

import { execFileSync, spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { dataset } from '@kn/testing';
import { benchSpace, report, startProcess, stopProcess } from './lib.ts';

const SCALE = Number(process.env.SCALE ?? 10);
const beer = dataset('stackexchange-beer');
const synthetic = `/tmp/stackexchange-beerx${SCALE}`;
if (!process.env.ONLY_BEER && !existsSync(path.join(synthetic, 'Votes.xml')))
  execFileSync(process.execPath, ['bench/stackexchange-synth.ts', beer, synthetic, String(SCALE)], { stdio: 'inherit' });

async function run(dir: string) {
  const space = await benchSpace();
  const { id, databaseUrl } = space;
  const env = {
    DATABASE_URL: databaseUrl,
    NATS_NAMESPACE: space.namespace,
    LOG_LEVEL: 'warn',
    ADMIN_PASSWORD: 'bench-admin-password',
    PORT: '18091',
    HOST: '127.0.0.1',
    SCRYPT_COST: '1024',
  };
  const users = await startProcess('services/users/src/main.ts', { ...env, LOG_LEVEL: 'info' }, 'users service ready');
  const content = await startProcess('services/content/src/main.ts', { ...env, LOG_LEVEL: 'info' }, 'content service ready');
  try {
    const started = Date.now();
    const output = await new Promise<string>((resolve, reject) => {
      // The same heap limits as the package script `import:stackexchange`.
      const child = spawn(
        process.execPath,
        ['--max-semi-space-size=2', '--max-old-space-size=128', 'packages/stackexchange/src/main.ts', dir],
        {
          env: { ...process.env, ...env, IMPORT_STATE_DIR: `/tmp/kn-import-bench-${id}` },
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
      });
      child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`import exited with ${code}\n${out}`))));
    });
    const seconds = (Date.now() - started) / 1000;
    console.log(output);
    const rss = Number(/peak memory \(RSS\) of this command: (\d+) MiB/.exec(output)?.[1]);
    const questions = Number(/questions\s+(\d+) created/.exec(output)?.[1]);
    const solutions = Number(/solutions\s+(\d+) created/.exec(output)?.[1]);
    const comments = Number(/comments\s+(\d+) created/.exec(output)?.[1]);
    const usersCreated = Number(/users\s+(\d+) created/.exec(output)?.[1]);
    return { dump: path.basename(dir), questions, solutions, comments, users: usersCreated, seconds, peak_rss_mib: rss };
  } finally {
    await stopProcess(content);
    await stopProcess(users);
    await space.drop();
    rmSync(`/tmp/kn-import-bench-${id}`, { recursive: true, force: true });
  }
}

// ONLY_BEER=1: the beer dump alone (a quick check of the 60 s target).
const rows = process.env.ONLY_BEER ? [await run(beer)] : [await run(beer), await run(synthetic)];
report('Stack Exchange import (command process: time and peak RSS)', 'pnpm bench:import', rows);
console.log('target: beer dump < 60 s; peak RSS flat between the two sizes');

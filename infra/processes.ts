// Runs parts of the system as child processes, the way production runs them (one `node <entry>`
// each), prints their JSON log lines readably, and stops them all (SIGTERM: each drains) when one
// dies or on Ctrl-C. Used by up.ts and scale.ts.
import { type ChildProcess, spawn } from 'node:child_process';

const children: ChildProcess[] = [];
const colours = [36, 32, 35, 33, 34, 31];
let stopping = false;

export function run(name: string, entry: string, env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [entry], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const label = `\x1b[${colours[children.length % colours.length]}m${name.padEnd(13)}\x1b[0m`;
  const print = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) {
      try {
        const entryLine = JSON.parse(line);
        const level = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' }[entryLine.level as number] ?? '';
        const { msg, level: _l, time: _t, pid: _p, hostname: _h, name: _n, ...rest } = entryLine;
        const extra = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : '';
        console.log(`${label} ${level.padEnd(5)} ${msg}${extra}`);
      } catch {
        console.log(`${label} ${line}`);
      }
    }
  };
  child.stdout?.on('data', print);
  child.stderr?.on('data', print);
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`${name} exited (${signal ?? code}); stopping everything`);
      void stop(1);
    }
  });
  children.push(child);
  return child;
}

export async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null) return resolve();
          c.once('exit', () => resolve());
          c.kill('SIGTERM');
        }),
    ),
  );
  process.exit(code);
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());

export async function waitReady(url: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.ok) return true;
    } catch {}
    await new Promise((r) => setTimeout(r, 300));
  }
  return false;
}

/**
 * Where a process spent its CPU, from a V8 CPU profile (`PROFILE_DIR=<dir> pnpm bench:search`
 * writes one per process; each load prints its window on the profile's clock):
 *
 *   node bench/profile.ts <file.cpuprofile> [<from µs> <to µs>] [--top N]
 *
 * Prints the functions with the most time of their own (self) and the most time with what they
 * call (total), as shares of the samples in the window (idle excluded), and how busy the process was.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 25;
const [file, fromText, toText] = args;
if (!file) {
  console.error('usage: node bench/profile.ts <file.cpuprofile> [<from µs> <to µs>] [--top N]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const from = fromText ? Number(fromText) : profile.startTime;
const to = toText ? Number(toText) : profile.endTime;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const name = (n: ProfileNode) => {
  const where = n.callFrame.url.replace(/^.*\/(services|packages|node_modules)\//, '$1/');
  return `${n.callFrame.functionName || '(anonymous)'} ${where}${where ? `:${n.callFrame.lineNumber + 1}` : ''}`;
};

const self = new Map<string, number>();
const total = new Map<string, number>();
let samples = 0;
let idle = 0;
let time = profile.startTime;
for (const [i, id] of profile.samples.entries()) {
  time += profile.timeDeltas[i]!;
  if (time < from || time > to) continue;
  const node = byId.get(id)!;
  if (node.callFrame.functionName === '(idle)') {
    idle++;
    continue;
  }
  samples++;
  self.set(name(node), (self.get(name(node)) ?? 0) + 1);
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const key = name(byId.get(at)!);
    if (seen.has(key)) continue;
    seen.add(key);
    total.set(key, (total.get(key) ?? 0) + 1);
  }
}
const share = (n: number) => `${((100 * n) / Math.max(1, samples)).toFixed(1)}%`.padStart(6);
console.log(`${samples} busy samples, ${idle} idle: busy ${((100 * samples) / Math.max(1, samples + idle)).toFixed(0)}% of the window`);
console.log('\nself');
for (const [key, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${share(n)}  ${key}`);
console.log('\ntotal');
for (const [key, n] of [...total].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${share(n)}  ${key}`);

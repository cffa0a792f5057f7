import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * V8 flags for a process that holds a large index for long (the search service). V8's defaults
 * suit short programs:
 * - it sizes the young generation from the machine's memory (two 64 MiB semi-spaces on a machine
 *   with a few GB), and an index catch-up fills it: 128 MiB of resident memory. 4 MiB semi-spaces
 *   cost the catch-up and the queries no measurable time (8 MiB held 6–10 MiB more at 100,000
 *   questions; the same CPU per query, and the million-question catch-up as fast).
 * - after each full collection it lets the old generation grow by a factor of its choosing before
 *   the next, and under a query load the garbage of the requests in flight filled that room: the
 *   process grew from 590 to 890 MiB at 100,000 questions (`pnpm bench:search`). Growing by 20%
 *   kept it at 590 MiB, with the same CPU per request.
 */
export const INDEX_FLAGS = ['--max-semi-space-size=4', '--heap-growing-percent=20'];

/**
 * V8 flags for a process that passes many requests through a small heap (the gateway, the content
 * service). V8 starts a full collection when the heap, young generation included, reaches about
 * twice what the last one kept: 40 MiB kept by the gateway, and its 32 MiB semi-spaces filling
 * between scavenges, made 9–15 full collections (120–220 ms) in each 10-second load of `pnpm
 * bench:content`, each a pause of every request in flight. A first limit of 256 MiB left none in
 * those loads, and the gateway's resident memory was no higher (225–315 MiB against 280–340).
 */
export const REQUEST_FLAGS = ['--initial-heap-size=256'];

/**
 * Nor do Node's and the C library's defaults suit a service:
 * - `NODE_COMPILE_CACHE`: Node strips the TypeScript of every module with a WebAssembly compiler
 *   that then stays in memory (17 MiB). With the compile cache, a start whose modules were all
 *   stripped before (by an earlier start) never loads it.
 * - `MALLOC_MMAP_THRESHOLD_`: the C library maps a large block of its own, and unmaps it when
 *   freed, only above a threshold that it raises each time it frees one (up to 32 MiB); the
 *   typed arrays an index catch-up grows and drops then come from its heap, whose room it keeps.
 *   Fixed at 1 MiB: 40 MiB less resident after the loads of `pnpm bench:search` at 100,000
 *   questions (468 → 428 MiB), at the same CPU per query.
 */
const ENVIRONMENT: Record<string, string> = {
  NODE_COMPILE_CACHE: path.join(tmpdir(), 'node-compile-cache'),
  MALLOC_MMAP_THRESHOLD_: String(1 << 20),
};

/**
 * Makes this process run with these V8 flags and the environment above. V8 and the C library read
 * them only when the process starts, so the process replaces itself once (same pid, same output)
 * with them, however it was launched; a flag or variable given explicitly is kept. Call it first
 * in a service's main, and import the service after it: the process that replaces itself loads
 * nothing it would throw away.
 */
export function runWith(v8Flags: readonly string[]) {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  const missing = v8Flags.filter((flag) => !given.some((arg) => arg.startsWith(flag.split('=')[0]!)));
  const unset = Object.keys(ENVIRONMENT).filter((name) => process.env[name] === undefined);
  if ((missing.length || unset.length) && typeof process.execve === 'function')
    process.execve(process.execPath, [process.execPath, ...missing, ...process.execArgv, ...process.argv.slice(1)], {
      ...ENVIRONMENT,
      ...process.env,
    });
}

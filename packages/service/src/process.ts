import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * V8 flags for a process that holds a large index for long (the search service). V8's defaults suit
 * short programs: it sizes the young generation from the machine's memory, which an index catch-up
 * then fills, and it lets the old generation grow by a margin of its choosing between full
 * collections, which the garbage of the requests in flight fills under a query load. Small
 * semi-spaces and a slow growth hold far less memory at the same CPU (figures: docs/search.md).
 */
export const INDEX_FLAGS = ['--max-semi-space-size=4', '--heap-growing-percent=20'];

/**
 * V8 flags for a process that passes many requests through a small heap (the gateway, the content
 * service). V8 starts a full collection when the heap reaches about twice what the last one kept,
 * so a small heap under load is collected whole again and again, each time a pause of every
 * request in flight; a higher first limit avoids them at no more resident memory (figures:
 * docs/search.md, "Speed").
 */
export const REQUEST_FLAGS = ['--initial-heap-size=256'];

/**
 * Nor do Node's and the C library's defaults suit a service:
 * - `NODE_COMPILE_CACHE`: Node strips the TypeScript of every module with a WebAssembly compiler
 *   that then stays in memory; a start whose modules are all in the cache never loads it.
 * - `MALLOC_MMAP_THRESHOLD_`: the C library maps a large block by itself (and unmaps it when freed)
 *   only above a threshold that it raises each time it frees one; the typed arrays an index
 *   catch-up grows and drops then come from its heap, which keeps their room. A fixed threshold
 *   gives the memory back (figures: docs/search.md, "Speed").
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
 * nothing it would throw away. It runs before any configuration is read, and hands the whole
 * environment on to the new image: the one module besides configuration that reads process.env.
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

import { runMain } from '@kn/service';
import { loadConfig, start } from './index.ts';

/**
 * V8's defaults suit short programs, not a process that holds a large index for long:
 * - it sizes the young generation from the machine's memory (two 64 MiB semi-spaces on a machine
 *   with a few GB), and an index catch-up fills it: 128 MiB of resident memory. 8 MiB semi-spaces
 *   cost the catch-up and the queries no measurable time (16 MiB held 12 MiB more at 100,000
 *   questions, the same CPU per query).
 * - after each full collection it lets the old generation grow by a factor of its choosing before
 *   the next, and under a query load the garbage of the requests in flight filled that room: the
 *   process grew from 590 to 890 MiB at 100,000 questions (`pnpm bench:search`). Growing by 20%
 *   kept it at 590 MiB, with the same CPU per request.
 * V8 reads them only when the process starts, so the process replaces itself once (same pid, same
 * output) with them, however it was launched; a flag given explicitly is kept.
 */
const V8_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=20'];
const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
const missing = V8_FLAGS.filter((flag) => !given.some((arg) => arg.startsWith(flag.split('=')[0]!)));
if (missing.length && typeof process.execve === 'function')
  process.execve(process.execPath, [process.execPath, ...missing, ...process.execArgv, ...process.argv.slice(1)], process.env);

void runMain('search', () => start(loadConfig()));

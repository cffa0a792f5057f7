import { runMain } from '@kn/service';
import { loadConfig, start } from './index.ts';

/**
 * V8 sizes the young generation from the machine's memory (two 64 MiB semi-spaces on a machine
 * with a few GB), and an index catch-up fills it: that was 128 MiB of the search process's
 * resident memory. 16 MiB semi-spaces cost the catch-up no measurable time. V8 reads the limit only
 * when the process starts, so the process replaces itself once (same pid, same output) with the
 * flag, however it was launched; a flag given explicitly is kept.
 */
const YOUNG_GENERATION = '--max-semi-space-size=16';
const flagged = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((a) => a.startsWith('--max-semi-space-size'));
if (!flagged && typeof process.execve === 'function')
  process.execve(process.execPath, [process.execPath, YOUNG_GENERATION, ...process.execArgv, ...process.argv.slice(1)], process.env);

void runMain('search', () => start(loadConfig()));

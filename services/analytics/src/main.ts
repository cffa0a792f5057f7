import { INDEX_FLAGS, runWith } from '@kn/service/process';

runWith(INDEX_FLAGS);
// Imported only now: the process that replaces itself loads nothing it would throw away.
const { runMain } = await import('@kn/service');
const { loadConfig, start } = await import('./index.ts');
void runMain('analytics', () => start(loadConfig()));

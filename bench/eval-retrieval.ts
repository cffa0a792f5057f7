// pnpm eval:retrieval on the data sets of ../shared/data, each in a system of its own (separate
// processes, own database and NATS namespace, removed afterwards): the beer and quantumcomputing
// Stack Exchange dumps, or the folders given. Run: pnpm bench:eval-retrieval [folder …]
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { sharedData } from '@kn/testing';
import { startBenchSystem } from './beer-system.ts';

const folders = process.argv.slice(2).filter((a) => a !== '--');
for (const dir of folders.length ? folders : [sharedData('stackexchange-beer'), sharedData('stackexchange-quantumcomputing')]) {
  const system = await startBenchSystem(18094, { beer: false });
  const state = `/tmp/kn-eval-${system.env.NATS_NAMESPACE}`;
  try {
    const run = spawnSync(process.execPath, ['infra/eval-retrieval.ts', dir], {
      env: {
        ...process.env,
        ...system.env,
        API_URL: `${system.base}/api/v1`,
        IMPORT_STATE_DIR: state,
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (run.status !== 0) throw new Error(`eval:retrieval exited with ${run.status}`);
  } finally {
    await system.stop();
    rmSync(state, { recursive: true, force: true });
  }
}

// pnpm eval:retrieval on the data sets of datasets/README.md (beer in the repository, the others
// from SHARED_DATA_DIR: bench/data.ts), each in a system of its own (separate processes, own
// database and NATS namespace, removed afterwards), or on the folders given. Without folders: the
// beer and quantumcomputing Stack Exchange dumps (duplicate links), then each site's answers as a
// BEIR folder (answer retrieval: the question's title asks for its answers; see retrieval-data.ts),
// then SemEval-2016's questions as one (writeSemevalRetrieval). Run: pnpm bench:eval-retrieval [folder …]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startBenchSystem } from './beer-system.ts';
import { benchData } from './data.ts';
import { writeAnswerRetrieval, writeSemevalRetrieval } from './retrieval-data.ts';

const given = process.argv.slice(2).filter((a) => a !== '--');
const sites = ['stackexchange-beer', 'stackexchange-quantumcomputing'];
// Every data set found (or the one missing named) before anything is made.
if (!given.length) for (const name of [...sites, 'semeval2016-task3']) benchData(name);
const scratch = mkdtempSync(path.join(tmpdir(), 'kn-answer-retrieval-'));
try {
  const folders = given;
  if (!folders.length) {
    folders.push(...sites.map(benchData));
    for (const site of sites) {
      const out = path.join(scratch, `${site.replace(/^stackexchange-/, '')}-answers`);
      await writeAnswerRetrieval(benchData(site), out);
      folders.push(out);
    }
    folders.push(path.join(scratch, 'semeval'));
    writeSemevalRetrieval(folders.at(-1)!);
  }
  for (const dir of folders) {
    const system = await startBenchSystem(Number(process.env.EVAL_PORT ?? 18094), { beer: false });
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
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

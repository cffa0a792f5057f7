// The model the tests run: infra/ensure-model.sh sets it up (instantly when it is there). Where the
// script cannot run (no Python or no package registry), the tests that need the model are skipped
// and say why; infra/test.sh runs the script first, so in CI they run.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { defaultModelPath } from '../src/index.ts';

const root = path.resolve(__dirname, '../../..');

function ensureModel(): { folder: string } | { skipped: string } {
  try {
    execFileSync('bash', [path.join(root, 'infra/ensure-model.sh')], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], timeout: 600_000 });
    return { folder: defaultModelPath() };
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    return { skipped: stderr || String(error) };
  }
}

export const model = ensureModel();
if ('skipped' in model) console.warn(`embedding tests that need the model are skipped: infra/ensure-model.sh failed: ${model.skipped}`);

/** `describe` when the model is set up, `describe.skip` when it could not be. */
export const withModel = 'folder' in model ? describe : describe.skip;
export const modelFolder = 'folder' in model ? model.folder : '';
/** The float graph the set-up's int8 graph is made of (infra/ensure-model.sh writes both). */
export const floatModelFolder = 'folder' in model ? defaultModelPath('all-MiniLM-L6-v2') : '';

/** The model's vocabulary (vocab.txt, one token a line). */
export const vocabulary = () => readFileSync(path.join(modelFolder, 'vocab.txt'), 'utf8').split('\n').slice(0, -1);

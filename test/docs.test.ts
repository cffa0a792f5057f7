import { spawnSync } from 'node:child_process';

test('the configuration reference in docs/operations.md is the one the config schemas give (regenerate: pnpm config-reference)', () => {
  const run = spawnSync(process.execPath, ['infra/config-reference.ts', '--check'], { encoding: 'utf8' });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
});

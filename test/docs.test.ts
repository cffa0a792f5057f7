import { spawnSync } from 'node:child_process';

test('the configuration reference in docs/operations.md is the one the config schemas give (regenerate: pnpm config-reference)', () => {
  const run = spawnSync(process.execPath, ['infra/config-reference.ts', '--check'], { encoding: 'utf8' });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
});

test('docs/openapi.json, docs/asyncapi.json and the tables of docs/events.md are the ones the contracts give (regenerate: pnpm contracts)', () => {
  const run = spawnSync(process.execPath, ['infra/contracts.ts', '--check'], { encoding: 'utf8' });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
});

test('the NATS authorization in infra/nats/auth.conf is the one the permissions give (regenerate: pnpm nats:auth)', () => {
  const run = spawnSync(process.execPath, ['infra/nats-auth.ts', '--check'], {
    encoding: 'utf8',
    env: { ...process.env, NATS_NAMESPACE: '' },
  });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
});

test('the OpenAPI document passes Redocly’s recommended-strict rules without an error', () => {
  const run = spawnSync(
    'node_modules/.bin/redocly',
    ['lint', '--extends', 'recommended-strict', '--format', 'summary', 'docs/openapi.json'],
    {
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
  );
  expect({ status: run.status, output: run.status === 0 ? '' : `${run.stdout}${run.stderr}` }).toEqual({ status: 0, output: '' });
});

test('no tracked file points outside the repository (a folder beside the clone, a path of our machines), but benchmarks and dated history', () => {
  // A clone anywhere must stand on its own: what the code reads and the docs cite is in it, so no
  // folder beside the clone, no path of our machines, and none of the outside documents whose
  // rules docs/api.md states. The benchmarks may read optional data sets from beside it
  // (bench/data.ts); the dated measurements record where figures came from. The patterns are
  // written so that they do not match themselves.
  const outside = String.raw`\.\./shared|/wor[k]/|\bCONTRACT\b|spec/interface\.md`;
  const run = spawnSync(
    'git',
    ['grep', '-n', '-I', '-E', outside, '--', '.', ':!bench/', ':!docs/measurements.md', ':!docs/search-history.md'],
    { encoding: 'utf8' },
  );
  expect(run.stderr).toBe('');
  expect(run.stdout).toBe('');
  // git grep answers 1 when nothing matches; 0 with matches, more on an error.
  expect(run.status).toBe(1);
});

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

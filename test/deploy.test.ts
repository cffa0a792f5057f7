import { spawnSync } from 'node:child_process';

test('the deployment validates with the real tools: compose file, NATS configuration, Prometheus rules and their unit tests, dashboard queries', () => {
  const run = spawnSync('bash', ['infra/check-deploy.sh'], { encoding: 'utf8' });
  expect(run.stderr.replace(/^installing .*\n/gm, '')).toBe('');
  expect(run.stdout).toContain('deployment files valid');
  expect(run.status).toBe(0);
}, 300_000);

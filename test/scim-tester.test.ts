import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { API } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

/**
 * scim2-tester (PyPI, pinned in infra/scim-tester-requirements.txt) runs every check it has
 * against /scim/v2 of a live system: discovery, create, read, query, replace, PATCH add, replace
 * and remove on every attribute our Schemas describe, delete. None may fail.
 */
const run = promisify(execFile);

/** What we do otherwise on purpose (docs/scim.md, "Not supported" and "Deactivation and deletion"). */
const DEVIATIONS = [
  // Removing `active` leaves a person active: only `active: false` deactivates.
  { title: 'check_remove_attribute', reason: /did not remove attribute 'active'/ },
];
const deviation = (r: { title: string; reason: string | null }) =>
  DEVIATIONS.some((d) => d.title === r.title && d.reason.test(r.reason ?? ''));
const root = path.join(__dirname, '..');
let system: System;

beforeAll(async () => {
  system = await startSystem();
});

afterAll(async () => {
  await system?.stop();
});

test('scim2-tester finds no error', async () => {
  const bin = (await run('bash', [path.join(root, 'infra/ensure-python-tool.sh'), 'scim-tester'], { timeout: 300_000 })).stdout.trim();
  const python = path.join(bin, 'python');
  const minted = await system.api
    .post(`${API}/scim/tokens`)
    .set(...bearer(system.adminToken))
    .send({ name: 'scim2-tester' });
  expect(minted.status).toBe(201);
  const { stdout } = await run(python, [path.join(root, 'test/scim-tester/check.py'), `${system.url}/scim/v2`], {
    env: { ...process.env, SCIM_TOKEN: minted.body.token },
    timeout: 120_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  const results = stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { status: string; title: string; reason: string | null; resource_type: string | null });
  const failed = results.filter((r) => (r.status === 'ERROR' || r.status === 'CRITICAL') && !deviation(r));
  expect(failed).toEqual([]);
  // It did check something: the discovery and the CRUD of both resource types.
  expect(results.filter((r) => r.status === 'SUCCESS').length).toBeGreaterThan(20);
}, 600_000);

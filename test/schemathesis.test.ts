import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bearer, type System, startSystem } from './system.ts';

/**
 * Conformance as an outside tester sees it: Schemathesis (PyPI, pinned by
 * infra/ensure-python-tool.sh) reads the system's own /api/v1/openapi.json and sends what the
 * document allows and what it forbids, with every check it has (server errors, statuses, headers
 * and bodies against the document, valid data accepted and invalid data refused, 405 with Allow,
 * authentication not ignored, deleted things gone, …), then follows the document's links from
 * what an operation made or listed to what reads, changes and deletes it. Any failure fails the
 * test; the output (the summary, each failure with a curl command that repeats it) is printed.
 *
 * test/schemathesis/schemathesis.toml has the settings (15 examples per operation, up to 300
 * stateful scenarios of up to 12 steps, deterministic generation: the same requests every run) and
 * hooks.py what keeps the tester's session alive and its traffic on this machine. Left out:
 * DELETE /auth/token, which revokes the tester's own token (every later request would be 401); a
 * request generated with both act-on-behalf headers, which OpenAPI cannot say exclude each other,
 * is sent with the user id alone; a soft-deleted question, solution or user that stays readable is
 * no failure of use_after_free.
 */
const folder = path.join(__dirname, 'schemathesis');

let system: System;
let st: string;
beforeAll(async () => {
  // Before the system starts: on a fresh machine the install takes seconds, and blocks this process.
  const ensure = spawnSync('bash', ['infra/ensure-python-tool.sh', 'schemathesis'], { cwd: path.join(__dirname, '..'), encoding: 'utf8' });
  if (ensure.status !== 0) throw new Error(`infra/ensure-python-tool.sh schemathesis failed:\n${ensure.stderr}`);
  st = path.join(ensure.stdout.trim(), 'st');
  system = await startSystem();
  // The tester sends thousands of requests a minute with one token: no rate limit.
  const off = await system.api
    .put('/api/v1/settings')
    .set(...bearer(system.adminToken))
    .send({ rate_limit_per_minute: 0, login_attempts_per_minute: 0 });
  expect(off.status).toBe(200);
});
afterAll(() => system?.stop());

/** Runs a command without blocking this process's event loop: the system under test lives here. */
function run(command: string, args: string[], options: { cwd: string; env: Record<string, string> }) {
  return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    for (const stream of [child.stdout, child.stderr])
      stream.setEncoding('utf8').on('data', (text: string) => {
        output += text;
      });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

test('Schemathesis finds no failure against the OpenAPI document', async () => {
  const me = await system.api.get('/api/v1/users/me').set(...bearer(system.adminToken));
  // Hypothesis and Schemathesis write what they keep (.hypothesis/, .schemathesis/) where they run.
  const cwd = mkdtempSync(path.join(tmpdir(), 'kn-schemathesis-'));
  const started = performance.now();
  const { code, output } = await run(
    st,
    [
      '--config-file',
      path.join(folder, 'schemathesis.toml'),
      'run',
      `${system.url}/api/v1/openapi.json`,
      '--checks',
      'all',
      '--exclude-operation-id',
      'revokeToken',
      '--no-color',
    ],
    { cwd, env: { KN_SCHEMATHESIS_DIR: folder, KN_TESTER_TOKEN: system.adminToken, KN_TESTER_USER_ID: String(me.body.id) } },
  ).finally(() => rmSync(cwd, { recursive: true, force: true }));
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  // A passing run prints its summary only: the whole report holds lines of tens of kilobytes
  // (generated query strings) that drown the CI log. A failing run prints all of it, lines capped.
  const summary = output.lastIndexOf('= SUMMARY =');
  const report = code === 0 && summary >= 0 ? output.slice(summary) : output;
  // Its closing line ("=== 2 warnings in 181.29s ===") has pytest's shape; a reader of CI logs
  // takes it for a pytest run that ran no test, so it is left out (the exit code says the same).
  const shown = report
    .split('\n')
    .filter((line) => !/^=+ .* in [\d.]+s =+$/.test(line.trim()))
    .map((line) => (line.length > 2000 ? `${line.slice(0, 2000)} … (${line.length} characters)` : line))
    .join('\n');
  console.log(`st run (${seconds} s), exit ${code}:\n${shown}`);
  expect(code).toBe(0);
}, 900_000);

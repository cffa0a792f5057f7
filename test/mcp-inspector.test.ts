import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { newQuestion } from './fixtures.ts';
import { type System, startSystem } from './system.ts';

/*
 * The MCP Inspector's command-line client (@modelcontextprotocol/inspector-cli, pinned, run from
 * node_modules: nothing is fetched) against the live system: a client that is not ours lists the
 * tools and calls the search tool.
 */

const run = promisify(execFile);
const BUILD = path.resolve('node_modules', '@modelcontextprotocol', 'inspector-cli', 'build');
const CLI = path.join(BUILD, 'index.js');
// It finds its own package.json relative to the working directory: it is run in its folder.
const OPTIONS = { timeout: 30_000, cwd: BUILD };

let system: System;
let token: string;
let question = 0;

beforeAll(async () => {
  system = await startSystem();
  const user = await system.createUser();
  token = user.token;
  question = (
    await newQuestion(system, token, {
      title: 'Which inspector checks the MCP server?',
      description: '<p>An outside one.</p>',
      tags: ['mcp'],
    })
  ).id;
  await system.searchCaughtUp();
});

afterAll(async () => {
  await system?.stop();
});

/** The inspector's answer to one method, as the JSON it prints. */
async function inspect(...args: string[]) {
  const { stdout } = await run(
    process.execPath,
    [CLI, `${system.url}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${token}`, ...args],
    OPTIONS,
  );
  return JSON.parse(stdout);
}

test('the inspector lists the tools and calls search_questions', async () => {
  const listed = await inspect('--method', 'tools/list');
  expect(listed.tools.map((t: { name: string }) => t.name)).toEqual(
    expect.arrayContaining(['search_questions', 'get_question', 'draft_question']),
  );
  const found = await inspect('--method', 'tools/call', '--tool-name', 'search_questions', '--tool-arg', 'query=inspector');
  expect(found.isError).toBeFalsy();
  expect(found.structuredContent.questions.map((q: { id: number }) => q.id)).toEqual([question]);
  expect(found.content[0].text).toContain(`${system.url}/questions/${question}`);
});

test('without a token the inspector is refused, and says so', async () => {
  await expect(run(process.execPath, [CLI, `${system.url}/mcp`, '--transport', 'http', '--method', 'tools/list'], OPTIONS)).rejects.toThrow(
    /401|Unauthorized/,
  );
});

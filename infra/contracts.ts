// Writes the documents generated from the contracts: docs/openapi.json (the REST API),
// docs/asyncapi.json (the events), the generated blocks of docs/events.md, and the types a
// third-party tool (openapi-typescript) makes of the OpenAPI document for examples/openapi-fetch.
// The gateway serves the first two. `--check` writes nothing and fails when a committed copy is
// stale (run by the tests).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { asyncApiDocument } from '../gateway/src/asyncapi.ts';
import { openApiDocument } from '../gateway/src/openapi.ts';
import { renderEventsDoc } from './events-doc.ts';

const check = process.argv.includes('--check');
const asyncapi = asyncApiDocument();
const openapi = `${JSON.stringify(openApiDocument('/api/v1'), null, 2)}\n`;
const outputs: Array<[string, string]> = [
  ['docs/openapi.json', openapi],
  ['docs/asyncapi.json', `${JSON.stringify(asyncapi, null, 2)}\n`],
  ['docs/events.md', formatted('docs/events.md', renderEventsDoc(readFileSync('docs/events.md', 'utf8'), asyncapi))],
  ['examples/openapi-fetch/src/api.d.ts', openapiTypescript(openapi)],
];

/** What openapi-typescript makes of the OpenAPI document (read from its standard input). */
function openapiTypescript(document: string) {
  const run = spawnSync('examples/openapi-fetch/node_modules/.bin/openapi-typescript', [], { input: document, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`openapi-typescript failed: ${run.stderr}`);
  return run.stdout;
}

/** Text as the project's formatter (biome) writes the file, so that `pnpm format` leaves it alone. */
function formatted(file: string, text: string) {
  const run = spawnSync('node_modules/.bin/biome', ['format', `--stdin-file-path=${file}`], { input: text, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`biome could not format ${file}: ${run.stderr}`);
  return run.stdout;
}
let stale = 0;
for (const [file, text] of outputs) {
  const current = (() => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return '';
    }
  })();
  if (current === text) continue;
  if (check) {
    console.error(`${file} is stale: run pnpm contracts`);
    stale++;
  } else {
    writeFileSync(file, text);
    console.log(`wrote ${file}`);
  }
}
process.exitCode = stale ? 1 : 0;

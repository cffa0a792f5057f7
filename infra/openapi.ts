// Writes docs/openapi.json from the operation catalogue (the gateway serves the same document).
import { writeFileSync } from 'node:fs';
import { openApiDocument } from '../gateway/src/openapi.ts';

writeFileSync('docs/openapi.json', `${JSON.stringify(openApiDocument('/api/v1'), null, 2)}\n`);
console.log('wrote docs/openapi.json');

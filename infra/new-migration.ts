// Usage: pnpm migration:new <service> <name>  — adds a timestamped migration and registers it.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const [service, rawName] = process.argv.slice(2);
if (!service || !rawName) {
  console.error('usage: pnpm migration:new <service> <name>');
  process.exit(2);
}
const name = rawName.replace(/[^a-z0-9]+/gi, '_').toLowerCase();
const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 12);
const id = `${stamp}_${name}`;
const dir = path.join('services', service, 'src', 'db', 'migrations');
writeFileSync(
  path.join(dir, `${id}.ts`),
  `import type { Kysely } from 'kysely';\n\nexport async function up(db: Kysely<any>) {\n}\n\nexport async function down(db: Kysely<any>) {\n}\n`,
);
const index = path.join(dir, 'index.ts');
const source = readFileSync(index, 'utf8')
  .replace(/(import \* as [^\n]+\n)(?![\s\S]*import \* as)/, `$1import * as m${stamp} from './${id}.ts';\n`)
  .replace(/\n};\s*$/, `\n  '${id}': m${stamp},\n};\n`);
writeFileSync(index, source);
console.log(`created ${path.join(dir, `${id}.ts`)}`);

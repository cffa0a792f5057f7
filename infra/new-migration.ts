// Usage: pnpm migration:new <service> <name>  — adds a timestamped migration and registers it.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const [service, rawName] = process.argv.slice(2);
if (!service || !rawName) {
  console.error('usage: pnpm migration:new <service> <name>');
  process.exit(2);
}
const name = rawName.replace(/[^a-z0-9]+/gi, '_').toLowerCase();
const dir = path.join('services', service, 'src', 'db', 'migrations');
// Names are yyyymmddNN_name and run in name order: take today's date, or the newest existing
// migration's if that is later, and the next number of that day.
const today = new Date().toISOString().slice(0, 10).replace(/-/g, '');
const existing = readdirSync(dir)
  .map((f) => /^(\d{8})(\d{2})_/.exec(f))
  .filter((m): m is RegExpExecArray => m !== null)
  .map((m) => ({ day: m[1], n: Number(m[2]) }))
  .sort((a, b) => (a.day + String(a.n).padStart(2, '0')).localeCompare(b.day + String(b.n).padStart(2, '0')));
const last = existing.at(-1);
const day = last && last.day >= today ? last.day : today;
const n = last && last.day === day ? last.n + 1 : 1;
if (n > 99) throw new Error(`too many migrations on ${day}`);
const stamp = `${day}${String(n).padStart(2, '0')}`;
const id = `${stamp}_${name}`;
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

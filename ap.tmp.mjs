import { Parser } from '@asyncapi/parser';
import { readFileSync } from 'node:fs';
const parser = new Parser();
const t = Date.now();
const { document, diagnostics } = await parser.parse(readFileSync('/tmp/asyncapi.json', 'utf8'));
console.log('ms', Date.now() - t, 'doc', !!document);
for (const d of diagnostics) console.log(d.severity, d.code, d.message, JSON.stringify(d.path).slice(0, 150));

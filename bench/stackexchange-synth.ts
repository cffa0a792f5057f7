// Writes a synthetic Stack Exchange dump N times the size of a real one (default: the beer site, ten
// times) by repeating its rows with shifted ids, streamed file by file (flat memory).
// Run: node bench/stackexchange-synth.ts [source dir] [target dir] [times]
// The text is the source's (CC BY-SA, see docs/import.md): the synthetic dump carries that licence.

import { once } from 'node:events';
import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import { dumpFiles, readRows } from '@kn/stackexchange';
import { dataset } from '@kn/testing';

const source = path.resolve(process.argv[2] ?? dataset('stackexchange-beer'));
const times = Number(process.argv[4] ?? 10);
const target = path.resolve(process.argv[3] ?? path.join('/tmp', `stackexchange-beerx${times}`));
/** Larger than any id of the source: copy k adds k * OFFSET to every id. */
const OFFSET = 10_000_000;
const idAttributes = ['Id', 'PostId', 'ParentId', 'AcceptedAnswerId', 'OwnerUserId', 'LastEditorUserId', 'UserId', 'RelatedPostId'];

const escapeAttribute = (v: string) =>
  v.replace(
    /[&<>"\n\r\t]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\n': '&#xA;', '\r': '&#xD;', '\t': '&#x9;' })[c]!,
  );

mkdirSync(target, { recursive: true });
for (const spec of Object.values(dumpFiles)) {
  const out = createWriteStream(path.join(target, spec.file), { encoding: 'utf8' });
  const write = async (s: string) => {
    if (!out.write(s)) await once(out, 'drain');
  };
  await write(`\uFEFF<?xml version="1.0" encoding="utf-8"?>\n<${spec.root}>\n`);
  // Tags are shared by every copy (a bigger site has more questions, not ten spellings of a tag).
  const copies = spec.file === 'Tags.xml' ? 1 : times;
  for (let k = 0; k < copies; k++) {
    for await (const row of readRows(path.join(source, spec.file), spec.root)) {
      const attrs = { ...row.attributes };
      for (const name of idAttributes) {
        const v = attrs[name];
        if (v !== undefined && /^-?\d+$/.test(v) && !(name === 'UserId' && spec.file === 'Votes.xml'))
          attrs[name] = String(Number(v) + k * OFFSET);
      }
      if (k > 0 && attrs.Title) attrs.Title = `${attrs.Title} (${k + 1})`;
      if (k > 0 && spec.file === 'Users.xml' && attrs.DisplayName) attrs.DisplayName = `${attrs.DisplayName} ${k + 1}`;
      await write(
        `  <row ${Object.entries(attrs)
          .map(([n, v]) => `${n}="${escapeAttribute(v)}"`)
          .join(' ')} />\n`,
      );
    }
  }
  await write(`</${spec.root}>\n`);
  out.end();
  await once(out, 'finish');
}
console.log(`wrote ${target} (${times} × ${source})`);

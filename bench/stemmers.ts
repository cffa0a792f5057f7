// The Snowball stemmers of two npm packages compared for the analyzers (packages/similarity):
// `@orama/stemmers` (used) and `snowball-stemmers`. Speed: every word of the beer site's posts
// stemmed once (no memo), per language algorithm. Quality: the held-out figures of
// bench/retrieval-cv.ts with each. Run: pnpm bench:stemmers
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { type Language, languages, libraryStemmers as orama } from '@kn/similarity';
import { dataset } from '@kn/testing';
import snowball from 'snowball-stemmers';
import { report } from './lib.ts';

const names: Record<Language, string> = { en: 'english', de: 'german', fr: 'french', es: 'spanish', it: 'italian', pt: 'portuguese' };
const snowballStemmers = Object.fromEntries(
  languages.map((l) => {
    const s = snowball.newStemmer(names[l]);
    return [l, (w: string) => s.stem(w)];
  }),
) as Record<Language, (w: string) => string>;

const words = brotliDecompressSync(readFileSync(path.join(dataset('stackexchange-beer'), 'Posts.xml.br')))
  .toString('utf8')
  .toLowerCase()
  .match(/\p{L}+/gu)!
  .slice(0, 500_000);
const speed = (stem: (w: string) => string) => {
  let best = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 3; run++) {
    const started = performance.now();
    for (const w of words) stem(w);
    best = Math.min(best, performance.now() - started);
  }
  return (best * 1000) / words.length;
};
const rows = languages.map((l) => {
  const differ = new Set(words.filter((w) => orama[l](w) !== snowballStemmers[l](w))).size;
  return {
    language: l,
    '@orama/stemmers µs/word': speed(orama[l]).toFixed(2),
    'snowball-stemmers µs/word': speed(snowballStemmers[l]).toFixed(2),
    'distinct words stemmed differently': `${differ} of ${new Set(words).size}`,
  };
});
report(`Stemmer speed over ${words.length} words of the beer site (best of 3)`, 'pnpm bench:stemmers', rows);

for (const library of ['@orama/stemmers', 'snowball-stemmers']) {
  console.log(`\nHeld-out figures with ${library}:`);
  const run = spawnSync(process.execPath, ['bench/retrieval-cv.ts'], { env: { ...process.env, STEMMERS: library }, stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}

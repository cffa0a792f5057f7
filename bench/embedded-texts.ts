// Texts embedded by the set-up's model (infra/ensure-model.sh) for benchmarks, cached in the model
// cache by a hash of the model and the texts: the second run of a benchmark on a site does not
// embed its thousands of questions again.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { modelCache, openEmbedder, type QuantizedVector, quantize } from '@kn/embedding';

export async function embeddedTexts(
  texts: ReadonlyArray<{ id: number; text: string }>,
): Promise<{ dimensions: number; vectors: Map<number, QuantizedVector> }> {
  const embedder = await openEmbedder();
  try {
    const hash = createHash('sha256').update(embedder.model);
    for (const t of texts) hash.update(`${t.id}\u0000${t.text}\u0000`);
    const file = path.join(modelCache(), 'bench-vectors', `${hash.digest('hex').slice(0, 24)}.bin`);
    const { dimensions } = embedder;
    const row = 4 + dimensions;
    let bytes: Buffer;
    if (existsSync(file)) bytes = readFileSync(file);
    else {
      const started = performance.now();
      const made = await embedder.embed(
        texts.map((t) => t.text),
        'passage',
      );
      bytes = Buffer.alloc(texts.length * row);
      made.forEach((v, i) => {
        const q = quantize(v);
        bytes.writeFloatLE(q.scale, i * row);
        bytes.set(new Uint8Array(q.values.buffer, q.values.byteOffset, dimensions), i * row + 4);
      });
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, bytes);
      console.log(`embedded ${texts.length} texts in ${((performance.now() - started) / 1000).toFixed(1)} s (cached in ${file})`);
    }
    const vectors = new Map<number, QuantizedVector>();
    texts.forEach((t, i) => {
      vectors.set(t.id, {
        scale: bytes.readFloatLE(i * row),
        values: new Int8Array(bytes.buffer, bytes.byteOffset + i * row + 4, dimensions).slice(),
      });
    });
    return { dimensions, vectors };
  } finally {
    await embedder.close();
  }
}

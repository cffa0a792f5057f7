// Compact storage of vectors: one signed byte a dimension and a scale (4× smaller than float32).
// A per-vector scale (its largest |component| maps to 127) keeps the rounding error of a cosine
// between unit vectors around 1e-3, far below the differences ranking depends on.

export interface QuantizedVector {
  values: Int8Array;
  /** value × scale ≈ the original component. */
  scale: number;
}

export function quantize(vector: Float32Array): QuantizedVector {
  let max = 0;
  for (const x of vector) max = Math.max(max, Math.abs(x));
  const scale = max === 0 ? 1 : max / 127;
  const values = new Int8Array(vector.length);
  for (let i = 0; i < vector.length; i++) values[i] = Math.round(vector[i]! / scale);
  return { values, scale };
}

export function dequantize({ values, scale }: QuantizedVector): Float32Array {
  return Float32Array.from(values, (v) => v * scale);
}

/** Dot product of two quantized vectors (the cosine, for vectors that were unit length). */
export function quantizedDot(a: QuantizedVector, b: QuantizedVector): number {
  if (a.values.length !== b.values.length) throw new Error(`vectors of ${a.values.length} and ${b.values.length} dimensions`);
  let sum = 0;
  for (let i = 0; i < a.values.length; i++) sum += a.values[i]! * b.values[i]!;
  return sum * a.scale * b.scale;
}

/** Dot product of two float vectors (the cosine, for unit vectors as embed() returns them). */
export function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new Error(`vectors of ${a.length} and ${b.length} dimensions`);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

/** The array itself when it holds `needed` entries, else a copy at least twice as long. */
export function grow<T extends Int32Array | Uint32Array | Float32Array | Float64Array | Uint8Array>(array: T, needed: number): T {
  if (needed <= array.length) return array;
  const next = new (array.constructor as new (n: number) => T)(Math.max(needed, array.length * 2));
  next.set(array);
  return next;
}

/** FTS5's inverse document frequency (the one its bm25() uses; kept so the calibration carries over). */
export function bm25Idf(documents: number, frequency: number): number {
  const value = Math.log((documents - frequency + 0.5) / (frequency + 0.5));
  return value > 0 ? value : 1e-6;
}

/**
 * Similar-question search's idf of a word in `unitFrequency` of `documents` units (TermIndex.unitIdf),
 * also the one of a word among what was asked (the expert model's neighbours, on either backend).
 */
export const unitIdf = (documents: number, unitFrequency: number) => Math.log((documents + 1) / (unitFrequency + 0.5));

/**
 * The `k` best items by `compare` (positive: a is better than b), best first: a heap of k, not a
 * sort of all (expert search picks a hundred of thousands).
 */
export function topK<T>(items: Iterable<T>, compare: (a: T, b: T) => number, k: number): T[] {
  const heap: T[] = [];
  // The heap's root is its worst item.
  const worse = (a: T, b: T) => compare(a, b) < 0;
  const swap = (x: number, y: number) => {
    const t = heap[x]!;
    heap[x] = heap[y]!;
    heap[y] = t;
  };
  const down = (at: number) => {
    for (;;) {
      const l = 2 * at + 1;
      const r = l + 1;
      let least = at;
      if (l < heap.length && worse(heap[l]!, heap[least]!)) least = l;
      if (r < heap.length && worse(heap[r]!, heap[least]!)) least = r;
      if (least === at) return;
      swap(at, least);
      at = least;
    }
  };
  if (k <= 0) return [];
  for (const item of items) {
    if (heap.length < k) {
      heap.push(item);
      for (let at = heap.length - 1; at > 0; ) {
        const parent = (at - 1) >> 1;
        if (!worse(heap[at]!, heap[parent]!)) break;
        swap(at, parent);
        at = parent;
      }
    } else if (worse(heap[0]!, item)) {
      heap[0] = item;
      down(0);
    }
  }
  return heap.sort((a, b) => compare(b, a));
}

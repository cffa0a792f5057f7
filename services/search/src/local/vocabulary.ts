/**
 * The words of the index in sorted order, for prefix expansion (the words a prefix begins are a
 * run of them) and typo tolerance: the words within one or two edits
 * of a query word that begin with its first letter. Walking the sorted list is walking a trie: the edit-distance rows of a common
 * prefix are computed once, and a prefix that is already too far skips every word it begins (a
 * binary search), so a lookup reads a few thousand rows, not the whole dictionary. Words added
 * since the last sort wait in a short list that is read word by word and merged once it has grown.
 */
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export class Vocabulary {
  private sorted: string[] = [];
  private sortedIds = new Int32Array(0);
  /** Lookups in the sorted words, by term and edits: valid until the next merge (queries repeat). */
  private readonly found = new Map<string, number[]>();
  private recentWords: string[] = [];
  private recentIds: number[] = [];

  add(word: string, id: number) {
    this.recentWords.push(word);
    this.recentIds.push(id);
  }

  /**
   * Sorts the words added since the last sort in (opening an index and the end of a catch-up do it
   * once): the new words are sorted by themselves and merged with the sorted ones in one pass. A
   * query waits for it when it comes due, and sorting all the words again took 3 s at a million.
   */
  merge() {
    const order = this.recentWords.map((_, i) => i).sort((a, b) => compare(this.recentWords[a]!, this.recentWords[b]!));
    const total = this.sorted.length + order.length;
    const words: string[] = new Array(total);
    const ids = new Int32Array(total);
    let i = 0;
    let j = 0;
    for (let k = 0; k < total; k++) {
      // The sorted word first when equal: the order a stable sort of both gives.
      if (j >= order.length || (i < this.sorted.length && compare(this.sorted[i]!, this.recentWords[order[j]!]!) <= 0)) {
        words[k] = this.sorted[i]!;
        ids[k] = this.sortedIds[i++]!;
      } else {
        words[k] = this.recentWords[order[j]!]!;
        ids[k] = this.recentIds[order[j++]!]!;
      }
    }
    this.sorted = words;
    this.sortedIds = ids;
    this.recentWords = [];
    this.recentIds = [];
    this.found.clear();
  }

  /** The ids of the words that begin with `prefix`, in id order (prefix expansion). */
  beginning(prefix: string): number[] {
    this.mergeWhenBehind();
    const out: number[] = [];
    this.recentWords.forEach((word, i) => {
      if (word.startsWith(prefix)) out.push(this.recentIds[i]!);
    });
    const from = this.lowerBound(prefix);
    const to = this.lowerBound(`${prefix}\uffff`, from);
    for (let i = from; i < to; i++) out.push(this.sortedIds[i]!);
    return out.sort((a, b) => a - b);
  }

  /** Sorts the recent words in once they are many, and more than a twentieth of the sorted ones. */
  private mergeWhenBehind() {
    if (this.recentWords.length > 1000 && this.recentWords.length * 20 > this.sorted.length) this.merge();
  }

  /** The first position of a word at or after `from` that is not below `word` (binary search). */
  private lowerBound(word: string, from = 0): number {
    let lo = from;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.sorted[mid]! < word) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * The ids of the words at most `max` edits (optimal string alignment) from `term` that begin with
   * its first `keep` characters, the term itself included.
   */
  within(term: string, max: number, keep: number, distance: (a: string, b: string, max: number) => number): number[] {
    this.mergeWhenBehind();
    const start = term.slice(0, keep);
    const out: number[] = [];
    this.recentWords.forEach((word, i) => {
      if (word.startsWith(start) && distance(term, word, max) <= max) out.push(this.recentIds[i]!);
    });
    const key = `${max} ${keep} ${term}`;
    const known = this.found.get(key);
    if (known) return [...out, ...known];
    const sortedOut: number[] = [];
    const n = term.length;
    const words = this.sorted;
    const end = this.lowerBound(`${start}\uffff`);
    // rows[d]: the distances of term's prefixes to the candidate's first d characters.
    const depth = n + max + 2;
    const rows = Array.from({ length: depth + 1 }, () => new Int32Array(n + 1));
    for (let j = 0; j <= n; j++) rows[0]![j] = j;
    let previous = '';
    let valid = 0;
    let i = this.lowerBound(start);
    outer: while (i < end) {
      const word = words[i]!;
      let common = 0;
      const limit = Math.min(valid, word.length, previous.length);
      while (common < limit && word.charCodeAt(common) === previous.charCodeAt(common)) common++;
      for (let d = common + 1; d <= word.length; d++) {
        if (d > depth) break;
        const row = rows[d]!;
        const above = rows[d - 1]!;
        const c = word.charCodeAt(d - 1);
        row[0] = d;
        let least = d;
        for (let j = 1; j <= n; j++) {
          const cost = term.charCodeAt(j - 1) === c ? 0 : 1;
          let v = Math.min(above[j]! + 1, row[j - 1]! + 1, above[j - 1]! + cost);
          if (d > 1 && j > 1 && c === term.charCodeAt(j - 2) && word.charCodeAt(d - 2) === term.charCodeAt(j - 1))
            v = Math.min(v, rows[d - 2]![j - 2]! + 1);
          row[j] = v;
          if (v < least) least = v;
        }
        if (least > max) {
          // No word that begins with these d characters is near enough: skip them all.
          previous = word;
          valid = d - 1;
          i = this.lowerBound(`${word.slice(0, d)}\uffff`, i + 1);
          continue outer;
        }
      }
      if (word.length <= depth && rows[word.length]![n]! <= max) sortedOut.push(this.sortedIds[i]!);
      previous = word;
      valid = Math.min(word.length, depth);
      i++;
    }
    if (this.found.size >= 2000) this.found.clear();
    this.found.set(key, sortedOut);
    return [...out, ...sortedOut];
  }
}

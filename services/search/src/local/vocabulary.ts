/**
 * The words of the index in sorted order, for prefix expansion (the words a prefix begins are a
 * run of them) and typo tolerance: the words within one or two edits
 * of a query word that begin with its first letter. Walking the sorted list is walking a trie: the edit-distance rows of a common
 * prefix are computed once, and a prefix that is already too far skips every word it begins (a
 * binary search), so a lookup reads a few thousand rows, not the whole dictionary. Words added
 * since the last sort wait in a short list that is read word by word and merged once it has grown.
 */
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

  /** Sorts the words added since the last sort in (opening an index does it once, at the end). */
  merge() {
    const all = this.sorted.map((word, i) => ({ word, id: this.sortedIds[i]! }));
    this.recentWords.forEach((word, i) => {
      all.push({ word, id: this.recentIds[i]! });
    });
    all.sort((a, b) => (a.word < b.word ? -1 : a.word > b.word ? 1 : 0));
    this.sorted = all.map((e) => e.word);
    this.sortedIds = Int32Array.from(all, (e) => e.id);
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

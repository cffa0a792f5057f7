/**
 * Which knowledge spaces each tag is used in: per lower-case label, how many questions (drafts and
 * deleted ones too, as the content service counts a tag's uses) carry it in each space (0: in
 * none). A tag used only in closed spaces a caller may not read does not exist for them: it is
 * never named, suggested or used in an expert search of theirs (docs/search.md). A tag no question
 * carries (made by a tag link, say) is the network's, visible to everyone.
 */
export class TagUses {
  private readonly uses = new Map<string, Map<number, number>>();

  /** Adds (sign 1) or takes back (sign -1) the uses of a question's tags in its space (null: none). */
  apply(tags: readonly string[], space: number | null, sign: 1 | -1) {
    const where = space ?? 0;
    for (const key of new Set(tags.map((t) => t.toLowerCase()))) {
      let spaces = this.uses.get(key);
      if (!spaces) {
        if (sign < 0) continue;
        spaces = new Map();
        this.uses.set(key, spaces);
      }
      const count = (spaces.get(where) ?? 0) + sign;
      if (count > 0) spaces.set(where, count);
      else spaces.delete(where);
      if (!spaces.size) this.uses.delete(key);
    }
  }

  clear() {
    this.uses.clear();
  }

  /** Whether the tag is used, and only in the `hidden` spaces. */
  onlyIn(key: string, hidden: ReadonlySet<number>): boolean {
    if (!hidden.size) return false;
    const spaces = this.uses.get(key);
    if (!spaces) return false;
    for (const space of spaces.keys()) if (!hidden.has(space)) return false;
    return true;
  }
}

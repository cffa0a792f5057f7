import type { RoutedQuestion } from '@kn/contracts';
import type { ExpertRecord, HighlightRequest, SearchBackend } from '../backend.ts';
import type { MatchRequest } from '../domain/match.ts';
import { hiddenSpacesOf, type Viewer } from '../domain/visibility.ts';
import { highlight } from './highlight.ts';
import { LocalEvidence, localHistory } from './local-evidence.ts';
import { matchQuestions } from './match.ts';
import type { SearchIndex } from './search-index.ts';
import { similarTo } from './similarity.ts';
import { autocomplete, suggestTags } from './suggest.ts';

/** The default backend: this instance's own in-memory index over its SQLite file (search-index.ts). */
export class LocalBackend implements SearchBackend {
  readonly index: SearchIndex;

  constructor(index: SearchIndex) {
    this.index = index;
  }

  open = () => this.index.open();
  close = () => this.index.close();
  caughtUp = () => this.index.caughtUp();
  rebuild = () => this.index.rebuild();
  status = () => this.index.status();

  get ready() {
    return this.index.ready;
  }

  async match(request: MatchRequest & { highlight: boolean }) {
    const store = this.index.store();
    // One read-ahead for both: the page highlighted is among the matches whose words the ranking read.
    return store.index.withWordsOf([], () => {
      const { words, ...result } = matchQuestions(store, request);
      if (!request.highlight) return result;
      const highlights = highlight(
        store,
        result.items.map((i) => i.id),
        request,
        words,
      );
      return { ...result, items: result.items.map((item, i) => ({ ...item, highlighting: highlights[i] })) };
    });
  }

  async highlight(request: HighlightRequest, ids: readonly number[]) {
    return highlight(this.index.store(), ids, request);
  }

  async similar(source: { question_id?: number; text?: string; language?: string }, limit: number) {
    return similarTo(this.index.store(), source, limit, { thorough: true });
  }

  async autocomplete(text: string, limit: number) {
    return autocomplete(this.index.store(), text, limit);
  }

  async suggestTags(text: string, limit: number, hidden: readonly number[]) {
    return suggestTags(this.index.store(), text, limit, new Set(hidden));
  }

  evidence(hidden: readonly number[] = []) {
    return new LocalEvidence(this.index.store(), hidden);
  }

  async expertRecords(users: readonly number[], tags: ReadonlySet<string>, hidden: readonly number[] = []) {
    const store = this.index.store();
    const hiddenSet = new Set(hidden);
    return new Map<number, ExpertRecord>(users.map((u) => [u, store.expertRecord(u, tags, hiddenSet)]));
  }

  async hiddenSpaces(viewer: Viewer) {
    return hiddenSpacesOf(this.index.store().closedSpaces, viewer);
  }

  async titles(ids: readonly number[]) {
    return this.index.store().titles(ids);
  }

  async closedSpaceMembers(id: number) {
    return this.index.store().closedSpaces.get(id);
  }

  async history(cutoff: number) {
    return localHistory(this.index.store(), cutoff);
  }

  async acceptedAnswers() {
    return this.index.store().expertise.accepted;
  }

  async routingsPerExpertPerWeek() {
    return this.index.store().routingsPerExpertPerWeek;
  }

  async question(id: number): Promise<RoutedQuestion | undefined> {
    const q = this.index.store().question(id);
    return (
      q && {
        id,
        title: q.title,
        text: q.description,
        tags: q.tags,
        language: q.language,
        author_id: q.author_id,
        knowledge_space_id: q.knowledge_space_id,
      }
    );
  }
}

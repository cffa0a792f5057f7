import type { RoutedQuestion } from '@kn/contracts';
import type { ExpertRecord, HighlightRequest, SearchBackend } from '../core/backend.ts';
import type { MatchRequest } from '../domain/match.ts';
import { hiddenSpacesOf, type Viewer } from '../domain/visibility.ts';
import { type Embeddings, embeddingText, noEmbeddings } from '../semantic/embeddings.ts';
import { LocalEvidence, localHistory } from './evidence.ts';
import { highlight } from './highlight.ts';
import { matchQuestions } from './match.ts';
import type { SearchIndex } from './search-index.ts';
import { similarTo } from './similarity.ts';
import { autocomplete, suggestTags } from './suggest.ts';

/** The default backend: this instance's own in-memory index over its SQLite file (search-index.ts). */
export class LocalBackend implements SearchBackend {
  readonly index: SearchIndex;
  private readonly embeddings: Embeddings | undefined;

  constructor(index: SearchIndex, embeddings?: Embeddings) {
    this.index = index;
    this.embeddings = embeddings;
  }

  open = () => this.index.open();
  close = () => this.index.close();
  caughtUp = () => this.index.caughtUp();
  rebuild = () => this.index.rebuild();
  status = () => ({ ...this.index.status(), embeddings: this.embeddings?.status() ?? noEmbeddings });

  get ready() {
    return this.index.ready;
  }

  async match(request: MatchRequest & { highlight: boolean }) {
    this.index.store();
    const meaning = await this.embeddings?.meaningOf({ text: request.query });
    const store = this.index.store();
    // One read-ahead for both: the page highlighted is among the matches whose words the ranking read.
    return store.index.withWordsOf([], () => {
      const { words, ...result } = matchQuestions(store, request, { meaning });
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
    const own = source.question_id !== undefined ? this.index.store().question(source.question_id) : undefined;
    const text = own ? embeddingText(own.title, own.description) : source.text;
    const meaning = await this.embeddings?.meaningOf({ question_id: source.question_id, text });
    return similarTo(this.index.store(), source, limit, { thorough: true, meaning });
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

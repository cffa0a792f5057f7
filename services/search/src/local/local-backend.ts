import type { RoutedQuestion } from '@kn/contracts';
import type { HighlightRequest, SearchBackend } from '../backend.ts';
import { findExperts } from '../domain/experts.ts';
import { highlight } from '../domain/highlight.ts';
import { type MatchRequest, matchQuestions } from '../domain/match.ts';
import { similarTo } from '../domain/similarity.ts';
import { autocomplete, suggestTags } from '../domain/suggest.ts';
import type { SearchIndex } from './search-index.ts';

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
    const { words, ...result } = matchQuestions(store, request);
    if (!request.highlight) return result;
    const highlights = highlight(
      store,
      result.items.map((i) => i.id),
      request,
      words,
    );
    return { ...result, items: result.items.map((item, i) => ({ ...item, highlighting: highlights[i] })) };
  }

  async highlight(request: HighlightRequest, ids: readonly number[]) {
    return highlight(this.index.store(), ids, request);
  }

  async similar(source: { question_id?: number; text?: string; language?: string }, limit: number) {
    return similarTo(this.index.store(), source, limit, true);
  }

  async autocomplete(text: string, limit: number) {
    return autocomplete(this.index.store(), text, limit);
  }

  async suggestTags(text: string, limit: number) {
    return suggestTags(this.index.store(), text, limit);
  }

  async experts(query: { text: string; limit: number }) {
    return findExperts(this.index.store(), query);
  }

  async expertsOn(question: RoutedQuestion, limit: number, exclude: readonly number[] = []) {
    const store = this.index.store();
    return findExperts(store, {
      text: `${question.title}\n${question.text}`,
      tags: question.tags,
      language: question.language,
      limit,
      exclude: [question.author_id, ...exclude],
      only: question.knowledge_space_id === null ? undefined : store.closedSpaces.get(question.knowledge_space_id),
    });
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

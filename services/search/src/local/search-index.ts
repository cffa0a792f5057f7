import type { Bus } from '@kn/bus';
import type { ServiceName } from '@kn/contracts';
import { searchIndexLoading } from '@kn/contracts';
import type { IndexHandlers } from '../core/events.ts';
import { type LocalFeed, startLocalFeed } from './feed.ts';
import { SearchStore } from './store.ts';

/**
 * The index of this instance with its feed: open (or create) the file, follow the streams, answer
 * `SearchIndexLoading` until the initial catch-up is done. `rebuild` starts from an empty file.
 */
export class SearchIndex {
  private current: { store: SearchStore; feed: LocalFeed } | null = null;
  private rebuilding: Promise<void> | null = null;

  private readonly options: { bus: Bus; path: string; streams: ServiceName[]; handlers: IndexHandlers };

  constructor(options: { bus: Bus; path: string; streams: ServiceName[]; handlers: IndexHandlers }) {
    this.options = options;
  }

  async open() {
    let store = new SearchStore(this.options.path);
    let feed: LocalFeed;
    try {
      feed = await this.follow(store);
    } catch (err) {
      // Positions ahead of the streams: the file belongs to other streams (a new NATS, say).
      this.options.bus.logger.warn({ err: (err as Error).message }, 'search index does not match the streams; rebuilding');
      store.close();
      SearchStore.destroy(this.options.path);
      store = new SearchStore(this.options.path);
      feed = await this.follow(store);
    }
    this.current = { store, feed };
  }

  private follow(store: SearchStore) {
    const { bus, streams, handlers } = this.options;
    return startLocalFeed({ bus, store, streams, handlers });
  }

  get ready() {
    return this.current !== null && this.rebuilding === null && this.current.feed.ready();
  }

  /** The store, for a request: fails with SearchIndexLoading until the index has caught up. */
  store(): SearchStore {
    if (!this.ready) throw searchIndexLoading();
    return this.current!.store;
  }

  status() {
    return {
      ready: this.ready,
      questions: this.current?.store.documentCount ?? 0,
      topics: this.current?.store.topicStatus() ?? { trained_on: 0, training: false },
      streams: this.current?.feed.status() ?? {},
    };
  }

  /** Resolves when every event in the streams at call time is in the index, its topic vectors trained (tests, benchmarks). */
  async caughtUp() {
    await this.rebuilding;
    await this.current?.feed.caughtUp();
    await this.current?.store.refreshTopics();
  }

  /** Drops the index and replays the streams from their start; requests answer SearchIndexLoading meanwhile. */
  rebuild(): Promise<void> {
    this.rebuilding ??= (async () => {
      try {
        await this.close();
        SearchStore.destroy(this.options.path);
        await this.open();
      } finally {
        this.rebuilding = null;
      }
    })();
    return this.rebuilding;
  }

  async close() {
    const current = this.current;
    this.current = null;
    if (!current) return;
    await current.feed.stop();
    current.store.close();
  }
}

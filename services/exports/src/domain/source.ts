import { type Bus, call } from '@kn/bus';
import { type ExportTopic, exportsSourceOperations, type OperationResult, type SourceQuestion, type SourceUser } from '@kn/contracts';

export interface SourcePage {
  questions: SourceQuestion[];
  /** Authors of the page's questions, solutions and comments, by id (unknown ones missing). */
  users: Map<number, SourceUser>;
}

export interface SourceOptions {
  bus: Bus;
  requestId: string;
  pageSize: number;
  pageDelayMs: number;
  timeoutMs: number;
  includeDeleted: boolean;
  includeComments: boolean;
  topics?: ExportTopic[];
  signal: AbortSignal;
  /** Called after each page: the worker tells JetStream it is still alive. */
  onProgress?: (questions: number) => void;
}

/** A page's JSON stays well under NATS's default 1 MiB message; longer texts come in slices. */
const PAGE_BYTES = 400_000;
const INLINE_CHARS = 16_384;
const TEXT_SLICE = 100_000;

/**
 * The questions of the network from the content service, page by page (keyset by id), one page
 * fetched ahead while the current one is written. Long texts arrive cut and are completed here.
 * Only the pages in flight are in memory, however large the network.
 */
export async function* sourcePages(options: SourceOptions): AsyncGenerator<SourcePage> {
  const { bus, requestId, signal } = options;
  type Page = OperationResult<typeof exportsSourceOperations.exportSourcePage>;
  const fetchPage = async (after: number): Promise<Page> => {
    if (options.pageDelayMs > 0 && after > 0) await new Promise((r) => setTimeout(r, options.pageDelayMs));
    signal.throwIfAborted();
    return call(
      bus,
      'exportSourcePage',
      exportsSourceOperations.exportSourcePage,
      {
        actor: null,
        params: undefined,
        query: undefined,
        body: {
          after,
          limit: options.pageSize,
          max_bytes: PAGE_BYTES,
          inline_chars: INLINE_CHARS,
          include_deleted: options.includeDeleted,
          include_comments: options.includeComments,
          ...(options.topics ? { topics: options.topics } : {}),
        },
        requestId,
        url: '',
      },
      { timeoutMs: options.timeoutMs },
    );
  };
  const fetchText = (kind: 'question' | 'solution' | 'comment', id: number, offset: number) =>
    call(
      bus,
      'exportSourceText',
      exportsSourceOperations.exportSourceText,
      { actor: null, params: undefined, query: undefined, body: { kind, id, offset, length: TEXT_SLICE }, requestId, url: '' },
      { timeoutMs: options.timeoutMs },
    );
  /** The whole text of a description the page cut (descriptions are unlimited; a message is not). */
  const complete = async (kind: 'question' | 'solution' | 'comment', id: number, start: string, length: number) => {
    const parts = [start];
    let offset = start.length;
    while (offset < length) {
      signal.throwIfAborted();
      const slice = await fetchText(kind, id, offset);
      if (slice.text.length === 0) break;
      parts.push(slice.text);
      offset += slice.text.length;
      length = slice.length;
    }
    return parts.join('');
  };

  let next: Promise<Page> | null = fetchPage(0);
  let exported = 0;
  try {
    while (next) {
      const page: Page = await next;
      next = page.next_after === null ? null : fetchPage(page.next_after);
      // A page fetched ahead and then abandoned (abort, error) must not reject unobserved.
      next?.catch(() => {});
      for (const q of page.questions) {
        if (q.description !== null && q.description.length < q.description_length)
          q.description = await complete('question', q.id, q.description, q.description_length);
        for (const s of q.solutions)
          if (s.description.length < s.description_length)
            s.description = await complete('solution', s.id, s.description, s.description_length);
        for (const c of q.comments)
          if (c.description.length < c.description_length)
            c.description = await complete('comment', c.id, c.description, c.description_length);
      }
      exported += page.questions.length;
      bus.logger.debug({ questions: exported }, 'export page read');
      options.onProgress?.(exported);
      signal.throwIfAborted();
      yield { questions: page.questions, users: new Map(page.users.map((u) => [u.id, u])) };
    }
  } finally {
    next = null;
  }
}

export const fullName = (user: SourceUser | undefined, id: number) =>
  user ? `${user.firstname} ${user.lastname}`.trim() || String(id) : String(id);

import { type Bus, call, serveOperations } from '@kn/bus';
import { type ServiceName, searchOperations } from '@kn/contracts';
import { serviceParts, startRuntime } from '@kn/service';
import type { SearchConfig } from './config.ts';
import { startRoutingConsumers } from './consumers/content.ts';
import { startQuestionTextConsumer } from './consumers/question-texts.ts';
import type { SearchBackend } from './core/backend.ts';
import { indexedStreams, indexHandlers } from './core/events.ts';
import { migrations } from './db/migrations/index.ts';
import type { SearchSchema } from './db/schema.ts';
import { ExpertSearch } from './domain/expert-search.ts';
import { routingResponses } from './domain/routing.ts';
import { createHandlers } from './handlers/index.ts';
import { ExpertModels } from './jobs/expert-models.ts';
import { listenForRebuilds } from './jobs/rebuild.ts';
import { LocalBackend } from './local/backend.ts';
import { SearchIndex } from './local/search-index.ts';
import { Embeddings } from './semantic/embeddings.ts';

export { loadConfig, SearchConfig } from './config.ts';

/** Deletes the Elasticsearch indices of a prefix (tests). */
export async function dropElasticsearchIndices(url: string, prefix: string) {
  const { dropElasticsearchIndices: drop } = await import('./elasticsearch/backend.ts');
  await drop(url, prefix);
}

/** The index status of a running search instance, asked over NATS (operators' scripts, benchmarks). */
export const indexStatus = (bus: Bus) =>
  call(bus, 'indexStatus', searchOperations.indexStatus, {
    // The gateway checks the role of HTTP callers; a script on the bus acts as the operator.
    actor: { id: 0, roles: ['super_admin'], token_id: null },
    params: undefined,
    query: undefined,
    body: undefined,
    requestId: `status-${Date.now()}`,
    url: '',
  });

/** Starts the search service: its index (caught up from the streams in the background), its operations and the routing of questions to experts. */
export async function start(
  config: SearchConfig,
  /** The Elasticsearch index version (tests of an upgrade pass a newer one). */
  options: { indexVersion?: number } = {},
) {
  const runtime = await startRuntime<SearchSchema>({ service: 'search', config, migrations });
  const { db, bus, logger } = runtime;
  const parts = serviceParts(runtime);
  return parts.starting(async () => {
    const embeddings = parts.add(
      new Embeddings({
        db,
        logger,
        modelPath: config.EMBEDDING_MODEL_PATH,
        pollMs: config.EMBEDDING_POLL_MS,
        retryModelMs: config.EMBEDDING_MODEL_RETRY_MS,
      }),
    );
    await embeddings.start();
    const questionTexts = parts.add(await startQuestionTextConsumer({ bus, db }));
    const streams: ServiceName[] = [...indexedStreams];
    const index = config.ELASTICSEARCH_URL
      ? null
      : new SearchIndex({ bus, path: config.SEARCH_INDEX_PATH, streams, handlers: indexHandlers });
    // The Elasticsearch client is loaded only when it is configured: 13 MiB of memory the local index does without.
    const backend: SearchBackend = index
      ? new LocalBackend(index, embeddings)
      : new (await import('./elasticsearch/backend.ts')).ElasticsearchBackend({
          url: config.ELASTICSEARCH_URL!,
          prefix: config.ELASTICSEARCH_INDEX_PREFIX,
          bus,
          streams,
          handlers: indexHandlers,
          version: options.indexVersion,
          embeddings,
        });
    await backend.open();
    parts.add({ stop: () => backend.close() });
    runtime.metrics.gauge(
      'kn_search_index_lag_events',
      'Events of a stream this instance has not applied to its index yet',
      ['stream'],
      async (set) => {
        for (const [stream, { applied }] of Object.entries(backend.status().streams)) {
          const info = await bus.jsm.streams.info(bus.streamName(stream as ServiceName));
          set({ stream }, Math.max(0, info.state.last_seq - applied));
        }
      },
    );
    runtime.metrics.gauge(
      'kn_search_embeddings',
      'Questions with an embedding of the model loaded in this instance (`embedded`), and questions with a text to embed (`questions`); 0 and 0 without a model',
      ['what', 'model', 'state'],
      (set) => {
        const s = embeddings.status();
        const labels = { model: s.model ?? '', state: s.state };
        set({ what: 'embedded', ...labels }, s.embedded);
        set({ what: 'questions', ...labels }, s.questions);
      },
    );
    const models = parts.add(
      new ExpertModels({
        db,
        backend,
        logger,
        checkMs: config.EXPERT_MODEL_CHECK_MS,
        refitMs: config.EXPERT_MODEL_REFIT_MS,
        refitAnswered: config.EXPERT_MODEL_REFIT_ANSWERED,
        meaningOf: (id) => embeddings.storedMeaning(id),
      }),
    );
    await models.start();
    const experts = new ExpertSearch({
      backend,
      models,
      responses: routingResponses(db),
      meaningOf: (source) => embeddings.meaningOf(source),
    });
    const routing = parts.add(
      await startRoutingConsumers({
        bus,
        db,
        backend,
        search: experts,
        experts: config.ROUTING_EXPERTS,
        maxEventAgeMs: config.ROUTING_MAX_EVENT_AGE_MS,
      }),
    );
    parts.add(listenForRebuilds({ bus, backend, logger }));
    parts.add(
      serveOperations({
        bus,
        service: 'search',
        requestKeys: runtime.requestKeys,
        operations: searchOperations,
        handlers: createHandlers({ db, bus, backend, experts, models, embeddings, config }),
        ready: () => backend.ready,
      }),
    );
    logger.info('search service ready (index catching up)');
    return {
      runtime,
      backend,
      /** The local index (tests look inside it); null with Elasticsearch. */
      index,
      routing,
      /** The expert model in force, and its fits. */
      models,
      /** The question embeddings of this instance and the texts they are made of (tests wait on their catch-up). */
      embeddings,
      questionTexts,
      stop: parts.stop,
    };
  });
}

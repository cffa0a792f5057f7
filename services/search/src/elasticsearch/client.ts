import {
  Client,
  errors,
  type estypes,
  SniffingTransport,
  type TransportOptions,
  type TransportRequestOptions,
  type TransportRequestParams,
} from '@elastic/elasticsearch';
import { serviceUnavailable } from '@kn/contracts';
import { StartError } from '@kn/service';

const notAnswering = (cause: unknown) =>
  Object.assign(serviceUnavailable('the search engine (ELASTICSEARCH_URL) does not answer'), { cause });

/** An engine that cannot serve: not reached, or a cluster with no copy of a shard left. */
const engineDown = (err: unknown) =>
  err instanceof errors.ConnectionError ||
  err instanceof errors.TimeoutError ||
  err instanceof errors.NoLivingConnectionsError ||
  (err instanceof errors.ResponseError && [502, 503, 504].includes(err.statusCode ?? 0));

/**
 * The client's transport for Elasticsearch 8/9 and OpenSearch 2 alike: plain `application/json`
 * (OpenSearch refuses the v8 client's `compatible-with=8` content types; Elasticsearch takes both)
 * and no check that the server calls itself Elasticsearch (OpenSearch does not). An engine that
 * cannot serve is the contract's 503 ServiceUnavailable, not an error of ours.
 */
class AnyEngineTransport extends SniffingTransport {
  constructor({ productCheck: _productCheck, vendoredHeaders: _vendoredHeaders, ...options }: TransportOptions) {
    // Each node once, at once: a request waits for no backoff while its caller's deadline runs (the feed retries on its own).
    super({ ...options, retryBackoff: () => 0 });
  }

  override async request(params: TransportRequestParams, options?: TransportRequestOptions): Promise<any> {
    try {
      return await super.request(params, options);
    } catch (err) {
      if (engineDown(err)) throw notAnswering(err);
      throw err;
    }
  }
}

/**
 * A client of the engine, Elasticsearch or OpenSearch (ELASTICSEARCH_URL is the one switch for
 * both): `urls` is one node's URL or several, comma-separated; a request moves on to another
 * node when one does not answer.
 */
export function engineClient(urls: string) {
  const nodes = urls.split(',').map((u) => u.trim());
  return new Client({ nodes, Transport: AnyEngineTransport, maxRetries: Math.max(1, nodes.length) });
}

/**
 * The sources of an mget's documents, in order (undefined: not there). A document not read (no copy
 * of its shard answers, its index deleted meanwhile) fails the read as the engine not answering:
 * read as absent, the feed would write a question anew without what it held.
 */
export function sources<T>(docs: estypes.MgetResponseItem<T>[]): Array<T | undefined> {
  return docs.map((d) => {
    if ('error' in d) throw notAnswering(d.error);
    return d.found ? d._source : undefined;
  });
}

/** The engines and major versions this backend is built and tested for. */
const SUPPORTED = { elasticsearch: [8, 9], opensearch: [2] } as const;

/**
 * What answers at ELASTICSEARCH_URL: undefined when it is a supported engine; a StartError naming
 * the setting and what was found when it is something else (another program, another major
 * version). An engine that does not answer at all throws ServiceUnavailable (the caller waits for it).
 */
export async function checkEngine(client: Client, urls: string): Promise<void> {
  let info: { version?: { number?: string; distribution?: string } };
  try {
    info = (await client.info()) as typeof info;
  } catch (err) {
    if (err instanceof errors.ResponseError)
      throw new StartError('ELASTICSEARCH_URL', `${urls} answers HTTP ${err.statusCode}, not as Elasticsearch or OpenSearch`);
    if (err instanceof errors.DeserializationError)
      throw new StartError('ELASTICSEARCH_URL', `${urls} answers, but not as Elasticsearch or OpenSearch (not JSON)`);
    throw err;
  }
  const number = info.version?.number;
  if (typeof number !== 'string')
    throw new StartError('ELASTICSEARCH_URL', `${urls} answers, but not as Elasticsearch or OpenSearch (no version in its answer)`);
  const engine = info.version?.distribution === 'opensearch' ? 'opensearch' : 'elasticsearch';
  const major = Number(number.split('.')[0]);
  if (!(SUPPORTED[engine] as readonly number[]).includes(major))
    throw new StartError(
      'ELASTICSEARCH_URL',
      `${urls} is ${engine === 'opensearch' ? 'OpenSearch' : 'Elasticsearch'} ${number}; this backend needs Elasticsearch 8 or 9, or OpenSearch 2`,
    );
}

import { Client, SniffingTransport, type TransportOptions } from '@elastic/elasticsearch';

/**
 * The client's transport for Elasticsearch 8/9 and OpenSearch 2 alike: plain `application/json`
 * (OpenSearch refuses the v8 client's `compatible-with=8` content types; Elasticsearch takes both)
 * and no check that the server calls itself Elasticsearch (OpenSearch does not).
 */
class AnyEngineTransport extends SniffingTransport {
  constructor({ productCheck: _productCheck, vendoredHeaders: _vendoredHeaders, ...options }: TransportOptions) {
    super(options);
  }
}

/** A client of the engine at `url`, Elasticsearch or OpenSearch (ELASTICSEARCH_URL is the one switch for both). */
export const engineClient = (url: string) => new Client({ node: url, Transport: AnyEngineTransport });

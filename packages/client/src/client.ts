import type { operations } from '@kn/contracts';
import type { z } from 'zod';
import { ApiError, errorBodyOf } from './errors.ts';
import { type Route, routes } from './routes.ts';

/*
 * A typed client of the whole REST API. Every type comes from the operation catalogue of
 * @kn/contracts (the schemas the gateway validates with and the OpenAPI document is generated
 * from): what a call sends is the input of the operation's schemas, what it gets the output of its
 * response schema. Nothing is copied by hand, so a changed contract changes the client: what it
 * needs at run time (each operation's method and path) is the table `pnpm contracts` generates
 * from the same catalogue (routes.ts), so that a browser bundle carries no schema.
 */

type Ops = typeof operations;
/** The operations the gateway serves: `createQuestion`, `listUsers`, … */
export type OperationName = { [K in keyof Ops]: Ops[K] extends { http: object } ? K : never }[keyof Ops];
type Http<N extends OperationName> = Ops[N] extends { http: infer H } ? H : never;
type Input<S> = S extends z.ZodType ? z.input<S> : undefined;

/** A file to upload (multipart), for the attachment operations. */
export interface Upload {
  file: Blob;
  filename?: string;
}
/** A downloaded file. */
export interface Download {
  bytes: Uint8Array;
  contentType: string;
  filename: string;
}

type ParamsOf<N extends OperationName> = Ops[N] extends { params: infer P } ? Input<P> : undefined;
type QueryOf<N extends OperationName> = Ops[N] extends { query: infer Q } ? Input<Q> : undefined;
type BodyOf<N extends OperationName> = Http<N> extends { upload: true } ? Upload : Ops[N] extends { body: infer B } ? Input<B> : undefined;
/** Nothing at all: an object with every key optional extends it. */
type Empty = Record<never, never>;
/** A part of a request: absent when the operation has none, optional when all of it is. */
type Part<K extends string, T> = [T] extends [undefined] ? unknown : Empty extends T ? { [P in K]?: T } : { [P in K]: T };

/** What a call of the operation sends: path parameters, query and body, as the wire takes them. */
export type RequestOf<N extends OperationName> = Part<'params', ParamsOf<N>> & Part<'query', QueryOf<N>> & Part<'body', BodyOf<N>>;
/** What a call of the operation answers (undefined for answers without a body). */
export type ResponseOf<N extends OperationName> =
  Http<N> extends { download: string }
    ? Download
    : Ops[N] extends { response: infer R }
      ? R extends z.ZodType
        ? z.output<R>
        : undefined
      : undefined;

type HasOffset<N extends OperationName> = Ops[N] extends { query: infer Q } ? ('offset' extends keyof Input<Q> ? true : false) : false;
/** The operations answered in pages (`limit`, `offset`, `total`, `items`). */
export type PagedOperationName = {
  [N in OperationName]: HasOffset<N> extends true ? (ResponseOf<N> extends { items: unknown[]; total: number } ? N : never) : never;
}[OperationName];
export type ItemOf<N extends OperationName> = ResponseOf<N> extends { items: Array<infer I> } ? I : never;

/** Acting for another user (role on_behalf_user): by id or by email address. */
export type OnBehalfOf = { userId: number } | { email: string };

export interface RetryOptions {
  /** How many times a request is sent at most (default 4). */
  attempts?: number;
  /** No new attempt after this many ms since the first (default 60 s). */
  deadlineMs?: number;
  /** The first wait between attempts; it doubles up to `maxDelayMs` (defaults 250 ms and 5 s). Retry-After wins. */
  delayMs?: number;
  maxDelayMs?: number;
  /** Statuses worth another attempt (default 429, 502, 503, 504; a 409 with Retry-After of a keyed request always). */
  statuses?: readonly number[];
}

export interface ClientOptions {
  /** The API's base URL: `http://127.0.0.1:8080/api/v1`. */
  baseUrl: string;
  token?: string;
  onBehalfOf?: OnBehalfOf;
  /** Retries of requests that failed on the way (connection lost, 429, 503): on by default; false turns them off. */
  retry?: RetryOptions | false;
  /** Time for one attempt (default 30 s). */
  timeoutMs?: number;
  /** Headers sent with every request (`traceparent`, say). */
  headers?: Record<string, string>;
}

export interface CallOptions {
  /** The Idempotency-Key of a POST; a new one per call otherwise, the same for all its attempts. */
  idempotencyKey?: string;
  onBehalfOf?: OnBehalfOf;
  retry?: RetryOptions | false;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** An answer with what the headers tell. */
interface AnswerBase {
  status: number;
  headers: Headers;
  requestId: string | null;
  /** The answer of an earlier request with the same Idempotency-Key. */
  replayed: boolean;
  /** The caller's rate limit after this request, when one applies. */
  rateLimit?: { limit: number; remaining: number; reset: number };
}
export type Answer<N extends OperationName> =
  | (AnswerBase & { ok: true; data: ResponseOf<N> })
  | (AnswerBase & { ok: false; error: ApiError });

type Args<N extends OperationName> =
  Empty extends RequestOf<N> ? [request?: RequestOf<N>, options?: CallOptions] : [request: RequestOf<N>, options?: CallOptions];

const DEFAULT_RETRY: Required<RetryOptions> = {
  attempts: 4,
  deadlineMs: 60_000,
  delayMs: 250,
  maxDelayMs: 5_000,
  statuses: [429, 502, 503, 504],
};

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });

/**
 * The client: `await kn.call('createQuestion', { body: { title: '…' } })`. Requests that fail on
 * the way are retried (a POST with one Idempotency-Key for all its attempts, so that it changes
 * things once); answers that are not a success throw an `ApiError` with the contract's error body.
 */
export class KnClient {
  readonly options: ClientOptions;
  /** Requests sent and how many of them were retries, over the client's life. */
  readonly stats = { attempts: 0, retries: 0 };

  constructor(options: ClientOptions) {
    this.options = { ...options, baseUrl: options.baseUrl.replace(/\/+$/, '') };
  }

  /** The same client with another token (or none). */
  withToken(token: string | undefined): KnClient {
    return new KnClient({ ...this.options, token });
  }

  /** The same client acting for another user on every request (role on_behalf_user). */
  onBehalfOf(who: OnBehalfOf | undefined): KnClient {
    return new KnClient({ ...this.options, onBehalfOf: who });
  }

  /** Logs in (role api_user) and answers a client with the token. */
  async login(email: string, password: string): Promise<KnClient> {
    const { token } = await this.call('login', { body: { email, password } });
    return this.withToken(token);
  }

  /** Calls an operation: its answer, or an `ApiError` thrown. */
  async call<N extends OperationName>(name: N, ...args: Args<N>): Promise<ResponseOf<N>> {
    const answer = await this.send(name, ...args);
    if (!answer.ok) throw answer.error;
    return answer.data;
  }

  /** Calls an operation and answers whatever came back, errors included, with the status and headers. */
  async send<N extends OperationName>(name: N, ...args: Args<N>): Promise<Answer<N>> {
    const [request = {} as RequestOf<N>, options = {}] = args;
    const http = (routes as Record<string, Route | undefined>)[name];
    if (!http) throw new Error(`${name} is not an operation of the API`);
    const { params, query, body } = request as { params?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown };
    const url = `${this.options.baseUrl}${fillPath(http.path, params ?? {})}${queryString(query)}`;
    const retry =
      options.retry === false || this.options.retry === false ? null : { ...DEFAULT_RETRY, ...this.options.retry, ...options.retry };
    const key = http.method === 'POST' ? (options.idempotencyKey ?? newKey()) : undefined;
    const onBehalf = options.onBehalfOf ?? this.options.onBehalfOf;
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...this.options.headers,
      ...options.headers,
      ...(this.options.token ? { authorization: `Bearer ${this.options.token}` } : {}),
      ...(key ? { 'idempotency-key': key } : {}),
      ...(onBehalf
        ? 'userId' in onBehalf
          ? { 'x-on-behalf-of-user-id': String(onBehalf.userId) }
          : { 'x-on-behalf-of-email': onBehalf.email }
        : {}),
    };
    const payload = (): RequestInit['body'] => {
      if (http.upload) {
        const upload = body as Upload;
        const form = new FormData();
        form.append('file', upload.file, upload.filename ?? 'file');
        return form;
      }
      if (body === undefined) return undefined;
      headers['content-type'] = 'application/json';
      return JSON.stringify(body);
    };
    // An operation that may take longer than the gateway's usual wait says so (http.timeoutMs).
    const timeoutMs = Math.max(this.options.timeoutMs ?? 30_000, (http.timeoutMs ?? 0) + 5_000);
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      this.stats.attempts++;
      if (attempt > 1) this.stats.retries++;
      let res: Response | undefined;
      let failure: unknown;
      try {
        res = await fetch(url, {
          method: http.method,
          headers,
          body: payload(),
          signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), ...(options.signal ? [options.signal] : [])]),
        });
      } catch (err) {
        if (options.signal?.aborted) throw err;
        failure = err;
      }
      const again =
        retry &&
        attempt < retry.attempts &&
        Date.now() - started < retry.deadlineMs &&
        (!res || retry.statuses.includes(res.status) || (res.status === 409 && key !== undefined && res.headers.has('retry-after')));
      if (again) {
        await res?.body?.cancel();
        const after = Number(res?.headers.get('retry-after'));
        const backoff = Math.min(retry.delayMs * 2 ** (attempt - 1), retry.maxDelayMs) * (0.5 + Math.random() / 2);
        await sleep(Number.isFinite(after) && after > 0 ? after * 1000 : backoff, options.signal);
        continue;
      }
      if (!res) throw failure;
      return answerOf<N>(name, http, res);
    }
  }

  /** Every page of a paged operation, from `query.offset` on, until `total` is reached. */
  async *pages<N extends PagedOperationName>(name: N, ...args: Args<N>): AsyncGenerator<ResponseOf<N>> {
    const [request = {} as RequestOf<N>, options] = args;
    const base = request as { query?: Record<string, unknown> };
    let offset = Number(base.query?.offset ?? 0);
    for (;;) {
      const answer = await this.call(name, ...([{ ...base, query: { ...base.query, offset } }, options] as unknown as Args<N>));
      yield answer;
      const page = answer as unknown as { items: unknown[]; total: number };
      offset += page.items.length;
      if (page.items.length === 0 || offset >= page.total) return;
    }
  }

  /** Every item of a paged operation, page after page: `for await (const q of kn.items('listQuestions', …))`. */
  async *items<N extends PagedOperationName>(name: N, ...args: Args<N>): AsyncGenerator<ItemOf<N>> {
    for await (const page of this.pages(name, ...args)) yield* (page as unknown as { items: ItemOf<N>[] }).items;
  }
}

async function answerOf<N extends OperationName>(name: string, http: Route, res: Response): Promise<Answer<N>> {
  const limit = res.headers.get('ratelimit-limit');
  const base: AnswerBase = {
    status: res.status,
    headers: res.headers,
    requestId: res.headers.get('x-request-id'),
    replayed: res.headers.get('idempotent-replayed') === 'true',
    ...(limit === null
      ? {}
      : {
          rateLimit: {
            limit: Number(limit),
            remaining: Number(res.headers.get('ratelimit-remaining')),
            reset: Number(res.headers.get('ratelimit-reset')),
          },
        }),
  };
  if (res.status >= 400)
    return { ...base, ok: false, error: new ApiError(name, res.status, errorBodyOf(res.status, await res.text()), res.headers) };
  if (http.download) {
    const disposition = res.headers.get('content-disposition') ?? '';
    const filename = decodeURIComponent(/filename\*=UTF-8''([^;]+)/i.exec(disposition)?.[1] ?? '');
    const data: Download = { bytes: new Uint8Array(await res.arrayBuffer()), contentType: res.headers.get('content-type') ?? '', filename };
    return { ...base, ok: true, data: data as ResponseOf<N> };
  }
  const text = await res.text();
  return { ...base, ok: true, data: (text ? JSON.parse(text) : undefined) as ResponseOf<N> };
}

/**
 * A new Idempotency-Key. Browsers have crypto.randomUUID only in secure contexts (https, localhost);
 * a page served over plain http elsewhere makes one from getRandomValues, which they always have.
 */
function newKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** `/questions/:id` with its parameters, each percent-encoded. */
function fillPath(template: string, params: Record<string, unknown>) {
  return template.replace(/:(\w+)/g, (_m, name: string) => {
    if (params[name] === undefined) throw new Error(`the path ${template} needs ${name}`);
    return encodeURIComponent(String(params[name]));
  });
}

/** The query string; lists are comma-separated, undefined values left out. */
function queryString(query: Record<string, unknown> | undefined) {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {}))
    if (v !== undefined && v !== null) search.set(k, Array.isArray(v) ? v.join(',') : String(v));
  const text = search.toString();
  return text ? `?${text}` : '';
}

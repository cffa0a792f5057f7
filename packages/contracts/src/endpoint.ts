import type { z } from 'zod';
import type { Actor, Role } from './common.ts';

export type ServiceName = 'users' | 'content' | 'notifications' | 'search' | 'exports' | 'chat' | 'analytics';
type ZObject = z.ZodObject<z.ZodRawShape>;

/** The API's areas, as the reference groups its operations: every operation names one. */
export const apiTags = {
  Authentication: 'Log in, log out, and tokens for other users (role on_behalf_user).',
  Users: 'People of the network: create, find (prefix search, umlauts folded), change and delete them.',
  'User settings': "The caller's language, email communication and per-type email notification settings.",
  'Network settings': 'Settings of the whole network: languages, email disguise, validation, webhooks, limits (settings_admin).',
  Questions: 'Questions: drafts, publishing (routed to experts), full-text search, following, flags, links.',
  Categories: 'Categories a question may have.',
  Tags: 'Tags by label, whether they are suggested, and the links between related tags.',
  'Knowledge spaces': 'Spaces of questions; questions of a closed space only reach its members.',
  Solutions: 'Solutions to questions: drafts, publishing, ratings, acceptance, upvotes, validity and validation requests.',
  Comments: 'Comments on questions and solutions; a comment can become a solution.',
  Attachments: 'Files attached to questions and solutions (multipart upload, streamed download).',
  'Forward and share': 'Recommending a question to someone who might answer it, and sharing questions and solutions.',
  Notifications: "The caller's notifications (or another user's, with on_behalf_user): counts, lists, read and seen.",
  Webhooks: 'Deliveries of notifications to the network webhook, with their attempts.',
  Search: 'Similar questions, autocompletion, tag suggestions and expert search.',
  Exports: 'Topic-content and content exports, run in the background, and the XSD of the content export.',
  Analytics: 'Flow of questions and answers, routing, and content health with its review queue (managers, administrators).',
  Chat: 'Slack and Microsoft Teams: linking a chat account to the caller (docs/chat.md).',
} as const;
export type ApiTag = keyof typeof apiTags;

/** Error statuses an operation may declare beyond those derived from its shape (contracts/src/answers.ts). */
export type DeclaredStatus = 204 | 401 | 403 | 404 | 409 | 413 | 422 | 429;

/**
 * One operation of a service. With `http`, the gateway exposes it under /api/v1 (and in the
 * OpenAPI document); without, it is internal and reachable only over NATS request/reply.
 */
export interface Operation {
  service: ServiceName;
  summary: string;
  http?: {
    method: 'GET' | 'POST' | 'PUT' | 'DELETE';
    /** express-style path below /api/v1, for example `/users/:id`. */
    path: string;
    /**
     * Status of a successful response. A handler returning undefined sends no body, with this status
     * when it is given and 204 otherwise (so `status: 200` gives the interface's "200, no body").
     */
    status?: number;
    /** `public`: no token. `user`: any valid token, further limited by `roles`. */
    auth: 'public' | 'user';
    /** The caller needs at least one of these roles. */
    roles?: readonly Role[];
    tag: ApiTag;
    /**
     * What else the operation answers, and when, beyond what its shape says (answers.ts derives 400
     * from its parameters and body, 401, 403 and 429 from `auth`, 404 from path parameters, …):
     * 409 and 422 of publishing, say. The OpenAPI document declares both; a test fails when the
     * suite sees a status an operation does not declare.
     */
    answers?: Partial<Record<DeclaredStatus, string>>;
    deprecated?: boolean;
    description?: string;
    /**
     * The request is `multipart/form-data` with one file in the field `file`: the gateway streams
     * it into the attachment object store and calls the operation with its metadata as `body`.
     */
    upload?: boolean;
    /** The operation answers where stored bytes are; the gateway streams them to the client with this content type. */
    download?: string;
    /** How long the gateway waits for the answer (ms) when the operation may take longer than RPC_TIMEOUT_MS. */
    timeoutMs?: number;
  };
  params?: ZObject;
  query?: ZObject;
  body?: z.ZodType;
  response?: z.ZodType;
}

export const operation = <const O extends Operation>(o: O): O => o;

type Out<T> = T extends z.ZodType ? z.output<T> : undefined;
type In<T> = T extends z.ZodType ? z.input<T> : undefined;

export interface OperationRequest<O extends Operation> {
  actor: O['http'] extends { auth: 'user' } ? Actor : Actor | null;
  params: Out<O['params']>;
  query: Out<O['query']>;
  body: Out<O['body']>;
  requestId: string;
  /** Path and query as the client sent them, with the /api/v1 prefix (for `_links.self.href`). */
  url: string;
  /** The client's Idempotency-Key, scoped to the caller and the operation (hashed): the change happens once. */
  requestKey?: string;
}

/** What a handler returns: the response body (the input side of the response schema). */
export type OperationResult<O extends Operation> = O['response'] extends z.ZodType ? In<O['response']> : undefined;

/**
 * An answer its handler wrote as JSON already: a cache that serves one answer to many callers keeps
 * the text, so that each of them costs no serializing of it again (a dashboard's figures, 100 KB).
 */
export class JsonAnswer<T> {
  readonly json: string;
  constructor(value: T) {
    this.json = JSON.stringify(value);
  }
}

export type Handler<O extends Operation> = (request: OperationRequest<O>) => Promise<OperationResult<O> | JsonAnswer<OperationResult<O>>>;

/** A service must implement every operation of its catalogue: the compiler checks the keys. */
export type Handlers<C extends Record<string, Operation>> = { [K in keyof C]: Handler<C[K]> };

/** The NATS subject of an operation's request/reply. Not captured by any stream. */
export const rpcSubject = (service: ServiceName, name: string) => `rpc.${service}.${name}`;

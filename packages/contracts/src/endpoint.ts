import type { z } from 'zod';
import type { Actor, Role } from './common.ts';

export type ServiceName = 'users' | 'content' | 'notifications' | 'search' | 'exports';
type ZObject = z.ZodObject<z.ZodRawShape>;

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
    tag: string;
    deprecated?: boolean;
    description?: string;
    /**
     * The request is `multipart/form-data` with one file in the field `file`: the gateway streams
     * it into the attachment object store and calls the operation with its metadata as `body`.
     */
    upload?: boolean;
    /** The operation answers where stored bytes are; the gateway streams them to the client. */
    download?: boolean;
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

export type Handler<O extends Operation> = (request: OperationRequest<O>) => Promise<OperationResult<O>>;

/** A service must implement every operation of its catalogue: the compiler checks the keys. */
export type Handlers<C extends Record<string, Operation>> = { [K in keyof C]: Handler<C[K]> };

/** The NATS subject of an operation's request/reply. Not captured by any stream. */
export const rpcSubject = (service: ServiceName, name: string) => `rpc.${service}.${name}`;

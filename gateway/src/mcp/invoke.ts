import { type Bus, call } from '@kn/bus';
import {
  type Actor,
  forbidden,
  type Operation,
  type OperationRequest,
  type OperationResult,
  operations,
  validationError,
} from '@kn/contracts';
import { unstorableText } from '../request.ts';

export type Operations = typeof operations;
export type OperationName = keyof Operations;
type Parts<N extends OperationName> = Partial<Pick<OperationRequest<Operations[N]>, 'params' | 'query' | 'body'>>;

/** Does an operation of the API as the caller of an MCP request: the path of a REST request after its validation. */
export type Invoke = <N extends OperationName>(name: N, parts: Parts<N>) => Promise<OperationResult<Operations[N]>>;

/**
 * The operations an MCP request may do, as its caller. Every call after the request's first counts
 * against the caller's rate limit (`count`), as the REST requests doing the same would; the first
 * was counted when the request was authenticated.
 */
export function invoker(options: { bus: Bus; actor: Actor; requestId: string; rpcTimeoutMs: number; count: () => Promise<void> }): Invoke {
  const { bus, actor, requestId } = options;
  let calls = 0;
  return async (name, parts) => {
    const op = operations[name] as Operation;
    const roles = op.http?.roles;
    if (roles && !roles.some((r) => actor.roles.includes(r))) throw forbidden(`needs the role ${roles.join(' or ')}`);
    // The SDK validated the arguments with the contracts' schemas; this is the rest of parsePart's check.
    for (const [part, value] of Object.entries(parts)) {
      const at = unstorableText(value);
      if (at !== undefined)
        throw validationError(`${at || part}: must not contain NUL characters or unpaired UTF-16 surrogates`, [
          { path: at || part, code: 'invalid_format', message: 'must not contain NUL characters or unpaired UTF-16 surrogates' },
        ]);
    }
    if (calls++ > 0) await options.count();
    const params = parts.params as Record<string, unknown> | undefined;
    const url = `/api/v1${(op.http?.path ?? '').replace(/:(\w+)/g, (_, key: string) => String(params?.[key]))}`;
    return call(bus, name, op, { actor, params: undefined, query: undefined, body: undefined, ...parts, requestId, url } as never, {
      timeoutMs: Math.max(options.rpcTimeoutMs, op.http?.timeoutMs ?? 0),
    }) as never;
  };
}

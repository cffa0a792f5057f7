import { randomUUID } from 'node:crypto';
import { type Bus, call } from '@kn/bus';
import { type Actor, type OperationResult, operations } from '@kn/contracts';

type Operations = typeof operations;
type Part = 'params' | 'query' | 'body';
type Input<N extends keyof Operations> = {
  [P in Part]?: Operations[N][P & keyof Operations[N]] extends { _zod: { input: infer I } } ? I : never;
};

/**
 * Calls another service's operation as a linked network user, as the gateway would: the request
 * parsed by the operation's own schemas first (defaults filled in), the caller's rights applied
 * by the service that owns the data. The chat never decides on the network's rules itself.
 */
export function networkCaller(bus: Bus) {
  return async <N extends keyof Operations>(name: N, actor: Actor, input: Input<N> = {}): Promise<OperationResult<Operations[N]>> => {
    const op = operations[name] as unknown as Record<Part, { parse(v: unknown): unknown } | undefined>;
    const parsed = (part: Part, fallback: unknown) => op[part]?.parse((input as Record<Part, unknown>)[part] ?? fallback);
    return call(bus, name, operations[name], {
      actor,
      params: parsed('params', {}),
      query: parsed('query', {}),
      body: parsed('body', {}),
      requestId: randomUUID(),
      url: '',
    } as never) as Promise<OperationResult<Operations[N]>>;
  };
}
export type NetworkCaller = ReturnType<typeof networkCaller>;

import type { Server } from 'node:http';
import { type AddressInfo, isIPv6 } from 'node:net';
import { backoff } from '@kn/bus';
import type { Logger } from '@kn/telemetry';

/**
 * A start that failed for a reason an operator fixes in the configuration or on the server it
 * names: `runMain` ends the process with one line that says which setting and why, never a stack.
 */
export class StartError extends Error {
  readonly setting: string;
  readonly reason: string;
  constructor(setting: string, reason: string) {
    super(`${setting}: ${reason}`);
    this.name = 'StartError';
    this.setting = setting;
    this.reason = reason;
  }
}

/** What went wrong with a server at start, in a few words, and whether waiting may mend it. */
export interface Problem {
  reason: string;
  passes: boolean;
}

const codeOf = (err: unknown) => (err as { code?: string }).code;
const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Network failures that pass once the server is up (a deployment whose parts start together). */
function networkProblem(err: unknown): Problem | undefined {
  const code = codeOf(err);
  const at = (err as { address?: string; port?: number }).address
    ? ` (${(err as { address: string }).address}:${(err as { port: number }).port})`
    : '';
  if (code === 'ECONNREFUSED') return { reason: `connection refused${at}`, passes: true };
  if (code === 'ECONNRESET' || code === 'ETIMEDOUT' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH')
    return { reason: `${code.toLowerCase()}${at}`, passes: true };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return { reason: `host ${(err as { hostname?: string }).hostname ?? ''} not found`, passes: true };
  // A connection attempt that several addresses refused (localhost: ::1 and 127.0.0.1).
  if (err instanceof AggregateError && err.errors.length) return networkProblem(err.errors[0]);
  return undefined;
}

export function postgresProblem(err: unknown): Problem {
  const net = networkProblem(err);
  if (net) return net;
  switch (codeOf(err)) {
    case '53300':
      return { reason: 'Postgres has no connection left (too many clients)', passes: true };
    case '57P03':
      return { reason: 'Postgres is starting up', passes: true };
    case '28P01':
    case '28000':
      return { reason: `Postgres refused the credentials: ${messageOf(err)}`, passes: false };
    default:
      return { reason: messageOf(err), passes: false };
  }
}

export function natsProblem(err: unknown): Problem {
  const net = networkProblem(err);
  if (net) return net;
  const message = messageOf(err);
  // The client reports a refused or timed-out first connection in its message.
  if (/refused|timeout|timed out|unreachable/i.test(message)) return { reason: message, passes: true };
  if (/jetstream not enabled|503/i.test(message))
    return { reason: 'JetStream does not answer (not enabled, or the cluster has no leader yet)', passes: true };
  return { reason: message, passes: false };
}

/**
 * Runs a step of the start (connect to Postgres or NATS) again while its problem may pass, with
 * backoff, for at most `budgetMs`; then, or at once for a problem that will not pass, throws a
 * StartError naming the setting.
 */
export async function startStep<T>(
  options: { setting: string; budgetMs: number; problem: (err: unknown) => Problem; onRetry?: (reason: string) => void },
  step: () => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + options.budgetMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      if (err instanceof StartError) throw err;
      const { reason, passes } = options.problem(err);
      const wait = backoff(attempt + 1, 250, 5_000);
      if (!passes) throw new StartError(options.setting, reason);
      if (Date.now() + wait > deadline)
        throw new StartError(options.setting, `${reason} (still, after ${Math.round(options.budgetMs / 1000)} s)`);
      options.onRetry?.(reason);
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

/** Listens on a port, or throws a StartError that names the setting when the port cannot be had. */
export function listen(server: Server, setting: string, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const failed = (err: Error) => {
      const code = codeOf(err);
      const where = `${host}:${port}`;
      if (code === 'EADDRINUSE') reject(new StartError(setting, `${where} is already in use`));
      else if (code === 'EACCES') reject(new StartError(setting, `${where} may not be used by this user`));
      else if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') reject(new StartError(setting, `${host} is not an address of this host`));
      else reject(new StartError(setting, err.message));
    };
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve(server);
    });
  });
}

/** The http:// address of a listening server as this machine reaches it (all interfaces: loopback). */
export function listenUrl(server: Server, host: string) {
  const { port } = server.address() as AddressInfo;
  const reached = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${isIPv6(reached) ? `[${reached}]` : reached}:${port}`;
}

/** `startStep` with a process's retry budget and a log line for every wait. */
export function startSteps(config: { START_RETRY_MS: number }, logger: Logger) {
  return <T>(setting: string, problem: (err: unknown) => Problem, step: () => Promise<T>) =>
    startStep(
      {
        setting,
        budgetMs: config.START_RETRY_MS,
        problem,
        onRetry: (reason) => logger.warn({ setting, reason }, 'waiting for a server; will try again'),
      },
      step,
    );
}

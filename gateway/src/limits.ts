import { hash } from 'node:crypto';
import { isIP } from 'node:net';
import { type Bus, call, type KV, keyValue } from '@kn/bus';
import {
  AppError,
  conflict,
  NETWORK_SETTINGS_DEFAULTS,
  type NetworkSettings,
  rateLimited,
  serviceUnavailable,
  usersOperations,
} from '@kn/contracts';
import { type Clock, ipv6Words, systemClock } from '@kn/service';

type Limits = Pick<NetworkSettings, 'rate_limit_per_minute' | 'login_attempts_per_minute'>;

/**
 * The network's limits (settings of the users service): read at start and every half minute,
 * and at once when `users.network-settings.updated.v1` passes (a plain subscription to the event's
 * subject; the gateway keeps no stream position).
 */
export function networkLimits(bus: Bus) {
  let current: Limits = {
    rate_limit_per_minute: NETWORK_SETTINGS_DEFAULTS.rate_limit_per_minute,
    login_attempts_per_minute: NETWORK_SETTINGS_DEFAULTS.login_attempts_per_minute,
  };
  const take = (settings: Partial<Limits>) => {
    current = {
      rate_limit_per_minute: settings.rate_limit_per_minute ?? current.rate_limit_per_minute,
      login_attempts_per_minute: settings.login_attempts_per_minute ?? current.login_attempts_per_minute,
    };
  };
  const refresh = () =>
    call(bus, 'getNetworkSettings', usersOperations.getNetworkSettings, {
      actor: null,
      params: undefined,
      query: undefined,
      body: undefined,
      requestId: `limits-${Date.now()}`,
      url: '',
    } as never)
      .then(take)
      .catch((err) => bus.logger.warn({ err: (err as Error).message }, 'network limits not refreshed; keeping the last ones'));
  // The refresh under way: stopping waits for it, so that no question to the users service outlives the bus.
  let refreshing = refresh();
  const timer = setInterval(() => {
    refreshing = refresh();
  }, 30_000);
  timer.unref();
  const sub = bus.nc.subscribe(bus.subject('users.network-settings.updated.v1'), {
    callback: (_err, msg) => {
      try {
        take(msg.json<{ data: { settings: Partial<Limits> } }>().data.settings);
      } catch {}
    },
  });
  return {
    ready: refreshing,
    get: () => current,
    async stop() {
      clearInterval(timer);
      sub.unsubscribe();
      await refreshing;
    },
  };
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the caller could send `limit` requests at once again (nothing of the limit used). */
  reset: number;
  /** Seconds to wait before the next request is allowed (denied requests). */
  retryAfter: number;
  /** Nothing of the limit was used before this request. */
  idle: boolean;
}

/** The IETF RateLimit header fields of a decision. */
export const rateLimitHeaders = (d: RateDecision): Record<string, string> => ({
  'RateLimit-Limit': String(d.limit),
  'RateLimit-Remaining': String(d.remaining),
  'RateLimit-Reset': String(d.reset),
});

/** take: one request (refused beyond the limit); give: one request back; penalize: the whole minute used up. */
type Change = 'take' | 'give' | 'penalize';

/**
 * Rate limits shared by every gateway instance: a generic cell rate algorithm (GCRA) per key in
 * one JetStream key-value bucket (memory storage). A key's value is its theoretical arrival time;
 * a request is allowed when it lands at most one minute ahead of now, so a caller may send `limit`
 * requests at once and then one per 60/limit seconds. Each decision is one compare-and-set on the
 * key: this instance remembers the revision it wrote last, and reads the key again only when
 * another instance wrote in between. When the bucket cannot be reached, or does not answer within
 * half a second, the request is let through
 * (limits protect the service; they must not take it down).
 */
export function rateLimiter(bus: Bus, options: { clock?: Clock; decisionBudgetMs?: number } = {}) {
  const bucket = keyValue(bus, 'ratelimits', { ttlMs: 2 * 60_000, memory: true });
  const known = new Map<string, { tat: number; revision: number }>();
  const window = 60_000;
  const clock = options.clock ?? systemClock;

  async function read(kv: KV, key: string) {
    const entry = await kv.get(key);
    return entry && entry.operation === 'PUT' ? { tat: Number(entry.string()), revision: entry.revision } : { tat: 0, revision: 0 };
  }

  const budgeted =
    (change: Change) =>
    async (name: string, limit: number): Promise<RateDecision | null> => {
      if (limit <= 0) return null;
      // A bucket whose stream is electing a new leader answers after seconds: let the request through
      // rather than make it wait that long (the write goes on in the background).
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<null>((resolve) => {
        timer = setTimeout(() => {
          bus.logger.warn('rate limit not decided in time; request let through');
          resolve(null);
        }, options.decisionBudgetMs ?? 500);
      });
      try {
        return await Promise.race([decide(name, limit, change), late]);
      } finally {
        clearTimeout(timer);
      }
    };

  async function decide(name: string, limit: number, change: Change): Promise<RateDecision | null> {
    const key = hash('sha256', name);
    const interval = window / limit;
    let kv: KV;
    try {
      kv = await bucket();
    } catch (err) {
      bus.logger.warn({ err: (err as Error).message }, 'rate limits unavailable; request let through');
      return null;
    }
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const state = known.get(key) ?? (await read(kv, key));
        const now = clock.now().getTime();
        const idle = state.tat <= now;
        const decision = (tat: number, allowed = true): RateDecision => {
          const ahead = Math.max(0, tat - now);
          return {
            allowed,
            limit,
            remaining: allowed ? Math.max(0, Math.floor((window - ahead) / interval)) : 0,
            reset: Math.ceil(ahead / 1000),
            retryAfter: change === 'take' && allowed ? 0 : Math.max(0, Math.ceil((ahead + interval - window) / 1000)),
            idle,
          };
        };
        let next: number;
        if (change === 'take') {
          next = Math.max(state.tat, now) + interval;
          if (next - now > window) return decision(next - interval, false);
        } else if (change === 'give') {
          if (idle) return decision(state.tat);
          next = state.tat - interval;
        } else next = Math.max(state.tat, now + window);
        const revision = state.revision ? await kv.update(key, String(next), state.revision) : await kv.create(key, String(next));
        if (known.size > 100_000) known.clear();
        known.set(key, { tat: next, revision });
        return decision(next);
      } catch (err) {
        // Another instance wrote the key (or it expired): read it again.
        known.delete(key);
        if (attempt === 4) bus.logger.warn({ err: (err as Error).message }, 'rate limit not decided; request let through');
      }
    }
    return null;
  }

  return Object.assign(budgeted('take'), { give: budgeted('give'), penalize: budgeted('penalize') });
}
export type RateLimiter = ReturnType<typeof rateLimiter>;

/**
 * The address a client is limited by: the one the gateway sees (TRUST_PROXY says whether a proxy
 * may name it), IPv4-mapped IPv6 as IPv4, and IPv6 by its /64, the block one subscriber is given:
 * a client picks any address inside it.
 */
export function clientAddress(ip: string | undefined): string {
  if (!ip) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (isIP(ip) !== 6) return ip;
  const words = ipv6Words(ip);
  return `${words
    .slice(0, 4)
    .map((w) => w.toString(16))
    .join(':')}::/64`;
}

/**
 * Log-in throttling (docs/operations.md, "Limits"), both budgets `login_attempts_per_minute`:
 * - per client address, failed log-ins (each attempt takes one, a successful log-in gives it back):
 *   a client trying many addresses (password spraying, credential stuffing) is held back;
 * - per email address, attempts: beyond it the address is locked for clients that failed recently,
 *   but a client with nothing against it (its budget full) may still try: the right password
 *   logs in, a wrong one uses up that client's budget for a minute. So nobody else can keep a person
 *   from logging in, only delay a client of theirs that failed itself, while guessing at a locked
 *   address costs each guessing client a minute.
 * Beyond either: 429 RateLimited with Retry-After.
 */
export function loginThrottle(rates: RateLimiter) {
  return async function attempt(
    client: string,
    email: string,
    perMinute: number,
    setHeaders: (headers: Record<string, string>) => void,
  ): Promise<{ check<T>(run: () => Promise<T>): Promise<T> }> {
    const clientKey = `login-client:${client}`;
    const byClient = await rates(clientKey, perMinute);
    if (byClient) setHeaders(rateLimitHeaders(byClient));
    if (byClient && !byClient.allowed) throw rateLimited(Math.max(1, byClient.retryAfter));
    const byAddress = await rates(`login:${email}`, perMinute);
    const locked = byAddress !== null && !byAddress.allowed;
    // Until the address unlocks or this client has nothing against it, whichever comes first.
    const wait = (client: RateDecision | null) => Math.max(1, Math.min(byAddress!.retryAfter, client?.reset ?? byAddress!.retryAfter));
    if (locked && byClient && !byClient.idle) {
      // Nothing was tried: the client's attempt is given back.
      throw rateLimited(wait(await rates.give(clientKey, perMinute)));
    }
    return {
      async check(run) {
        let result: Awaited<ReturnType<typeof run>>;
        try {
          result = await run();
        } catch (err) {
          // Only a wrong email or password is a failure of the client (not a missing role, not an outage).
          const failed = err instanceof AppError && err.status === 401;
          if (!failed && byClient) await rates.give(clientKey, perMinute);
          if (!failed || !locked) throw err;
          const penalized = await rates.penalize(clientKey, perMinute);
          if (penalized) setHeaders(rateLimitHeaders(penalized));
          throw rateLimited(wait(penalized));
        }
        if (byClient) await rates.give(clientKey, perMinute);
        return result;
      },
    };
  };
}

/** What an idempotency key holds: the request's fingerprint and, once answered, the answer. */
interface Remembered {
  fingerprint: string;
  started: number;
  response?: { status: number; body: string | null };
}

/**
 * `Idempotency-Key` on POST requests, for every gateway instance (a JetStream key-value bucket,
 * answers kept 24 hours): the first request with a key runs and its answer is kept; a repeat with
 * the same body gets that answer again (header `Idempotent-Replayed: true`) and changes nothing; the
 * same key with another body is a 409 Conflict. A repeat that arrives while the first attempt still
 * runs waits for its answer (it watches the key), up to `waitMs`; after that it is a 409 Conflict
 * that says the request is still running. Answers of 5xx are not kept (the client may try again),
 * nor answers too large for the bucket. A claim older than `inFlightMs` without an answer belongs to
 * a gateway that died on the way: it is taken over.
 */
export function idempotency(bus: Bus, options: { inFlightMs: number; waitMs: number }) {
  const bucket = keyValue(bus, 'idempotency', { ttlMs: 24 * 60 * 60_000 });
  const largest = 512 * 1024;
  let waiting = 0;
  bus.metrics.gauge(
    'kn_idempotency_waiting_requests',
    'Requests repeating an Idempotency-Key that wait for the first attempt to answer',
    [],
    (set) => set({}, waiting),
  );

  return {
    /** Claims the key for a request; answers a replay when it was answered before. */
    async begin(
      scope: string,
      key: string,
      body: unknown,
    ): Promise<{ replay?: Remembered['response']; finish(status: number, body: string | null): Promise<void> }> {
      try {
        return await claim(scope, key, body);
      } catch (err) {
        if (err instanceof AppError) throw err;
        // Without the store the request might run twice: refuse it rather than risk that.
        throw serviceUnavailable(`idempotency keys cannot be checked now: ${(err as Error).message}`);
      }
    },
  };

  async function claim(scope: string, key: string, body: unknown) {
    const kv = await bucket();
    const name = hash('sha256', `${scope}\n${key}`);
    const fingerprint = hash('sha256', JSON.stringify(body ?? null));
    const deadline = Date.now() + options.waitMs;
    for (;;) {
      const claimed: Remembered = { fingerprint, started: Date.now() };
      const created = await kv.create(name, JSON.stringify(claimed)).catch(() => undefined);
      if (created !== undefined) return finisher(kv, name, claimed, created);
      const entry = await kv.get(name);
      const held = entry?.operation === 'PUT' ? (entry.json() as Remembered) : null;
      if (held && held.fingerprint !== fingerprint) throw conflict('this Idempotency-Key was used for another request');
      if (held?.response) return { replay: held.response, finish: async (_status: number, _body: string | null) => {} };
      // Deleted (its attempt failed: ours runs now), or left by a gateway that died on the way: take it over.
      if (entry && (!held || Date.now() - held.started >= options.inFlightMs)) {
        const revision = await kv.update(name, JSON.stringify(claimed), entry.revision).catch(() => undefined);
        if (revision !== undefined) return finisher(kv, name, claimed, revision);
        continue;
      }
      // Gone between our create and our read (expired): claim it again.
      if (!entry) continue;
      // Retry-After tells a client to repeat the request (with the same key) rather than give up.
      if (Date.now() >= deadline)
        throw new AppError(409, 'Conflict', 'a request with this Idempotency-Key is still running; try again later', {
          headers: { 'Retry-After': '1' },
        });
      await changed(kv, name, entry.revision, Math.min(deadline, held!.started + options.inFlightMs) - Date.now());
    }
  }

  /** Waits until the key changes after `revision` (answered, freed or taken over), or `ms` passed. */
  async function changed(kv: KV, name: string, revision: number, ms: number) {
    if (ms <= 0) return;
    const watch = await kv.watch({ key: name, resumeFromRevision: revision + 1 });
    const timer = setTimeout(() => watch.stop(), ms);
    waiting++;
    try {
      for await (const _ of watch) return;
    } finally {
      waiting--;
      clearTimeout(timer);
      watch.stop();
    }
  }

  function finisher(kv: KV, name: string, claimed: Remembered, revision: number) {
    return {
      finish: async (status: number, responseBody: string | null) => {
        const kept = status < 500 && (responseBody?.length ?? 0) <= largest;
        try {
          if (kept) await kv.update(name, JSON.stringify({ ...claimed, response: { status, body: responseBody } }), revision);
          else await kv.delete(name);
        } catch (err) {
          // The answer stands; only a repeat of the request would run again.
          bus.logger.warn({ err: (err as Error).message }, 'idempotency key not updated');
        }
      },
    };
  }
}

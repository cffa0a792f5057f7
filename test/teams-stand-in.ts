import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

/**
 * A local stand-in of the Bot Framework as the Teams bot meets it: the OpenID metadata and signing
 * keys its tokens are checked against, the token endpoint the bot gets its own token from, and a
 * serviceUrl whose conversations record what the bot posts and edits. `token()` signs activities'
 * tokens as the Bot Framework does (RS256, issuer, audience = the bot's app id, serviceurl claim).
 */
export interface TeamsCall {
  method: string;
  conversation: string;
  activityId?: string;
  activity: Record<string, any>;
  status: number;
  at: number;
  /** The id the stand-in gave a posted activity. */
  id?: string;
}

export const TEAMS_ISSUER = 'https://api.botframework.com';

export async function startTeamsStandIn() {
  const calls: TeamsCall[] = [];
  const key = await generateKeyPair('RS256');
  const kid = 'kn-test-key';
  const jwk: JWK = { ...(await exportJWK(key.publicKey)), kid, use: 'sig', alg: 'RS256' };
  let fault: (call: TeamsCall, n: number) => { status: number; retryAfter?: number } | null = () => null;
  let count = 0;
  const waiters = new Set<() => void>();
  const read = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const body = await read(req);
    const send = (status: number, payload?: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(payload === undefined ? '' : JSON.stringify(payload));
    };
    if (req.method === 'GET' && url.pathname === '/openid')
      return send(200, { issuer: TEAMS_ISSUER, jwks_uri: `${base}/keys`, id_token_signing_alg_values_supported: ['RS256'] });
    if (req.method === 'GET' && url.pathname === '/keys') return send(200, { keys: [jwk] });
    if (req.method === 'POST' && url.pathname === '/token')
      return send(200, { token_type: 'Bearer', expires_in: 3600, access_token: 'bot-access-token' });
    const m = /^\/v3\/conversations\/([^/]+)\/activities(?:\/([^/]+))?$/.exec(url.pathname);
    if (!m) return send(404, { error: { code: 'NotFound' } });
    const call: TeamsCall = {
      method: req.method === 'PUT' ? 'update' : 'send',
      conversation: decodeURIComponent(m[1]!),
      activityId: m[2] ? decodeURIComponent(m[2]) : undefined,
      activity: JSON.parse(body || '{}'),
      status: 200,
      at: performance.now(),
    };
    const failure = req.headers.authorization === 'Bearer bot-access-token' ? fault(call, ++count) : { status: 401 };
    calls.push(call);
    res.once('finish', () => {
      for (const wake of [...waiters]) wake();
    });
    if (failure) {
      call.status = failure.status;
      return send(
        failure.status,
        { error: { code: 'Throttled' } },
        failure.retryAfter === undefined ? {} : { 'retry-after': String(failure.retryAfter) },
      );
    }
    call.id = call.activityId ?? `act-${randomUUID()}`;
    send(200, { id: call.id });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    serviceUrl: `${base}/`,
    openIdMetadataUrl: `${base}/openid`,
    loginUrl: `${base}/token`,
    calls,
    /** Posts (and edits) into a conversation, with their answers. */
    of: (conversation: string) => calls.filter((c) => c.conversation === conversation),
    failWhen(decide: ((call: TeamsCall, n: number) => { status: number; retryAfter?: number } | null) | null) {
      fault = decide ?? (() => null);
    },
    until(probe: (calls: TeamsCall[]) => boolean, timeoutMs = 15_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!probe(calls)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the Bot Framework stand-in did not see what was awaited within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    /** A token as the Bot Framework signs one for an activity; `spoil` changes one thing about it. */
    async token(appId: string, serviceUrl: string, spoil: { audience?: string; issuer?: string; key?: 'other' | 'unknown-kid' } = {}) {
      const signing = spoil.key ? (await generateKeyPair('RS256')).privateKey : key.privateKey;
      return new SignJWT({ serviceurl: serviceUrl })
        .setProtectedHeader({ alg: 'RS256', kid: spoil.key === 'unknown-kid' ? 'nobody-knows-this-key' : kid, typ: 'JWT' })
        .setIssuer(spoil.issuer ?? TEAMS_ISSUER)
        .setAudience(spoil.audience ?? appId)
        .setIssuedAt()
        .setNotBefore('0s')
        .setExpirationTime('5m')
        .sign(signing);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
export type TeamsStandIn = Awaited<ReturnType<typeof startTeamsStandIn>>;

import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { type Fault, type RecordedCall, startRecordingServer } from './chat-stand-in.ts';

/**
 * A local stand-in of the Bot Framework as the Teams bot meets it: the OpenID metadata and signing
 * keys its tokens are checked against, the token endpoint the bot gets its own token from, and a
 * serviceUrl whose conversations record what the bot posts and edits, answer who a member is
 * (their Microsoft account's e-mail), and are created for a proactive message (createConversation). `token()` signs activities' tokens as the Bot Framework does
 * (RS256, issuer, audience = the bot's app id, serviceurl claim).
 */
export interface TeamsCall extends RecordedCall {
  conversation: string;
  activityId?: string;
  activity: Record<string, any>;
  /** send, update, or create (a conversation: `conversation` is the one answered, `activity` the parameters). */
  method: string;
  /** The id the stand-in gave a posted activity. */
  id?: string;
}

export const TEAMS_ISSUER = 'https://api.botframework.com';

/** The personal chat of the bot with a person, as the tests name it (and createConversation answers it). */
export const personalChatOf = (user: string) => `personal-${user}`;

export async function startTeamsStandIn() {
  const key = await generateKeyPair('RS256');
  const kid = 'kn-test-key';
  const jwk: JWK = { ...(await exportJWK(key.publicKey)), kid, use: 'sig', alg: 'RS256' };
  let fault: (call: TeamsCall, n: number) => Fault = () => null;
  let count = 0;
  /** The accounts conversation members are, by their Bot Framework id: what GET …/members/{id} answers. */
  const members = new Map<string, { email: string; tenantId: string }>();
  // Where the keys are, known once the server listens.
  let base = '';
  const server = await startRecordingServer<TeamsCall>('Bot Framework', (req, body, res, record): unknown => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const send = (status: number, payload?: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(payload === undefined ? '' : JSON.stringify(payload));
    };
    if (req.method === 'GET' && url.pathname === '/openid')
      return send(200, { issuer: TEAMS_ISSUER, jwks_uri: `${base}/keys`, id_token_signing_alg_values_supported: ['RS256'] });
    if (req.method === 'GET' && url.pathname === '/keys') return send(200, { keys: [jwk] });
    if (req.method === 'POST' && url.pathname === '/token')
      return send(200, { token_type: 'Bearer', expires_in: 3600, access_token: 'bot-access-token' });
    const member = /^\/v3\/conversations\/([^/]+)\/members\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && member) {
      const id = decodeURIComponent(member[2]!);
      const account = members.get(id);
      if (req.headers.authorization !== 'Bearer bot-access-token') return send(401, { error: { code: 'Unauthorized' } });
      if (!account) return send(404, { error: { code: 'MemberNotFoundInConversation' } });
      return send(200, {
        id,
        name: id,
        aadObjectId: randomUUID(),
        email: account.email,
        userPrincipalName: account.email,
        tenantId: account.tenantId,
      });
    }
    // createConversation as the Bot Framework answers it for Teams: a one-to-one chat of the bot with
    // one member of a tenant, the same conversation each time for the same person.
    if (req.method === 'POST' && url.pathname === '/v3/conversations') {
      const parameters = JSON.parse(body || '{}') as {
        isGroup?: boolean;
        bot?: { id?: string };
        members?: Array<{ id?: string }>;
        tenantId?: string;
        channelData?: { tenant?: { id?: string } };
      };
      const tenantId = parameters.tenantId ?? parameters.channelData?.tenant?.id;
      const user = parameters.members?.[0]?.id;
      const call: TeamsCall = {
        method: 'create',
        conversation: user ? personalChatOf(user) : '',
        activity: parameters,
        status: 201,
        at: performance.now(),
      };
      record(call);
      const refuse = (status: number, code: string) => {
        call.status = status;
        return send(status, { error: { code, message: code } });
      };
      if (req.headers.authorization !== 'Bearer bot-access-token') return refuse(401, 'Unauthorized');
      if (parameters.isGroup !== false || parameters.members?.length !== 1 || !user) return refuse(400, 'BadSyntax');
      if (!parameters.bot?.id?.startsWith('28:')) return refuse(400, 'BadSyntax');
      if (!tenantId) return refuse(400, 'MissingTenantId');
      const failure = fault(call, ++count);
      if (failure) return refuse(failure.status, 'Throttled');
      return send(201, { id: call.conversation });
    }
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
    record(call);
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
  base = server.base;

  return {
    serviceUrl: `${server.base}/`,
    openIdMetadataUrl: `${server.base}/openid`,
    loginUrl: `${server.base}/token`,
    calls: server.calls,
    members,
    /** Posts (and edits) into a conversation, with their answers. */
    of: (conversation: string) => server.calls.filter((c) => c.conversation === conversation),
    failWhen(decide: ((call: TeamsCall, n: number) => Fault) | null) {
      fault = decide ?? (() => null);
    },
    until: server.until,
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
    close: server.close,
  };
}
export type TeamsStandIn = Awaited<ReturnType<typeof startTeamsStandIn>>;

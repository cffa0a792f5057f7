import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

/**
 * A small OpenID Connect provider the tests control (test/oidc.test.ts): discovery, JWKS, an
 * authorization endpoint that signs in `person` at once, and a token endpoint that answers with an
 * ID token spoiled as `spoil` says, so that each check of the gateway's relying party is seen to
 * refuse it. It checks PKCE as a strict provider does; a code may be redeemed again (`reuseCodes`),
 * so that the gateway's own single use of a state is what a replay meets.
 */
export type Spoil = 'signature' | 'expired' | 'issuer' | 'audience' | 'nonce' | null;

export interface Person {
  sub: string;
  email?: string;
  email_verified?: boolean;
  given_name?: string;
  family_name?: string;
  name?: string;
  locale?: string;
  groups?: string[];
}

interface Code {
  clientId: string;
  redirectUri: string;
  nonce: string | undefined;
  challenge: string | undefined;
  person: Person;
}

export async function startOidcProvider(client: { id: string; secret: string }) {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const stranger = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const codes = new Map<string, Code>();
  const state = {
    person: { sub: 'p-1', email: 'p1@example.com', email_verified: true } as Person,
    spoil: null as Spoil,
    reuseCodes: true,
    /** The query of every authorization request, and the form of every token request. */
    authorizations: [] as URLSearchParams[],
    tokenRequests: [] as URLSearchParams[],
    /** The published keys (rotateKey() changes them) and how often they were fetched. */
    jwks: [jwk] as Array<Record<string, unknown>>,
    jwksFetches: 0,
  };
  /** The key access tokens are signed with (accessToken()). */
  let signing = { kid: 'k1', key: privateKey };
  let issuer = '';

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/.well-known/openid-configuration')
      return send(200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      });
    if (url.pathname === '/jwks') {
      state.jwksFetches++;
      return send(200, { keys: state.jwks });
    }
    if (url.pathname === '/authorize') {
      const q = url.searchParams;
      state.authorizations.push(q);
      if (q.get('client_id') !== client.id) return send(400, { error: 'unauthorized_client' });
      const code = randomBytes(16).toString('base64url');
      const challenge = q.get('code_challenge') ?? undefined;
      if (challenge && q.get('code_challenge_method') !== 'S256') return send(400, { error: 'invalid_request' });
      codes.set(code, {
        clientId: client.id,
        redirectUri: q.get('redirect_uri')!,
        nonce: q.get('nonce') ?? undefined,
        challenge,
        person: { ...state.person },
      });
      const back = new URL(q.get('redirect_uri')!);
      back.searchParams.set('code', code);
      if (q.get('state')) back.searchParams.set('state', q.get('state')!);
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      let raw = '';
      req.on('data', (chunk) => {
        raw += chunk;
      });
      req.on('end', () => {
        void (async () => {
          const form = new URLSearchParams(raw);
          state.tokenRequests.push(form);
          const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
          const [id, secret] = basic
            ? Buffer.from(basic, 'base64').toString().split(':').map(decodeURIComponent)
            : [form.get('client_id'), form.get('client_secret')];
          if (id !== client.id || secret !== client.secret) return send(401, { error: 'invalid_client' });
          const code = codes.get(form.get('code') ?? '');
          if (!code || form.get('redirect_uri') !== code.redirectUri) return send(400, { error: 'invalid_grant' });
          if (!state.reuseCodes) codes.delete(form.get('code')!);
          // A code issued with a challenge is good only with its verifier (RFC 7636, 4.6).
          const verifier = form.get('code_verifier');
          if (code.challenge && (!verifier || createHash('sha256').update(verifier).digest('base64url') !== code.challenge))
            return send(400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
          const now = Math.floor(Date.now() / 1000);
          const spoil = state.spoil;
          const claims = {
            ...code.person,
            nonce: spoil === 'nonce' ? 'another-nonce' : code.nonce,
          };
          const idToken = await new SignJWT(claims)
            .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
            .setIssuer(spoil === 'issuer' ? `${issuer}/other` : issuer)
            .setAudience(spoil === 'audience' ? 'another-client' : code.clientId)
            .setSubject(code.person.sub)
            .setIssuedAt(spoil === 'expired' ? now - 7200 : now)
            .setExpirationTime(spoil === 'expired' ? now - 3600 : now + 300)
            .sign(spoil === 'signature' ? stranger.privateKey : privateKey);
          send(200, { access_token: randomBytes(16).toString('base64url'), token_type: 'Bearer', expires_in: 300, id_token: idToken });
        })();
      });
      return;
    }
    send(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    state,
    /** An access token as the provider issues one for a resource (RFC 9068): `claims` as given; signed with its current key, or `with` another. */
    accessToken: (claims: Record<string, unknown>, with_: { kid?: string; key?: 'stranger' } = {}) =>
      new SignJWT({ iss: issuer, ...claims })
        .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: with_.kid ?? signing.kid })
        .sign(with_.key === 'stranger' ? stranger.privateKey : signing.key),
    /** Rolls the signing key over: a new key with a new kid is published and used, the old one withdrawn. */
    async rotateKey() {
      const next = await generateKeyPair('RS256');
      const kid = `k${state.jwks.length + 1}-${randomBytes(4).toString('hex')}`;
      state.jwks = [{ ...(await exportJWK(next.publicKey)), kid, alg: 'RS256', use: 'sig' }];
      signing = { kid, key: next.privateKey };
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

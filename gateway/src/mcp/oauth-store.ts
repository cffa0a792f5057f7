import { generateKeyPairSync, hash, randomBytes } from 'node:crypto';
import { type Bus, type KV, keyValue } from '@kn/bus';

/*
 * The state of the gateway's own authorization server (oauth.ts) on a NATS key-value bucket, as
 * the single sign-on flows are (sso.ts): the gateway is stateless and scaled out, so a client
 * registered, a code issued or a token revoked at one instance holds at every other. Keys are
 * hashes of the ids, and the ids of tokens and codes (their values) are not in what is stored:
 * the bucket holds nothing a client could present.
 */

/** How long the bucket keeps anything at most; each entry's own expiry (oidc-provider's) is checked on reading. */
const BUCKET_TTL_MS = 30 * 24 * 3600_000;
const CREDENTIALS = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'ClientCredentials']);
const GRANTED = new Set([...CREDENTIALS, 'BackchannelAuthenticationRequest']);

type Payload = Record<string, unknown> & { jti?: string; grantId?: string; uid?: string; exp?: number };

const digest = (value: string) => hash('sha256', value, 'base64url');

export function oauthBuckets(bus: Bus) {
  return {
    state: keyValue(bus, 'oauth', { ttlMs: BUCKET_TTL_MS }),
    // The keys stay until they are replaced: every instance reads the same ones for as long as it runs.
    keys: keyValue(bus, 'oauth-keys', { ttlMs: 0 }),
  };
}

/** oidc-provider's adapter interface over the bucket, one instance per model (Client, Session, AccessToken, …). */
export function kvAdapter(bucket: () => Promise<KV>, now: () => number) {
  return class KvAdapter {
    readonly model: string;
    constructor(model: string) {
      this.model = model;
    }

    key(id: string) {
      return `${this.model}.${digest(id)}`;
    }

    async upsert(id: string, payload: Payload, expiresIn?: number) {
      const kv = await bucket();
      const stored: Payload = { ...payload, exp_ms: expiresIn ? now() + expiresIn * 1000 : undefined };
      if (CREDENTIALS.has(this.model)) delete stored.jti;
      await kv.put(this.key(id), JSON.stringify(stored));
      if (GRANTED.has(this.model) && payload.grantId) await kv.put(`grant.${digest(payload.grantId)}.${this.key(id)}`, '');
      // A session is found by its uid too (the interaction's): the index holds the id, as the session cookie does.
      if (payload.uid) await kv.put(`uid.${digest(payload.uid)}`, JSON.stringify({ id }));
    }

    async find(id: string): Promise<Payload | undefined> {
      const kv = await bucket();
      const entry = await kv.get(this.key(id));
      if (entry?.operation !== 'PUT') return undefined;
      const payload = entry.json<Payload & { exp_ms?: number }>();
      if (payload.exp_ms !== undefined && payload.exp_ms !== null && payload.exp_ms <= now()) return undefined;
      return CREDENTIALS.has(this.model) ? { ...payload, jti: id } : payload;
    }

    async findByUid(uid: string) {
      const entry = await (await bucket()).get(`uid.${digest(uid)}`);
      return entry?.operation === 'PUT' ? this.find(entry.json<{ id: string }>().id) : undefined;
    }

    async findByUserCode(): Promise<undefined> {
      return undefined;
    }

    async consume(id: string) {
      const kv = await bucket();
      const entry = await kv.get(this.key(id));
      if (entry?.operation !== 'PUT') return;
      // Of two redemptions at once, one updates this revision and the other fails: a code is used once.
      await kv.update(this.key(id), JSON.stringify({ ...entry.json<Payload>(), consumed: Math.floor(now() / 1000) }), entry.revision);
    }

    async destroy(id: string) {
      await (await bucket()).delete(this.key(id));
    }

    async revokeByGrantId(grantId: string) {
      const kv = await bucket();
      const prefix = `grant.${digest(grantId)}.`;
      const keys: string[] = [];
      for await (const key of await kv.keys(`${prefix}>`)) keys.push(key);
      for (const key of keys) {
        await kv.delete(key.slice(prefix.length));
        await kv.delete(key);
      }
    }
  };
}

/**
 * What every instance must hold alike: the key that signs ID tokens and the keys of the provider's
 * cookies. The first instance makes them; the others read them (create fails once they exist).
 */
export async function sharedSecrets(bucket: () => Promise<KV>): Promise<{ jwks: { keys: object[] }; cookieKeys: string[] }> {
  const kv = await bucket();
  const existing = await kv.get('secrets');
  if (existing?.operation === 'PUT') return existing.json();
  // RS256: what clients that register without naming an algorithm get.
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const fresh = {
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: randomBytes(8).toString('hex'), alg: 'RS256', use: 'sig' }] },
    cookieKeys: [randomBytes(32).toString('base64url')],
  };
  try {
    await kv.create('secrets', JSON.stringify(fresh));
    return fresh;
  } catch {
    return (await kv.get('secrets'))!.json();
  }
}

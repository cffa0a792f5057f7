import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import { loadConfig as loadGatewayConfig, start as startGateway } from '@kn/gateway';
import supertest from 'supertest';
import { SignedXml } from 'xml-crypto';
import { API, expectGroupGivesSpace } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

/*
 * SAML 2.0 sign-in (docs/sso.md) against an identity provider the test plays itself: it signs the
 * assertions with a key of its own, spoiling each in one way (no signature, a signature wrapped
 * around another assertion, another audience or recipient, expired, replayed, answering no request
 * of ours), and the gateway must refuse each with 401 and create nobody. Keycloak's own login page:
 * test/saml-keycloak.test.ts.
 */

const IDP = 'https://idp.example.com/saml';
const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const privateKey = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const publicKey = keys.publicKey.export({ type: 'spki', format: 'pem' }).toString();
const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

let system: System;
beforeAll(async () => {
  system = await startSystem({
    SAML_ENTRY_POINT: 'http://127.0.0.1:9/realms/company/protocol/saml',
    SAML_IDP_CERT: publicKey,
    SAML_IDP_ISSUER: IDP,
    SAML_NAME: 'Example SAML',
    SAML_EMAIL_VERIFIED: 'true',
    // Starts are limited per client address: each test names its own, as a proxy on loopback would.
    TRUST_PROXY: 'loopback',
  });
});
afterAll(async () => {
  await system?.stop();
});

interface Person {
  nameID: string;
  email: string;
  firstName?: string;
  lastName?: string;
  groups?: string[];
}
let people = 0;
const person = (fields: Partial<Person> = {}): Person => {
  people++;
  return {
    nameID: `saml-subject-${people}`,
    email: `saml${people}@example.com`,
    firstName: 'Saml',
    lastName: `Person${people}`,
    ...fields,
  };
};

let clients = 0;
/** GET /auth/saml/start: the AuthnRequest the browser is sent to the provider with. */
async function start(next = '/', client = `10.1.${++clients}.1`, api = system.api) {
  const res = await api.get(`/auth/saml/start?next=${encodeURIComponent(next)}`).set('x-forwarded-for', client);
  expect(res.status).toBe(303);
  const url = new URL(res.headers.location!);
  const request = inflateRawSync(Buffer.from(url.searchParams.get('SAMLRequest')!, 'base64')).toString();
  const attr = (name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(request)?.[1];
  return {
    url,
    request,
    id: attr('ID')!,
    acs: attr('AssertionConsumerServiceURL')!,
    audience: />([^<]+)<\/saml:Issuer>/.exec(request)![1]!,
  };
}

type Started = Awaited<ReturnType<typeof start>>;
interface Spoil {
  audience?: string;
  recipient?: string;
  notOnOrAfter?: Date;
  inResponseTo?: string;
  key?: string;
  unsigned?: boolean;
}

const xmlText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');

/** The assertion the provider says about `who`, for the request `to`. */
function assertion(who: Person, to: Started, spoil: Spoil = {}, id = `_${randomUUID()}`) {
  const now = new Date();
  const until = (spoil.notOnOrAfter ?? new Date(now.getTime() + 5 * 60_000)).toISOString();
  const inResponseTo = spoil.inResponseTo ?? to.id;
  const attributes = { email: [who.email], firstName: [who.firstName], lastName: [who.lastName], groups: who.groups };
  const values = Object.entries(attributes)
    .filter(([, v]) => v !== undefined && v[0] !== undefined)
    .map(
      ([name, v]) =>
        `<saml:Attribute Name="${name}">${v!.map((x) => `<saml:AttributeValue>${xmlText(x!)}</saml:AttributeValue>`).join('')}</saml:Attribute>`,
    )
    .join('');
  return (
    `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${id}" Version="2.0" IssueInstant="${now.toISOString()}">` +
    `<saml:Issuer>${IDP}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">${who.nameID}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData InResponseTo="${inResponseTo}" NotOnOrAfter="${until}" Recipient="${spoil.recipient ?? to.acs}"/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${new Date(now.getTime() - 60_000).toISOString()}" NotOnOrAfter="${until}"><saml:AudienceRestriction><saml:Audience>${spoil.audience ?? to.audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${now.toISOString()}" SessionIndex="${id}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:Password</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    `<saml:AttributeStatement>${values}</saml:AttributeStatement>` +
    `</saml:Assertion>`
  );
}

/** The assertion signed (enveloped, exclusive C14N, RSA-SHA256), the signature after its Issuer as SAML orders it. */
function sign(xml: string, key = privateKey) {
  const sig = new SignedXml({
    privateKey: key,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  });
  sig.addReference({
    xpath: "/*[local-name(.)='Assertion']",
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
  });
  sig.computeSignature(xml, { location: { reference: "/*[local-name(.)='Assertion']/*[local-name(.)='Issuer']", action: 'after' } });
  return sig.getSignedXml();
}

/** The Response around `assertions`, as the provider's page posts it (base64). */
function response(to: Started, assertions: string, inResponseTo = to.id) {
  return Buffer.from(
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_${randomUUID()}" Version="2.0" IssueInstant="${new Date().toISOString()}" Destination="${to.acs}" InResponseTo="${inResponseTo}">` +
      `<saml:Issuer>${IDP}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
      assertions +
      `</samlp:Response>`,
  ).toString('base64');
}

/** The provider's page posts the answer to the ACS (a form post from its own site). */
const post = (SAMLResponse: string, accept = 'application/json', api = system.api) =>
  api
    .post('/auth/saml/acs')
    .set('origin', 'https://idp.example.com')
    .set('accept', accept)
    .type('form')
    .send({ SAMLResponse, RelayState: '' });

async function signIn(who: Person, spoil: Spoil = {}, next = '/', api = system.api) {
  const to = await start(next, undefined, api);
  const signed = spoil.unsigned ? assertion(who, to, spoil) : sign(assertion(who, to, spoil), spoil.key);
  const SAMLResponse = response(to, signed);
  const res = await post(SAMLResponse, undefined, api);
  return { res, SAMLResponse, to, session: cookieFrom(res) };
}

const cookieFrom = (res: { headers: Record<string, unknown> }) =>
  ((res.headers['set-cookie'] as string[] | undefined) ?? [])
    .find((c) => c.startsWith('kn_session=') && !c.startsWith('kn_session=;'))
    ?.split(';')[0];

const db = () => system.services.users.runtime.db;
const count = async (table: 'users' | 'identities') =>
  Number(
    (
      await db()
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
const counts = async () => ({ users: await count('users'), identities: await count('identities') });
const me = (session: string) => system.api.get(`${API}/users/me`).set('cookie', session);

test('GET /auth/saml tells the sign-in page that SAML is on, and its name; the metadata names our ACS', async () => {
  expect((await system.api.get('/auth/saml')).body).toEqual({ enabled: true, name: 'Example SAML' });
  const metadata = await system.api.get('/auth/saml/metadata');
  expect(metadata.status).toBe(200);
  expect(metadata.headers['content-type']).toMatch(/samlmetadata\+xml/);
  expect(metadata.text).toContain(`entityID="${system.url}/auth/saml/metadata"`);
  expect(metadata.text).toContain(`Location="${system.url}/auth/saml/acs"`);
  expect(metadata.text).toContain('WantAssertionsSigned="true"');
});

test('a signed assertion signs the person in: made just in time, the groups give roles, sent to next', async () => {
  const settings = (idp_group_mappings: unknown[]) =>
    system.api
      .put(`${API}/settings`)
      .set(...bearer(system.adminToken))
      .send({ idp_group_mappings });
  expect((await settings([{ group: 'Engineering', roles: ['content_admin'] }])).status).toBe(200);
  try {
    const before = await counts();
    const who = person({ firstName: 'Jürgen', lastName: 'Müller', groups: ['/company/engineering'] });
    const { res, session, to } = await signIn(who, {}, '/questions?tab=mine');
    expect(to.url.origin + to.url.pathname).toBe('http://127.0.0.1:9/realms/company/protocol/saml');
    expect(to.request).toContain('nameid-format:persistent');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/questions?tab=mine');
    const mine = await me(session!);
    expect(mine.body).toMatchObject({ email: who.email, firstname: 'Jürgen', lastname: 'Müller' });
    expect(mine.body.roles).toEqual(expect.arrayContaining(['user', 'content_admin']));
    expect(await counts()).toEqual({ users: before.users + 1, identities: before.identities + 1 });
    // Again: the same account, by the provider's entity ID and the persistent NameID.
    const again = await signIn({ ...who, email: `renamed-${who.email}` });
    expect((await me(again.session!)).body.id).toBe(mine.body.id);
  } finally {
    await settings([]);
  }
});

test('the groups attribute gives membership of the closed knowledge spaces idp_group_mappings maps the groups to', async () => {
  const who = person();
  await expectGroupGivesSpace(system, { group: 'Labcrew', claimed: 'labcrew', word: 'perspicaciously' }, async (groups) => {
    return (await signIn({ ...who, groups })).session!;
  });
});

test('SAML_EMAIL_VERIFIED=true: the address of an existing account links that account', async () => {
  const { user } = await system.createUser();
  const { session } = await signIn(person({ email: user.email }));
  expect((await me(session!)).body.id).toBe(user.id);
});

describe('an answer that fails a check is refused (401) and creates nobody', () => {
  const spoiled: Array<[string, (who: Person) => Promise<{ res: { status: number; body: { message?: string } } }>, RegExp]> = [
    ['without a signature', (who) => signIn(who, { unsigned: true }), /signature/i],
    ['signed by another key', (who) => signIn(who, { key: otherKey }), /signature/i],
    ['for another audience', (who) => signIn(who, { audience: 'https://other.example.com/saml' }), /audience/i],
    ['for another recipient', (who) => signIn(who, { recipient: 'https://other.example.com/acs' }), /recipient/i],
    ['expired', (who) => signIn(who, { notOnOrAfter: new Date(Date.now() - 2 * 60_000) }), /expired|NotOnOrAfter|subject confirmation/i],
    ['answering a request never made', (who) => signIn(who, { inResponseTo: `_${randomUUID()}` }), /InResponseTo/i],
    [
      'a signed assertion wrapped beside an injected unsigned one',
      async (who) => {
        // The attacker holds a signed assertion of their own and adds one about somebody else.
        const to = await start();
        const own = sign(assertion(person(), to));
        const forged = assertion(who, to);
        return { res: await post(response(to, `${forged}${own}`)) };
      },
      /signature|assertions/i,
    ],
    [
      'the signature moved over another element (the signed assertion hidden, an unsigned one in its place)',
      async (who) => {
        const to = await start();
        const id = `_${randomUUID()}`;
        const own = sign(assertion(person(), to, {}, id));
        const signature = /<(?:ds:)?Signature[\s\S]*<\/(?:ds:)?Signature>/.exec(own)![0];
        const forged = assertion(who, to, {}, id).replace(`</saml:Issuer>`, `</saml:Issuer>${signature}`);
        const wrapped = `<samlp:Extensions>${own}</samlp:Extensions>${forged}`;
        return { res: await post(response(to, wrapped)) };
      },
      /signature/i,
    ],
  ];
  test.each(spoiled)('%s', async (_name, spoil, says) => {
    const before = await counts();
    const who = person();
    const { res } = await spoil(who);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'Unauthorized', message: expect.stringMatching(says) });
    expect(await counts()).toEqual(before);
    const made = await db().selectFrom('users').select('id').where('email', '=', who.email).executeTakeFirst();
    expect(made).toBeUndefined();
  });
});

test('a replayed answer (the same response posted twice) is refused; a browser gets a page', async () => {
  const { res, SAMLResponse } = await signIn(person());
  expect(res.status).toBe(303);
  const before = await counts();
  const replay = await post(SAMLResponse);
  expect(replay.status).toBe(401);
  expect(replay.body).toMatchObject({ code: 'Unauthorized' });
  expect(cookieFrom(replay)).toBeUndefined();
  const page = await post(SAMLResponse, 'text/html');
  expect(page.status).toBe(401);
  expect(page.text).toMatch(/Sign-in refused/);
  expect(page.text).toMatch(/href="\/sign-in"/);
  expect(await counts()).toEqual(before);
});

test('a signed assertion answering one request is refused in a response to another', async () => {
  const who = person();
  const first = await start();
  const id = `_${randomUUID()}`;
  // The Response's InResponseTo is outside the signature: the assertion's own (signed) must match it.
  const signed = sign(assertion(who, first, {}, id));
  expect((await post(response(first, signed))).status).toBe(303);
  const second = await start();
  expect((await post(response(second, signed, second.id))).status).toBe(401);
});

test('next leads only to a path of this origin', async () => {
  const { res } = await signIn(person(), {}, 'https://evil.example.com/');
  expect(res.headers.location).toBe('/');
});

test('starts are limited per client address (login_attempts_per_minute), each keeping nothing beyond it', async () => {
  for (let i = 0; i < 10; i++) await start('/', '192.0.2.17');
  const res = await system.api.get('/auth/saml/start').set('x-forwarded-for', '192.0.2.17').set('accept', 'application/json');
  expect(res.status).toBe(429);
  expect(res.body.code).toBe('RateLimited');
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  expect(res.headers.location).toBeUndefined();
  // Another client is not held up by it.
  await start('/', '192.0.2.18');
});

test('a post without a SAML response is refused (401), with a page for a browser', async () => {
  const res = await system.api.post('/auth/saml/acs').set('accept', 'text/html').type('form').send({ RelayState: '' });
  expect(res.status).toBe(401);
  expect(res.text).toMatch(/no SAML response/);
  const garbage = await post(Buffer.from('<not-saml/>').toString('base64'));
  expect(garbage.status).toBe(401);
  expect(garbage.body.code).toBe('Unauthorized');
});

test('SAML_EMAIL_VERIFIED=false (the default): the address of an existing account is refused, nothing linked', async () => {
  const { SAML_EMAIL_VERIFIED: _, ...env } = system.env as Record<string, string>;
  const strict = await startGateway(loadGatewayConfig(env), { clock: system.clock });
  try {
    const { user } = await system.createUser();
    const before = await counts();
    const { res, session } = await signIn(person({ email: user.email }), {}, '/', supertest(strict.url));
    expect(res.status).toBe(401);
    expect(res.body.message).toMatch(/not verified/);
    expect(session).toBeUndefined();
    expect(await counts()).toEqual(before);
  } finally {
    await strict.stop();
  }
});

test('without SAML_ENTRY_POINT SAML is off: the sign-in page is told so, its routes are 404', async () => {
  const off = await startGateway(loadGatewayConfig({ ...system.env, SAML_ENTRY_POINT: '' }), { clock: system.clock });
  try {
    const api = supertest(off.url);
    expect((await api.get('/auth/saml')).body).toEqual({ enabled: false, name: null });
    for (const path of ['/auth/saml/metadata', '/auth/saml/start']) expect((await api.get(path)).status).toBe(404);
    expect((await api.post('/auth/saml/acs').type('form').send({ SAMLResponse: 'x' })).status).toBe(404);
  } finally {
    await off.stop();
  }
});

test('a post larger than a SAML response (256 KiB) is refused before any XML is parsed (413)', async () => {
  const res = await post('A'.repeat(300 * 1024));
  expect(res.status).toBe(413);
  expect(res.body.code).toBe('PayloadTooLarge');
});

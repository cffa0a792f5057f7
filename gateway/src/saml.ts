import { AppError, serviceUnavailable, unauthorized } from '@kn/contracts';
import { type CacheProvider, type Profile, SAML, ValidateInResponseTo } from '@node-saml/node-saml';
import express, { type Request } from 'express';
import {
  FLOW_TTL_MS,
  finishSignIn,
  flowStore,
  groupsOf,
  languageOf,
  namesOf,
  noStore,
  pageAfterSignIn,
  refusalPage,
  type SignInOptions,
  signInRouter,
} from './sso.ts';

/*
 * Single sign-on with SAML 2.0 (docs/sso.md), service-provider initiated, done by node-saml: GET
 * /auth/saml/start sends the browser to the identity provider with an AuthnRequest (HTTP-Redirect
 * binding); the provider's page posts the signed answer to /auth/saml/acs, the assertion consumer
 * service. node-saml checks the assertion's signature against SAML_IDP_CERT (wrapped and unsigned
 * assertions are refused), its audience, its validity window and that it answers a request of ours;
 * this file adds what node-saml leaves out (the Destination and Recipient, each request and each
 * assertion used once), then signs the person in as OpenID Connect does (sso.ts).
 */

export const SAML_PATH = '/auth/saml';
/** A SAML response is a few kilobytes; nothing larger reaches the XML parser. */
const RESPONSE_LIMIT = '256kb';
/** Clocks of the provider and the gateway may differ by this much. */
const CLOCK_SKEW_MS = 30_000;
/** The NameID format asked for: the same opaque identifier for the person at every sign-in. */
const PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';

/** What a started sign-in keeps until its answer, server-side under the AuthnRequest's ID. */
interface Flow {
  next: string;
  /** When the request was made (ISO 8601), as node-saml checks its age. */
  created: string;
}

/** The attributes the person's details are read from: the common names (Keycloak, Entra ID, Okta, Shibboleth's OIDs). */
const ATTRIBUTES = {
  email: [
    'email',
    'mail',
    'emailAddress',
    'urn:oid:0.9.2342.19200300.100.1.3',
    'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
  ],
  given_name: [
    'firstName',
    'givenName',
    'given_name',
    'urn:oid:2.5.4.42',
    'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname',
  ],
  family_name: [
    'lastName',
    'surname',
    'sn',
    'family_name',
    'urn:oid:2.5.4.4',
    'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname',
  ],
  name: ['displayName', 'name', 'cn', 'urn:oid:2.16.840.1.113730.3.1.241'],
  locale: ['locale', 'preferredLanguage', 'urn:oid:2.16.840.1.113730.3.1.39'],
  groups: ['groups', 'memberOf', 'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups'],
} as const;

/** The first of `names` the assertion carries; a list for `groups`, a single value otherwise. */
function attribute(profile: Profile, names: readonly string[], list = false): unknown {
  const attributes = (profile.attributes ?? {}) as Record<string, unknown>;
  const value = names.map((n) => attributes[n]).find((v) => v !== undefined);
  if (list) return value === undefined ? undefined : [value].flat();
  return Array.isArray(value) ? value[0] : value;
}

/** The provider's keys as node-saml takes them: PEM blocks (a certificate or a public key) as given, else comma-separated base64 bodies. */
const certificates = (setting: string) =>
  setting.includes('-----BEGIN')
    ? (setting.match(/-----BEGIN ([A-Z ]+)-----[\s\S]*?-----END \1-----/g) ?? [])
    : setting
        .split(',')
        .map((c) => c.replace(/\s+/g, ''))
        .filter(Boolean);

export function samlRoutes(options: SignInOptions) {
  const { bus, config, cookie: session, logger } = options;
  const entryPoint = config.SAML_ENTRY_POINT;
  const router = signInRouter(entryPoint === undefined ? undefined : config.SAML_NAME, {
    what: 'SAML single sign-on',
    paths: ['/metadata', '/start', '/acs'],
  });
  if (entryPoint === undefined) return router;
  const idpCert = certificates(config.SAML_IDP_CERT);
  if (idpCert.length === 0) throw new Error('SAML_ENTRY_POINT is set without SAML_IDP_CERT');

  // Every gateway instance sees every request: the answer may reach another instance than the start.
  const flows = flowStore<Flow>(bus, 'saml');
  const assertions = flowStore<never>(bus, 'saml-assertion');
  /** node-saml's store of the IDs of our requests: the flows. It only asks; acs takes the flow once it checked the answer. */
  const requests: CacheProvider = {
    saveAsync: async () => null,
    // A failing bucket is the gateway's trouble (503), not a refused answer: node-saml passes the error on.
    getAsync: async (id) =>
      (
        await flows.peek(id).catch(() => {
          throw serviceUnavailable('the sign-in cannot be checked now; try again');
        })
      )?.created ?? null,
    removeAsync: async () => null,
  };
  const acsUrl = (req: Request) => `${session.origin(req)}${SAML_PATH}/acs`;
  const saml = (req: Request, cacheProvider = requests) => {
    const issuer = config.SAML_ISSUER || `${session.origin(req)}${SAML_PATH}/metadata`;
    return new SAML({
      entryPoint,
      issuer,
      audience: issuer,
      callbackUrl: acsUrl(req),
      idpCert,
      idpIssuer: config.SAML_IDP_ISSUER || undefined,
      identifierFormat: PERSISTENT,
      wantAssertionsSigned: true,
      // The assertion's signature is what counts; providers differ on signing the envelope too.
      wantAuthnResponseSigned: false,
      acceptedClockSkewMs: CLOCK_SKEW_MS,
      validateInResponseTo: ValidateInResponseTo.always,
      requestIdExpirationPeriodMs: FLOW_TTL_MS,
      cacheProvider,
      // The provider chooses how the person authenticates (password, passkey, …).
      disableRequestedAuthnContext: true,
    });
  };

  router.get('/metadata', (req, res) => {
    res.type('application/samlmetadata+xml').send(saml(req).generateServiceProviderMetadata(null, null));
  });

  router.get('/start', async (req, res) => {
    noStore(res);
    await options.throttle(req, res);
    const next = pageAfterSignIn(req.query.next);
    // node-saml names the request's ID as it writes the request: the flow is kept under it.
    const url = await saml(req, {
      saveAsync: async (id, created) => {
        await flows.put(id, { next, created });
        return null;
      },
      getAsync: async () => null,
      removeAsync: async () => null,
    }).getAuthorizeUrlAsync('', undefined, {});
    res.redirect(303, url);
  });

  /*
   * The provider's page posts here from its own site, so this route has no CSRF token or Origin
   * check (nor would a SameSite cookie come along). That is safe: only an assertion the provider
   * signed for this audience and recipient, answering a request this gateway made in the last
   * 10 minutes, is accepted, once; a forged or replayed post signs nobody in.
   */
  router.post('/acs', express.urlencoded({ extended: false, limit: RESPONSE_LIMIT }), async (req, res) => {
    noStore(res);
    const response = typeof req.body?.SAMLResponse === 'string' ? req.body.SAMLResponse : '';
    if (!response) throw unauthorized('the identity provider sent no SAML response: start the sign-in again');
    const ours = saml(req);
    let profile: Profile;
    try {
      const answer = await ours.validatePostResponseAsync({ SAMLResponse: response });
      if (!answer.profile) throw new Error('no assertion');
      profile = answer.profile;
      checkRecipient(profile, acsUrl(req));
    } catch (err) {
      if (err instanceof AppError) throw err;
      logger.info({ request_id: req.id, err: (err as Error).message }, 'SAML response refused');
      throw unauthorized(`the identity provider's answer was refused: ${(err as Error).message}`);
    }
    const assertionId = (profile.getAssertion?.() as { Assertion?: { $?: { ID?: string } } } | undefined)?.Assertion?.$?.ID;
    // Each request is answered once, each assertion accepted once.
    const flow = await flows.take(String(profile.inResponseTo));
    if (!assertionId || !(await assertions.once(`${profile.issuer}\n${assertionId}`)))
      throw unauthorized('this sign-in expired or was used already: start it again');
    const email = String(
      attribute(profile, ATTRIBUTES.email) ?? (profile.nameIDFormat?.endsWith(':emailAddress') ? profile.nameID : ''),
    ).trim();
    if (!email) throw unauthorized('the identity provider did not say your email address (attribute email): ask its administrator');
    const claims = {
      given_name: attribute(profile, ATTRIBUTES.given_name),
      family_name: attribute(profile, ATTRIBUTES.family_name),
      name: attribute(profile, ATTRIBUTES.name),
    };
    const { firstname, lastname } = namesOf(claims, email);
    await finishSignIn(
      { bus, cookie: session, logger },
      req,
      res,
      {
        issuer: profile.issuer,
        subject: profile.nameID,
        email,
        email_verified: config.SAML_EMAIL_VERIFIED === 'true',
        firstname,
        lastname,
        language: languageOf(attribute(profile, ATTRIBUTES.locale)),
        groups: groupsOf(attribute(profile, ATTRIBUTES.groups, true)),
      },
      flow.next,
    );
  });

  router.use(refusalPage);
  return router;
}

/**
 * node-saml checks neither where the answer was sent nor for whom the assertion was confirmed: the
 * Response's Destination (when named) and every SubjectConfirmationData's Recipient (in the signed
 * assertion) must be this ACS, or an assertion meant for another service could be posted here; and
 * each must name the request the Response answers (InResponseTo).
 */
function checkRecipient(profile: Profile, acs: string) {
  const destination = /^(?:<\?xml[^>]*\?>\s*)?<(?:[\w-]+:)?Response\b[^>]*?\sDestination="([^"]*)"/.exec(
    profile.getSamlResponseXml?.() ?? '',
  );
  if (destination && destination[1] !== acs) throw new Error(`the response is for ${destination[1]}`);
  type Confirmation = { SubjectConfirmationData?: Array<{ $?: { Recipient?: string; InResponseTo?: string } }> };
  const assertion = (profile.getAssertion?.() as { Assertion?: { Subject?: Array<{ SubjectConfirmation?: Confirmation[] }> } })?.Assertion;
  const confirmations = (assertion?.Subject?.[0]?.SubjectConfirmation ?? []).flatMap((c) =>
    (c.SubjectConfirmationData ?? []).map((d) => d.$ ?? {}),
  );
  const recipients = confirmations.map((d) => d.Recipient);
  if (recipients.length === 0 || recipients.some((r) => r !== acs))
    throw new Error(`the assertion's recipient is ${recipients.join(', ') || 'not named'}, not ${acs}`);
  // The Response's InResponseTo is outside the signature: the signed assertion must name the same request.
  if (confirmations.some((d) => d.InResponseTo !== profile.inResponseTo)) throw new Error('the assertion answers another request');
}

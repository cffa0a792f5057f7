import { isIP } from 'node:net';
import { BaseConfig, parseConfig } from '@kn/service';
import { z } from 'zod';

// Each setting's description is its documentation: docs/operations.md is generated from it (pnpm config-reference).
export const GatewayConfig = BaseConfig.omit({ DATABASE_URL: true, DATABASE_POOL_SIZE: true }).extend({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080).describe('Where the REST API listens (0: any free port).'),
  HOST: z.string().default('0.0.0.0').describe('The address the REST API listens on.'),
  BODY_LIMIT: z
    .string()
    .default('10mb')
    .describe(
      'Largest JSON body accepted (10 MiB by default: descriptions are unlimited in the interface, this is the practical cap); larger ones get 413.',
    ),
  RPC_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(10_000)
    .describe(
      'How long a service may take to answer before the gateway gives up (ms; the client gets 503 ServiceUnavailable, and the work the service does for the request stops then).',
    ),
  ATTACHMENT_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(25 * 1024 * 1024)
    .describe("Largest attachment upload (bytes), the same setting as the content service's; larger ones get 413 FileTooLarge."),
  AUTH_CACHE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(10_000)
    .describe(
      'How long a resolved token is reused before the users service is asked again (ms; 0: ask every time). Revocations reach every gateway at once over NATS; this bounds a missed one.',
    ),
  WEB_ROOT: z
    .string()
    .default('web/dist')
    .describe(
      'The built web app (`pnpm --filter @kn/web build`), served at `/` beside the API; relative to the working directory. Without its index.html the gateway serves the API alone.',
    ),
  TRUST_PROXY: z
    .string()
    .default('false')
    .refine(isTrustProxy, {
      message: 'must be false, a number of hops, or a comma-separated list of addresses, subnets, loopback, linklocal, uniquelocal',
    })
    .describe(
      'Which proxies in front of the gateway may say who the client is and how it came: its address in `X-Forwarded-For` (what log-ins are limited by), `X-Forwarded-Proto` (https: Secure cookies and HSTS) and `X-Forwarded-Host` (the origin of the web app without `PUBLIC_URL`). `false`, none (the connecting address is the client); a number of hops (`1`: one load balancer, which must append the address it sees); or a comma-separated list of proxy addresses and subnets (`10.0.0.0/8`, also `loopback`, `linklocal`, `uniquelocal`). Trusting more than what is in front lets a client choose its own address.',
    ),
  // Empty is unset: docker-compose.yml hands on an unset variable as the empty string.
  PUBLIC_URL: z
    .preprocess(
      (v) => (v === '' ? undefined : v),
      z
        .url({ protocol: /^https?$/ })
        .refine((v) => !URL.canParse(v) || (new URL(v).pathname === '/' && !new URL(v).search && !new URL(v).hash), {
          message: 'must be a base URL without a path, query or fragment (https://knowledge.example.com)',
        })
        .optional(),
    )
    .describe(
      "The gateway's public base URL, as browsers reach it (`https://knowledge.example.com`): the only origin from which a change with the web app's session cookie is accepted, and an `https` one marks the cookie Secure. Unset: the address each request names (its `Host`, or `X-Forwarded-Host` and `X-Forwarded-Proto` from a proxy `TRUST_PROXY` trusts).",
    ),
  OIDC_ISSUER: providerUrl().describe(
    "Single sign-on (docs/sso.md): the OpenID Connect identity provider's issuer URL (`https://login.example.com/realms/company`); its settings come from `<issuer>/.well-known/openid-configuration`. Unset or empty: single sign-on is off. Its redirect URI is `PUBLIC_URL` (else the address of the request) + `/auth/oidc/callback`.",
  ),
  OIDC_CLIENT_ID: z.string().default('').describe('Single sign-on: the client ID the identity provider gave this network.'),
  OIDC_CLIENT_SECRET: z
    .string()
    .default('')
    .describe('Single sign-on: the client secret of a confidential client (empty: a public client, PKCE alone).'),
  OIDC_NAME: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .default('single sign-on')
    .describe('Single sign-on: the name the sign-in page shows ("Sign in with …"), e.g. the company or its provider.'),
  OIDC_LINK_VERIFIED_EMAIL: z
    .enum(['true', 'false'])
    .default('true')
    .describe(
      "Single sign-on: `true` trusts the provider's `email_verified: true`, so that a first sign-in with the address of an existing account signs in to that account (linked from then on). `false`: no existing account is ever linked by its email address (a person whose address is taken is refused).",
    ),
  OIDC_MCP_AUDIENCE: z
    .string()
    .trim()
    .max(1000)
    .default('')
    .describe(
      "Single sign-on and AI assistants (docs/mcp.md): the audience (`aud`, or `resource`) /mcp requires in the provider's access tokens. Empty: the resource's URL, `PUBLIC_URL` (else the address of the request) + `/mcp`. Set it when the provider cannot put that URL there (Keycloak's audience mapper can; give its value here if it names something else).",
    ),
  OIDC_MCP_FIRST: z
    .enum(['provider', 'gateway'])
    .default('provider')
    .describe(
      "Single sign-on and AI assistants (docs/mcp.md): which authorization server /mcp's metadata names first, where most assistants go. `provider`: the company's (OIDC_ISSUER), the gateway's own after it for clients the provider cannot register; `gateway`: the other way round (a provider without dynamic client registration). Both servers' tokens are accepted either way.",
    ),
  SAML_ENTRY_POINT: providerUrl().describe(
    "Single sign-on with SAML 2.0 (docs/sso.md): the identity provider's single sign-on URL (HTTP-Redirect binding), e.g. Keycloak's `https://login.example.com/realms/company/protocol/saml`. Unset or empty: SAML sign-in is off. The provider reads this network's metadata at `PUBLIC_URL` + `/auth/saml/metadata` and posts its answers to `PUBLIC_URL` + `/auth/saml/acs`.",
  ),
  SAML_IDP_CERT: z
    .string()
    .default('')
    .describe(
      "SAML: the identity provider's signing certificate (PEM, or its base64 body as the provider's metadata shows it); several separated by commas while the provider rolls its key over. Required with `SAML_ENTRY_POINT`: only assertions it signed are accepted.",
    ),
  SAML_IDP_ISSUER: z
    .string()
    .default('')
    .describe("SAML: the identity provider's entity ID; when set, an answer from any other issuer is refused."),
  SAML_ISSUER: z
    .string()
    .default('')
    .describe(
      "SAML: this network's entity ID at the provider (the audience its assertions must name). Empty: `PUBLIC_URL` (else the request's address) + `/auth/saml/metadata`.",
    ),
  SAML_NAME: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .default('SAML single sign-on')
    .describe('SAML: the name the sign-in page shows ("Sign in with …"), e.g. the company or its provider.'),
  SAML_EMAIL_VERIFIED: z
    .enum(['true', 'false'])
    .default('false')
    .describe(
      'SAML: `true` says the provider vouches for the email addresses it sends (SAML has no `email_verified`), so that a first SAML sign-in with the address of an existing account signs in to that account (linked from then on). `false` (default): no existing account is linked by its email address.',
    ),
});
export type GatewayConfig = z.infer<typeof GatewayConfig>;

/** An identity provider's URL: https, or http on this machine (tests); empty is unset. */
function providerUrl() {
  return z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .url({ protocol: /^https?$/ })
      .refine((v) => !URL.canParse(v) || new URL(v).protocol === 'https:' || isLoopback(new URL(v).hostname), {
        message: 'must be an https URL (http only on this machine: 127.0.0.1, ::1, localhost)',
      })
      .optional(),
  );
}

const isLoopback = (host: string) => host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);
function isTrustProxy(value: string) {
  if (value === 'false' || /^\d+$/.test(value)) return true;
  return value.split(',').every((part) => {
    const [address, bits, ...rest] = part.trim().split('/');
    if (PROXY_NAMES.has(address!) && bits === undefined) return true;
    const family = isIP(address!);
    return family !== 0 && rest.length === 0 && (bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128)));
  });
}

/** TRUST_PROXY as express's `trust proxy` setting takes it. */
export const trustProxy = (value: string): boolean | number | string =>
  value === 'false' ? false : /^\d+$/.test(value) ? Number(value) : value;

export const loadConfig = (env?: Record<string, string | undefined>) => parseConfig(GatewayConfig, env);

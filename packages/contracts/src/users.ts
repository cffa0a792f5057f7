import { z } from 'zod';
import { Email, Id, Language, Limit, Offset, Page, QueryBoolean, Role, Roles, Timestamp } from './common.ts';
import { operation } from './endpoint.ts';
import { commaList, enumList, positiveDecimal, trimmedText } from './text.ts';

const Name = trimmedText({ min: 1, max: 191 });
const OptionalText = z.string().max(10000).nullable().optional();
const CustomFields = z
  .record(z.string().min(1).max(191), z.string().max(1000))
  .refine((o) => Object.keys(o).length <= 100, 'at most 100 custom fields')
  .meta({ maxProperties: 100 });

/** A user as the examples of the API documents show one. */
export const UserExample = {
  id: 3,
  firstname: 'Jürgen',
  lastname: 'Müller',
  email: 'j.mueller@example.com',
  auth_type: 'password',
  is_deleted: false,
  is_active: true,
  is_hidden: false,
  is_system: false,
  language: 'de',
  gender: null,
  location: 'Bamberg',
  about: null,
  company: null,
  department: null,
  position: null,
  country: 'DE',
  image: '/api/v1/public/images/user.png',
  first_seen: '2026-11-20T09:15:02.123Z',
  last_seen: '2026-11-21T14:03:55.480Z',
  customfields: {},
  score_level: null,
  score_points: null,
  event_tracking_id: '0f8e3c2a-6b1d-4e7a-9c5f-2d4b8a1e6f30',
};

export const User = z
  .object({
    id: z.number().int(),
    firstname: z.string(),
    lastname: z.string(),
    email: z.string(),
    auth_type: z.string(),
    is_deleted: z.boolean(),
    is_active: z
      .boolean()
      .describe('false: deactivated by the identity provider (SCIM, docs/scim.md): cannot sign in, out of routing, as if deleted'),
    is_hidden: z.boolean(),
    is_system: z.boolean(),
    language: z.string(),
    gender: z.string().nullable(),
    location: z.string().nullable(),
    about: z.string().nullable(),
    company: z.string().nullable(),
    department: z.string().nullable(),
    position: z.string().nullable(),
    country: z.string().nullable(),
    image: z.string(),
    first_seen: Timestamp,
    last_seen: Timestamp.nullable(),
    customfields: z.record(z.string(), z.string()),
    score_level: z.number().int().nullable(),
    score_points: z.number().int().nullable(),
    event_tracking_id: z.string(),
    roles: z.array(Role).optional().describe('only for the user themself and for user_admin'),
  })
  .meta({ id: 'User', examples: [UserExample] });
export type User = z.infer<typeof User>;

/** A user as events carry it: never disguised, with roles. */
export const UserSnapshot = User.extend({
  roles: z.array(Role),
  // Events published before SCIM came lack it: those users were active.
  is_active: User.shape.is_active.default(true),
  group_knowledge_spaces: z
    .array(z.number().int())
    .optional()
    .describe(
      "the knowledge spaces the person's identity-provider groups make them a member of (idp_group_mappings); absent in events from before",
    ),
}).meta({
  id: 'UserSnapshot',
  description: 'the User resource of the API with the email never disguised, and with roles',
});
export type UserSnapshot = z.infer<typeof UserSnapshot>;

const UserFields = {
  firstname: Name,
  lastname: Name,
  language: Language,
  gender: z.string().max(32).nullable().optional(),
  location: OptionalText,
  about: OptionalText,
  company: OptionalText,
  department: OptionalText,
  position: OptionalText,
  country: z
    .string()
    .regex(/^[A-Za-z]{2}$/, 'a two-letter country code')
    .transform((c) => c.toUpperCase())
    .nullable()
    .optional(),
  customfields: CustomFields.optional(),
  is_hidden: z.boolean().optional(),
  is_system: z.boolean().optional(),
  roles: z.array(Role).optional(),
};
const Password = z.string().min(8).max(1024);

export const CreateUser = z.object({ email: Email, password: Password.optional(), ...UserFields });
export const UpdateUser = z
  .object({
    email: Email,
    password: Password,
    ...UserFields,
    current_password: z
      .string()
      .max(1024)
      .describe('the current password: required when users change their own password or email (400 without, 403 when wrong)'),
  })
  .partial();

/** A user as an importer hands it over: no password (they cannot log in until an admin sets one). */
export const ImportedUser = z.object({
  external_id: z.string().min(1).max(191),
  email: Email,
  firstname: z.string().trim().max(191),
  lastname: z.string().trim().max(191),
  language: Language,
  location: z.string().max(10000).nullable().optional(),
  about: z.string().max(100000).nullable().optional(),
  created: z.string().datetime(),
  last_seen: z.string().datetime().nullable().optional(),
  is_system: z.boolean().optional(),
});
export type ImportedUser = z.infer<typeof ImportedUser>;

export const Token = z
  .object({ token: z.string(), expires: Timestamp })
  .meta({ id: 'Token', examples: [{ token: 'kn_3q2J9v0mTQe8yJc1Yw7hXg', expires: '2026-12-20T09:15:02.123Z' }] });

export const UserSortCriteria = ['first_seen', 'lastname', 'firstname', 'id'] as const;
/** What the single sign-on provider said about a person (an ID token's or an access token's claims, checked by the gateway). */
const IdentityClaims = z.object({
  issuer: z.string().min(1).max(1000),
  subject: z.string().min(1).max(255),
  email: Email,
  /** The provider said the address is the person's, and the provider is trusted to say so. */
  email_verified: z.boolean(),
  firstname: z.string().trim().max(191),
  lastname: z.string().trim().max(191),
  language: Language.nullable(),
  /** The ID token's `groups` claim; null when it has none (the roles groups gave stay as they are). */
  groups: z.array(z.string().max(1000)).max(1000).nullable(),
});

const UserSort = commaList(
  `(?:${UserSortCriteria.join('|')})(?:\\.(?:asc|desc))?`,
  `criteria: ${UserSortCriteria.join(', ')}, with .asc or .desc`,
);

export const LanguageSettings = z
  .object({
    content_languages: z.array(Language),
    has_all_languages: z.boolean(),
    interface_language: Language,
    translation_language: Language,
  })
  .meta({ id: 'LanguageSettings' });
export type LanguageSettings = z.infer<typeof LanguageSettings>;

export const CommunicationFlags = {
  email_enabled: true,
  hint_email_enabled: true,
  announcement_email_enabled: true,
  digest_email_enabled: true,
  reminder_email_enabled: false,
} as const;

/** Per-type email notification settings of the interface with their defaults. */
export const NotificationEmailDefaults = {
  new_comment_to_your_question: 'on',
  new_comment_to_question: 'on',
  new_comment_to_solution: 'off',
  new_comment_to_your_solution: 'on',
  new_question_random_user: 'on',
  new_question: 'on',
  question_forwarded: 'on',
  new_solution: 'on',
  solution_rated_by_question_poser: 'on',
  solution_rated: 'on',
  solution_from_comment: 'on',
  new_solution_to_your_question: 'on',
  question_edited: 'off',
  solution_edited: 'on',
  validation_request: 'on',
  validation_confirmation: 'on',
  tag_subscription: 'on',
  mention_in_question: 'on',
  mention_in_solution: 'on',
  mention_in_comment: 'on',
  share_question: 'on',
  share_solution: 'on',
} as const satisfies Record<string, 'on' | 'off'>;
export type NotificationEmailType = keyof typeof NotificationEmailDefaults;

const OnOff = z.enum(['on', 'off']);
/** Accepts the deprecated values and maps them: summarized and never to off, immediately to on. */
const OnOffInput = z
  .enum(['on', 'off', 'summarized', 'never', 'immediately'])
  .transform((v) => (v === 'immediately' ? 'on' : v === 'summarized' || v === 'never' ? 'off' : v));

const mapKeys = <V extends z.ZodType>(keys: readonly string[], schema: V) =>
  Object.fromEntries(keys.map((k) => [k, schema])) as Record<string, V>;

export const EmailSettings = z
  .object({
    ...mapKeys(Object.keys(CommunicationFlags), z.boolean()),
    ...mapKeys(Object.keys(NotificationEmailDefaults), OnOff),
  })
  .meta({ id: 'EmailSettings' });
export type EmailSettings = { [K in keyof typeof CommunicationFlags]: boolean } & {
  [K in NotificationEmailType]: 'on' | 'off';
};
export const EmailSettingsUpdate = z
  .object({
    ...mapKeys(Object.keys(CommunicationFlags), z.boolean()),
    ...mapKeys(Object.keys(NotificationEmailDefaults), OnOffInput),
  })
  .partial();

/** Who may sign in to the web app with a password (docs/sso.md). */
const PasswordSignIn = z.enum(['everyone', 'administrators']);
/** Which identity-provider group gives which roles (docs/scim.md, "Groups and roles"). */
export const IdpGroupMapping = z
  .object({
    group: trimmedText({ min: 1, max: 191 }).describe("the group's displayName at the identity provider (case-insensitive)"),
    roles: z.array(Role).max(20),
    knowledge_spaces: z
      .array(Id)
      .max(1000)
      // Mappings stored before spaces could be mapped lack it.
      .default([])
      .describe('knowledge spaces (ids) the group makes its members members of: reading rights in closed ones'),
  })
  .meta({ id: 'IdpGroupMapping' });
export type IdpGroupMapping = z.infer<typeof IdpGroupMapping>;

export const NetworkSettings = z
  .object({
    network_name: z.string(),
    default_language: Language,
    content_languages: z.array(Language),
    anonymize_users_email: z.boolean(),
    solution_validation_enabled: z.boolean(),
    email_delivery_enabled: z.boolean(),
    user_creation_default_roles: z.array(Role).nullable(),
    webhook_enabled: z.boolean(),
    webhook_url: z.string().nullable(),
    webhook_secret_set: z.boolean().describe('webhook_secret itself is write-only'),
    min_experts: z.number().int(),
    routings_per_expert_per_week: z
      .number()
      .int()
      .describe(
        'questions one person is sent (routed to as an expert) per 7 days at most; routing takes the next best beyond; 0: no limit',
      ),
    rate_limit_per_minute: z
      .number()
      .int()
      .describe('requests one token may send per minute (as a burst, then one per 60/limit seconds); 0: no limit'),
    login_attempts_per_minute: z
      .number()
      .int()
      .describe('POST /auth/login attempts per email address, and failed ones per client address, per minute; 0: no limit'),
    web_sessions_per_user: z
      .number()
      .int()
      .describe('web app sessions (browsers signed in) one person may hold at once; signing in beyond ends their oldest; 0: no limit'),
    web_session_idle_minutes: z
      .number()
      .int()
      .describe('minutes a web app session may go unused before it ends (the person signs in again); 0: only the token lifetime ends it'),
    password_sign_in: PasswordSignIn.default('everyone').describe(
      'who signs in to the web app with a password: `everyone`, or `administrators` only (super_admin, settings_admin, user_admin) once single sign-on (docs/sso.md) signs in everybody else; the API log-in (POST /auth/login) is not affected',
    ),
    idp_group_mappings: z
      .array(IdpGroupMapping)
      // Events published before SCIM came lack it.
      .default([])
      .describe(
        "roles and knowledge-space memberships a member of an identity provider's group gets beside those set by hand (SCIM groups, docs/scim.md)",
      ),
  })
  .meta({ id: 'NetworkSettings' });
export type NetworkSettings = z.infer<typeof NetworkSettings>;

/**
 * The network settings in force until an administrator changes them. Every service that keeps a
 * projection of the settings starts from these (the users service also publishes them on first start).
 */
export const NETWORK_SETTINGS_DEFAULTS: Omit<NetworkSettings, 'webhook_secret_set'> = {
  network_name: 'Knowledge Network',
  default_language: 'en',
  content_languages: ['en', 'de', 'fr', 'es', 'it', 'pt'],
  anonymize_users_email: false,
  solution_validation_enabled: false,
  email_delivery_enabled: true,
  user_creation_default_roles: null,
  webhook_enabled: false,
  webhook_url: null,
  min_experts: 3,
  routings_per_expert_per_week: 10,
  rate_limit_per_minute: 1200,
  login_attempts_per_minute: 10,
  web_sessions_per_user: 10,
  // A week: a session survives a person's days away (an expert following a notification's link),
  // not a browser left behind for longer.
  web_session_idle_minutes: 7 * 24 * 60,
  password_sign_in: 'everyone',
  idp_group_mappings: [],
};

export const NetworkSettingsUpdate = z
  .object({
    network_name: trimmedText({ min: 1, max: 191 }),
    default_language: Language,
    content_languages: z.array(Language).min(1).max(50),
    anonymize_users_email: z.boolean(),
    solution_validation_enabled: z.boolean(),
    email_delivery_enabled: z.boolean(),
    user_creation_default_roles: z.array(Role).min(1).nullable(),
    webhook_enabled: z.boolean(),
    webhook_url: z
      .url({ protocol: /^https?$/ })
      .max(2000)
      .nullable(),
    webhook_secret: z.string().min(16).max(256).nullable(),
    min_experts: z.number().int().min(0).max(100),
    routings_per_expert_per_week: z.number().int().min(0).max(10_000),
    rate_limit_per_minute: z.number().int().min(0).max(1_000_000),
    login_attempts_per_minute: z.number().int().min(0).max(10_000),
    web_sessions_per_user: z.number().int().min(0).max(1000),
    web_session_idle_minutes: z
      .number()
      .int()
      .min(0)
      .max(30 * 24 * 60),
    password_sign_in: PasswordSignIn,
    idp_group_mappings: z.array(IdpGroupMapping).max(1000),
  })
  .partial();

const IdParams = z.object({ id: Id });
const tag = 'Users';

export const ScimToken = z
  .object({
    id: z.string(),
    name: z.string(),
    created: Timestamp,
    created_by: z.number().int(),
    revoked: Timestamp.nullable(),
  })
  .meta({
    id: 'ScimToken',
    examples: [
      { id: '5b0c8f3e-1d2a-4c6b-9e7f-0a1b2c3d4e5f', name: 'Entra ID', created: '2026-12-06T09:15:02.123Z', created_by: 1, revoked: null },
    ],
  });

/** A SCIM request as the gateway hands it on (docs/scim.md); the answer is SCIM's, errors included. */
export const ScimRequest = z.object({
  token: z.string(),
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
  /** Below /scim/v2: `/Users`, `/Users/<id>`, `/Groups`, `/ServiceProviderConfig`, … */
  path: z.string().max(2000),
  query: z.record(z.string(), z.string()),
  body: z.unknown(),
  if_match: z.string().max(200).nullable(),
  /** The public URL of /scim/v2, for meta.location. */
  base_url: z.string(),
});

export const usersOperations = {
  login: operation({
    service: 'users',
    summary: 'Log in with email and password (role api_user required)',
    http: {
      method: 'POST',
      path: '/auth/login',
      auth: 'public',
      tag: 'Authentication',
      answers: {
        401: 'wrong email or password (Unauthorized)',
        403: 'the user lacks the api_user role (Forbidden)',
        429: 'too many failed attempts from this client, or attempts for this email address (RateLimited; Retry-After)',
      },
    },
    body: z.object({ email: z.string().max(191), password: z.string().max(1024) }),
    response: Token,
  }),
  revokeToken: operation({
    service: 'users',
    summary: "Revoke the caller's token",
    http: { method: 'DELETE', path: '/auth/token', status: 204, auth: 'user', tag: 'Authentication' },
  }),
  createTokenOnBehalf: operation({
    service: 'users',
    summary: 'Issue a token for another user',
    http: {
      method: 'POST',
      path: '/auth/tokens',
      status: 201,
      auth: 'user',
      roles: ['on_behalf_user'],
      tag: 'Authentication',
      answers: { 404: 'the user does not exist' },
    },
    body: z.object({ user_id: Id }),
    response: Token,
  }),
  createUser: operation({
    service: 'users',
    summary: 'Create a user',
    http: { method: 'POST', path: '/users', status: 201, auth: 'user', roles: ['user_admin'], tag },
    body: CreateUser,
    response: User,
  }),
  listUsers: operation({
    service: 'users',
    summary: 'List and search users',
    http: {
      method: 'GET',
      path: '/users',
      auth: 'user',
      tag,
      description:
        'query: prefix search over full name, email and custom fields; German umlauts match with and without the umlaut and as ae/oe/ue. Exact matches first unless sort is given.',
    },
    query: z.object({
      query: z.string().max(1000).optional(),
      limit: Limit(10),
      offset: Offset,
      sort: UserSort.optional(),
      role: enumList(Roles).optional(),
      include: enumList(['deleted', 'hidden', 'system']).optional(),
      deanonymize_users_email: QueryBoolean.default(false),
    }),
    response: Page(User),
  }),
  getMe: operation({
    service: 'users',
    summary: 'The calling user',
    http: { method: 'GET', path: '/users/me', auth: 'user', tag },
    response: User,
  }),
  getLanguageSettings: operation({
    service: 'users',
    summary: "The caller's language settings",
    http: { method: 'GET', path: '/users/me/settings', auth: 'user', tag: 'User settings' },
    response: LanguageSettings,
  }),
  updateLanguageSettings: operation({
    service: 'users',
    summary: "Change the caller's language settings",
    http: {
      method: 'PUT',
      path: '/users/me/settings',
      auth: 'user',
      tag: 'User settings',
      answers: { 409: 'a content language is not one of the network (GET /settings names them)' },
    },
    body: LanguageSettings.partial(),
    response: LanguageSettings,
  }),
  getEmailSettings: operation({
    service: 'users',
    summary: "The caller's email communication and notification settings",
    http: { method: 'GET', path: '/users/me/settings/communication/email', auth: 'user', tag: 'User settings' },
    response: EmailSettings,
  }),
  updateEmailSettings: operation({
    service: 'users',
    summary: 'Change email settings (deprecated values summarized and never mean off, immediately means on)',
    http: { method: 'PUT', path: '/users/me/settings/communication/email', auth: 'user', tag: 'User settings' },
    body: EmailSettingsUpdate,
    response: EmailSettings,
  }),
  resetEmailSettings: operation({
    service: 'users',
    summary: 'Restore the default email settings',
    http: {
      method: 'DELETE',
      path: '/users/me/settings/communication/email',
      status: 204,
      auth: 'user',
      tag: 'User settings',
      deprecated: true,
    },
  }),
  listUsersById: operation({
    service: 'users',
    summary: 'Users by id, in the order asked for',
    http: {
      method: 'GET',
      path: '/users/by-id',
      auth: 'user',
      tag,
      description:
        'Every user of the comma-separated ids as GET /users/{id} shows them (deleted and hidden ones included), in one request: a page naming many authors reads them at once. Unknown ids are left out.',
    },
    query: z.object({
      ids: commaList(positiveDecimal(2147483647, 10), 'user ids', 100).pipe(z.array(z.coerce.number<string>())),
    }),
    response: z.object({ items: z.array(User) }),
  }),
  getUser: operation({
    service: 'users',
    summary: 'Get a user',
    http: { method: 'GET', path: '/users/:id', auth: 'user', tag },
    params: IdParams,
    response: User,
  }),
  updateUser: operation({
    service: 'users',
    summary: 'Update a user (the user themself, or user_admin; roles, is_hidden and is_system only user_admin)',
    http: { method: 'PUT', path: '/users/:id', auth: 'user', tag, answers: { 409: 'another user has this email address' } },
    params: IdParams,
    body: UpdateUser,
    response: User,
  }),
  deleteUser: operation({
    service: 'users',
    summary: 'Soft-delete a user; their tokens stop working',
    http: { method: 'DELETE', path: '/users/:id', status: 204, auth: 'user', roles: ['user_admin'], tag },
    params: IdParams,
  }),
  getNetworkSettings: operation({
    service: 'users',
    summary: 'Network settings',
    http: { method: 'GET', path: '/settings', auth: 'user', roles: ['settings_admin'], tag: 'Network settings' },
    response: NetworkSettings,
  }),
  updateNetworkSettings: operation({
    service: 'users',
    summary: 'Change network settings',
    http: {
      method: 'PUT',
      path: '/settings',
      auth: 'user',
      roles: ['settings_admin'],
      tag: 'Network settings',
      answers: { 404: 'a knowledge space that idp_group_mappings names does not exist (`errors` names each)' },
    },
    body: NetworkSettingsUpdate,
    response: NetworkSettings,
  }),
  /** Internal, for importers: creates the users not imported before (by external_id), with their original dates. */
  importUsers: operation({
    service: 'users',
    summary: 'Import users, idempotent by external_id',
    body: z.object({ users: z.array(ImportedUser).min(1).max(1000) }),
    response: z.object({ ids: z.record(z.string(), z.number().int()), created: z.number().int() }),
  }),
  /** Internal: users as the caller sees them (email disguise included), by id; unknown ids are left out. */
  getUsers: operation({
    service: 'users',
    summary: 'Users by id, as the caller sees them',
    body: z.object({ ids: z.array(z.number().int()).max(1000) }),
    response: z.object({ items: z.array(User) }),
  }),
  /** Internal, for the notifications service: the webhook secret (write-only in the API, never in events). */
  getWebhookSecret: operation({
    service: 'users',
    summary: 'The webhook signing secret, or null',
    body: z.object({}),
    response: z.object({ secret: z.string().nullable() }),
  }),
  /** Internal: the gateway resolves a bearer token (and an act-on-behalf header) to the actor. */
  authenticate: operation({
    service: 'users',
    summary: 'Resolve a bearer token to its user',
    body: z.object({
      token: z.string(),
      on_behalf_of: z.union([z.object({ user_id: Id }), z.object({ email: z.string() })]).nullable(),
      /** The token came in the web app's session cookie: only a session token is good there, and only there. */
      session: z.boolean().default(false),
    }),
    response: z.object({
      id: z.number().int(),
      roles: z.array(Role),
      token_id: z.string(),
      /** Who answers for the token: its user, or for an on-behalf token the technical user who had it issued. */
      token_user_id: z.number().int(),
      /** When the token expires: a cached answer must not outlive it. */
      expires: Timestamp,
    }),
  }),
  createScimToken: operation({
    service: 'users',
    summary: 'Mint a SCIM provisioning token (shown once)',
    http: { method: 'POST', path: '/scim/tokens', status: 201, auth: 'user', roles: ['user_admin'], tag },
    body: z.object({ name: trimmedText({ min: 1, max: 191 }).describe('what it is for, e.g. the identity provider') }),
    response: ScimToken.extend({ token: z.string().describe('the bearer token for /scim/v2; shown only in this answer') }),
  }),
  listScimTokens: operation({
    service: 'users',
    summary: 'SCIM provisioning tokens (without their secrets)',
    http: { method: 'GET', path: '/scim/tokens', auth: 'user', roles: ['user_admin'], tag },
    response: z.object({ items: z.array(ScimToken) }),
  }),
  revokeScimToken: operation({
    service: 'users',
    summary: 'Revoke a SCIM provisioning token',
    http: { method: 'DELETE', path: '/scim/tokens/:id', status: 204, auth: 'user', roles: ['user_admin'], tag },
    params: z.object({ id: z.uuid() }),
  }),
  /** Internal: a request to /scim/v2, authenticated by its SCIM token and answered in SCIM's terms. */
  scim: operation({
    service: 'users',
    summary: 'Answer a SCIM 2.0 request',
    body: ScimRequest,
    response: z.object({
      status: z.number().int(),
      body: z.unknown(),
      etag: z.string().nullable(),
      location: z.string().nullable(),
    }),
  }),
  /**
   * Internal: the gateway's web sign-in (docs/api.md, "Web sessions"): email and password for a
   * session token, which any user may have (no api_user role needed) and the gateway keeps in an
   * HttpOnly cookie. It is refused as a bearer token.
   */
  startSession: operation({
    service: 'users',
    summary: 'Sign in to the web app',
    body: z.object({ email: z.string().max(191), password: z.string().max(1024) }),
    response: Token,
  }),
  /**
   * Internal: the gateway's single sign-on (docs/sso.md): a person the identity provider vouched
   * for (an ID token the gateway checked) gets a web session. Their account is the one linked to
   * the issuer and subject; else the live account of a verified email (linked now); else a new one.
   * An unverified email of an existing account is refused (401), and nothing is changed.
   */
  startIdentitySession: operation({
    service: 'users',
    summary: 'Sign in to the web app through the identity provider',
    body: IdentityClaims,
    response: Token.extend({ user_id: Id, created: z.boolean().describe('the account was made by this sign-in') }),
  }),
  /**
   * Internal: /mcp with an access token of the single sign-on provider (docs/mcp.md): the person of
   * the token's issuer and subject. Linked: that account. Not linked: what a first sign-in does
   * (startIdentitySession, without a session) when the token names an email address; 401 without one.
   */
  identityActor: operation({
    service: 'users',
    summary: "The person of an identity provider's access token",
    body: IdentityClaims.extend({ email: Email.nullable() }),
    response: z.object({
      id: z.number().int(),
      roles: z.array(Role),
      created: z.boolean().describe('the account was made by this request'),
    }),
  }),
} as const;

/**
 * Core NATS subject (not a stream) on which the users service tells every gateway to drop cached
 * authentications: `{ user_id }` (roles, password, deletion) or `{ token_id }` (one revoked token).
 */
export const AUTH_REVOKED_SUBJECT = 'auth.revoked';
export const AuthRevoked = z.union([z.object({ user_id: z.number().int() }), z.object({ token_id: z.string() })]);

/** Events of the users service (subjects `users.*`); composed into the catalogue in events.ts. */
export const usersEvents = {
  'users.user.created.v1': z
    .object({ user: UserSnapshot })
    .describe('a user was created (by an administrator, on first start, by an import)'),
  'users.user.updated.v1': z.object({ user: UserSnapshot }).describe('any field, the roles or the password of a user changed'),
  'users.user.deleted.v1': z.object({ user_id: Id }).describe('a user was soft-deleted (their tokens are revoked)'),
  'users.settings.updated.v1': z
    .object({
      user_id: Id,
      language: LanguageSettings,
      email: EmailSettings.describe('resolved: defaults filled in'),
    })
    .describe('a user changed their language or email settings'),
  'users.network-settings.updated.v1': z
    .object({ settings: NetworkSettings.describe('the webhook secret is never in an event: webhook_secret_set says whether there is one') })
    .describe("on the network's first start, and whenever an administrator changes the network settings"),
} as const;

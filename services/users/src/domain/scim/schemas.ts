/**
 * What this SCIM service provider says of itself (RFC 7643 §5–7): the attributes it stores and
 * gives back, and those it only takes (preferredLanguage, locale: writeOnly, since our language
 * is a two-letter code and would not come back as sent).
 */

export const SCHEMA = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  enterprise: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
  list: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  patch: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  search: 'urn:ietf:params:scim:api:messages:2.0:SearchRequest',
  error: 'urn:ietf:params:scim:api:messages:2.0:Error',
  config: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
} as const;

/** Pages of GET /Users and /Groups hold at most this many resources (`count` above it is cut down). */
export const MAX_PAGE = 1000;

type Mutability = 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
interface Attribute {
  name: string;
  type: 'string' | 'boolean' | 'complex' | 'reference' | 'dateTime';
  multiValued?: boolean;
  required?: boolean;
  mutability?: Mutability;
  uniqueness?: 'none' | 'server';
  caseExact?: boolean;
  subAttributes?: Attribute[];
  referenceTypes?: string[];
  description: string;
}

/** The RFC's defaults spelled out: clients read every characteristic. */
function attribute(a: Attribute): Record<string, unknown> {
  return {
    name: a.name,
    type: a.type,
    multiValued: a.multiValued ?? false,
    description: a.description,
    required: a.required ?? false,
    caseExact: a.caseExact ?? false,
    mutability: a.mutability ?? 'readWrite',
    returned: a.mutability === 'writeOnly' ? 'never' : 'default',
    uniqueness: a.uniqueness ?? 'none',
    ...(a.referenceTypes ? { referenceTypes: a.referenceTypes } : {}),
    ...(a.subAttributes ? { subAttributes: a.subAttributes.map(attribute) } : {}),
  };
}

const text = (name: string, description: string, more: Partial<Attribute> = {}): Attribute => ({
  name,
  type: 'string',
  description,
  ...more,
});

const userAttributes: Attribute[] = [
  text('userName', 'the email address people sign in with, or another unique name when emails holds the address', {
    required: true,
    uniqueness: 'server',
  }),
  {
    name: 'name',
    type: 'complex',
    description: 'first and last name',
    subAttributes: [text('givenName', 'first name'), text('familyName', 'last name')],
  },
  text('displayName', 'first and last name', { mutability: 'readOnly' }),
  text('title', 'position'),
  {
    name: 'emails',
    type: 'complex',
    multiValued: true,
    // A person of the network has an email address: notifications go there.
    required: true,
    description: 'the one email address of the person (primary, or the first)',
    // type and primary are taken (the primary address, else the first) but not kept.
    subAttributes: [text('value', 'the address')],
  },
  // Taken as the language (its first two letters), which our API shows; not given back as sent.
  text('preferredLanguage', 'sets the language: de-CH and de_CH are de; other values are ignored', { mutability: 'writeOnly' }),
  text('locale', 'sets the language when preferredLanguage does not', { mutability: 'writeOnly' }),
  { name: 'active', type: 'boolean', description: 'false: cannot sign in, and out of routing and expert search' },
  {
    name: 'groups',
    type: 'complex',
    multiValued: true,
    mutability: 'readOnly',
    description: 'the groups the person is a member of (changed through the groups)',
    subAttributes: [
      text('value', 'the group id', { mutability: 'readOnly' }),
      text('display', 'the group displayName', { mutability: 'readOnly' }),
      { name: '$ref', type: 'reference', referenceTypes: ['Group'], mutability: 'readOnly', description: 'the group' },
    ],
  },
];

const enterpriseAttributes: Attribute[] = [text('department', 'department'), text('organization', 'company')];

const groupAttributes: Attribute[] = [
  text('displayName', 'the group name the idp_group_mappings setting refers to', { required: true, uniqueness: 'server' }),
  {
    name: 'members',
    type: 'complex',
    multiValued: true,
    description: 'users (groups cannot be members)',
    subAttributes: [
      text('value', 'the user id', { mutability: 'immutable' }),
      { name: '$ref', type: 'reference', referenceTypes: ['User'], mutability: 'immutable', description: 'the user' },
      text('display', 'the user displayName', { mutability: 'readOnly' }),
    ],
  },
];

export function schemaDocuments(base: string) {
  const doc = (id: string, name: string, description: string, attributes: Attribute[]) => ({
    schemas: [SCHEMA.schema],
    id,
    name,
    description,
    attributes: attributes.map(attribute),
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${id}` },
  });
  return [
    doc(SCHEMA.user, 'User', 'a person of the network', userAttributes),
    doc(SCHEMA.enterprise, 'EnterpriseUser', 'the person in the company', enterpriseAttributes),
    doc(SCHEMA.group, 'Group', 'a group of the identity provider', groupAttributes),
  ];
}

export function resourceTypes(base: string) {
  return [
    {
      schemas: [SCHEMA.resourceType],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'a person of the network',
      schema: SCHEMA.user,
      schemaExtensions: [{ schema: SCHEMA.enterprise, required: false }],
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
    },
    {
      schemas: [SCHEMA.resourceType],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      description: 'a group of the identity provider',
      schema: SCHEMA.group,
      schemaExtensions: [],
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/Group` },
    },
  ];
}

export function serviceProviderConfig(base: string) {
  return {
    schemas: [SCHEMA.config],
    documentationUri: `${base.replace(/\/scim\/v2$/, '')}/api/v1/docs`,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_PAGE },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'Provisioning token',
        description: 'Authorization: Bearer <token minted with POST /api/v1/scim/tokens>',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

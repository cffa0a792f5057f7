import { Email } from '@kn/contracts';
import type { UserRow } from '../../db/schema.ts';
import { attribute } from './filter.ts';
import { SCHEMA } from './schemas.ts';

/** A SCIM error answer (RFC 7644 §3.12). */
export class ScimError extends Error {
  readonly status: number;
  readonly scimType?: string;
  constructor(status: number, detail: string, scimType?: string) {
    super(detail);
    this.status = status;
    this.scimType = scimType;
  }
  toBody() {
    return {
      schemas: [SCHEMA.error],
      status: String(this.status),
      ...(this.scimType ? { scimType: this.scimType } : {}),
      detail: this.message,
    };
  }
}

export const invalidValue = (detail: string) => new ScimError(400, detail, 'invalidValue');

/** meta.version and the ETag: changes with every change of the resource. */
export const versionOf = (updated: Date) => `W/"${updated.getTime().toString(36)}"`;

type Json = Record<string, unknown>;
export interface GroupRef {
  id: string;
  display_name: string;
}

export function userResource(row: UserRow, groups: GroupRef[], base: string): Json {
  const location = `${base}/Users/${row.id}`;
  const displayName = `${row.firstname} ${row.lastname}`.trim();
  return {
    schemas: [SCHEMA.user, SCHEMA.enterprise],
    id: String(row.id),
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    userName: row.user_name ?? row.email,
    // What is not there is left out (RFC 7643 §2.5), so that a removed attribute reads as removed.
    ...(displayName ? { name: { givenName: row.firstname, familyName: row.lastname }, displayName } : {}),
    ...(row.position ? { title: row.position } : {}),
    // The address as it was given; a userName that stands in for a missing address is no email.
    ...(Email.safeParse(row.email).success ? { emails: [{ value: row.email }] } : {}),
    active: row.is_active,
    groups: groups.map((g) => ({ value: g.id, display: g.display_name, $ref: `${base}/Groups/${g.id}` })),
    ...(row.department || row.company
      ? {
          [SCHEMA.enterprise]: {
            ...(row.department ? { department: row.department } : {}),
            ...(row.company ? { organization: row.company } : {}),
          },
        }
      : {}),
    meta: {
      resourceType: 'User',
      created: row.created.toISOString(),
      lastModified: row.updated.toISOString(),
      location,
      version: versionOf(row.updated),
    },
  };
}

/** What a User resource sets in our user (read-only and unknown attributes are ignored). */
export interface UserInput {
  email: string;
  user_name: string | null;
  firstname: string;
  lastname: string;
  language: string | null;
  external_id: string | null;
  is_active: boolean;
  position: string | null;
  department: string | null;
  company: string | null;
}

const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

function optionalString(value: unknown, name: string, max: number): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw invalidValue(`${name} must be a string`);
  if (value.length > max) throw invalidValue(`${name} is at most ${max} characters`);
  return value.trim();
}

/** true/false, and the strings "True"/"False" as Entra ID sends them in PATCH. */
function bool(value: unknown, name: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw invalidValue(`${name} must be true or false`);
}

/** Requires the resource's core schema in `schemas`, as RFC 7643 §3 does of every resource. */
export function requireSchema(resource: unknown, schema: string): Json {
  if (!isObject(resource)) throw new ScimError(400, 'the body must be a JSON object', 'invalidSyntax');
  const schemas = attribute(resource, 'schemas');
  if (!Array.isArray(schemas) || !schemas.some((s) => typeof s === 'string' && s.toLowerCase() === schema.toLowerCase()))
    throw new ScimError(400, `schemas must include ${schema}`, 'invalidSyntax');
  return resource;
}

export function userInput(resource: Json): UserInput {
  const get = (name: string) => attribute(resource, name);
  const userName = optionalString(get('userName'), 'userName', 191);
  if (!userName) throw invalidValue('userName is required');
  const emails = get('emails');
  if (emails !== undefined && emails !== null && !Array.isArray(emails)) throw invalidValue('emails must be a list');
  const listed = (emails ?? []).filter(isObject);
  const chosen = listed.find((e) => bool(attribute(e, 'primary'), 'emails.primary')) ?? listed[0];
  const address = chosen ? optionalString(attribute(chosen, 'value'), 'emails.value', 191) : null;
  // Without an address in emails the userName is the address: people sign in with it.
  if (address !== null && !Email.safeParse(address).success) throw invalidValue('emails: the value must be an email address');
  const email = address ?? userName;
  const name = get('name');
  if (name !== undefined && name !== null && !isObject(name)) throw invalidValue('name must be an object');
  let firstname = optionalString(name ? attribute(name, 'givenName') : undefined, 'name.givenName', 191) ?? '';
  let lastname = optionalString(name ? attribute(name, 'familyName') : undefined, 'name.familyName', 191) ?? '';
  if (!firstname && !lastname) {
    const words = (optionalString(get('displayName'), 'displayName', 383) ?? '').split(/\s+/).filter(Boolean);
    firstname = words[0] ?? '';
    lastname = words.slice(1).join(' ');
  }
  // preferredLanguage `de-CH` or locale `de_CH`: our language is the two-letter code.
  const spoken = optionalString(get('preferredLanguage'), 'preferredLanguage', 64) ?? optionalString(get('locale'), 'locale', 64);
  const language = spoken && /^[a-z]{2}(?:$|[-_])/i.test(spoken) ? spoken.slice(0, 2).toLowerCase() : null;
  const enterprise = get(SCHEMA.enterprise);
  if (enterprise !== undefined && enterprise !== null && !isObject(enterprise))
    throw invalidValue(`${SCHEMA.enterprise} must be an object`);
  return {
    email,
    user_name: userName.toLowerCase() === email.toLowerCase() ? null : userName,
    firstname: firstname.slice(0, 191),
    lastname: lastname.slice(0, 191),
    language,
    external_id: optionalString(get('externalId'), 'externalId', 191),
    is_active: bool(get('active'), 'active') ?? true,
    position: optionalString(get('title'), 'title', 10000),
    department: enterprise ? optionalString(attribute(enterprise, 'department'), 'department', 10000) : null,
    company: enterprise ? optionalString(attribute(enterprise, 'organization'), 'organization', 10000) : null,
  };
}

export interface GroupRow {
  id: string;
  display_name: string;
  external_id: string | null;
  created: Date;
  updated: Date;
}

export function groupResource(row: GroupRow, members: Array<{ id: number; display: string }>, base: string): Json {
  return {
    schemas: [SCHEMA.group],
    id: row.id,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    displayName: row.display_name,
    members: members.map((m) => ({ value: String(m.id), ...(m.display ? { display: m.display } : {}), $ref: `${base}/Users/${m.id}` })),
    meta: {
      resourceType: 'Group',
      created: row.created.toISOString(),
      lastModified: row.updated.toISOString(),
      location: `${base}/Groups/${row.id}`,
      version: versionOf(row.updated),
    },
  };
}

export function groupInput(resource: Json) {
  const displayName = optionalString(attribute(resource, 'displayName'), 'displayName', 191);
  if (!displayName) throw invalidValue('displayName is required');
  const members = attribute(resource, 'members') ?? [];
  if (!Array.isArray(members)) throw invalidValue('members must be a list');
  const ids = members.map((m) => {
    const value = isObject(m) ? attribute(m, 'value') : undefined;
    if (typeof value !== 'string' || !/^[1-9]\d{0,9}$/.test(value) || Number(value) > 2147483647)
      throw invalidValue('each member needs the value of a user id');
    return Number(value);
  });
  if (ids.length > 100_000) throw invalidValue('a group has at most 100000 members');
  return {
    display_name: displayName,
    external_id: optionalString(attribute(resource, 'externalId'), 'externalId', 191),
    member_ids: [...new Set(ids)],
  };
}

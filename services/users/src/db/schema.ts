import type { BusTables } from '@kn/bus';
import type { Json } from '@kn/db';
import type { Generated, Selectable } from 'kysely';

export interface UsersTable {
  id: Generated<number>;
  email: string;
  firstname: string;
  lastname: string;
  language: string;
  gender: string | null;
  location: string | null;
  about: string | null;
  company: string | null;
  department: string | null;
  position: string | null;
  country: string | null;
  customfields: Json<Record<string, string>>;
  roles: string[];
  auth_type: Generated<string>;
  password_hash: string | null;
  is_deleted: Generated<boolean>;
  is_hidden: Generated<boolean>;
  is_system: Generated<boolean>;
  first_seen: Generated<Date>;
  last_seen: Date | null;
  event_tracking_id: Generated<string>;
  /** Where an imported user came from, for example `stackexchange:beer:user:7`. */
  external_id: string | null;
  /** Folded words of name, email and custom fields, space-delimited on both ends (see domain/search.ts). */
  search_text: string;
  /** The same without the email's words: what callers who see emails disguised search in. */
  search_text_without_email: string;
  /** Only the values the user changed; defaults are resolved on read. */
  language_settings: Json<Record<string, unknown>>;
  email_settings: Json<Record<string, unknown>>;
  created: Generated<Date>;
  updated: Generated<Date>;
  /** SCIM's `active`: false ends every session and token and keeps the person out of routing, as deletion does. */
  is_active: Generated<boolean>;
  /** The roles that only the person's identity-provider groups give them (domain/group-roles.ts). */
  group_roles: Generated<string[]>;
  /** The knowledge spaces the person's groups make them a member of, as last published (group_knowledge_spaces). */
  group_spaces: Generated<number[]>;
  /** SCIM's userName where it is not the email address (null: the email is the userName). */
  user_name: Generated<string | null>;
}

export interface TokensTable {
  id: Generated<string>;
  user_id: number;
  /** sha256 of the token; the token itself is never stored. */
  token_hash: string;
  /** session: signed in through the web app (a cookie of the gateway's), never valid as a bearer token. */
  kind: 'login' | 'on_behalf' | 'session';
  issued_by: number | null;
  created: Generated<Date>;
  expires: Date;
  revoked: Date | null;
  /** The last authenticated request with it, written at most once a minute (web sessions only). */
  last_used: Generated<Date>;
}

export interface NetworkSettingsTable {
  id: Generated<number>;
  /** Only the values an administrator set; defaults are resolved on read. */
  settings: Json<Record<string, unknown>>;
  webhook_secret: string | null;
  updated: Generated<Date>;
}

/** A person of an identity provider (single sign-on, docs/sso.md) and the account they sign in to. */
export interface IdentitiesTable {
  issuer: string;
  subject: string;
  user_id: number;
  created: Generated<Date>;
}

/** A group of the company's identity provider, provisioned over SCIM. */
export interface GroupsTable {
  id: Generated<string>;
  display_name: string;
  external_id: string | null;
  created: Generated<Date>;
  updated: Generated<Date>;
}

export interface GroupMembersTable {
  group_id: string;
  user_id: number;
}

export interface ScimTokensTable {
  id: Generated<string>;
  name: string;
  /** sha256 of the token; the token itself is shown once and never stored. */
  token_hash: string;
  created_by: number;
  created: Generated<Date>;
  revoked: Date | null;
}

export interface UsersSchema extends BusTables {
  users: UsersTable;
  groups: GroupsTable;
  group_members: GroupMembersTable;
  scim_tokens: ScimTokensTable;
  tokens: TokensTable;
  identities: IdentitiesTable;
  network_settings: NetworkSettingsTable;
}

export type UserRow = Selectable<UsersTable>;

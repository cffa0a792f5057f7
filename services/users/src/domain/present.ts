import type { Role, User, UserSnapshot } from '@kn/contracts';
import type { UserRow } from '../db/schema.ts';

/** The same default picture for everyone: the interface keeps the field, we keep no images. */
export const DEFAULT_USER_IMAGE = '/api/v1/public/images/user.png';

/** `jane.doe@example.com` → `j***@example.com`. */
export function disguiseEmail(email: string) {
  const at = email.lastIndexOf('@');
  return at <= 0 ? '***' : `${email[0]}***${email.slice(at)}`;
}

export function toSnapshot(row: UserRow): UserSnapshot {
  return {
    id: row.id,
    firstname: row.firstname,
    lastname: row.lastname,
    email: row.email,
    auth_type: row.auth_type,
    is_deleted: row.is_deleted,
    is_active: row.is_active,
    is_hidden: row.is_hidden,
    is_system: row.is_system,
    language: row.language,
    gender: row.gender,
    location: row.location,
    about: row.about,
    company: row.company,
    department: row.department,
    position: row.position,
    country: row.country,
    image: DEFAULT_USER_IMAGE,
    first_seen: row.first_seen.toISOString(),
    last_seen: row.last_seen?.toISOString() ?? null,
    customfields: row.customfields,
    score_level: null,
    score_points: null,
    event_tracking_id: row.event_tracking_id,
    roles: row.roles as Role[],
    group_knowledge_spaces: row.group_spaces,
  };
}

export interface Viewer {
  id: number;
  roles: readonly string[];
}

export const isUserAdmin = (viewer: Viewer) => viewer.roles.includes('user_admin') || viewer.roles.includes('super_admin');

interface EmailOptions {
  anonymize: boolean;
  deanonymize?: boolean;
}

/**
 * Whether the viewer sees other users' real emails: when the network does not disguise them, or
 * for a user_admin who asked for it explicitly (deanonymize_users_email).
 */
export const seesOthersEmails = (viewer: Viewer, options: EmailOptions) =>
  !options.anonymize || (isUserAdmin(viewer) && options.deanonymize === true);

/**
 * A user as a caller sees them. The email is disguised unless the viewer sees others' emails or
 * is the user themself. Roles are shown to the user themself and to user admins only.
 */
export function present(row: UserRow, viewer: Viewer, options: EmailOptions): User {
  // The groups' spaces are the events' business (content applies them), not a field of the API's User.
  const { roles, group_knowledge_spaces: _spaces, ...user } = toSnapshot(row);
  const self = viewer.id === row.id;
  const admin = isUserAdmin(viewer);
  const showEmail = self || seesOthersEmails(viewer, options);
  return {
    ...user,
    email: showEmail ? user.email : disguiseEmail(user.email),
    ...(self || admin ? { roles } : {}),
  };
}

import type { IdpGroupMapping, Role } from '@kn/contracts';

/** A mapping as stored: those stored before spaces could be mapped have no knowledge_spaces. */
type GroupMapping = Pick<IdpGroupMapping, 'group' | 'roles'> & { knowledge_spaces?: readonly number[] };

/** The mappings of the groups a person is in (group names compared case-insensitively, as the identity providers treat them). */
function mappingsOf<M extends GroupMapping>(groups: readonly string[], mappings: readonly M[]) {
  const held = new Set(groups.map((g) => g.trim().toLowerCase()));
  return mappings.filter((mapping) => held.has(mapping.group.trim().toLowerCase()));
}

/**
 * The roles that a person's identity-provider groups give them under the network's
 * idp_group_mappings: every role of every mapping whose group they are in. One rule for SCIM
 * groups and for the groups of an OpenID Connect or SAML sign-in.
 */
export function rolesFor(groups: readonly string[], mappings: readonly GroupMapping[]): Role[] {
  return [...new Set(mappingsOf(groups, mappings).flatMap((m) => m.roles))].sort();
}

/**
 * The knowledge spaces the groups make the person a member of (reading rights in closed ones):
 * every space of every mapping whose group they are in, in id order. The content service keeps
 * these memberships apart from those set by hand, so leaving the group takes away only these.
 */
export function spacesFor(groups: readonly string[], mappings: readonly GroupMapping[]): number[] {
  return [...new Set(mappingsOf(groups, mappings).flatMap((m) => m.knowledge_spaces ?? []))].sort((a, b) => a - b);
}

/**
 * A person's roles after their groups changed: the roles set by hand (what they hold beyond what
 * groups gave them before) and those their groups give now. `granted` is what only the groups give,
 * so that leaving the group takes away exactly that and never a role an administrator set.
 */
export function withGroupRoles(current: { roles: readonly string[]; group_roles: readonly string[] }, fromGroups: readonly Role[]) {
  const byHand = current.roles.filter((r) => !current.group_roles.includes(r));
  const granted = fromGroups.filter((r) => !byHand.includes(r));
  return { roles: [...byHand, ...granted], group_roles: granted };
}

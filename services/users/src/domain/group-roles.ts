import type { IdpGroupMapping, Role } from '@kn/contracts';

/**
 * The roles that a person's identity-provider groups give them under the network's
 * idp_group_mappings: every role of every mapping whose group they are in (group names compared
 * case-insensitively, as the identity providers treat them). One rule for SCIM groups and for the
 * groups claim of an OpenID Connect sign-in.
 */
export function rolesFor(groups: readonly string[], mappings: readonly IdpGroupMapping[]): Role[] {
  const held = new Set(groups.map((g) => g.trim().toLowerCase()));
  const roles = new Set<Role>();
  for (const mapping of mappings) if (held.has(mapping.group.trim().toLowerCase())) for (const role of mapping.roles) roles.add(role);
  return [...roles].sort();
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

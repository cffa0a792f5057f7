import { type Actor, ANALYTICS_ADMIN_ROLES, ANALYTICS_ROLES } from '@kn/contracts';
import { sql } from '@kn/db';

/** Who the caller is to the figures: whether they see everything, and whether they see the whole network's queue. */
export function viewer(actor: Actor) {
  const admin = actor.roles.some((r) => (ANALYTICS_ADMIN_ROLES as readonly string[]).includes(r));
  const manager = admin || actor.roles.some((r) => (ANALYTICS_ROLES as readonly string[]).includes(r));
  return { id: actor.id, admin, manager };
}
export type Viewer = ReturnType<typeof viewer>;

/**
 * The questions (alias `q`) a viewer may count: administrators all; everybody else those outside
 * closed spaces and those of the closed spaces they are a member of (by hand or by their groups).
 */
export const visibleQuestion = (v: Viewer) =>
  v.admin
    ? sql<boolean>`true`
    : sql<boolean>`(q.knowledge_space_id is null or not exists (
        select 1 from spaces ks
         where ks.id = q.knowledge_space_id and ks.is_closed
           and not ${v.id} = any(ks.member_ids)
           and not ks.id = any(coalesce((select space_ids from people where id = ${v.id}), '{}'))))`;

import type { Actor } from '@kn/contracts';

/** Who asks, as far as what they may read goes. */
export type Viewer = Pick<Actor, 'id' | 'roles'>;

/** Nobody in particular: reads no closed space (an internal call without a caller). */
export const NOBODY: Viewer = { id: -1, roles: [] };

/**
 * The closed knowledge spaces whose content the viewer may not read: those they are not a member
 * of; none for content administrators. The content service's rule (access.ts `hiddenSpaces`), which
 * its question lists apply: the search index knows the spaces and their members from the events.
 */
export function hiddenSpacesOf(closed: Iterable<readonly [number, ReadonlySet<number>]>, viewer: Viewer): number[] {
  if (viewer.roles.includes('content_admin') || viewer.roles.includes('super_admin')) return [];
  const out: number[] = [];
  for (const [id, members] of closed) if (!members.has(viewer.id)) out.push(id);
  return out.sort((a, b) => a - b);
}

import type { Notification, User } from '@kn/contracts';
import type { NotificationRow, UserProjectionRow } from '../db/schema.ts';

/** `jane.doe@example.com` → `j***@example.com` (docs/api.md, "Users"; as the users service does it). */
export function disguiseEmail(email: string) {
  const at = email.lastIndexOf('@');
  return at <= 0 ? '***' : `${email[0]}***${email.slice(at)}`;
}

/** A projected user as `viewerId` may see them: the email disguised when the network says so (except their own). */
export function presentUser(user: UserProjectionRow | undefined, viewerId: number | null, anonymize: boolean): User | null {
  if (!user) return null;
  const snapshot = user.snapshot as User;
  return { ...snapshot, email: anonymize && viewerId !== user.id ? disguiseEmail(snapshot.email) : snapshot.email };
}

/** The cause is shown unless it is the system or the anonymous question poser. */
export const senderId = (row: Pick<NotificationRow, 'anonymous' | 'actor_id'>) => (row.anonymous ? null : row.actor_id);

export function presentNotification(row: NotificationRow, sender: User | null): Notification {
  return {
    id: row.id,
    question_id: row.question_id,
    content: row.content,
    url: row.url,
    icon: row.icon,
    message: row.message,
    target_id: row.target_id,
    target_type: row.target_type,
    type: row.type,
    is_read: row.is_read,
    is_seen: row.is_seen,
    user: sender,
    created: row.created.toISOString(),
  };
}

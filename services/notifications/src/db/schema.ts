import type { BusTables } from '@kn/bus';
import type { NotificationTargetType, NotificationType, UserSnapshot } from '@kn/contracts';
import type { Json } from '@kn/db';
import type { Generated, Selectable } from 'kysely';

/** Users as the users service announces them (`users.*` events). */
export interface UserProjectionTable {
  id: number;
  email: string;
  firstname: string;
  lastname: string;
  is_deleted: boolean;
  /** The UserSnapshot without roles (and groups' spaces): what `Notification.user` shows. */
  snapshot: Json<Omit<UserSnapshot, 'roles' | 'group_knowledge_spaces'>>;
  /** From `users.settings.updated.v1`; null until the user changed a setting (defaults apply). */
  interface_language: string | null;
  email_settings: Json<Record<string, unknown>> | null;
}

export interface NetworkProjectionTable {
  id: number;
  settings: Json<Record<string, unknown>>;
}

export interface SpaceProjectionTable {
  id: number;
  is_closed: boolean;
  member_ids: number[];
}

/** Published solutions (authors get question_changed_to_solution_author) and who rated them. */
export interface SolutionProjectionTable {
  id: number;
  question_id: number;
  author_id: number;
  raters: number[];
}

export interface NotificationsTable {
  id: Generated<number>;
  /** The receiver. */
  user_id: number;
  /** Who caused it (null: the system); shown unless `anonymous`. */
  actor_id: number | null;
  anonymous: boolean;
  type: NotificationType;
  target_type: NotificationTargetType;
  target_id: number;
  question_id: number;
  content: string;
  url: string;
  icon: string;
  /** The sender's own words (forwards and shares). */
  message: string | null;
  /** The target as the event carried it (webhook `target_object`). */
  target_object: Json<Record<string, unknown>>;
  /** The event that caused it: one notification per receiver and event. */
  event_id: string;
  is_read: Generated<boolean>;
  is_seen: Generated<boolean>;
  created: Generated<Date>;
}

export interface EmailOutboxTable {
  id: Generated<number>;
  user_id: number;
  kind: 'notification' | 'digest' | 'analytics_digest';
  notification_id: number | null;
  /** Digest: `YYYY-MM` of the month it covers; analytics digest: the Monday of its week. */
  period: string | null;
  /** Analytics digest: its figures (AnalyticsDigest). */
  content: Json<unknown> | null;
  status: Generated<'pending' | 'sent' | 'failed' | 'skipped'>;
  attempts: Generated<number>;
  next_attempt: Generated<Date>;
  /** A worker owns the row until then. */
  locked_until: Date | null;
  last_error: string | null;
  created: Generated<Date>;
  sent: Date | null;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  event_id: Generated<string>;
  notification_id: number;
  url: string;
  status: Generated<'pending' | 'delivered' | 'failed'>;
  attempts: Generated<number>;
  next_attempt: Generated<Date>;
  locked_until: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  created: Generated<Date>;
  delivered: Date | null;
}

export interface NotificationsSchema extends BusTables {
  user_projection: UserProjectionTable;
  network_projection: NetworkProjectionTable;
  space_projection: SpaceProjectionTable;
  solution_projection: SolutionProjectionTable;
  notifications: NotificationsTable;
  email_outbox: EmailOutboxTable;
  webhook_deliveries: WebhookDeliveriesTable;
}

export type NotificationRow = Selectable<NotificationsTable>;
export type UserProjectionRow = Selectable<UserProjectionTable>;

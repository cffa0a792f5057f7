import { z } from 'zod';
import { AnalyticsDigest } from './analytics.ts';
import { Id, Limit, Offset, Page, QueryBoolean, Timestamp } from './common.ts';
import { operation } from './endpoint.ts';
import { User, UserExample } from './users.ts';

/** Every notification type: the email-setting names of the interface plus the types we added (docs/notifications.md). */
export const NotificationTypes = [
  'new_comment_to_your_question',
  'new_comment_to_question',
  'new_comment_to_solution',
  'new_comment_to_your_solution',
  'new_question_random_user',
  'new_question',
  'question_forwarded',
  'new_solution',
  'solution_rated_by_question_poser',
  'solution_rated',
  'solution_from_comment',
  'new_solution_to_your_question',
  'question_edited',
  'solution_edited',
  'validation_request',
  'validation_confirmation',
  'tag_subscription',
  'mention_in_question',
  'mention_in_solution',
  'mention_in_comment',
  'share_question',
  'share_solution',
  'validation_new_expert',
  'question_changed_to_solution_author',
  'solution_changed_to_question_poser',
  'solution_changed_to_solution_rater',
  'solution_expired',
] as const;
export type NotificationType = (typeof NotificationTypes)[number];
export const NotificationTargetTypes = ['question', 'solution', 'comment'] as const;
export type NotificationTargetType = (typeof NotificationTargetTypes)[number];

export const Notification = z
  .object({
    id: z.number().int(),
    question_id: z.number().int(),
    content: z.string(),
    url: z.string(),
    icon: z.string(),
    message: z.string().nullable().describe('what the sender wrote with a forward or share; null for other kinds'),
    target_id: z.number().int(),
    target_type: z.enum(NotificationTargetTypes),
    type: z.enum(NotificationTypes),
    is_read: z.boolean(),
    is_seen: z.boolean(),
    user: User.nullable().describe('the user who caused it; null when that is the anonymous question poser or the system'),
    created: Timestamp,
  })
  .meta({
    id: 'Notification',
    examples: [
      {
        id: 88,
        question_id: 42,
        content: 'Jürgen Müller answered your question “Which hops give a citrus aroma?”',
        url: '/questions/42#solution-7',
        icon: '/api/v1/public/images/notifications/solution.png',
        message: null,
        target_id: 7,
        target_type: 'solution',
        type: 'new_solution_to_your_question',
        is_read: false,
        is_seen: false,
        user: UserExample,
        created: '2026-11-21T14:03:55.480Z',
      },
    ],
  });
export type Notification = z.infer<typeof Notification>;

export const WebhookDelivery = z
  .object({
    id: z.number().int(),
    event_id: z.string().describe('sent as X-Event-Id; the same for every attempt'),
    notification_id: z.number().int(),
    url: z.string(),
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.number().int(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    created: Timestamp,
    next_attempt: Timestamp.nullable(),
    delivered: Timestamp.nullable(),
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

const OnBehalf = { user_id: Id.optional().describe('another user (role on_behalf_user)') };
const Count = z.object({ notifications: z.number().int() });
const Updated = z.object({ updated: z.number().int() });
const IdParams = z.object({ id: Id });
const tag = 'Notifications';

/** Operations of the notifications service: notifications, webhook deliveries. Static paths before `:id`. */
export const notificationsOperations = {
  countUnreadNotifications: operation({
    service: 'notifications',
    summary: 'Number of unread notifications of the caller (or of user_id)',
    http: { method: 'GET', path: '/notifications/count', auth: 'user', tag },
    query: z.object(OnBehalf),
    response: Count,
  }),
  countUnseenNotifications: operation({
    service: 'notifications',
    summary: 'Number of unseen notifications of the caller (or of user_id)',
    http: { method: 'GET', path: '/notifications/count/unseen', auth: 'user', tag },
    query: z.object(OnBehalf),
    response: Count,
  }),
  listNotifications: operation({
    service: 'notifications',
    summary: 'Notifications of the caller (or of user_id), newest first',
    http: { method: 'GET', path: '/notifications', auth: 'user', tag },
    query: z.object({
      ignore_read: QueryBoolean.default(false).describe('true returns unread notifications only'),
      limit: Limit(25),
      offset: Offset,
      ...OnBehalf,
    }),
    response: Page(Notification),
  }),
  markAllNotificationsRead: operation({
    service: 'notifications',
    summary: "Mark all of the caller's notifications read",
    http: { method: 'PUT', path: '/notifications', auth: 'user', tag },
    query: z.object(OnBehalf),
    response: Updated,
  }),
  markAllNotificationsSeen: operation({
    service: 'notifications',
    summary: "Mark all of the caller's notifications seen",
    http: { method: 'PUT', path: '/notifications/seen', auth: 'user', tag },
    query: z.object(OnBehalf),
    response: Updated,
  }),
  markNotificationRead: operation({
    service: 'notifications',
    summary: 'Mark one notification read (and seen)',
    http: { method: 'PUT', path: '/notifications/:id/read', auth: 'user', tag },
    params: IdParams,
    query: z.object(OnBehalf),
    response: Notification,
  }),
  markNotificationSeen: operation({
    service: 'notifications',
    summary: 'Mark one notification seen',
    http: { method: 'PUT', path: '/notifications/:id/seen', auth: 'user', tag },
    params: IdParams,
    query: z.object(OnBehalf),
    response: Notification,
  }),
  listWebhookDeliveries: operation({
    service: 'notifications',
    summary: 'Webhook deliveries, newest first',
    http: { method: 'GET', path: '/webhooks/deliveries', auth: 'user', roles: ['settings_admin'], tag: 'Webhooks' },
    query: z.object({
      status: z.enum(['pending', 'delivered', 'failed']).optional(),
      limit: Limit(25),
      offset: Offset,
    }),
    response: Page(WebhookDelivery),
  }),
  /**
   * Internal: the analytics service's weekly digest for one person, sent through the email outbox
   * if the person takes email (email_enabled, network delivery, a deliverable address). Once per
   * person and week: a second call for the same week changes nothing (`queued` false).
   */
  queueAnalyticsDigest: operation({
    service: 'notifications',
    summary: 'Queue the weekly analytics digest e-mail of a person',
    body: z.object({ user_id: Id, digest: AnalyticsDigest }),
    response: z.object({ queued: z.boolean().describe('a new mail was queued (false: sent before, or the person takes no email)') }),
  }),
} as const;

/** A notification as its event carries it. */
export const NotificationSnapshot = z.object({
  id: z.number().int(),
  user_id: z.number().int().describe('the receiver'),
  actor_id: z.number().int().nullable().describe('who caused it; null for the system and for the anonymous question poser'),
  type: z.enum(NotificationTypes),
  target_type: z.enum(NotificationTargetTypes),
  target_id: z.number().int(),
  question_id: z.number().int(),
  content: z.string().describe("text in the receiver's interface language"),
  url: z.string(),
  icon: z.string(),
  created: Timestamp,
});

/** Events `notifications.*`. */
export const notificationsEvents = {
  'notifications.notification.created.v1': z
    .object({ notification: NotificationSnapshot })
    .describe('a notification was created for a user (from a content or search event)'),
} as const;

import { z } from 'zod';
import { attachmentsEvents } from './attachments.ts';
import { categoriesEvents } from './categories.ts';
import { commentsEvents } from './comments.ts';
import { Timestamp } from './common.ts';
import type { ServiceName } from './endpoint.ts';
import { exportsEvents } from './exports.ts';
import { importEvents } from './imports.ts';
import { knowledgeSpacesEvents } from './knowledge-spaces.ts';
import { notificationsEvents } from './notifications.ts';
import { questionsEvents } from './questions.ts';
import { reuseEvents } from './reuse.ts';
import { searchEvents } from './search.ts';
import { sharingEvents } from './sharing.ts';
import { solutionsEvents } from './solutions.ts';
import { tagsEvents } from './tags.ts';
import { usersEvents } from './users.ts';

/**
 * The domain event catalogue by area: every subject with its payload schema (and, as the schema's
 * description, when it is published). This is a public contract: other internal systems subscribe
 * to these subjects. A change to a payload that is not purely additive gets a new version suffix
 * (`.v2`) and both are published until `.v1` is retired. docs/events.md and docs/asyncapi.json are
 * generated from it (`pnpm contracts`).
 */
export const eventAreas = {
  users: usersEvents,
  questions: questionsEvents,
  categories: categoriesEvents,
  tags: tagsEvents,
  'knowledge-spaces': knowledgeSpacesEvents,
  solutions: solutionsEvents,
  comments: commentsEvents,
  attachments: attachmentsEvents,
  sharing: sharingEvents,
  reuse: reuseEvents,
  imports: importEvents,
  notifications: notificationsEvents,
  search: searchEvents,
  exports: exportsEvents,
} as const;

/** Every subject with its payload schema. */
export const events = {
  ...usersEvents,
  ...questionsEvents,
  ...categoriesEvents,
  ...tagsEvents,
  ...knowledgeSpacesEvents,
  ...solutionsEvents,
  ...commentsEvents,
  ...attachmentsEvents,
  ...sharingEvents,
  ...reuseEvents,
  ...importEvents,
  ...notificationsEvents,
  ...searchEvents,
  ...exportsEvents,
} as const;

export type EventSubject = keyof typeof events;
export type EventPayload<S extends EventSubject> = z.infer<(typeof events)[S]>;
/** The subjects of one service's stream. */
export type StreamSubject<St extends ServiceName> = Extract<EventSubject, `${St}.${string}`>;

/** Every subject of a stream but `handled`: what a consumer of only those subjects ignores. */
export function subjectsExcept<St extends ServiceName, H extends StreamSubject<St>>(
  stream: St,
  handled: readonly H[],
): Array<Exclude<StreamSubject<St>, H>> {
  const kept = new Set<string>(handled);
  return (Object.keys(events) as EventSubject[]).filter(
    (s): s is Exclude<StreamSubject<St>, H> => s.startsWith(`${stream}.`) && !kept.has(s),
  );
}

/** What travels on the wire: the payload wrapped with its identity. */
export const EventEnvelope = z.object({
  /** uuid; also the JetStream message id, so a republished event is deduplicated. */
  id: z.string().uuid(),
  subject: z.string(),
  occurred_at: Timestamp,
  /** The user whose request caused the event, or null for system actions. */
  actor_id: z.number().int().nullable(),
  data: z.unknown(),
});
export type EventEnvelope<S extends EventSubject = EventSubject> = {
  id: string;
  subject: S;
  occurred_at: string;
  actor_id: number | null;
  data: EventPayload<S>;
};

/** One JetStream stream per publishing service, capturing its subjects. */
export const streams = {
  users: { name: 'USERS', subjects: 'users.>' },
  content: { name: 'CONTENT', subjects: 'content.>' },
  notifications: { name: 'NOTIFICATIONS', subjects: 'notifications.>' },
  search: { name: 'SEARCH', subjects: 'search.>' },
  exports: { name: 'EXPORTS', subjects: 'exports.>' },
  analytics: { name: 'ANALYTICS', subjects: 'analytics.>' },
  chat: { name: 'CHAT', subjects: 'chat.>' },
} as const satisfies Record<ServiceName, { name: string; subjects: string }>;

export const streamOf = (subject: EventSubject): ServiceName => subject.split('.')[0] as ServiceName;

/**
 * A message whose body is too large for NATS carries it in a JetStream object store instead (claim
 * check, docs/events.md): this header names the object, and its body is empty. The bucket follows
 * from where the message travels, by the name of the service's stream (`payloadBuckets`).
 */
export const PAYLOAD_HEADER = 'Kn-Payload-Object';

/**
 * The object-store buckets of a service's large bodies: its events' (kept as long as the stream
 * keeps the events), the requests to it (written by its callers) and its replies (written by it).
 */
export const payloadBuckets = (streamName: string) => ({
  events: `${streamName}_EVENT_BODIES`,
  requests: `${streamName}_REQUEST_BODIES`,
  replies: `${streamName}_REPLY_BODIES`,
});

/** Where a user of the locked bus receives its replies and pulled messages (@kn/bus permissions.ts). */
export const inboxPrefix = (user: string) => `_INBOX_${user}`;

/** What a namespace puts before the names of its streams and buckets. */
const namePrefix = (namespace: string | undefined) => (namespace ? `${namespace.replace(/[^A-Za-z0-9_-]/g, '_')}_` : '');

/** The names a namespace gives subjects, streams and buckets on the wire (see `Bus`). */
export function namespaced(namespace: string | undefined) {
  const ns = namespace ? `${namespace}.` : '';
  const prefix = namePrefix(namespace);
  return {
    subject: (s: string) => `${ns}${s}`,
    unprefix: (s: string) => (ns && s.startsWith(ns) ? s.slice(ns.length) : s),
    streamName: (service: ServiceName) => `${prefix}${streams[service].name}`,
    bucketName: (name: string) => `${prefix}${name}`,
  };
}

/**
 * The subjects of a stream that a handler map neither handles nor ignores: what the types of a
 * consumer's handlers refuse, checked again when it starts (for callers that cast).
 */
export const unlistedSubjects = (stream: ServiceName, handlers: object, ignored: readonly string[]) =>
  (Object.keys(events) as EventSubject[]).filter((s) => streamOf(s) === stream && !(s in handlers) && !ignored.includes(s));

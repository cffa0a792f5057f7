import { EVENT_STREAM_RETENTION, natsPermissions } from '@kn/bus';
import { type EventSubject, events, inboxPrefix, type ServiceName, streamOf, streams } from '@kn/contracts';
import type { z } from 'zod';
import { schemaComponents } from './json-schema.ts';

/** What every event's envelope says beside its payload (EventEnvelope of @kn/contracts). */
const envelope = {
  id: { type: 'string', format: 'uuid', description: 'the event id; also its JetStream message id (Nats-Msg-Id): handle each id once' },
  occurred_at: { type: 'string', format: 'date-time', description: 'ISO 8601 UTC with milliseconds' },
  actor_id: { type: ['integer', 'null'], description: 'the user whose request caused the event; null for the system' },
};

const headers = {
  type: 'object',
  required: ['Nats-Msg-Id', 'traceparent'],
  properties: {
    'Nats-Msg-Id': {
      type: 'string',
      format: 'uuid',
      description: "the envelope's id: a republished event is dropped by the stream's duplicate window",
    },
    traceparent: {
      type: 'string',
      pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$',
      description: 'W3C trace context of the request that caused the event (a new trace when none did)',
    },
  },
};

/**
 * The AsyncAPI 3.0 document of the domain events, generated from the zod catalogue (`events` of
 * @kn/contracts): one channel per subject, each message the envelope with its payload's JSON
 * Schema, the headers every event carries, the stream that keeps it, and the read-only NATS user
 * other systems subscribe as. Served at /api/v1/asyncapi.json; a copy is docs/asyncapi.json.
 */
export function asyncApiDocument() {
  const { components: schemas, convert: toJsonSchema } = schemaComponents('draft-7');
  const convert = (schema: z.ZodType) => toJsonSchema(schema, 'output');

  const streamText = (service: ServiceName) =>
    `Kept in the JetStream stream ${streams[service].name} (subjects ${streams[service].subjects}), which keeps every event for ever (retention ${EVENT_STREAM_RETENTION.retention}, ${EVENT_STREAM_RETENTION.storage} storage; a republished id within ${EVENT_STREAM_RETENTION.duplicateWindowMs / 1000} s is dropped).`;
  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  const messages: Record<string, unknown> = {};
  for (const [subject, schema] of Object.entries(events) as Array<[EventSubject, z.ZodType]>) {
    const service = streamOf(subject);
    const payload = convert(schema);
    const when = payload.description as string | undefined;
    delete payload.description;
    messages[subject] = {
      name: subject,
      title: subject,
      summary: when,
      contentType: 'application/json',
      headers,
      payload: {
        type: 'object',
        required: ['id', 'subject', 'occurred_at', 'actor_id', 'data'],
        properties: {
          id: envelope.id,
          subject: { type: 'string', const: subject },
          occurred_at: envelope.occurred_at,
          actor_id: envelope.actor_id,
          data: payload,
        },
      },
    };
    channels[subject] = {
      address: subject,
      title: subject,
      description: `${when ?? ''}\n\n${streamText(service)} With NATS_NAMESPACE set, the subject is <namespace>.${subject}.`.trim(),
      messages: { [subject]: { $ref: `#/components/messages/${subject}` } },
      'x-stream': {
        name: streams[service].name,
        subjects: streams[service].subjects,
        retention: EVENT_STREAM_RETENTION.retention,
        storage: EVENT_STREAM_RETENTION.storage,
        max_age_ms: EVENT_STREAM_RETENTION.maxAgeMs,
        duplicate_window_ms: EVENT_STREAM_RETENTION.duplicateWindowMs,
      },
    };
    operations[`receive.${subject}`] = {
      action: 'receive',
      title: `Receive ${subject}`,
      summary: when,
      channel: { $ref: `#/channels/${subject}` },
      messages: [{ $ref: `#/channels/${subject}/messages/${subject}` }],
    };
  }

  const subscriber = natsPermissions('').subscriber;
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Knowledge network events',
      version: '1.0.0',
      description: [
        'Domain events of the knowledge network: every service publishes its own to a JetStream stream, in the database transaction of the change (transactional outbox), delivered at least once, in order per stream. A payload change that is not purely additive gets a new version suffix (.v2), published beside the old one.',
        `Subscribe as the read-only NATS user \`subscriber\` (inbox prefix \`${inboxPrefix('subscriber')}\`): it may read ${subscriber.subscribe.filter((s) => !s.startsWith('_INBOX')).join(', ')} and create, pull from and acknowledge durable consumers of the event streams, and publish nothing. Use a durable pull consumer with one filter subject (NATS 2.9), acknowledge after your own work is committed, skip subjects you do not handle, and handle each event id once. \`@kn/client\` has a typed subscriber that does this (docs/api.md).`,
      ].join('\n\n'),
      license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
      contact: { name: 'Knowledge network maintainers' },
      tags: Object.values(streams).map((s) => ({ name: s.name, description: `events on ${s.subjects}` })),
    },
    defaultContentType: 'application/json',
    servers: {
      nats: {
        host: 'localhost:4222',
        protocol: 'nats',
        description: 'The NATS server of the deployment (NATS_URL); JetStream on. A locked deployment asks for a user and password.',
        security: [{ $ref: '#/components/securitySchemes/subscriber' }],
      },
    },
    channels,
    operations,
    components: {
      messages,
      schemas,
      securitySchemes: {
        subscriber: {
          type: 'userPassword',
          description: `The read-only user \`subscriber\` of the locked bus (infra/nats/auth.conf; its password in NATS_PASSWORD_SUBSCRIBER), with the inbox prefix \`${inboxPrefix('subscriber')}\`.`,
        },
      },
    },
  };
}

import {
  AUTH_REVOKED_SUBJECT,
  attachmentBucket,
  exportBucket,
  inboxPrefix,
  namespaced,
  payloadBuckets,
  SEARCH_REBUILD_SUBJECT,
  type ServiceName,
  streams,
} from '@kn/contracts';

/**
 * The locked bus: who may publish and read what on NATS. Each service connects as its own user
 * and may publish only its own events (its stream's subjects), serve only its own requests, and
 * read only the streams it consumes; the gateway holds no stream; outside systems get the
 * read-only `subscriber`; `operator` is for the operators' tools (import, search rebuild). A
 * forged event from any other user is refused by the server. `infra/nats/auth.conf` is this
 * file's output (`pnpm nats:auth`), for a NATS server whose passwords come from the environment.
 */
export type NatsUser = 'gateway' | ServiceName | 'operator' | 'subscriber';

/** What each service reads: its durable consumers and projections. */
const reads: Record<ServiceName, ServiceName[]> = {
  users: [],
  content: ['users'],
  notifications: ['users', 'content', 'search'],
  search: ['content', 'users'],
  exports: ['exports'],
  analytics: ['content', 'users', 'search'],
  chat: ['users', 'content', 'search'],
};

export interface Permissions {
  publish: string[];
  subscribe: string[];
  /** Replies to requests it received (the services' operations). */
  allowResponses: boolean;
}

export function natsPermissions(namespace = ''): Record<NatsUser, Permissions> {
  const names = namespaced(namespace);
  const subject = names.subject;
  const events = (service: ServiceName) => subject(streams[service].subjects);
  const services = Object.keys(streams) as ServiceName[];

  /** Reading a stream: its info, consumers of it (created, pulled, acknowledged), single messages. */
  const read = (stream: string) => [
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.STREAM.MSG.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}.>`,
    `$JS.API.CONSUMER.CREATE.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.INFO.${stream}.>`,
    `$JS.API.CONSUMER.DELETE.${stream}.>`,
    `$JS.API.CONSUMER.NAMES.${stream}`,
    `$JS.API.CONSUMER.LIST.${stream}`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.>`,
    `$JS.ACK.${stream}.>`,
    `$JS.FC.${stream}.>`,
  ];
  /** Creating a stream (the publisher does; a consumer that starts first does too) or a bucket. */
  const manage = (stream: string) => [...read(stream), `$JS.API.STREAM.CREATE.${stream}`, `$JS.API.STREAM.UPDATE.${stream}`];
  const keyValue = (bucket: string) => [...manage(`KV_${names.bucketName(bucket)}`), `$KV.${names.bucketName(bucket)}.>`];
  const objects = (bucket: string, write: boolean) => [
    ...manage(`OBJ_${bucket}`),
    ...(write ? [`$O.${bucket}.>`, `$JS.API.STREAM.PURGE.OBJ_${bucket}`] : []),
  ];
  const attachments = attachmentBucket(names.streamName('content'));
  const exportFiles = exportBucket(names.streamName('exports'));
  // Bodies too large for a message (large-payloads.ts). A service writes its events' and its
  // replies'; whoever reads its stream reads its events'; every caller writes requests to it and
  // reads its replies'.
  const bodies = (service: ServiceName) => payloadBuckets(names.streamName(service));
  const eventBodies = (service: ServiceName) => read(`OBJ_${bodies(service).events}`);
  const callBodies = services.flatMap((s) => [...objects(bodies(s).requests, true), ...read(`OBJ_${bodies(s).replies}`)]);

  // Replies reach each user on inboxes of its own: no user reads another's answers.
  const inbox = (user: NatsUser) => `${inboxPrefix(user)}.>`;
  const common = { publish: ['$JS.API.INFO'] };
  const service = (name: ServiceName, extra: { publish?: string[]; subscribe?: string[] } = {}): Permissions => ({
    publish: [
      ...common.publish,
      events(name),
      // Requests to the other services' operations.
      subject('rpc.>'),
      ...manage(names.streamName(name)),
      ...reads[name].flatMap((s) => manage(names.streamName(s))),
      ...objects(bodies(name).events, true),
      ...objects(bodies(name).replies, true),
      ...reads[name].flatMap(eventBodies),
      ...callBodies,
      ...(extra.publish ?? []),
    ],
    subscribe: [inbox(name), subject(`rpc.${name}.>`), ...(extra.subscribe ?? [])],
    allowResponses: true,
  });

  return {
    gateway: {
      publish: [
        ...common.publish,
        subject('rpc.>'),
        ...keyValue('ratelimits'),
        ...keyValue('idempotency'),
        ...keyValue('oidc-flows'),
        ...keyValue('oauth'),
        ...keyValue('oauth-keys'),
        ...objects(attachments, true),
        ...objects(exportFiles, false),
        ...callBodies,
      ],
      subscribe: [inbox('gateway'), subject(AUTH_REVOKED_SUBJECT), subject('users.network-settings.updated.v1')],
      allowResponses: false,
    },
    users: service('users', { publish: [subject(AUTH_REVOKED_SUBJECT)] }),
    content: service('content', { publish: objects(attachments, true) }),
    notifications: service('notifications'),
    search: service('search', { subscribe: [subject(SEARCH_REBUILD_SUBJECT)] }),
    exports: service('exports', { publish: objects(exportFiles, true) }),
    analytics: service('analytics'),
    chat: service('chat'),
    operator: {
      publish: [...common.publish, subject('rpc.>'), subject(SEARCH_REBUILD_SUBJECT), ...callBodies],
      subscribe: [inbox('operator')],
      allowResponses: false,
    },
    subscriber: {
      publish: [...common.publish, ...services.flatMap((s) => [...read(names.streamName(s)), ...eventBodies(s)])],
      subscribe: [inbox('subscriber'), ...services.map(events)],
      allowResponses: false,
    },
  };
}

/** The environment variable that holds a user's password (the NATS server reads it at start). */
export const passwordVariable = (user: NatsUser) => `NATS_PASSWORD_${user.toUpperCase()}`;

/** The `authorization` block of a NATS server configuration: one user per process kind. */
export function natsAuthorizationConf(namespace = ''): string {
  const list = (items: string[]) => `[${items.map((i) => JSON.stringify(i)).join(', ')}]`;
  const users = Object.entries(natsPermissions(namespace)).map(
    ([user, p]) =>
      `    {
      user: ${user}
      password: $${passwordVariable(user as NatsUser)}
      permissions: {
        publish: { allow: ${list(p.publish)} }
        subscribe: { allow: ${list(p.subscribe)} }${p.allowResponses ? '\n        allow_responses: true' : ''}
      }
    }`,
  );
  return `# The locked bus (generated by \`pnpm nats:auth\` from packages/bus/src/permissions.ts; do not edit).
# Each service publishes only its own events and reads what it consumes; "subscriber" is read-only.
# Passwords come from the environment of the NATS server: ${Object.keys(natsPermissions(namespace))
    .map((u) => passwordVariable(u as NatsUser))
    .join(', ')}.
authorization {
  users: [
${users.join('\n')}
  ]
}
`;
}

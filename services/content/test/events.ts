/**
 * Test helpers for the integration tests of test/questions*.test.ts and friends: the events the
 * content service published (read back from its JetStream stream) and waiting for the users
 * projection of the content service.
 */
export interface SystemLike {
  services: {
    users: { runtime: { relay: { flush(): Promise<void> } } };
    content: {
      runtime: {
        relay: { flush(): Promise<void> };
        bus: {
          streamName(s: 'content'): string;
          jsm: {
            streams: {
              info(name: string): Promise<{ state: { first_seq: number; last_seq: number } }>;
              getMessage(name: string, q: { seq: number }): Promise<{ json<T>(): T } | null>;
            };
          };
        };
      };
      consumers: { users: { caughtUp(): Promise<void> } };
    };
  };
}

export interface PublishedEvent {
  id: string;
  subject: string;
  actor_id: number | null;
  data: any;
}

/** Every event the content service published so far (after flushing its outbox), in order. */
export async function contentEvents(system: SystemLike, subjectPrefix = ''): Promise<PublishedEvent[]> {
  const { relay, bus } = system.services.content.runtime;
  await relay.flush();
  const name = bus.streamName('content');
  const info = await bus.jsm.streams.info(name);
  const out: PublishedEvent[] = [];
  for (let seq = Math.max(1, info.state.first_seq); seq <= info.state.last_seq; seq++) {
    const msg = await bus.jsm.streams.getMessage(name, { seq }).catch(() => null);
    if (!msg) continue;
    const e = msg.json<PublishedEvent>();
    if (e.subject.startsWith(subjectPrefix)) out.push(e);
  }
  return out;
}

/** Waits until the content service has seen every users event published so far. */
export async function usersProjectionCaughtUp(system: SystemLike) {
  await system.services.users.runtime.relay.flush();
  await system.services.content.consumers.users.caughtUp();
}

import { randomUUID } from 'node:crypto';
import { PAYLOAD_HEADER, payloadBuckets, type ServiceName } from '@kn/contracts';
import { type ObjectStore, StorageType } from '@nats-io/obj';
import { type MsgHdrs, nanos } from '@nats-io/transport-node';
import type { Bus } from './connection.ts';
import { objectStore } from './object-store.ts';

/*
 * Claim check: a body larger than a NATS message may be (the server's max_payload, 1 MiB by
 * default) is written to a JetStream object store, and the message carries only the object's name
 * in a header. Events, requests and replies all go through here, so every consumer and every
 * service gets the whole body whatever its size, and NATS keeps its recommended message size.
 */

/** Room kept in a message for its headers (request id, trace context, status, the object's name). */
const HEADER_ALLOWANCE = 16 * 1024;

/**
 * How long a request's or reply's body is kept: it is read as soon as its message arrives, so this
 * only has to outlast the longest wait for an answer; what nobody read expires with it.
 */
const CALL_BODY_TTL_MS = 5 * 60_000;

export type PayloadKind = keyof ReturnType<typeof payloadBuckets>;

const stores = new WeakMap<Bus, Map<string, () => Promise<ObjectStore>>>();

function store(bus: Bus, service: ServiceName, kind: PayloadKind) {
  const bucket = payloadBuckets(bus.streamName(service))[kind];
  const byBucket = stores.get(bus) ?? new Map<string, () => Promise<ObjectStore>>();
  stores.set(bus, byBucket);
  let open = byBucket.get(bucket);
  if (!open) {
    // Event bodies live as long as their events (for ever, on disk); a call's are transient.
    open = objectStore(bus, bucket, kind === 'events' ? {} : { storage: StorageType.Memory, ttl: nanos(CALL_BODY_TTL_MS) });
    byBucket.set(bucket, open);
  }
  return open();
}

/** The largest body a message carries itself. */
const inlineLimit = (bus: Bus) => (bus.nc.info?.max_payload ?? 1024 * 1024) - HEADER_ALLOWANCE;

/**
 * The body to send in the message: `body` itself when it fits, else nothing, with the header that
 * names the object it was written to (in `service`'s bucket of that kind).
 */
export async function outgoingBody(
  bus: Bus,
  service: ServiceName,
  kind: PayloadKind,
  body: Uint8Array,
  headers: MsgHdrs,
  name: string = randomUUID(),
): Promise<Uint8Array> {
  if (body.length <= inlineLimit(bus)) return body;
  await (await store(bus, service, kind)).putBlob({ name }, body);
  headers.set(PAYLOAD_HEADER, name);
  return new Uint8Array(0);
}

/** The body of a received message: its own, or the object its header names. */
export async function incomingBody(
  bus: Bus,
  service: ServiceName,
  kind: PayloadKind,
  msg: { data: Uint8Array; headers?: MsgHdrs },
): Promise<Uint8Array> {
  const name = msg.headers?.get(PAYLOAD_HEADER);
  if (!name) return msg.data;
  const body = await (await store(bus, service, kind)).getBlob(name);
  if (!body) throw new Error(`the message's body ${name} is not in the ${kind} bodies of ${service}`);
  return body;
}

const decoder = new TextDecoder();

/**
 * An event message of `service`'s stream with its whole body, wherever that travelled; its JSON
 * (the envelope) is parsed by `json()`, so a reader tells a body it cannot read now (retry) from
 * one that is not JSON (never).
 */
export async function eventBody(bus: Bus, service: ServiceName, msg: { data: Uint8Array; headers?: MsgHdrs }) {
  const body = await incomingBody(bus, service, 'events', msg);
  return { json: (): unknown => JSON.parse(decoder.decode(body)) };
}

import { hostname } from 'node:os';
import { type Client, errors, type estypes } from '@elastic/elasticsearch';
import { type Bus, ensureStream, eventBody, followStream, sleeper } from '@kn/bus';
import type { ServiceName } from '@kn/contracts';
import { type IntervalJob, intervalJob } from '@kn/service';
import type { JsMsg } from '@nats-io/jetstream';
import {
  applyEvent,
  type EventSolutionFacts,
  type ExpertSettings,
  type IndexedQuestion,
  type IndexHandlers,
  type IndexWriter,
} from '../core/events.ts';
import type { PartKind } from '../core/words.ts';
import { sources } from './client.ts';
import {
  applyForward,
  applyPart,
  applyQuestion,
  applySolution,
  type PositionDocument,
  type QuestionDocument,
  type SpaceDocument,
  type StateDocument,
  stateId,
  stubQuestion,
  type TagDocument,
  tagDocument,
  type UserDocument,
  withDerived,
} from './documents.ts';
import { controlIndex, INDEX_VERSION, type IndexNames, physicalIndex, questionsIndex, stateIndex } from './mappings.ts';

/** Events applied in one batch during catch-up. */
const BATCH = 500;
/**
 * A batch's documents go to the engine in this many bulk requests at once, each of at least
 * BULK_PART_MIN questions: the engine indexes one request's documents for a shard one after the
 * other on one write thread, so a single request a batch used one core of the engine (a rebuild
 * of 20,000 questions kept the machine's two cores at 1.5, the engine at 0.9 of one).
 */
const BULK_PARTS = 2;
const BULK_PART_MIN = 50;
/**
 * A live batch is made searchable by the feed's own refresh, at most once in this time: while
 * events stream in (a relay publishing an import) each batch refreshing at once made a segment a
 * batch, and refreshes took half of a catch-up's time (at 10,000 questions, under load). A lone
 * live change still refreshes at once; one that follows within the time waits for the rest of it
 * (short: people and tests wait for what they wrote), and whatever came meanwhile makes the next batch.
 */
const REFRESH_MIN_MS = 250;
/**
 * Question documents the feed keeps of those it last wrote: a later event of the same question
 * (its solutions, votes, comments) reads it here, not back from the engine, where a realtime read
 * of a document not yet refreshed forces a refresh.
 */
const KEPT_WRITTEN = 5_000;
/**
 * The feed merges the questions index into one segment once it has been quiet this long after
 * writing at least MERGE_MIN questions and MERGE_SHARE of all it wrote before the last merge: a
 * catch-up or rebuild leaves many small segments, and every query then pays per segment (a typo's
 * automaton, a prefix's terms; 4-word counts took 30–50 ms before a merge, 4–8 ms after, at 5,000
 * questions), and a merged index has no deleted documents (frequencies.ts reads exact counts from
 * its term dictionary then). A catch-up that paused merges again for its tail; live writes alone
 * rarely reach the share.
 */
const MERGE_QUIET_MS = 5_000;
const MERGE_SHARE = 0.1;
const MERGE_MIN = 500;
/** The feed's lease: renewed every LEASE_RENEW_MS, another instance takes over LEASE_TTL_MS after the last renewal. */
const LEASE_TTL_MS = 15_000;
const LEASE_RENEW_MS = 3_000;
/**
 * A generation the aliases left is deleted this long after the lease's holder first sees it so:
 * requests that resolved the aliases before the move finish on it (deleted in the same step, a
 * search under way answered 503 and a read of the positions found none).
 */
const RETIRED_KEEP_MS = 30_000;
const LEASE_ID = 'feed';
/** The lease of a build of a newer index version (one at a time). */
const BUILD_LEASE_ID = 'build';

export type Change =
  | { kind: 'question'; question: IndexedQuestion }
  | { kind: 'part'; part: PartKind; id: number; question_id: number; author_id: number; text: string | null }
  | { kind: 'solution'; solution: EventSolutionFacts; at: number }
  | { kind: 'forward'; question_id: number; recipient_id: number; seq: number; at: number }
  | { kind: 'category-cleared'; question_ids: readonly number[] }
  | { kind: 'tag'; label: string; fields: { excluded_from_suggestions?: boolean; links?: string[] } }
  | { kind: 'space'; id: number; is_closed: boolean; members?: readonly number[] }
  | { kind: 'user'; user_id: number; deleted?: boolean; system?: boolean }
  | { kind: 'settings'; settings: ExpertSettings };

/**
 * The changes of a batch of events, recorded as the shared handlers (core/events.ts) make them:
 * the documents they touch are read from Elasticsearch once for the whole batch, then changed.
 */
export class RecordedChanges implements IndexWriter {
  readonly changes: Change[] = [];
  /** The stream sequence of the event being applied (forwards remember it). */
  seq = 0;

  upsertQuestion(question: IndexedQuestion) {
    this.changes.push({ kind: 'question', question });
  }
  setPart(part: PartKind, id: number, question_id: number, author_id: number, text: string | null) {
    this.changes.push({ kind: 'part', part, id, question_id, author_id, text });
  }
  setSolution(solution: EventSolutionFacts, at: number) {
    this.changes.push({ kind: 'solution', solution, at });
  }
  addForward(question_id: number, recipient_id: number, at: number) {
    this.changes.push({ kind: 'forward', question_id, recipient_id, seq: this.seq, at });
  }
  clearCategory(question_ids: readonly number[]) {
    this.changes.push({ kind: 'category-cleared', question_ids });
  }
  setTag(label: string, fields: { excluded_from_suggestions?: boolean; links?: string[] }) {
    this.changes.push({ kind: 'tag', label, fields });
  }
  setSpace(id: number, is_closed: boolean, members?: readonly number[]) {
    this.changes.push({ kind: 'space', id, is_closed, members });
  }
  setUserDeleted(user_id: number, deleted: boolean) {
    this.changes.push({ kind: 'user', user_id, deleted });
  }
  setUserSystem(user_id: number, system: boolean) {
    this.changes.push({ kind: 'user', user_id, system });
  }
  setExpertSettings(settings: ExpertSettings) {
    this.changes.push({ kind: 'settings', settings });
  }

  /** The documents the changes read: questions, tags (by lower-case label), spaces and users. */
  touched() {
    const questions = new Set<number>();
    const tags = new Set<string>();
    const spaces = new Set<number>();
    const users = new Set<number>();
    for (const c of this.changes) {
      if (c.kind === 'question') {
        questions.add(c.question.id);
        for (const t of c.question.tags) tags.add(t.toLowerCase());
      } else if (c.kind === 'part') questions.add(c.question_id);
      else if (c.kind === 'solution') questions.add(c.solution.question_id);
      else if (c.kind === 'forward') questions.add(c.question_id);
      else if (c.kind === 'category-cleared') for (const id of c.question_ids) questions.add(id);
      else if (c.kind === 'tag') tags.add(c.label.toLowerCase());
      else if (c.kind === 'space') spaces.add(c.id);
      else if (c.kind === 'user') users.add(c.user_id);
    }
    return { questions, tags, spaces, users };
  }
}

export interface Loaded {
  questions: Map<number, QuestionDocument>;
  tags: Map<string, TagDocument>;
  spaces: Map<number, SpaceDocument>;
  /** Users' documents (a change of one flag keeps the other); optional: none read means none known. */
  users?: Map<number, UserDocument>;
}

/**
 * Applies recorded changes to the documents they touch; answers the documents to write: the
 * questions changed (derived fields computed again) and the state documents (by id).
 */
export function applyChanges(changes: readonly Change[], loaded: Loaded) {
  const questions = new Map<number, QuestionDocument>();
  const state = new Map<string, StateDocument>();
  const question = (id: number) => questions.get(id) ?? loaded.questions.get(id) ?? stubQuestion(id);
  const tag = (label: string, fields: { excluded_from_suggestions?: boolean; links?: string[] } = {}, onlyNew = false) => {
    const key = label.toLowerCase();
    const known = loaded.tags.get(key);
    if (onlyNew && known) return;
    const doc = tagDocument(label, fields, known);
    loaded.tags.set(key, doc);
    state.set(stateId.tag(key), doc);
  };
  const space = (id: number, is_closed: boolean, members?: readonly number[]) => {
    const doc: SpaceDocument = { type: 'space', space_id: id, is_closed, members: [...(members ?? loaded.spaces.get(id)?.members ?? [])] };
    loaded.spaces.set(id, doc);
    state.set(stateId.space(id), doc);
  };
  for (const c of changes) {
    if (c.kind === 'question') {
      questions.set(c.question.id, applyQuestion(question(c.question.id), c.question));
      // A tag a question carries is a tag of the network (the local index knows it from its postings).
      for (const t of c.question.tags) tag(t, {}, true);
    } else if (c.kind === 'part')
      questions.set(c.question_id, applyPart(question(c.question_id), c.part, { id: c.id, author_id: c.author_id, text: '' }, c.text));
    else if (c.kind === 'solution')
      questions.set(c.solution.question_id, applySolution(question(c.solution.question_id), c.solution, c.at));
    else if (c.kind === 'forward') questions.set(c.question_id, applyForward(question(c.question_id), c.recipient_id, c.seq, c.at));
    else if (c.kind === 'category-cleared') for (const id of c.question_ids) questions.set(id, { ...question(id), category_id: null });
    else if (c.kind === 'tag') tag(c.label, c.fields);
    else if (c.kind === 'space') space(c.id, c.is_closed, c.members);
    else if (c.kind === 'user') {
      if (!loaded.users) loaded.users = new Map();
      const users = loaded.users;
      const known = users.get(c.user_id);
      const doc: UserDocument = {
        type: 'user',
        user_id: c.user_id,
        deleted: c.deleted ?? known?.deleted ?? false,
        system: c.system ?? known?.system ?? false,
      };
      users.set(c.user_id, doc);
      state.set(stateId.user(c.user_id), doc);
    } else if (c.kind === 'settings')
      for (const [key, value] of Object.entries(c.settings)) state.set(stateId.setting(key), { type: 'setting', key, value });
  }
  return { questions: [...questions.values()].map(withDerived), state };
}

/**
 * A batch's documents as bulk requests sent at once (BULK_PARTS): the questions in parts of at least
 * BULK_PART_MIN, the state documents with the first. None when there is nothing to write.
 */
export function bulkRequests(
  questions: readonly QuestionDocument[],
  state: ReadonlyMap<string, StateDocument>,
  questionsIndexName: string,
  stateIndexName: string,
): Array<NonNullable<estypes.BulkRequest['operations']>> {
  const parts = Math.max(1, Math.min(BULK_PARTS, Math.floor(questions.length / BULK_PART_MIN)));
  const size = Math.ceil(questions.length / parts);
  const requests: Array<NonNullable<estypes.BulkRequest['operations']>> = [];
  for (let i = 0; i < parts; i++)
    requests.push(
      questions.slice(i * size, (i + 1) * size).flatMap((q) => [{ index: { _index: questionsIndexName, _id: String(q.id) } }, q]),
    );
  for (const [id, doc] of state) requests[0]!.push({ index: { _index: stateIndexName, _id: id } }, doc);
  return requests.filter((operations) => operations.length);
}

/** The documents a feed last wrote, the least recently used dropped first past `max`. */
export class LastWritten<K, V> {
  private readonly entries = new Map<K, V>();
  private readonly max: number;

  constructor(max: number) {
    this.max = max;
  }

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) this.set(key, value);
    return value;
  }

  set(key: K, value: V) {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as K);
  }

  get size() {
    return this.entries.size;
  }
}

const isStatus = (err: unknown, status: number) => err instanceof errors.ResponseError && err.statusCode === status;

/** Creates an index unless it exists (another instance may create it at the same time). */
async function createIndex(client: Client, request: estypes.IndicesCreateRequest) {
  try {
    await client.indices.create(request);
  } catch (err) {
    if (!(err instanceof errors.ResponseError && err.body?.error?.type === 'resource_already_exists_exception')) throw err;
  }
}

interface Lease {
  owner: string;
  expires_at: number;
  generation: number;
  /** The index version of the generation (mappings.ts INDEX_VERSION; absent: 1). */
  version?: number;
}

/**
 * Feeds the shared index from the event streams. Every instance runs one, but only the holder of
 * the lease (a document of the control index, taken and renewed with optimistic concurrency)
 * applies events; the others take over when it stops renewing. The holder follows each stream with
 * an ordered consumer from the position stored in the state index, applies batches as bulk
 * requests and writes the new position after them, so a restart (of any instance) resumes where
 * the index stands; an event applied twice changes nothing.
 *
 * An instance of a newer index version (new mappings or word rules) does not feed the live
 * generation: it builds the next one beside it under a lease of its own, from the streams' start,
 * while the live one keeps answering; once the build has caught up it moves the aliases and holds
 * the feed's lease from then on (the old indices are deleted RETIRED_KEEP_MS later). Older
 * instances stop feeding then.
 */
export class ElasticsearchFeed {
  readonly instance = `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  /** The generation this instance writes (when it holds the lease). */
  private generation = 0;
  private holding = false;
  private following: { stop: () => Promise<void> } | null = null;
  private renewals: IntervalJob<void> | null = null;
  /** The renewal under way, which a rebuild waits for before it takes the lease. */
  private ticking: Promise<void> = Promise.resolve();
  /** The generation this instance builds for its newer index version, beside the live one. */
  private building: number | null = null;
  /** Indices of older generations no alias points at, and when this instance first saw them so. */
  private readonly retired = new Map<string, number>();
  private readonly version: number;
  private readonly log: Bus['logger'];

  private readonly options: { client: Client; names: IndexNames; bus: Bus; streams: ServiceName[]; handlers: IndexHandlers };

  constructor(options: {
    client: Client;
    names: IndexNames;
    bus: Bus;
    streams: ServiceName[];
    handlers: IndexHandlers;
    /** mappings.ts INDEX_VERSION unless a test passes another. */
    version?: number;
  }) {
    this.options = options;
    this.version = options.version ?? INDEX_VERSION;
    this.log = options.bus.logger.child({ component: 'search-elasticsearch-feed' });
  }

  get isHolder() {
    return this.holding;
  }

  /** True while this instance builds a newer version beside the live index (which answers meanwhile). */
  get isBuilding() {
    return this.building !== null;
  }

  async start() {
    const { client, names, bus, streams } = this.options;
    for (const stream of streams) await ensureStream(bus, stream);
    await createIndex(client, { index: names.control, ...controlIndex });
    await this.tick();
    this.renewals = intervalJob({
      name: 'lease renewal',
      everyMs: LEASE_RENEW_MS,
      logger: this.log,
      round: () => {
        this.ticking = this.tick();
        return this.ticking;
      },
    });
  }

  async stop() {
    await this.renewals?.stop();
    await this.unfollow();
    if (this.holding || this.building !== null) await this.release();
  }

  /** Stream positions an index has applied, the live one unless named (0 before the first event, or before the indices exist). */
  async positions(stateIndexName = this.options.names.state): Promise<Record<string, number>> {
    const { client, bus, streams } = this.options;
    const ids = streams.map((s) => stateId.position(bus.streamName(s)));
    const out: Record<string, number> = Object.fromEntries(streams.map((s) => [s, 0]));
    try {
      const { docs } = await client.mget<PositionDocument>({ index: stateIndexName, ids });
      sources(docs).forEach((d, i) => {
        if (d) out[streams[i]!] = d.seq;
      });
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
    }
    return out;
  }

  private async readLease(id = LEASE_ID): Promise<{ lease: Lease; seq_no: number; primary_term: number } | null> {
    try {
      const doc = await this.options.client.get<Lease>({ index: this.options.names.control, id });
      return doc._source ? { lease: doc._source, seq_no: doc._seq_no!, primary_term: doc._primary_term! } : null;
    } catch (err) {
      if (isStatus(err, 404)) return null;
      throw err;
    }
  }

  /** Writes the lease when it still is as read (null: not there); false when another instance wrote first. */
  private async writeLease(lease: Lease, read: { seq_no: number; primary_term: number } | null, id = LEASE_ID) {
    try {
      await this.options.client.index({
        index: this.options.names.control,
        id,
        document: lease,
        refresh: true,
        ...(read ? { if_seq_no: read.seq_no, if_primary_term: read.primary_term } : { op_type: 'create' as const }),
      });
      return true;
    } catch (err) {
      if (isStatus(err, 409)) return false;
      throw err;
    }
  }

  /** Takes or renews the lease when free or ours; starts or stops following accordingly. */
  private async tick() {
    const read = await this.readLease();
    const live = read?.lease.version ?? 1;
    if (read && live !== this.version) return this.tickOtherVersion(read, live);
    const now = Date.now();
    const ours = read?.lease.owner === this.instance;
    const free = !read || read.lease.expires_at < now;
    let holding = false;
    let generation = read?.lease.generation ?? 1;
    if (ours || free) {
      holding = await this.writeLease({ owner: this.instance, expires_at: now + LEASE_TTL_MS, generation, version: this.version }, read);
      if (holding && !read) generation = 1;
    }
    if (holding && (!this.holding || generation !== this.generation)) {
      await this.unfollow();
      this.generation = generation;
      this.holding = true;
      await this.createGeneration(generation, true);
      this.follow();
    } else if (!holding && this.holding) {
      this.log.info('search feed lease lost');
      this.holding = false;
      await this.unfollow();
    }
    if (holding)
      await this.deleteRetired(generation).catch((err) => this.log.warn({ err: (err as Error).message }, 'old search indices not deleted'));
  }

  /**
   * Deletes the indices of generations older than the live one that no alias points at, once
   * RETIRED_KEEP_MS have passed since this instance first saw them so. Newer generations are
   * builds (under way, or left by a stopped instance to be resumed).
   */
  private async deleteRetired(live: number) {
    const { client, names } = this.options;
    const indices = await client.indices.getAlias({ index: `${names.questions}-g*,${names.state}-g*`, allow_no_indices: true });
    const now = Date.now();
    const due: string[] = [];
    for (const [index, { aliases }] of Object.entries(indices)) {
      const generation = Number(index.slice(index.lastIndexOf('-g') + 2));
      if (!(generation < live) || Object.keys(aliases ?? {}).length) {
        this.retired.delete(index);
        continue;
      }
      const since = this.retired.get(index) ?? now;
      this.retired.set(index, since);
      if (now - since >= RETIRED_KEEP_MS) due.push(index);
    }
    if (!due.length) return;
    await client.indices.delete({ index: due, ignore_unavailable: true });
    for (const index of due) this.retired.delete(index);
  }

  /**
   * The live index is of another version: an older one is built anew beside it (this instance
   * takes the build's lease, or renews it, and swaps once caught up); a newer one is left to the
   * instances of its version (this one stops feeding).
   */
  private async tickOtherVersion(read: { lease: Lease; seq_no: number; primary_term: number }, live: number) {
    if (this.holding) {
      this.log.info({ live, own: this.version }, 'the search index is of another version: this instance stops feeding it');
      this.holding = false;
      await this.unfollow();
    }
    if (live > this.version) return;
    const build = await this.readLease(BUILD_LEASE_ID);
    const now = Date.now();
    const mine = build?.lease.owner === this.instance;
    // A build of this version left by an instance that stopped is resumed where it stands.
    const resumable = build && build.lease.version === this.version && build.lease.generation > read.lease.generation;
    if (!mine && build && build.lease.expires_at >= now) return;
    const generation = mine || resumable ? build!.lease.generation : read.lease.generation + 1;
    const lease = { owner: this.instance, expires_at: now + LEASE_TTL_MS, generation, version: this.version };
    if (!(await this.writeLease(lease, build, BUILD_LEASE_ID))) return;
    if (this.building !== generation) {
      await this.unfollow();
      this.building = generation;
      this.generation = generation;
      this.log.info({ generation, live, own: this.version }, 'building the search index of a newer version beside the live one');
      await this.createGeneration(generation, false);
      this.follow();
      return;
    }
    if (await this.builtUp(generation)) await this.swapTo(generation, read);
  }

  /** Whether the generation has applied every event the streams hold now. */
  private async builtUp(generation: number) {
    const { bus, streams, names } = this.options;
    const applied = await this.positions(physicalIndex(names.state, generation));
    for (const stream of streams)
      if ((applied[stream] ?? 0) < (await bus.jsm.streams.info(bus.streamName(stream))).state.last_seq) return false;
    return true;
  }

  /** Moves the aliases to the built generation and takes the feed's lease for it. */
  private async swapTo(generation: number, read: { seq_no: number; primary_term: number }) {
    const lease = { owner: this.instance, expires_at: Date.now() + LEASE_TTL_MS, generation, version: this.version };
    // The feed's lease first: an older instance that renews it meanwhile makes this wait for the next tick.
    if (!(await this.writeLease(lease, read))) return;
    await this.moveAliases(generation);
    this.building = null;
    this.holding = true;
    const build = await this.readLease(BUILD_LEASE_ID);
    if (build?.lease.owner === this.instance) await this.writeLease({ ...build.lease, expires_at: 0 }, build, BUILD_LEASE_ID);
    this.log.info({ generation, version: this.version }, 'the search index of the new version is live');
  }

  private async release() {
    const read = await this.readLease();
    if (read?.lease.owner === this.instance) await this.writeLease({ ...read.lease, expires_at: 0 }, read);
    this.holding = false;
    if (this.building !== null) {
      const build = await this.readLease(BUILD_LEASE_ID);
      if (build?.lease.owner === this.instance) await this.writeLease({ ...build.lease, expires_at: 0 }, build, BUILD_LEASE_ID);
      this.building = null;
    }
  }

  /**
   * Drops the index: a new generation (empty indices, the aliases moved to them at once, the old
   * ones deleted later), fed from the streams' start by this instance, which takes the lease; a holder
   * elsewhere notices at its next renewal and stops (it writes to its own generation only).
   */
  async rebuild() {
    await this.ticking.catch(() => {});
    for (;;) {
      const read = await this.readLease();
      const generation = (read?.lease.generation ?? 0) + 1;
      if (await this.writeLease({ owner: this.instance, expires_at: Date.now() + LEASE_TTL_MS, generation, version: this.version }, read)) {
        await this.unfollow();
        this.holding = true;
        this.generation = generation;
        break;
      }
    }
    await this.createGeneration(this.generation, false);
    await this.moveAliases(this.generation);
    this.follow();
  }

  /** The generation's physical indices, empty (with the aliases when `aliased`: a first start). */
  private async createGeneration(generation: number, aliased: boolean) {
    const { client, names } = this.options;
    const alias = (name: string) => (aliased ? { aliases: { [name]: {} } } : {});
    await createIndex(client, { index: physicalIndex(names.questions, generation), ...questionsIndex, ...alias(names.questions) });
    await createIndex(client, { index: physicalIndex(names.state, generation), ...stateIndex, ...alias(names.state) });
  }

  /** Points the aliases at the generation in one step (the others are deleted later: deleteRetired). */
  private async moveAliases(generation: number) {
    const { client, names } = this.options;
    const questions = physicalIndex(names.questions, generation);
    const state = physicalIndex(names.state, generation);
    const indices = await client.indices.getAlias({ index: `${names.questions}-g*,${names.state}-g*`, allow_no_indices: true });
    const removed = Object.entries(indices).flatMap(([index, { aliases }]) =>
      index === questions || index === state ? [] : Object.keys(aliases ?? {}).map((alias) => ({ remove: { index, alias } })),
    );
    await client.indices.updateAliases({
      actions: [...removed, { add: { index: questions, alias: names.questions } }, { add: { index: state, alias: names.state } }],
    });
  }

  private async unfollow() {
    const following = this.following;
    this.following = null;
    await following?.stop();
  }

  private follow() {
    const { client, names, bus, streams, handlers } = this.options;
    const generation = this.generation;
    const questionsIndexName = physicalIndex(names.questions, generation);
    const stateIndexName = physicalIndex(names.state, generation);
    let stopped = false;
    const log = this.log;
    let written = 0;
    let mergedSize = 0;
    let quiet: NodeJS.Timeout | undefined;
    // Ends the wait for a merge under way when the feed stops.
    const merging = new AbortController();
    const mergeWhenQuiet = () => {
      clearTimeout(quiet);
      if (written < Math.max(MERGE_MIN, MERGE_SHARE * mergedSize)) return;
      quiet = setTimeout(() => {
        if (stopped) return;
        mergedSize += written;
        written = 0;
        // In the engine's background: a million questions take minutes, and the index answers meanwhile.
        // The merged segment is searched once refreshed (the engine does not refresh on its own: mappings.ts).
        client.indices
          .forcemerge({ index: questionsIndexName, max_num_segments: 1, wait_for_completion: false })
          .then(async ({ task }) => {
            if (task !== undefined)
              await client.tasks.get(
                { task_id: String(task), wait_for_completion: true, timeout: '1h' },
                { requestTimeout: 3_600_000, signal: merging.signal },
              );
            if (!stopped) await client.indices.refresh({ index: questionsIndexName });
          })
          .catch((err) => {
            if (!stopped) log.warn({ err: (err as Error).message }, 'search index merge not started or not refreshed');
          });
      }, MERGE_QUIET_MS);
      quiet.unref();
    };

    // What this follower wrote to its generation (only the lease's holder writes there): read here first.
    const writtenQuestions = new LastWritten<number, QuestionDocument>(KEPT_WRITTEN);
    const writtenState = new Map<string, StateDocument>();
    const load = async (touched: ReturnType<RecordedChanges['touched']>): Promise<Loaded> => {
      const loaded: Loaded = { questions: new Map(), tags: new Map(), spaces: new Map(), users: new Map() };
      const unread: string[] = [];
      for (const id of touched.questions) {
        const doc = writtenQuestions.get(id);
        if (doc) loaded.questions.set(id, doc);
        else unread.push(String(id));
      }
      if (unread.length) {
        const { docs } = await client.mget<QuestionDocument>({ index: questionsIndexName, ids: unread });
        for (const d of sources(docs)) if (d) loaded.questions.set(d.id, d);
      }
      const stateIds = [
        ...[...touched.tags].map(stateId.tag),
        ...[...touched.spaces].map(stateId.space),
        ...[...touched.users].map(stateId.user),
      ];
      const keep = (source: StateDocument | undefined) => {
        if (source?.type === 'tag') loaded.tags.set(source.key, source);
        if (source?.type === 'space') loaded.spaces.set(source.space_id, source);
        if (source?.type === 'user') loaded.users!.set(source.user_id, source);
      };
      const unreadState = stateIds.filter((id) => {
        const doc = writtenState.get(id);
        keep(doc);
        return !doc;
      });
      if (unreadState.length) {
        const { docs } = await client.mget<StateDocument>({ index: stateIndexName, ids: unreadState });
        for (const source of sources(docs)) keep(source);
      }
      return loaded;
    };

    let lastRefresh = 0;
    const pause = sleeper();
    /** Makes what was written searchable (REFRESH_MIN_MS). */
    const refresh = async () => {
      const wait = lastRefresh + REFRESH_MIN_MS - Date.now();
      if (wait > 0) await pause.sleep(wait);
      lastRefresh = Date.now();
      await client.indices.refresh({ index: [questionsIndexName, stateIndexName] });
    };

    const apply = async (stream: ServiceName, messages: JsMsg[], live: boolean) => {
      if (!messages.length) return;
      const recorded = new RecordedChanges();
      // Large events' bodies come from the object store; one that cannot be read now fails the batch (retried).
      const bodies = await Promise.all(messages.map((msg) => eventBody(bus, stream, msg)));
      for (const [i, msg] of messages.entries()) {
        recorded.seq = msg.info.streamSequence;
        try {
          applyEvent(handlers, recorded, bodies[i]!.json());
        } catch (err) {
          // As in the local index: logged, skipped, applied by a rebuild after the fix.
          log.error({ err, seq: msg.info.streamSequence, subject: msg.subject }, 'event could not be applied to the search index; skipped');
        }
      }
      const { questions, state } = applyChanges(recorded.changes, await load(recorded.touched()));
      const requests = bulkRequests(questions, state, questionsIndexName, stateIndexName);
      if (stopped || !(this.holding || this.building === generation)) throw new Error('the feed lease was lost');
      if (requests.length) {
        // Every document of a batch once (by id): the requests' order among themselves does not matter.
        for (const result of await Promise.all(requests.map((operations) => client.bulk({ operations })))) {
          if (!result.errors) continue;
          const failed = result.items.find((i) => Object.values(i)[0]?.error);
          throw new Error(`bulk write failed: ${JSON.stringify(failed)}`);
        }
        for (const q of questions) writtenQuestions.set(q.id, q);
        for (const [id, doc] of state) writtenState.set(id, doc);
        // Live changes are searchable before their position is written; a catch-up refreshes with its last batch.
        if (live) await refresh();
      }
      const seq = messages[messages.length - 1]!.info.streamSequence;
      const position: PositionDocument = { type: 'position', key: bus.streamName(stream), seq };
      // Not refreshed: positions are read by id (realtime), never searched.
      await client.index({ index: stateIndexName, id: stateId.position(bus.streamName(stream)), document: position });
      written += questions.length;
      mergeWhenQuiet();
    };

    const followers = streams.map((stream) =>
      followStream({
        bus,
        consumer: async () => {
          const applied = (await this.positions(stateIndexName))[stream] ?? 0;
          return bus.js.consumers.get(bus.streamName(stream), { opt_start_seq: applied + 1 });
        },
        pull: BATCH * 2,
        batch: BATCH,
        apply: (messages, live) => apply(stream, messages, live),
        what: 'search index feed',
        log: log.child({ stream }),
      }),
    );
    this.following = {
      stop: async () => {
        stopped = true;
        pause.stop();
        merging.abort();
        clearTimeout(quiet);
        await Promise.all(followers.map((f) => f.stop()));
      },
    };
  }
}

import { hash, randomBytes } from 'node:crypto';
import { writeEvent } from '@kn/bus';
import { AppError, type Role, type ScimRequest } from '@kn/contracts';
import { type Db, isUniqueViolation, sql, type Tx } from '@kn/db';
import type { z } from 'zod';
import type { UserRow, UsersSchema } from '../../db/schema.ts';
import { applyGroupRoles } from '../groups.ts';
import { toSnapshot } from '../present.ts';
import { searchText, searchTextWithoutEmail } from '../search.ts';
import type { NetworkSettingsStore } from '../settings.ts';
import type { UsersDomain } from '../users.ts';
import { revokeAllTokens } from '../users.ts';
import { attribute, parseFilter, ScimFilterError } from './filter.ts';
import { applyPatch, type PatchOperation, ScimPatchError } from './patch.ts';
import {
  type GroupRow,
  groupInput,
  groupResource,
  invalidValue,
  requireSchema,
  ScimError,
  type UserInput,
  userInput,
  userResource,
  versionOf,
} from './resources.ts';
import { MAX_PAGE, resourceTypes, SCHEMA, schemaDocuments, serviceProviderConfig } from './schemas.ts';
import { filterSql } from './sql.ts';

type Request = z.output<typeof ScimRequest>;
type Json = Record<string, unknown>;
export interface ScimAnswer {
  status: number;
  body: unknown;
  etag: string | null;
  location: string | null;
}

const hashToken = (token: string) => hash('sha256', token);
const uniqueness = (what: string) => new ScimError(409, `${what} is taken`, 'uniqueness');
const notFound = (what: string) => new ScimError(404, `${what} not found`);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const USER_ID = /^[1-9]\d{0,9}$/;

/** The answer to GET one resource, with its ETag. */
const resourceAnswer = (status: number, body: Json): ScimAnswer => {
  const meta = body.meta as { version: string; location: string };
  return { status, body, etag: meta.version, location: status === 201 ? meta.location : null };
};

/**
 * The SCIM 2.0 service provider (RFC 7643/7644) over our users and the identity provider's groups
 * (docs/scim.md). The gateway hands every /scim/v2 request here unchanged; the answer is SCIM's.
 */
export function scimDomain(deps: { db: Db<UsersSchema>; settings: NetworkSettingsStore; users: UsersDomain }) {
  const { db, settings, users } = deps;

  async function authenticate(token: string) {
    const row = token
      ? await db
          .selectFrom('scim_tokens')
          .select(['id', 'created_by'])
          .where('token_hash', '=', hashToken(token))
          .where('revoked', 'is', null)
          .executeTakeFirst()
      : undefined;
    if (!row) throw new ScimError(401, 'a SCIM provisioning token is needed (Authorization: Bearer <token>)');
    return row;
  }

  async function groupsOf(userIds: number[]) {
    const map = new Map<number, Array<{ id: string; display_name: string }>>(userIds.map((id) => [id, []]));
    if (!userIds.length) return map;
    const rows = await db
      .selectFrom('group_members')
      .innerJoin('groups', 'groups.id', 'group_members.group_id')
      .select(['group_members.user_id', 'groups.id', 'groups.display_name'])
      .where('group_members.user_id', '=', sql<number>`any(${userIds}::int[])`)
      .orderBy('groups.display_name')
      .execute();
    for (const r of rows) map.get(r.user_id)?.push({ id: r.id, display_name: r.display_name });
    return map;
  }

  async function membersOf(groupIds: string[]) {
    const map = new Map<string, Array<{ id: number; display: string }>>(groupIds.map((id) => [id, []]));
    if (!groupIds.length) return map;
    const rows = await db
      .selectFrom('group_members')
      .innerJoin('users', 'users.id', 'group_members.user_id')
      .select(['group_members.group_id', 'users.id', 'users.firstname', 'users.lastname'])
      .where('group_members.group_id', '=', sql<string>`any(${groupIds}::uuid[])`)
      .orderBy('users.id')
      .execute();
    for (const r of rows) map.get(r.group_id)?.push({ id: r.id, display: `${r.firstname} ${r.lastname}`.trim() });
    return map;
  }

  async function userById(id: string, executor: Db<UsersSchema> | Tx<UsersSchema> = db, lock = false) {
    if (!USER_ID.test(id)) return undefined;
    let q = executor.selectFrom('users').selectAll().where('id', '=', Number(id)).where('is_deleted', '=', false);
    if (lock) q = q.forUpdate();
    return q.executeTakeFirst();
  }

  async function groupById(id: string, executor: Db<UsersSchema> | Tx<UsersSchema> = db, lock = false) {
    if (!UUID.test(id)) return undefined;
    let q = executor.selectFrom('groups').selectAll().where('id', '=', id);
    if (lock) q = q.forUpdate();
    return q.executeTakeFirst();
  }

  const renderUser = async (row: UserRow, base: string) => userResource(row, (await groupsOf([row.id])).get(row.id) ?? [], base);
  const renderGroup = async (row: GroupRow, base: string) => groupResource(row, (await membersOf([row.id])).get(row.id) ?? [], base);

  function checkVersion(ifMatch: string | null, updated: Date) {
    if (ifMatch === null || ifMatch.trim() === '*') return;
    const current = versionOf(updated);
    const strip = (v: string) => v.trim().replace(/^W\//, '');
    if (!ifMatch.split(',').some((v) => strip(v) === strip(current)))
      throw new ScimError(412, `the resource changed (its version is ${current})`);
  }

  /** `startIndex` and `count` (RFC 7644 §3.4.2.4): 1-based, non-numbers and values below 1 as 1 (and 0 for count). */
  function paging(query: Record<string, string>) {
    const number = (name: string) => {
      const v = attribute(query, name);
      if (v === undefined) return undefined;
      if (typeof v !== 'string' || !/^-?\d{1,12}$/.test(v)) throw invalidValue(`${name} must be an integer`);
      return Number(v);
    };
    const startIndex = Math.max(1, number('startIndex') ?? 1);
    const count = Math.min(MAX_PAGE, Math.max(0, number('count') ?? 100));
    return { startIndex, count };
  }

  function parseQueryFilter(query: Record<string, string>, resource: 'User' | 'Group') {
    const text = attribute(query, 'filter');
    if (typeof text !== 'string' || text.trim() === '') return undefined;
    try {
      return filterSql(parseFilter(text), resource);
    } catch (err) {
      if (err instanceof ScimFilterError) throw new ScimError(400, `filter: ${err.message}`, 'invalidFilter');
      throw err;
    }
  }

  /** `attributes` and `excludedAttributes` (RFC 7644 §3.4.2.5): top-level attributes; id, schemas and meta stay. */
  function project(resource: Json, query: Record<string, string>): Json {
    const list = (name: string) => {
      const v = attribute(query, name);
      return typeof v === 'string' && v.trim() ? v.split(',').map((a) => a.trim().split('.')[0]!.toLowerCase()) : null;
    };
    const only = list('attributes');
    const excluded = list('excludedAttributes');
    if (!only && !excluded) return resource;
    const always = new Set(['id', 'schemas', 'meta']);
    return Object.fromEntries(
      Object.entries(resource).filter(([k]) => {
        const key = k.toLowerCase();
        if (always.has(key)) return true;
        // `urn:…:User:department` keeps the extension's object.
        const named = (names: string[]) =>
          names.some((n) => n === key || (key.startsWith('urn:') && n.startsWith('urn') && key.startsWith(n.replace(/:[^:]*$/, ''))));
        if (only) return named(only);
        return !named(excluded!);
      }),
    );
  }

  function listAnswer(total: number, startIndex: number, items: Json[]): ScimAnswer {
    return {
      status: 200,
      body: { schemas: [SCHEMA.list], totalResults: total, startIndex, itemsPerPage: items.length, Resources: items },
      etag: null,
      location: null,
    };
  }

  async function listUsers(req: Request) {
    const { startIndex, count } = paging(req.query);
    const where = parseQueryFilter(req.query, 'User');
    let q = db.selectFrom('users').where('is_deleted', '=', false);
    if (where) q = q.where(where);
    const { total } = await q.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow();
    const rows = count
      ? await q
          .selectAll()
          .orderBy('id')
          .limit(count)
          .offset(startIndex - 1)
          .execute()
      : [];
    const groups = await groupsOf(rows.map((r) => r.id));
    const items = rows.map((r) => project(userResource(r, groups.get(r.id) ?? [], req.base_url), req.query));
    return listAnswer(Number(total), startIndex, items);
  }

  async function listGroups(req: Request) {
    const { startIndex, count } = paging(req.query);
    const where = parseQueryFilter(req.query, 'Group');
    let q = db.selectFrom('groups');
    if (where) q = q.where(where);
    const { total } = await q.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow();
    const rows = count
      ? await q
          .selectAll()
          .orderBy('created')
          .orderBy('id')
          .limit(count)
          .offset(startIndex - 1)
          .execute()
      : [];
    const members = await membersOf(rows.map((r) => r.id));
    const items = rows.map((r) => project(groupResource(r, members.get(r.id) ?? [], req.base_url), req.query));
    return listAnswer(Number(total), startIndex, items);
  }

  /** Writes a User resource's attributes onto a user; deactivation ends their sessions and tokens. */
  async function saveUser(tx: Tx<UsersSchema>, current: UserRow, input: UserInput, actorId: number) {
    const fields = {
      email: input.email,
      user_name: input.user_name,
      firstname: input.firstname,
      lastname: input.lastname,
      external_id: input.external_id,
      is_active: input.is_active,
      position: input.position,
      department: input.department,
      company: input.company,
      ...(input.language ? { language: input.language } : {}),
    };
    const named = { ...current, ...fields };
    const updated = await tx
      .updateTable('users')
      .set({ ...fields, search_text: searchText(named), search_text_without_email: searchTextWithoutEmail(named), updated: new Date() })
      .where('id', '=', current.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (!input.is_active && current.is_active) await revokeAllTokens(tx, current.id);
    await writeEvent(tx, 'users.user.updated.v1', { user: toSnapshot(updated) }, { actorId });
    return updated;
  }

  /** Runs a change; a unique index refusing it is SCIM's 409 uniqueness. */
  async function change<T>(what: string, work: (tx: Tx<UsersSchema>) => Promise<T>): Promise<T> {
    try {
      return await db.transaction().execute(work);
    } catch (err) {
      if (isUniqueViolation(err)) throw uniqueness(what);
      throw err;
    }
  }

  async function createUser(req: Request, actorId: number, revoked: number[]) {
    const input = userInput(requireSchema(req.body, SCHEMA.user));
    const network = await settings.get();
    const row = await change('userName, the email address or externalId', async (tx) => {
      const taken = await tx
        .selectFrom('users')
        .select('id')
        .where('is_deleted', '=', false)
        .where((eb) =>
          eb.or([
            eb(eb.fn('lower', [sql`coalesce(user_name, email)`]), '=', (input.user_name ?? input.email).toLowerCase()),
            eb(eb.fn('lower', ['email']), '=', input.email.toLowerCase()),
          ]),
        )
        .executeTakeFirst();
      if (taken) throw uniqueness('userName or the email address');
      const created = await users.create(
        {
          email: input.email,
          firstname: input.firstname,
          lastname: input.lastname,
          language: input.language ?? network.default_language,
          position: input.position,
          department: input.department,
          company: input.company,
        },
        actorId,
        tx,
        { user_name: input.user_name, external_id: input.external_id, is_active: input.is_active },
      );
      revoked.push(...(await applyGroupRoles(tx, [created.id], network.idp_group_mappings, actorId)));
      return (await userById(String(created.id), tx))!;
    });
    return resourceAnswer(201, await renderUser(row, req.base_url));
  }

  async function replaceUser(req: Request, id: string, actorId: number, revoked: number[], patch?: PatchOperation[]) {
    const row = await change('userName, the email address or externalId', async (tx) => {
      const current = await userById(id, tx, true);
      if (!current) throw notFound('user');
      checkVersion(req.if_match, current.updated);
      let resource: Json;
      if (patch) {
        // displayName follows the name: a PATCH that removes the name removes it.
        const { displayName: _derived, ...rendered } = await renderUser(current, req.base_url);
        resource = applyPatch(rendered, patch, [SCHEMA.enterprise]);
      } else resource = requireSchema(req.body, SCHEMA.user);
      const input = userInput(resource);
      const saved = await saveUser(tx, current, input, actorId);
      if (current.is_active !== saved.is_active || saved.email !== current.email) revoked.push(current.id);
      return saved;
    });
    return resourceAnswer(200, await renderUser(row, req.base_url));
  }

  /** The members a Group resource names, all live users (else 400, nothing changed). */
  async function checkMembers(tx: Tx<UsersSchema>, ids: number[]) {
    if (!ids.length) return;
    const found = await tx
      .selectFrom('users')
      .select('id')
      .where('id', '=', sql<number>`any(${ids}::int[])`)
      .where('is_deleted', '=', false)
      .execute();
    if (found.length !== ids.length) {
      const known = new Set(found.map((r) => r.id));
      throw invalidValue(
        `members: no user ${ids
          .filter((i) => !known.has(i))
          .slice(0, 10)
          .join(', ')}`,
      );
    }
  }

  async function setMembers(tx: Tx<UsersSchema>, groupId: string, ids: number[], actorId: number, revoked: number[]) {
    await checkMembers(tx, ids);
    const before = await tx.selectFrom('group_members').select('user_id').where('group_id', '=', groupId).execute();
    const old = new Set(before.map((r) => r.user_id));
    const next = new Set(ids);
    const removed = [...old].filter((i) => !next.has(i));
    const added = ids.filter((i) => !old.has(i));
    if (removed.length)
      await tx
        .deleteFrom('group_members')
        .where('group_id', '=', groupId)
        .where('user_id', '=', sql<number>`any(${removed}::int[])`)
        .execute();
    for (let i = 0; i < added.length; i += 1000)
      await tx
        .insertInto('group_members')
        .values(added.slice(i, i + 1000).map((user_id) => ({ group_id: groupId, user_id })))
        .execute();
    const mappings = (await settings.get(tx)).idp_group_mappings;
    revoked.push(...(await applyGroupRoles(tx, [...removed, ...added], mappings, actorId)));
  }

  /** The roles of these members follow their groups again (after a rename or deletion of one). */
  async function regrant(tx: Tx<UsersSchema>, members: Array<{ user_id: number }>, actorId: number, revoked: number[]) {
    const mappings = (await settings.get(tx)).idp_group_mappings;
    revoked.push(
      ...(await applyGroupRoles(
        tx,
        members.map((m) => m.user_id),
        mappings,
        actorId,
      )),
    );
  }

  async function createGroup(req: Request, actorId: number, revoked: number[]) {
    const input = groupInput(requireSchema(req.body, SCHEMA.group));
    const row = await change('displayName', async (tx) => {
      const created = await tx
        .insertInto('groups')
        .values({ display_name: input.display_name, external_id: input.external_id })
        .returningAll()
        .executeTakeFirstOrThrow();
      await setMembers(tx, created.id, input.member_ids, actorId, revoked);
      return created;
    });
    return resourceAnswer(201, await renderGroup(row, req.base_url));
  }

  async function replaceGroup(req: Request, id: string, actorId: number, revoked: number[], patch?: PatchOperation[]) {
    const row = await change('displayName', async (tx) => {
      const current = await groupById(id, tx, true);
      if (!current) throw notFound('group');
      checkVersion(req.if_match, current.updated);
      const resource = patch ? applyPatch(await renderGroup(current, req.base_url), patch) : requireSchema(req.body, SCHEMA.group);
      const input = groupInput(resource);
      const updated = await tx
        .updateTable('groups')
        .set({ display_name: input.display_name, external_id: input.external_id, updated: new Date() })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await setMembers(tx, id, input.member_ids, actorId, revoked);
      // Renaming a group changes whom the mappings give roles.
      if (updated.display_name !== current.display_name) {
        const members = await tx.selectFrom('group_members').select('user_id').where('group_id', '=', id).execute();
        await regrant(tx, members, actorId, revoked);
      }
      return updated;
    });
    return resourceAnswer(200, await renderGroup(row, req.base_url));
  }

  async function deleteGroup(req: Request, id: string, actorId: number, revoked: number[]) {
    await db.transaction().execute(async (tx) => {
      const current = await groupById(id, tx, true);
      if (!current) throw notFound('group');
      checkVersion(req.if_match, current.updated);
      const members = await tx.deleteFrom('group_members').where('group_id', '=', id).returning('user_id').execute();
      await tx.deleteFrom('groups').where('id', '=', id).execute();
      await regrant(tx, members, actorId, revoked);
    });
    return { status: 204, body: null, etag: null, location: null };
  }

  async function deleteUser(req: Request, id: string, actorId: number, revoked: number[]) {
    const current = await userById(id);
    if (!current) throw notFound('user');
    checkVersion(req.if_match, current.updated);
    await users.remove(current.id, { id: actorId, roles: [] as Role[], token_id: null });
    await db.deleteFrom('group_members').where('user_id', '=', current.id).execute();
    revoked.push(current.id);
    return { status: 204, body: null, etag: null, location: null };
  }

  /**
   * POST /.search (RFC 7644 §3.4.3): users, then groups, paged as one list. A filter naming an
   * attribute only one of them has matches none of the other.
   */
  async function searchAll(req: Request): Promise<ScimAnswer> {
    const { startIndex, count } = paging(req.query);
    const listed = async (list: (r: Request) => Promise<ScimAnswer>, start: number, n: number) => {
      try {
        return (await list({ ...req, query: { ...req.query, startIndex: String(start), count: String(n) } })).body as {
          totalResults: number;
          Resources: Json[];
        };
      } catch (err) {
        if (err instanceof ScimError && err.scimType === 'invalidFilter') return err;
        throw err;
      }
    };
    const users = await listed(listUsers, startIndex, count);
    const usersTotal = users instanceof ScimError ? 0 : users.totalResults;
    const fromUsers = users instanceof ScimError ? [] : users.Resources;
    const groups = await listed(listGroups, Math.max(1, startIndex - usersTotal), count - fromUsers.length);
    if (users instanceof ScimError && groups instanceof ScimError) throw users;
    const fromGroups = groups instanceof ScimError ? [] : groups.Resources;
    return listAnswer(usersTotal + (groups instanceof ScimError ? 0 : groups.totalResults), startIndex, [...fromUsers, ...fromGroups]);
  }

  function searchQuery(body: unknown): Record<string, string> {
    const request = requireSchema(body, SCHEMA.search);
    const query: Record<string, string> = {};
    for (const name of ['filter', 'startIndex', 'count', 'attributes', 'excludedAttributes']) {
      const value = attribute(request, name);
      if (value === undefined || value === null) continue;
      if (Array.isArray(value)) query[name] = value.join(',');
      else if (typeof value === 'string' || typeof value === 'number') query[name] = String(value);
      else throw new ScimError(400, `${name} must be a string`, 'invalidValue');
    }
    return query;
  }

  function patchOperations(body: unknown): PatchOperation[] {
    const message = requireSchema(body, SCHEMA.patch);
    const ops = attribute(message, 'Operations');
    if (!Array.isArray(ops) || ops.length === 0) throw new ScimError(400, 'Operations must be a non-empty list', 'invalidSyntax');
    if (ops.length > 1000) throw new ScimError(400, 'at most 1000 Operations', 'invalidSyntax');
    return ops.map((o) => {
      if (!o || typeof o !== 'object') throw new ScimError(400, 'each operation is an object', 'invalidSyntax');
      const path = attribute(o, 'path');
      if (path !== undefined && typeof path !== 'string') throw new ScimError(400, 'path must be a string', 'invalidPath');
      return { op: String(attribute(o, 'op') ?? ''), path: path as string | undefined, value: attribute(o, 'value') };
    });
  }

  async function route(req: Request, actorId: number, revoked: number[]): Promise<ScimAnswer> {
    const parts = req.path.split('/').filter(Boolean);
    const [collection, id, ...rest] = parts;
    const method = req.method;
    const one = (body: unknown): ScimAnswer => ({ status: 200, body, etag: null, location: null });
    const found = <T>(list: T[], pick: (t: T) => string) => {
      const hit = list.find((t) => pick(t) === id);
      if (!hit) throw notFound(`${collection}/${id}`);
      return one(hit);
    };
    if (rest.length || !collection) throw notFound(req.path);
    if (collection === '.search' && !id && method === 'POST') return searchAll({ ...req, query: searchQuery(req.body) });
    const name = collection.toLowerCase();
    const readOnly = ['serviceproviderconfig', 'resourcetypes', 'schemas'].includes(name);
    if (readOnly && method !== 'GET') throw new ScimError(405, `${collection} is read-only`);
    if (name === 'serviceproviderconfig' && !id) return one(serviceProviderConfig(req.base_url));
    if (name === 'resourcetypes' || name === 'schemas') {
      const list: Array<{ id: string }> = name === 'resourcetypes' ? resourceTypes(req.base_url) : schemaDocuments(req.base_url);
      if (id) return found(list, (t) => t.id);
      return listAnswer(list.length, 1, list as unknown as Json[]);
    }
    if (name !== 'users' && name !== 'groups') throw notFound(req.path);
    const users = name === 'users';
    if (id === '.search' && method === 'POST') {
      // POST …/.search (RFC 7644 §3.4.3): the query parameters of a list, in a body.
      const search = searchQuery(req.body);
      return users ? listUsers({ ...req, query: search }) : listGroups({ ...req, query: search });
    }
    if (!id) {
      if (method === 'GET') return users ? listUsers(req) : listGroups(req);
      if (method === 'POST') return users ? createUser(req, actorId, revoked) : createGroup(req, actorId, revoked);
      throw new ScimError(405, `${method} is not a method of /${collection}`);
    }
    switch (method) {
      case 'GET': {
        const row = users ? await userById(id) : await groupById(id);
        if (!row) throw notFound(users ? 'user' : 'group');
        const resource = users ? await renderUser(row as UserRow, req.base_url) : await renderGroup(row as GroupRow, req.base_url);
        return { ...resourceAnswer(200, project(resource, req.query)), etag: (resource.meta as { version: string }).version };
      }
      case 'PUT':
        return users ? replaceUser(req, id, actorId, revoked) : replaceGroup(req, id, actorId, revoked);
      case 'PATCH': {
        const ops = patchOperations(req.body);
        return users ? replaceUser(req, id, actorId, revoked, ops) : replaceGroup(req, id, actorId, revoked, ops);
      }
      case 'DELETE':
        return users ? deleteUser(req, id, actorId, revoked) : deleteGroup(req, id, actorId, revoked);
      default:
        throw new ScimError(405, `${method} is not a method of /${collection}/{id}`);
    }
  }

  return {
    /** Answers a SCIM request; `revoked` are the users whose cached authentications must go. */
    async handle(req: Request): Promise<{ answer: ScimAnswer; revoked: number[] }> {
      const revoked: number[] = [];
      try {
        const token = await authenticate(req.token);
        return { answer: await route(req, token.created_by, revoked), revoked };
      } catch (err) {
        const error =
          err instanceof ScimError
            ? err
            : err instanceof ScimPatchError
              ? new ScimError(400, err.message, err.scimType)
              : err instanceof AppError && err.status < 500
                ? new ScimError(err.status, err.message, err.status === 409 ? 'uniqueness' : undefined)
                : undefined;
        if (!error) throw err;
        return { answer: { status: error.status, body: error.toBody(), etag: null, location: null }, revoked: [] };
      }
    },

    async mintToken(name: string, createdBy: number) {
      const token = `kn_scim_${randomBytes(32).toString('base64url')}`;
      const row = await db
        .insertInto('scim_tokens')
        .values({ name, token_hash: hashToken(token), created_by: createdBy })
        .returningAll()
        .executeTakeFirstOrThrow();
      return { ...presentToken(row), token };
    },
    async listTokens() {
      const rows = await db.selectFrom('scim_tokens').selectAll().orderBy('created').execute();
      return { items: rows.map(presentToken) };
    },
    async revokeToken(id: string) {
      const row = await db
        .updateTable('scim_tokens')
        .set({ revoked: new Date() })
        .where('id', '=', id)
        .where('revoked', 'is', null)
        .returning('id')
        .executeTakeFirst();
      if (!row) throw new AppError(404, 'NotFound', 'SCIM token not found (or revoked already)');
    },
  };
}

function presentToken(row: { id: string; name: string; created: Date; created_by: number; revoked: Date | null }) {
  return {
    id: row.id,
    name: row.name,
    created: row.created.toISOString(),
    created_by: row.created_by,
    revoked: row.revoked?.toISOString() ?? null,
  };
}

import { writeEvent } from '@kn/bus';
import {
  type Actor,
  conflict,
  forbidden,
  type ImportedUser,
  notFound,
  type Role,
  Roles,
  type UserSnapshot,
  type usersOperations,
  validationError,
} from '@kn/contracts';
import { type Db, isUniqueViolation, json, sql, type Tx, turnBatched } from '@kn/db';
import type { z } from 'zod';
import type { UsersConfig } from '../config.ts';
import type { UserRow, UsersSchema } from '../db/schema.ts';
import { rolesFor, withGroupRoles } from './group-roles.ts';
import { groupNamesOf } from './groups.ts';
import { hashPassword, verifyPassword } from './passwords.ts';
import { isUserAdmin, present, seesOthersEmails, toSnapshot, type Viewer } from './present.ts';
import { queryTerms, searchText, searchTextWithoutEmail } from './search.ts';
import type { NetworkSettingsStore } from './settings.ts';

type CreateUser = z.output<typeof usersOperations.createUser.body>;
type UpdateUser = z.output<typeof usersOperations.updateUser.body>;
type ListQuery = z.output<typeof usersOperations.listUsers.query>;

const DEFAULT_ROLES: Role[] = ['user', 'manager'];
const emailTaken = () => conflict('a user with this email exists');

export function usersDomain(deps: { db: Db<UsersSchema>; config: UsersConfig; settings: NetworkSettingsStore }) {
  const { db, config, settings } = deps;

  /**
   * A user by id, read with the other reads of the same event-loop turn: one query (one socket
   * write, one round trip) for all the users that the requests of one NATS read ask for. One query
   * per `GET /users/:id` made its socket writes to Postgres a third of the service's CPU under load
   * (`PROFILE_DIR=… pnpm bench:users`); batched, the service's CPU per request halved.
   */
  const readUser = turnBatched(async (ids: number[]) => {
    const rows = await db.selectFrom('users').selectAll().where('id', '=', sql<number>`any(${ids}::int[])`).execute();
    return new Map(rows.map((r) => [r.id, r]));
  });

  async function create(
    input: CreateUser,
    actorId: number | null,
    tx: Tx<UsersSchema>,
    /** What SCIM provisioning sets beside (docs/scim.md). */
    provisioned: { user_name?: string | null; external_id?: string | null; is_active?: boolean } = {},
  ): Promise<UserRow> {
    const network = await settings.get(tx);
    const roles = input.roles ?? (network.user_creation_default_roles as Role[] | null) ?? DEFAULT_ROLES;
    const customfields = input.customfields ?? {};
    try {
      const row = await tx
        .insertInto('users')
        .values({
          email: input.email,
          firstname: input.firstname,
          lastname: input.lastname,
          language: input.language,
          gender: input.gender ?? null,
          location: input.location ?? null,
          about: input.about ?? null,
          company: input.company ?? null,
          department: input.department ?? null,
          position: input.position ?? null,
          country: input.country ?? null,
          customfields: json(customfields),
          roles: [...new Set(roles)],
          password_hash: input.password ? await hashPassword(input.password, config.SCRYPT_COST) : null,
          is_hidden: input.is_hidden ?? false,
          is_system: input.is_system ?? false,
          search_text: searchText({ ...input, customfields }),
          search_text_without_email: searchTextWithoutEmail({ ...input, customfields }),
          ...provisioned,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await writeEvent(tx, 'users.user.created.v1', { user: toSnapshot(row) }, { actorId });
      return row;
    } catch (err) {
      if (isUniqueViolation(err)) throw emailTaken();
      throw err;
    }
  }

  return {
    create,

    async createByAdmin(input: CreateUser, actor: Actor) {
      const row = await db.transaction().execute((tx) => create(input, actor.id, tx));
      const network = await settings.get();
      return present(row, actor, { anonymize: network.anonymize_users_email });
    },

    /** First start: the administrator with every role, when the network has no user at all. */
    async ensureAdmin(): Promise<{ created: boolean; email: string }> {
      return db.transaction().execute(async (tx) => {
        // Several instances may start at once; one creates the administrator.
        await sql`select pg_advisory_xact_lock(hashtext('users.ensure_admin'))`.execute(tx);
        const any = await tx.selectFrom('users').select('id').limit(1).executeTakeFirst();
        if (any) return { created: false, email: config.ADMIN_EMAIL };
        await create(
          {
            email: config.ADMIN_EMAIL,
            password: config.ADMIN_PASSWORD,
            firstname: 'Network',
            lastname: 'Administrator',
            language: 'en',
            roles: [...Roles],
          },
          null,
          tx,
        );
        // Projections elsewhere learn the network's settings (its name, at least) from the start.
        await writeEvent(tx, 'users.network-settings.updated.v1', { settings: await settings.get(tx) }, { actorId: null });
        return { created: true, email: config.ADMIN_EMAIL };
      });
    },

    /**
     * Creates the users an importer hands over that were not imported before. A user is known by
     * external_id; an email that already belongs to a live user is taken to be the same person, who
     * then keeps their account and gets the external_id. Returns the id of every user in the batch.
     */
    async importMany(input: ImportedUser[], actorId: number | null) {
      return db.transaction().execute(async (tx) => {
        const batch = [...new Map(input.map((u) => [u.external_id, u])).values()];
        const ids: Record<string, number> = {};
        const known = await tx
          .selectFrom('users')
          .select(['id', 'external_id'])
          .where(
            'external_id',
            'in',
            batch.map((u) => u.external_id),
          )
          .execute();
        for (const row of known) ids[row.external_id!] = row.id;
        const sameEmail = await tx
          .selectFrom('users')
          .select(['id', 'email'])
          .where('is_deleted', '=', false)
          .where(
            (eb) => eb.fn('lower', ['email']),
            'in',
            batch.map((u) => u.email.toLowerCase()),
          )
          .execute();
        const byEmail = new Map(sameEmail.map((r) => [r.email.toLowerCase(), r.id]));
        const network = await settings.get(tx);
        const roles = (network.user_creation_default_roles as Role[] | null) ?? DEFAULT_ROLES;
        let created = 0;
        for (const user of batch) {
          if (ids[user.external_id]) continue;
          const existing = byEmail.get(user.email.toLowerCase());
          if (existing) {
            await tx
              .updateTable('users')
              .set({ external_id: user.external_id })
              .where('id', '=', existing)
              .where('external_id', 'is', null)
              .execute();
            ids[user.external_id] = existing;
            continue;
          }
          const row = await tx
            .insertInto('users')
            .values({
              email: user.email,
              firstname: user.firstname,
              lastname: user.lastname,
              language: user.language,
              location: user.location ?? null,
              about: user.about ?? null,
              roles,
              is_system: user.is_system ?? false,
              first_seen: new Date(user.created),
              last_seen: user.last_seen ? new Date(user.last_seen) : null,
              created: new Date(user.created),
              external_id: user.external_id,
              password_hash: null,
              gender: null,
              company: null,
              department: null,
              position: null,
              country: null,
              search_text: searchText(user),
              search_text_without_email: searchTextWithoutEmail(user),
            })
            .returningAll()
            .executeTakeFirstOrThrow();
          await writeEvent(tx, 'users.user.created.v1', { user: toSnapshot(row) }, { actorId });
          ids[user.external_id] = row.id;
          byEmail.set(user.email.toLowerCase(), row.id);
          created++;
        }
        return { ids, created };
      });
    },

    /** Users by id as the actor sees them, in the order asked; unknown ids are left out. */
    async getMany(ids: readonly number[], actor: Viewer) {
      if (!ids.length) return [];
      const rows = await db
        .selectFrom('users')
        .selectAll()
        .where('id', 'in', [...new Set(ids)])
        .execute();
      const network = await settings.get();
      const byId = new Map(rows.map((r) => [r.id, present(r, actor, { anonymize: network.anonymize_users_email })]));
      return ids.flatMap((id) => byId.get(id) ?? []);
    },

    async get(id: number, actor: Actor) {
      const row = await readUser(id);
      if (!row) throw notFound('user');
      const network = await settings.get();
      return present(row, actor, { anonymize: network.anonymize_users_email });
    },

    async update(id: number, input: UpdateUser, actor: Actor) {
      const admin = isUserAdmin(actor);
      if (actor.id !== id && !admin) throw forbidden('only the user themself or a user_admin may change a user');
      if (!admin && (input.roles !== undefined || input.is_hidden !== undefined || input.is_system !== undefined))
        throw forbidden('only a user_admin may change roles, is_hidden or is_system');
      const row = await db.transaction().execute(async (tx) => {
        const current = await tx.selectFrom('users').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
        if (!current || current.is_deleted) throw notFound('user');
        const { password, current_password, customfields, roles, ...fields } = input;
        const emailChanges = fields.email !== undefined && fields.email.toLowerCase() !== current.email.toLowerCase();
        // A token alone must not be enough to take an account over.
        if (actor.id === id && (password !== undefined || emailChanges)) {
          if (current_password === undefined)
            throw validationError('current_password is needed to change your own password or email', [
              { path: 'current_password', code: 'invalid_type', message: 'required to change your own password or email' },
            ]);
          if (!(await verifyPassword(current_password, current.password_hash, config.SCRYPT_COST)))
            throw forbidden('current_password is wrong');
        }
        const merged = { ...current, ...fields, customfields: customfields ?? current.customfields };
        // Roles set by hand replace those set by hand before; the identity provider's groups still add theirs.
        const byHand = roles
          ? withGroupRoles(
              { roles: [...new Set(roles)], group_roles: [] },
              rolesFor((await groupNamesOf(tx, [id])).get(id) ?? [], (await settings.get(tx)).idp_group_mappings),
            )
          : undefined;
        try {
          const updated = await tx
            .updateTable('users')
            .set({
              ...fields,
              ...(customfields ? { customfields: json(customfields) } : {}),
              ...(byHand ? { roles: byHand.roles, group_roles: byHand.group_roles } : {}),
              ...(password ? { password_hash: await hashPassword(password, config.SCRYPT_COST) } : {}),
              search_text: searchText(merged),
              search_text_without_email: searchTextWithoutEmail(merged),
              updated: new Date(),
            })
            .where('id', '=', id)
            .returningAll()
            .executeTakeFirstOrThrow();
          if (password) await revokeAllTokens(tx, id);
          await writeEvent(tx, 'users.user.updated.v1', { user: toSnapshot(updated) }, { actorId: actor.id });
          return updated;
        } catch (err) {
          if (isUniqueViolation(err)) throw emailTaken();
          throw err;
        }
      });
      const network = await settings.get();
      return present(row, actor, { anonymize: network.anonymize_users_email });
    },

    async remove(id: number, actor: Actor) {
      await db.transaction().execute(async (tx) => {
        const row = await tx
          .updateTable('users')
          .set({ is_deleted: true, updated: new Date() })
          .where('id', '=', id)
          .where('is_deleted', '=', false)
          .returning('id')
          .executeTakeFirst();
        if (!row) throw notFound('user');
        await revokeAllTokens(tx, id);
        await writeEvent(tx, 'users.user.deleted.v1', { user_id: id }, { actorId: actor.id });
      });
    },

    async list(query: ListQuery, actor: Actor, selfHref: string) {
      const admin = isUserAdmin(actor);
      const include = new Set(query.include ?? []);
      if (include.size && !admin) throw forbidden('include needs the user_admin role');
      if (query.deanonymize_users_email && !admin) throw forbidden('deanonymize_users_email needs the user_admin role');
      if (query.role?.length && !admin) throw forbidden('the role filter needs the user_admin role');
      const terms = query.query ? queryTerms(query.query) : [];
      // A query of punctuation alone is well-formed and has no word to find: it matches nobody.
      if (query.query !== undefined && query.query.trim() !== '' && terms.length === 0)
        return { total: 0, _links: { self: { href: selfHref } }, items: [] };

      const network = await settings.get();
      const emails = { anonymize: network.anonymize_users_email, deanonymize: query.deanonymize_users_email };
      // A search by email would undo the disguise: only callers who see the real emails search them.
      const searched = seesOthersEmails(actor, emails) ? 'search_text' : 'search_text_without_email';

      let base = db.selectFrom('users');
      if (!include.has('deleted')) base = base.where('is_deleted', '=', false);
      if (!include.has('hidden')) base = base.where('is_hidden', '=', false);
      if (!include.has('system')) base = base.where('is_system', '=', false);
      if (query.role?.length) base = base.where(sql<boolean>`roles && ${sql.val(query.role)}::text[]`);
      for (const term of terms) base = base.where(searched, 'like', `% ${term}%`);

      const { total } = await base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      let rows = base.selectAll();
      if (query.sort?.length) {
        for (const criterion of query.sort) {
          const [field, direction = 'asc'] = criterion.split('.') as [keyof UserRow, 'asc' | 'desc'];
          rows = rows.orderBy(field, direction);
        }
        rows = rows.orderBy('id', 'asc');
      } else {
        if (terms.length) {
          // Exact (whole-word) matches of every term first, then the rest of the prefix matches.
          const exact = terms.map((t) => sql<number>`(${sql.ref(searched)} like ${`% ${t} %`})::int`);
          rows = rows.orderBy(sql`${sql.join(exact, sql` + `)}`, 'desc');
        }
        rows = rows.orderBy('lastname').orderBy('firstname').orderBy('id');
      }
      const items = await rows.limit(query.limit).offset(query.offset).execute();
      return { total, _links: { self: { href: selfHref } }, items: items.map((row) => present(row, actor, emails)) };
    },
  };
}

export async function revokeAllTokens(tx: Tx<UsersSchema>, userId: number) {
  await tx.updateTable('tokens').set({ revoked: new Date() }).where('user_id', '=', userId).where('revoked', 'is', null).execute();
}

export type UsersDomain = ReturnType<typeof usersDomain>;
export type { UserSnapshot };

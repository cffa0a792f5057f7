import { sql } from '@kn/db';
import type { RawBuilder } from 'kysely';
import { type CompareOp, type Filter, ScimFilterError } from './filter.ts';
import { SCHEMA } from './schemas.ts';

/**
 * SCIM filters as SQL over the users and groups tables: lists filter in Postgres, by its indexes
 * (`userName eq` is an index look-up), never by reading every resource.
 */

interface Column {
  expr: RawBuilder<unknown>;
  type: 'string' | 'boolean' | 'dateTime';
  /** Compared as written (ids); every other string case-insensitively. */
  caseExact?: boolean;
}

const enterprise = SCHEMA.enterprise.toLowerCase();
const meta = {
  'meta.created': { expr: sql`created`, type: 'dateTime' },
  'meta.lastmodified': { expr: sql`updated`, type: 'dateTime' },
} satisfies Record<string, Column>;

const userColumns: Record<string, Column> = {
  id: { expr: sql`id::text`, type: 'string', caseExact: true },
  username: { expr: sql`coalesce(user_name, email)`, type: 'string' },
  externalid: { expr: sql`external_id`, type: 'string', caseExact: true },
  'name.givenname': { expr: sql`firstname`, type: 'string' },
  'name.familyname': { expr: sql`lastname`, type: 'string' },
  'name.formatted': { expr: sql`(firstname || ' ' || lastname)`, type: 'string' },
  displayname: { expr: sql`(firstname || ' ' || lastname)`, type: 'string' },
  emails: { expr: sql`email`, type: 'string' },
  'emails.value': { expr: sql`email`, type: 'string' },
  'emails.type': { expr: sql`'work'::text`, type: 'string' },
  'emails.primary': { expr: sql`true`, type: 'boolean' },
  active: { expr: sql`is_active`, type: 'boolean' },
  title: { expr: sql`position`, type: 'string' },
  [`${enterprise}:department`]: { expr: sql`department`, type: 'string' },
  [`${enterprise}:organization`]: { expr: sql`company`, type: 'string' },
  ...meta,
};

const groupColumns: Record<string, Column> = {
  id: { expr: sql`id::text`, type: 'string', caseExact: true },
  displayname: { expr: sql`display_name`, type: 'string' },
  externalid: { expr: sql`external_id`, type: 'string', caseExact: true },
  ...meta,
};

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

function compare(column: Column, op: CompareOp, value: string | number | boolean | null, attr: string): RawBuilder<boolean> {
  const { expr } = column;
  if (value === null) {
    if (op === 'eq') return sql<boolean>`(${expr} is null)`;
    if (op === 'ne') return sql<boolean>`(${expr} is not null)`;
    throw new ScimFilterError(`${attr} ${op} null compares nothing`);
  }
  if (column.type === 'boolean') {
    if (typeof value !== 'boolean' || (op !== 'eq' && op !== 'ne'))
      throw new ScimFilterError(`${attr} is true or false: only eq and ne apply`);
    return op === 'eq' ? sql<boolean>`(${expr} = ${value})` : sql<boolean>`(${expr} is distinct from ${value})`;
  }
  if (typeof value !== 'string') throw new ScimFilterError(`${attr} is compared with a quoted string`);
  if (column.type === 'dateTime') {
    if (Number.isNaN(Date.parse(value)) || ['co', 'sw', 'ew'].includes(op)) throw new ScimFilterError(`${attr} ${op} needs a date-time`);
    const at = new Date(value);
    const sqlOp = { eq: '=', ne: '<>', gt: '>', ge: '>=', lt: '<', le: '<=' }[op as 'eq'];
    return sql<boolean>`(${expr} ${sql.raw(sqlOp)} ${at})`;
  }
  const left = column.caseExact ? expr : sql`lower(${expr})`;
  const right = column.caseExact ? value : value.toLowerCase();
  switch (op) {
    case 'eq':
      return sql<boolean>`(${left} = ${right})`;
    case 'ne':
      return sql<boolean>`(${left} is distinct from ${right})`;
    case 'co':
      return sql<boolean>`(${left} like ${`%${escapeLike(right)}%`})`;
    case 'sw':
      return sql<boolean>`(${left} like ${`${escapeLike(right)}%`})`;
    case 'ew':
      return sql<boolean>`(${left} like ${`%${escapeLike(right)}`})`;
    default: {
      const sqlOp = { gt: '>', ge: '>=', lt: '<', le: '<=' }[op];
      return sql<boolean>`(${left} ${sql.raw(sqlOp)} ${right} collate "C")`;
    }
  }
}

function compile(filter: Filter, resource: 'User' | 'Group', prefix: string): RawBuilder<boolean> {
  switch (filter.op) {
    case 'and':
      return sql<boolean>`(${compile(filter.left, resource, prefix)} and ${compile(filter.right, resource, prefix)})`;
    case 'or':
      return sql<boolean>`(${compile(filter.left, resource, prefix)} or ${compile(filter.right, resource, prefix)})`;
    case 'not':
      return sql<boolean>`(not coalesce(${compile(filter.filter, resource, prefix)}, false))`;
    case 'value':
      if (prefix) throw new ScimFilterError('value filters do not nest');
      return compile(filter.filter, resource, `${filter.attr}.`);
    default: {
      const attr = `${prefix}${filter.attr}`
        .toLowerCase()
        .replace(`${(resource === 'User' ? SCHEMA.user : SCHEMA.group).toLowerCase()}:`, '');
      if (resource === 'Group' && (attr === 'members' || attr === 'members.value')) {
        if (filter.op === 'pr') return sql<boolean>`exists (select 1 from group_members m where m.group_id = groups.id)`;
        if (filter.op !== 'eq' || typeof filter.value !== 'string') throw new ScimFilterError('members is filtered with eq and a user id');
        const id = /^\d{1,9}$/.test(filter.value) ? Number(filter.value) : 0;
        return sql<boolean>`exists (select 1 from group_members m where m.group_id = groups.id and m.user_id = ${id})`;
      }
      const column = (resource === 'User' ? userColumns : groupColumns)[attr];
      if (!column) throw new ScimFilterError(`filtering by ${prefix}${filter.attr} is not supported`);
      if (filter.op === 'pr')
        return column.type === 'string' ? sql<boolean>`(coalesce(${column.expr}, '') <> '')` : sql<boolean>`(${column.expr} is not null)`;
      return compare(column, filter.op, filter.value, `${prefix}${filter.attr}`);
    }
  }
}

/** The SQL condition of a filter over the users (`User`) or groups (`Group`) table. */
export const filterSql = (filter: Filter, resource: 'User' | 'Group') => compile(filter, resource, '');

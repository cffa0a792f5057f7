import type { Operation } from '@kn/contracts';
import { z } from 'zod';

/** An OpenAPI link: which operation an answer leads to, and where in the answer its parameters are. */
export interface Link {
  operationId: string;
  description: string;
  parameters: Record<string, string>;
}

/**
 * Where in an answer the id of what it is about stands: the thing itself, or the first item of a
 * list (a page's items, or a bare array). The id is `id`, or `<name>_id` for a path whose first
 * segment is name (`export_id` below /export).
 */
function idPointer(response: z.ZodType | undefined, path: string): { pointer: string; list: boolean } | undefined {
  const idOf = (thing: unknown) => {
    if (!(thing instanceof z.ZodObject)) return undefined;
    const shape = thing.shape as Record<string, unknown>;
    return ['id', `${path.split('/')[1]}_id`].find((key) => shape[key]);
  };
  const own = idOf(response);
  if (own) return { pointer: `/${own}`, list: false };
  if (response instanceof z.ZodArray) {
    const id = idOf(response.element);
    return id ? { pointer: `/0/${id}`, list: true } : undefined;
  }
  const items = response instanceof z.ZodObject ? (response.shape as Record<string, unknown>).items : undefined;
  const id = items instanceof z.ZodArray ? idOf(items.element) : undefined;
  return id ? { pointer: `/items/0/${id}`, list: true } : undefined;
}

/**
 * The OpenAPI links of every operation: from what makes a thing (a POST's answer) or lists things
 * (a list's first item) to every operation on that thing, so that a reader, and a stateful tester,
 * can follow a question from its creation to its solutions, comments, attachments and publishing.
 * The thing's operations are those below its path: `/questions/{id}…` for POST /questions, and for
 * what is made or listed below another thing, the collection its last segment names (POST
 * /questions/{id}/solutions makes a solution: `/solutions/{id}…`). A user's own operations
 * (`/users/me…`) are reached by acting on their behalf. Tags are named by their label. A change
 * of a thing's state (a PUT below its path) leads on to the thing's other operations.
 */
export function operationLinks(operations: Record<string, Operation>): Map<string, Record<string, Link>> {
  const http = Object.entries(operations).filter(([, op]) => op.http) as Array<[string, Operation & { http: object }]>;
  const below = (prefix: string) =>
    http.filter(([, op]) => op.http.path === prefix || op.http.path.startsWith(`${prefix}/`)).filter(([, op]) => onlyParam(op, prefix));
  const links = new Map<string, Record<string, Link>>();
  const add = (from: string, to: string, description: string, parameters: Record<string, string>) => {
    if (from === to) return;
    links.set(from, { ...links.get(from), [to]: { operationId: to, description, parameters } });
  };
  for (const [name, op] of http) {
    const { method, path } = op.http;
    const lists = method === 'GET';
    if (!lists && !(method === 'POST' && (op.http.status ?? 200) === 201)) continue;
    const found = idPointer(op.response, path);
    if (!found || found.list !== lists) continue;
    const { pointer } = found;
    const what = lists ? 'the first item of this list' : 'what this made';
    const collection = `/${path.split('/').at(-1)}`;
    for (const prefix of new Set([`${path}/:id`, `${collection}/:id`]))
      for (const [target] of below(prefix))
        add(name, target, `${what}: ${prefix.replace(':id', '{id}')}`, { 'path.id': `$response.body#${pointer}` });
    if (collection === '/users' && !lists)
      for (const [target] of below('/users/me'))
        add(name, target, 'what this made, acting on its behalf', { 'header.X-On-Behalf-Of-User-Id': `$response.body#${pointer}` });
  }
  // A change of a thing's state (PUT /questions/{id}/publish) leads on to the thing's other
  // operations, which that state may open (solutions of a published question): the same id.
  for (const [name, op] of http) {
    const thing = /^(\/[\w-]+\/:id)\/[\w-]+$/.exec(op.http.path)?.[1];
    if (op.http.method !== 'PUT' || !thing) continue;
    for (const [target, other] of below(thing))
      if (!other.http.path.startsWith(op.http.path))
        add(name, target, `the same thing: ${thing.replace(':id', '{id}')}`, { 'path.id': '$request.path.id' });
  }
  for (const [target] of below('/tag-labels/:label'))
    add('listTags', target, 'the first tag of this list: /tag-labels/{label}', { 'path.label': '$response.body#/items/0' });
  return links;
}

/** Whether the operation's only path parameter is the one the prefix names (`id`, or `label`). */
function onlyParam(op: Operation, prefix: string) {
  const named = Object.keys(op.params?.shape ?? {});
  const wanted = prefix.match(/:(\w+)/g)?.map((p) => p.slice(1)) ?? [];
  return named.length === wanted.length && wanted.every((w) => named.includes(w));
}

import { type Filter, matches, parseFilter, ScimFilterError, splitPath } from './filter.ts';

/**
 * PATCH (RFC 7644 §3.5.2) applied to a resource as a client reads it: the result is then stored
 * the way a PUT of it would be, so PATCH and PUT share every rule.
 */

export interface PatchOperation {
  op: string;
  path?: string;
  value?: unknown;
}

/** An operation that cannot be applied: 400 with SCIM's scimType. */
export class ScimPatchError extends Error {
  readonly scimType: 'invalidPath' | 'noTarget' | 'invalidValue' | 'invalidSyntax';
  constructor(scimType: ScimPatchError['scimType'], message: string) {
    super(message);
    this.scimType = scimType;
  }
}

type Json = Record<string, unknown>;

interface Target {
  schema: string | null;
  name: string;
  filter: Filter | null;
  sub: string | null;
}

function parsePath(path: string, extensions: readonly string[]): Target {
  // An extension's URN alone names the extension's whole object.
  const extension = extensions.find((e) => e.toLowerCase() === path.toLowerCase());
  if (extension) return { schema: null, name: extension, filter: null, sub: null };
  try {
    const open = path.indexOf('[');
    if (open === -1) {
      const { schema, names } = splitPath(path);
      if (names.length > 2 || !names[0]) throw new ScimFilterError(`${path} is not an attribute path`);
      parseFilter(`${path} pr`);
      return { schema, name: names[0], filter: null, sub: names[1] ?? null };
    }
    const close = path.lastIndexOf(']');
    if (close < open) throw new ScimFilterError(`${path}: "[" without "]"`);
    const rest = path.slice(close + 1);
    if (rest && !/^\.[A-Za-z$][A-Za-z0-9_$-]*$/.test(rest)) throw new ScimFilterError(`${path}: unexpected ${rest}`);
    const { schema, names } = splitPath(path.slice(0, open));
    if (names.length !== 1) throw new ScimFilterError(`${path}: a value filter applies to one attribute`);
    return { schema, name: names[0]!, filter: parseFilter(path.slice(open + 1, close)), sub: rest ? rest.slice(1) : null };
  } catch (err) {
    if (err instanceof ScimFilterError) throw new ScimPatchError('invalidPath', err.message);
    throw err;
  }
}

/** The key of an attribute in an object as it is there (names are case-insensitive), or the name. */
const keyOf = (object: Json, name: string) => Object.keys(object).find((k) => k.toLowerCase() === name.toLowerCase()) ?? name;

function holderOf(resource: Json, schema: string | null): Json {
  if (!schema) return resource;
  const key = keyOf(resource, schema);
  const existing = resource[key];
  if (existing && typeof existing === 'object' && !Array.isArray(existing)) return existing as Json;
  const created: Json = {};
  resource[key] = created;
  return created;
}

const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);
const sameValue = (a: unknown, b: unknown) =>
  isObject(a) && isObject(b) && 'value' in a && 'value' in b
    ? String(a.value) === String(b.value)
    : JSON.stringify(a) === JSON.stringify(b);

/** Adds values to a multi-valued attribute, leaving out those already there (RFC 7644 §3.5.2.1). */
function addAll(existing: unknown, values: unknown[]) {
  const list = Array.isArray(existing) ? [...existing] : [];
  for (const v of values) if (!list.some((e) => sameValue(e, v))) list.push(v);
  return list;
}

function setAttribute(holder: Json, name: string, value: unknown, op: 'add' | 'replace') {
  const key = keyOf(holder, name);
  const existing = holder[key];
  if (op === 'add' && (Array.isArray(existing) || Array.isArray(value)))
    holder[key] = addAll(existing, Array.isArray(value) ? value : [value]);
  else if (op === 'add' && isObject(existing) && isObject(value)) holder[key] = { ...existing, ...value };
  else holder[key] = value;
}

/** Applies the operations in order to a copy of the resource. */
export function applyPatch(resource: Json, operations: PatchOperation[], extensions: readonly string[] = []): Json {
  const result = structuredClone(resource);
  for (const operation of operations) {
    const op = String(operation.op ?? '').toLowerCase();
    if (op !== 'add' && op !== 'replace' && op !== 'remove') throw new ScimPatchError('invalidSyntax', `unknown op ${operation.op}`);
    if (!operation.path) {
      if (op === 'remove') throw new ScimPatchError('noTarget', 'remove needs a path');
      if (!isObject(operation.value)) throw new ScimPatchError('invalidValue', `${op} without a path needs an object value`);
      for (const [name, value] of Object.entries(operation.value)) {
        // `{"name.givenName": "Ann"}` as some identity providers send it, or an extension's URN with its object.
        if (name.includes('.') || name.toLowerCase().startsWith('urn:')) applyAt(result, parsePath(name, extensions), op, value);
        else setAttribute(result, name, value, op);
      }
      continue;
    }
    applyAt(result, parsePath(operation.path, extensions), op, operation.value);
  }
  return result;
}

/** The attributes an `a eq "x" and b eq "y"` filter names, or null for any other filter. */
function equalities(filter: Filter): Json | null {
  if (filter.op === 'and') {
    const left = equalities(filter.left);
    const right = equalities(filter.right);
    return left && right ? { ...left, ...right } : null;
  }
  return filter.op === 'eq' && !filter.attr.includes('.') ? { [filter.attr]: filter.value } : null;
}

function applyAt(resource: Json, target: Target, op: 'add' | 'replace' | 'remove', value: unknown) {
  const holder = holderOf(resource, target.schema);
  const key = keyOf(holder, target.name);
  if (target.filter) {
    const list = holder[key];
    const elements = Array.isArray(list) ? list : [];
    const hit = elements.filter((e) => matches(target.filter!, e));
    if (op === 'remove') {
      if (!target.sub) holder[key] = elements.filter((e) => !hit.includes(e));
      else for (const e of hit) if (isObject(e)) delete e[keyOf(e, target.sub)];
      return;
    }
    if (!hit.length) {
      // `emails[type eq "work"].value` (Entra ID) on a resource without one: the element is made.
      const made = equalities(target.filter);
      if (!made) throw new ScimPatchError('noTarget', 'the value filter matches nothing');
      holder[key] = [...elements, target.sub ? { ...made, [target.sub]: value } : { ...made, ...(isObject(value) ? value : {}) }];
      return;
    }
    for (const e of hit) {
      if (!isObject(e)) continue;
      if (target.sub) e[keyOf(e, target.sub)] = value;
      else if (isObject(value)) Object.assign(e, value);
    }
    return;
  }
  if (target.sub) {
    const parent = holder[key];
    const elements = Array.isArray(parent) ? parent.filter(isObject) : [];
    if (op === 'remove') {
      if (isObject(parent)) delete parent[keyOf(parent, target.sub)];
      for (const e of elements) delete e[keyOf(e, target.sub)];
      return;
    }
    for (const e of elements) e[keyOf(e, target.sub)] = value;
    if (!Array.isArray(parent)) {
      const object = isObject(parent) ? parent : {};
      object[keyOf(object, target.sub)] = value;
      holder[key] = object;
    }
    return;
  }
  if (op === 'remove') {
    // Removing members by value: `{"op":"remove","path":"members","value":[{"value":"7"}]}` (Entra ID).
    if (Array.isArray(holder[key]) && Array.isArray(value))
      holder[key] = (holder[key] as unknown[]).filter((e) => !value.some((v) => sameValue(e, v)));
    else delete holder[key];
    return;
  }
  setAttribute(holder, target.name, value, op);
}

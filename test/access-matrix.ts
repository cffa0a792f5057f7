import { type Operation, operations, type Role, Roles } from '@kn/contracts';

/**
 * The access matrix: every operation of the catalogue (`@kn/contracts`, the source of
 * docs/openapi.json) by every kind of caller. What a cell expects is derived from the operation's
 * declared rules (`auth`, `roles`) and, where a rule lives in the interface rather than in the
 * catalogue (author or content_admin, the question poser, the caller's own notification or draft),
 * from the scenario's `owner` rule below.
 */

export type Outcome = 'allowed' | 'unauthorized' | 'forbidden' | 'hidden';
export const STATUS_OF: Record<Exclude<Outcome, 'allowed'>, number> = { unauthorized: 401, forbidden: 403, hidden: 404 };

export interface Caller {
  name: string;
  /** null: no valid token at all (anonymous, unknown or revoked token). */
  roles: readonly Role[] | null;
  /** The caller acts as the owner of the fixtures. */
  owner: boolean;
  /** Another caller with the same identity, but a token of its own (for DELETE /auth/token). */
  headers(fresh?: boolean): Promise<Array<[string, string]>>;
  /** The act-on-behalf header is sent by someone without on_behalf_user: refused before anything else. */
  refusedOnBehalf?: boolean;
}

/**
 * Who may do what beyond the catalogue's roles:
 * - `owner-or-content-admin`: the author, a content_admin or super_admin; others get `deny`.
 * - `owner`: the owner only (the question poser accepting; the recipient of a notification).
 * - `self-or-user-admin`: the user themself or user_admin.
 * - `not-owner`: everybody but the owner (authors cannot rate or upvote their own solution).
 */
export type OwnerRule = 'owner-or-content-admin' | 'owner' | 'self-or-user-admin' | 'not-owner';

export interface Request {
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  upload?: { name: string; content: string };
}

export interface Scenario {
  /** A variant of the operation (another fixture or parameter); '' for the plain one. */
  variant?: string;
  rule?: OwnerRule;
  /** The outcome for callers the rule turns away. */
  deny?: 'forbidden' | 'hidden';
  /** Statuses besides 2xx that count as allowed (for example 409 while an export runs). */
  alsoAllowed?: number[];
  /** Extra roles needed for this variant (a parameter reserved to a role); 403 otherwise. */
  roles?: readonly Role[];
  /** The owner needs none of `roles` (user_id of notifications naming the caller themself). */
  ownerExempt?: boolean;
  /** Overrides the expectation entirely. */
  expect?: (caller: Caller) => Outcome;
  request(caller: Caller): Promise<Request> | Request;
}

/** super_admin holds every role. */
export const effective = (roles: readonly Role[]) => (roles.includes('super_admin') ? [...Roles] : [...roles]);
const has = (caller: Caller, roles: readonly Role[]) => roles.some((r) => caller.roles !== null && effective(caller.roles).includes(r));

export function expected(op: Operation, scenario: Scenario, caller: Caller): Outcome {
  const http = op.http!;
  if (http.auth === 'public') return scenario.expect?.(caller) ?? 'allowed';
  if (caller.roles === null) return 'unauthorized';
  if (caller.refusedOnBehalf) return 'forbidden';
  if (http.roles && !has(caller, http.roles)) return 'forbidden';
  if (scenario.roles && !has(caller, scenario.roles) && !(scenario.ownerExempt && caller.owner)) return 'forbidden';
  if (scenario.expect) return scenario.expect(caller);
  const deny = scenario.deny ?? 'forbidden';
  switch (scenario.rule) {
    case 'owner-or-content-admin':
      return caller.owner || has(caller, ['content_admin']) ? 'allowed' : deny;
    case 'owner':
      return caller.owner ? 'allowed' : deny;
    case 'self-or-user-admin':
      return caller.owner || has(caller, ['user_admin']) ? 'allowed' : deny;
    case 'not-owner':
      return caller.owner ? deny : 'allowed';
    default:
      return 'allowed';
  }
}

export const outcomeOf = (status: number, scenario: Scenario): Outcome | `unexpected ${number}` => {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'hidden';
  if ((status >= 200 && status < 300) || scenario.alsoAllowed?.includes(status)) return 'allowed';
  return `unexpected ${status}`;
};

/** Every operation the gateway exposes, by name. */
export const httpOperations = Object.entries(operations as Record<string, Operation>).filter(([, op]) => op.http) as Array<
  [string, Operation & { http: NonNullable<Operation['http']> }]
>;

export const fillPath = (template: string, params: Record<string, string | number>) =>
  template.replace(/:([a-z_]+)/g, (_m, name: string) => {
    if (params[name] === undefined) throw new Error(`no value for :${name} in ${template}`);
    return encodeURIComponent(String(params[name]));
  });

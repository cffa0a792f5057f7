import { methodNotAllowed } from '@kn/contracts';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * The operations' routes in one table, matched the way express's router would (static segments
 * case-insensitive; a trailing slash allowed; `:name` one non-empty segment, percent-decoded), but
 * in a few microseconds: express tries every registered route's pattern in turn, two layers per
 * operation, which cost a tenth of the gateway's CPU per request.
 *
 * A path names one resource, the path template that fits it most closely (a static segment before
 * a parameter, from the left), as the OpenAPI document reads it: `/users/me` is its own resource,
 * not `/users/{id}` with the id `me`. A method the resource does not have is answered 405 with the
 * methods it has in `Allow` (OPTIONS: 204 with them), never passed on as an unknown path.
 */
export interface Route {
  method: string;
  /** express-style path below the mount point: `/users/:id`. */
  path: string;
  handlers: RequestHandler[];
}

interface Resource {
  /** Lower-case static segments; null where a parameter goes. */
  segments: Array<string | null>;
  names: string[];
  byMethod: Map<string, Route>;
  /** The Allow header: its methods, HEAD with GET, and OPTIONS. */
  allow: string;
}

export function routeTable(routes: Route[]) {
  const resources = new Map<string, Resource>();
  for (const route of routes) {
    const parts = route.path.split('/').slice(1);
    const segments = parts.map((p) => (p.startsWith(':') ? null : p.toLowerCase()));
    const key = segments.map((s) => s ?? ':').join('/');
    let resource = resources.get(key);
    if (!resource) {
      resource = { segments, names: parts.filter((p) => p.startsWith(':')).map((p) => p.slice(1)), byMethod: new Map(), allow: '' };
      resources.set(key, resource);
    }
    // The first registered route of a method wins, as in express.
    if (!resource.byMethod.has(route.method)) resource.byMethod.set(route.method, route);
  }
  const byLength = new Map<number, Resource[]>();
  for (const resource of resources.values()) {
    const methods = [...resource.byMethod.keys()];
    resource.allow = [...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', ');
    byLength.set(resource.segments.length, [...(byLength.get(resource.segments.length) ?? []), resource]);
  }
  // Most specific first: at the first segment where two templates differ, the static one.
  const specificity = (r: Resource) => r.segments.map((s) => (s === null ? '1' : '0')).join('');
  for (const list of byLength.values()) list.sort((a, b) => specificity(a).localeCompare(specificity(b)));

  function resourceOf(path: string): { resource: Resource; params: Record<string, string> } | undefined {
    const parts = path.split('/').slice(1);
    if (parts.length > 1 && parts.at(-1) === '') parts.pop();
    const candidates = byLength.get(parts.length);
    if (!candidates) return undefined;
    const lower = parts.map((p) => p.toLowerCase());
    for (const resource of candidates) {
      let fits = true;
      for (let i = 0; i < lower.length && fits; i++) {
        const s = resource.segments[i];
        fits = s === null ? lower[i] !== '' : s === lower[i];
      }
      if (!fits) continue;
      const params: Record<string, string> = {};
      let n = 0;
      resource.segments.forEach((s, i) => {
        // A segment that is not valid percent-encoding throws a URIError: the client's (400).
        if (s === null) params[resource.names[n++]!] = decodeURIComponent(parts[i]!);
      });
      return { resource, params };
    }
    return undefined;
  }

  /** The middleware: runs the matched route's handlers in turn, or passes a path no resource has on. */
  return (req: Request, res: Response, next: NextFunction) => {
    let found: ReturnType<typeof resourceOf>;
    try {
      found = resourceOf(req.path);
    } catch (err) {
      return next(Object.assign(err as Error, { status: 400 }));
    }
    if (!found) return next();
    const route = found.resource.byMethod.get(req.method === 'HEAD' ? 'GET' : req.method);
    if (!route) {
      if (req.method !== 'OPTIONS') return next(methodNotAllowed(req.method, found.resource.allow));
      res.set('Allow', found.resource.allow).status(204).end();
      return;
    }
    req.params = found.params;
    const { handlers } = route;
    let i = 0;
    const step = (err?: unknown) => {
      if (err !== undefined && err !== null) return next(err);
      const handler = handlers[i++];
      if (!handler) return next();
      try {
        const result = handler(req, res, step) as unknown;
        if (result instanceof Promise) result.catch(next);
      } catch (e) {
        next(e);
      }
    };
    step();
  };
}

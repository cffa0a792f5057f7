import type { Request, Response } from 'express';
import { routeTable } from '../src/routes.ts';

/** Runs the table on a request; answers which route's handler ran with which params, or what was passed on. */
function dispatch(table: ReturnType<typeof routeTable>, method: string, path: string) {
  const req = { method, path, params: {} } as unknown as Request;
  let result: unknown = 'none';
  const answer: { status?: number; headers: Record<string, string> } = { headers: {} };
  const res = {
    set(name: string, value: string) {
      answer.headers[name] = value;
      return res;
    },
    status(status: number) {
      answer.status = status;
      return res;
    },
    end() {
      result = { answered: answer.status, headers: answer.headers };
    },
  };
  table(req, res as unknown as Response, (err?: unknown) => {
    const error = err as { status?: number; code?: string; headers?: Record<string, string> } | undefined;
    result = error ? { error: error.status, ...(error.headers ? { headers: error.headers } : {}) } : 'passed on';
  });
  return result === 'none' ? (req as unknown as { ran: unknown }).ran : result;
}

const handler = (name: string) => (req: Request) => {
  (req as unknown as { ran: unknown }).ran = { name, params: req.params };
};

const table = routeTable([
  { method: 'GET', path: '/users/:id', handlers: [handler('user')] },
  { method: 'GET', path: '/users/me', handlers: [handler('me')] },
  { method: 'GET', path: '/tag-labels/:label/links', handlers: [handler('links')] },
  { method: 'PUT', path: '/users/:id', handlers: [handler('update')] },
  { method: 'PUT', path: '/users/:id', handlers: [handler('shadowed')] },
  { method: 'GET', path: '/users', handlers: [(_req, _res, next) => next(), handler('list')] },
]);

test('a path is the resource of the template that fits it most closely: static segments before parameters', () => {
  expect(dispatch(table, 'GET', '/users/me')).toEqual({ name: 'me', params: {} });
  expect(dispatch(table, 'GET', '/users/42')).toEqual({ name: 'user', params: { id: '42' } });
  expect(dispatch(table, 'PUT', '/users/42')).toEqual({ name: 'update', params: { id: '42' } });
  expect(dispatch(table, 'HEAD', '/users/7')).toEqual({ name: 'user', params: { id: '7' } });
});

test('as express: case-insensitive static segments, a trailing slash, decoded parameters, handlers in turn', () => {
  expect(dispatch(table, 'GET', '/USERS/Me/')).toEqual({ name: 'me', params: {} });
  expect(dispatch(table, 'GET', '/tag-labels/c%2B%2B/links')).toEqual({ name: 'links', params: { label: 'c++' } });
  expect(dispatch(table, 'GET', '/users')).toEqual({ name: 'list', params: {} });
});

test("a method the path's resource does not have is 405 with Allow; OPTIONS answers Allow", () => {
  expect(dispatch(table, 'DELETE', '/users/1')).toEqual({ error: 405, headers: { Allow: 'GET, PUT, HEAD, OPTIONS' } });
  // /users/me is a resource of its own, not /users/:id with the id "me".
  expect(dispatch(table, 'PUT', '/users/me')).toEqual({ error: 405, headers: { Allow: 'GET, HEAD, OPTIONS' } });
  expect(dispatch(table, 'TRACE', '/users')).toEqual({ error: 405, headers: { Allow: 'GET, HEAD, OPTIONS' } });
  expect(dispatch(table, 'OPTIONS', '/users/1')).toEqual({ answered: 204, headers: { Allow: 'GET, PUT, HEAD, OPTIONS' } });
});

test('what no resource is is passed on; a parameter that is not valid percent-encoding is a 400', () => {
  expect(dispatch(table, 'GET', '/users/1/2/3')).toBe('passed on');
  expect(dispatch(table, 'GET', '/users//')).toBe('passed on');
  expect(dispatch(table, 'DELETE', '/nothing')).toBe('passed on');
  expect(dispatch(table, 'GET', '/users/%E0%A4%A')).toEqual({ error: 400 });
});

import type { Request, Response } from 'express';
import { routeTable } from '../src/routes.ts';

/** Runs the table on a request; answers which route's handler ran with which params, or what was passed on. */
function dispatch(table: ReturnType<typeof routeTable>, method: string, path: string) {
  const req = { method, path, params: {} } as unknown as Request;
  let result: unknown = 'none';
  table(req, {} as Response, (err?: unknown) => {
    result = err ? { error: (err as { status?: number }).status } : 'passed on';
  });
  return result === 'none' ? (req as unknown as { ran: unknown }).ran : result;
}

const handler = (name: string) => (req: Request) => {
  (req as unknown as { ran: unknown }).ran = { name, params: req.params };
};

const table = routeTable([
  { method: 'GET', path: '/users/me', handlers: [handler('me')] },
  { method: 'GET', path: '/users/:id', handlers: [handler('user')] },
  { method: 'GET', path: '/tag-labels/:label/links', handlers: [handler('links')] },
  { method: 'PUT', path: '/users/:id', handlers: [handler('update')] },
  { method: 'GET', path: '/users', handlers: [(_req, _res, next) => next(), handler('list')] },
]);

test('the first registered route of the method wins; static segments before parameters as registered', () => {
  expect(dispatch(table, 'GET', '/users/me')).toEqual({ name: 'me', params: {} });
  expect(dispatch(table, 'GET', '/users/42')).toEqual({ name: 'user', params: { id: '42' } });
  expect(dispatch(table, 'PUT', '/users/me')).toEqual({ name: 'update', params: { id: 'me' } });
  expect(dispatch(table, 'HEAD', '/users/7')).toEqual({ name: 'user', params: { id: '7' } });
});

test('as express: case-insensitive static segments, a trailing slash, decoded parameters, handlers in turn', () => {
  expect(dispatch(table, 'GET', '/USERS/Me/')).toEqual({ name: 'me', params: {} });
  expect(dispatch(table, 'GET', '/tag-labels/c%2B%2B/links')).toEqual({ name: 'links', params: { label: 'c++' } });
  expect(dispatch(table, 'GET', '/users')).toEqual({ name: 'list', params: {} });
});

test('what no route takes is passed on; a parameter that is not valid percent-encoding is a 400', () => {
  expect(dispatch(table, 'DELETE', '/users/1')).toBe('passed on');
  expect(dispatch(table, 'GET', '/users/1/2/3')).toBe('passed on');
  expect(dispatch(table, 'GET', '/users//')).toBe('passed on');
  expect(dispatch(table, 'GET', '/users/%E0%A4%A')).toEqual({ error: 400 });
});

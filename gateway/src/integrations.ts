import { type Bus, call } from '@kn/bus';
import { chatOperations, payloadTooLarge } from '@kn/contracts';
import express, { type NextFunction, type Request, type Response } from 'express';

export const INTEGRATIONS_PATH = '/integrations';

/** Slack and Bot Framework requests are small; a larger body is not theirs. */
const BODY_LIMIT = '1mb';

/**
 * The chat platforms' requests (docs/chat.md): Slack's events, commands and interactivity at
 * /integrations/slack/events, Bot Framework activities at /integrations/teams/messages. The body
 * goes to the chat service as the exact text received, because the signature (Slack) covers
 * those bytes; the chat service checks it and answers in the platform's terms.
 */
export function integrationRoutes(options: { bus: Bus; rpcTimeoutMs: number }) {
  const router = express.Router();
  const raw = express.raw({ type: () => true, limit: BODY_LIMIT });
  const pass = (name: 'slackRequest' | 'teamsRequest', route: string) => [
    (_req: Request, res: Response, next: NextFunction) => {
      res.locals.route = `${INTEGRATIONS_PATH}${route}`;
      next();
    },
    raw,
    async (req: Request, res: Response) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const body = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
      const answer = await call(
        options.bus,
        name,
        chatOperations[name],
        { actor: null, params: undefined, query: undefined, body: { body, headers }, requestId: req.id, url: req.originalUrl },
        { timeoutMs: options.rpcTimeoutMs },
      );
      res.status(answer.status);
      if (answer.body === null) res.end();
      else res.type(answer.content_type ?? 'application/json').send(answer.body);
    },
  ];
  router.post('/slack/events', ...pass('slackRequest', '/slack/events'));
  router.post('/teams/messages', ...pass('teamsRequest', '/teams/messages'));
  // Too large, or a body that is not what it says: the API's error shape, before the chat service sees it.
  router.use((err: unknown, _req: Request, _res: Response, next: NextFunction) => {
    if ((err as { type?: string }).type === 'entity.too.large') return next(payloadTooLarge('the request body is too large'));
    next(err);
  });
  return router;
}

import { gzipSync } from 'node:zlib';
import type { Request, Response } from 'express';

/** Answers shorter than this go as they are: below it gzip's header and the work cost more than they save. */
const MIN_BYTES = 1024;

/**
 * An operation's JSON answer, gzipped for clients that take gzip (a question with its 15 solutions
 * and their comments: 21 KB to 6 KB). Level 5: most of the saving for a fraction of level 9's time.
 */
export function sendJson(req: Request, res: Response, status: number, json: string) {
  res.status(status).type('json');
  if (json.length < MIN_BYTES) return res.send(json);
  res.vary('Accept-Encoding');
  // Without the header a client is taken to want the answer as it is (curl, scripts).
  if (!req.get('accept-encoding') || req.acceptsEncodings('gzip', 'identity') !== 'gzip') return res.send(json);
  return res.set('Content-Encoding', 'gzip').send(gzipSync(json, { level: 5 }));
}

// What the chat tests share: the stand-ins' call recorder (test/slack-stand-in.ts,
// test/teams-stand-in.ts) and "a linked expert and a routed question" on either platform.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { API, publishedSolution } from './fixtures.ts';
import type { System } from './system.ts';

/** How a stand-in fails a call a test chose: the status, and the Retry-After it sends (seconds). */
export type Fault = { status: number; retryAfter?: number } | null;

/** What every recorded call has: the status the stand-in answered and when (performance.now()). */
export interface RecordedCall {
  status: number;
  at: number;
}

/**
 * A platform's stand-in server: the calls it answered, in order, and a wait for a fact about them
 * that is checked again after each call's answer has gone out (never a sleep).
 */
export async function startRecordingServer<C extends RecordedCall>(
  what: string,
  serve: (req: IncomingMessage, body: string, res: ServerResponse, record: (call: C) => C) => unknown,
) {
  const calls: C[] = [];
  const waiters = new Set<() => void>();
  const record = (res: ServerResponse) => (call: C) => {
    calls.push(call);
    // Waiters look once the call is recorded with its answer.
    res.once('finish', () => {
      for (const wake of [...waiters]) wake();
    });
    return call;
  };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    await serve(req, Buffer.concat(chunks).toString('utf8'), res, record(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    /** Resolves once `probe` holds of the calls; the deadline is generous, for a loaded machine. */
    until(probe: (calls: C[]) => boolean, timeoutMs = 90_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!probe(calls)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the ${what} stand-in did not see what was awaited within ${timeoutMs} ms (${calls.length} calls)`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * An expert on `tag` (a published solution on another person's question of it), in the search
 * index before this returns, so that a question on the tag is routed to them.
 */
export async function expertOn(system: System, tag: string) {
  const expert = await system.createUser();
  const other = await system.createUser();
  const earlier = await system.api
    .post(`${API}/questions`)
    .set(...other.auth)
    .send({ title: `What is the best ${tag} routine?`, description: `<p>${tag}</p>`, tags: [tag] })
    .expect(201);
  await system.api
    .put(`${API}/questions/${earlier.body.id}/publish`)
    .set(...other.auth)
    .expect(200);
  await publishedSolution(system, expert.token, earlier.body.id, `<p>A proven ${tag} routine.</p>`);
  await system.searchCaughtUp();
  return expert;
}

/**
 * A question on `tag` published by a new asker, and who it was routed to: the routing decision as
 * recorded (the publish's own call to routing may have given up on a loaded machine; the routing
 * consumer then decides from the event), once the chat service has turned it into its messages.
 */
export async function routedQuestion(system: System, tag: string, title: string) {
  const asker = await system.createUser();
  const q = await system.api
    .post(`${API}/questions`)
    .set(...asker.auth)
    .send({ title, description: `<p>${tag}</p>`, tags: [tag] })
    .expect(201);
  await system.api
    .put(`${API}/questions/${q.body.id}/publish`)
    .set(...asker.auth)
    .expect(200);
  await system.chatCaughtUp();
  return { id: q.body.id as number, asker, experts: await routedTo(system, q.body.id) };
}

/**
 * Who a question was routed to, as the routing decisions recorded it (after `chatCaughtUp`): the
 * fact, where the count a publish answers is only what its own call to routing got in time.
 */
export async function routedTo(system: System, questionId: number) {
  const decisions = await system.services.search.runtime.db
    .selectFrom('routings')
    .select('experts')
    .where('question_id', '=', questionId)
    .execute();
  return decisions.flatMap((d) => d.experts.map((e) => e.user_id));
}

/** The chat links a person has (`GET /chat/links`). */
export async function linksOf(system: System, person: { auth: [string, string] }) {
  return (
    await system.api
      .get(`${API}/chat/links`)
      .set(...person.auth)
      .expect(200)
  ).body.items;
}

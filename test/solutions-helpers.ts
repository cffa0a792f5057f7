import { bearer, type System } from './system.ts';

export const API = '/api/v1';

/** A published question of the user with this token (through the questions endpoints). */
export async function publishedQuestion(system: System, token: string, title = 'How do I configure the build cache?') {
  const created = await system.api
    .post(`${API}/questions`)
    .set(...bearer(token))
    .send({ title, description: '<p>The build is slow and I want to cache the dependencies.</p>', tags: ['build'] });
  if (created.status !== 201) throw new Error(`creating a question failed: ${created.status} ${JSON.stringify(created.body)}`);
  const published = await system.api.put(`${API}/questions/${created.body.id}/publish`).set(...bearer(token));
  if (published.status !== 200) throw new Error(`publishing a question failed: ${published.status} ${JSON.stringify(published.body)}`);
  return created.body.id as number;
}

export async function draftQuestion(system: System, token: string) {
  const created = await system.api
    .post(`${API}/questions`)
    .set(...bearer(token))
    .send({ title: 'A draft question title', description: '<p>draft</p>' });
  if (created.status !== 201) throw new Error(`creating a question failed: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.id as number;
}

/** A published solution by the user with this token. */
export async function publishedSolution(
  system: System,
  token: string,
  questionId: number,
  description = '<p>Use a remote cache for the build.</p>',
) {
  const created = await system.api
    .post(`${API}/questions/${questionId}/solutions`)
    .set(...bearer(token))
    .send({ description });
  if (created.status !== 201) throw new Error(`creating a solution failed: ${created.status} ${JSON.stringify(created.body)}`);
  const published = await system.api.put(`${API}/solutions/${created.body.id}/publish`).set(...bearer(token));
  if (published.status !== 200) throw new Error(`publishing a solution failed: ${published.status} ${JSON.stringify(published.body)}`);
  return created.body.id as number;
}

/** Events the content service wrote to its outbox and published, read back from the stream. */
export async function contentEvents(
  system: System,
  subject: string,
): Promise<Array<{ subject: string; actor_id: number | null; data: any }>> {
  const { runtime } = system.services.content;
  await runtime.relay.flush();
  const bus = runtime.bus;
  const stream = bus.streamName('content');
  const info = await bus.jsm.streams.info(stream);
  const out: Array<{ subject: string; actor_id: number | null; data: any }> = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const msg = await bus.jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (!msg) continue;
    const envelope = msg.json<{ subject: string; actor_id: number | null; data: any }>();
    if (envelope.subject === subject) out.push(envelope);
  }
  return out;
}

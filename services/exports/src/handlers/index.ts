import { type Bus, call } from '@kn/bus';
import { type Actor, type ExportKind, type exportsOperations, type Handlers, usersOperations } from '@kn/contracts';
import type { Db } from '@kn/db';
import type { ExportsSchema } from '../db/schema.ts';
import { createJob, findJob, jobFile, listJobs, presentExport } from '../domain/jobs.ts';

export function createHandlers(deps: {
  db: Db<ExportsSchema>;
  bus: Bus;
  schema: { object: string; size: number };
}): Handlers<typeof exportsOperations> {
  const { db, bus } = deps;

  /** The network's name as the users service has it now (asked as the caller, who holds super_admin). */
  async function networkName(actor: Actor, requestId: string) {
    const settings = await call(bus, 'getNetworkSettings', usersOperations.getNetworkSettings, {
      actor,
      params: undefined,
      query: undefined,
      body: undefined,
      requestId,
      url: '/api/v1/settings',
    });
    return settings.network_name;
  }

  const get = async (kind: ExportKind, id: number) => presentExport(await findJob(db, kind, id));
  const file = (kind: ExportKind, id: number) => jobFile(db, kind, id);

  return {
    createTopicContentExport: async ({ actor, body, requestId }) =>
      createJob(db, {
        kind: 'topic_content',
        userId: actor.id,
        network: await networkName(actor, requestId),
        parameters: { topics: body.topics },
      }),
    listTopicContentExports: async () => listJobs(db, 'topic_content'),
    getTopicContentExport: async ({ params }) => get('topic_content', params.id),
    downloadTopicContentExport: async ({ params }) => file('topic_content', params.id),
    createContentExport: async ({ actor, body, query, requestId }) =>
      createJob(db, {
        kind: 'content',
        userId: actor.id,
        network: await networkName(actor, requestId),
        parameters: {
          anonymised: body.anonymised ?? query.anonymised ?? true,
          exclude_deleted: body.exclude_deleted ?? query.exclude_deleted ?? false,
        },
      }),
    listContentExports: async () => listJobs(db, 'content'),
    getContentExport: async ({ params }) => get('content', params.id),
    downloadContentExport: async ({ params }) => file('content', params.id),
    getContentExportSchema: async () => ({
      object: deps.schema.object,
      name: 'content_export.xsd',
      mime_type: 'application/xml',
      size: deps.schema.size,
      bucket: 'exports' as const,
    }),
  };
}

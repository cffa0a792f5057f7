import { serveOperations } from '@kn/bus';
import { chatOperations } from '@kn/contracts';
import { type Clock, serviceParts, startRuntime, systemClock } from '@kn/service';
import type { ChatConfig } from './config.ts';
import { startContentConsumer } from './consumers/content.ts';
import { startSearchConsumer } from './consumers/search.ts';
import { startUsersConsumer } from './consumers/users.ts';
import { migrations } from './db/migrations/index.ts';
import type { ChatSchema } from './db/schema.ts';
import { chatFlows } from './domain/flows.ts';
import { networkCaller } from './domain/network.ts';
import { chatNotifier } from './domain/notify.ts';
import { outbox } from './domain/outbox.ts';
import { afterAnswer } from './domain/platform.ts';
import { slackApp } from './domain/slack/app.ts';
import { slackRenderer } from './domain/slack/render.ts';
import { sendSlack, slackClient } from './domain/slack/web-api.ts';
import { teamsApp } from './domain/teams/app.ts';
import { teamsRenderer } from './domain/teams/cards.ts';
import { TeamsCredentials, teamsConnector } from './domain/teams/connector.ts';
import { teamsConversationOf } from './domain/teams/proactive.ts';
import { createHandlers } from './handlers/index.ts';
import { startForgetRequestsJob } from './jobs/forget-requests.ts';
import { startOutbox } from './jobs/outbox.ts';

export { ChatConfig, loadConfig } from './config.ts';

/** Starts the chat service: the users projection, the Slack app and the Teams bot, the outbox and the consumers of routing and content events. */
export async function start(config: ChatConfig, options: { clock?: Clock } = {}) {
  const runtime = await startRuntime<ChatSchema>({ service: 'chat', config, migrations });
  const { db, bus, logger } = runtime;
  const clock = options.clock ?? systemClock;
  const parts = serviceParts(runtime);
  return parts.starting(async () => {
    const publicUrl = config.PUBLIC_URL.replace(/\/$/, '');
    const slack = slackClient({ token: config.SLACK_BOT_TOKEN, apiUrl: config.SLACK_API_URL });
    const teamsCredentials = new TeamsCredentials(config);
    const teamsCalls = teamsConnector(teamsCredentials);
    const installationOf = (installationId: number) =>
      db.selectFrom('installations').select(['workspace', 'service_url']).where('id', '=', installationId).executeTakeFirstOrThrow();
    const sender = parts.add(
      startOutbox({
        db,
        config,
        logger,
        send: async (platform, row, original) => {
          if (platform === 'slack') return sendSlack(slack, row, original);
          const installation = await installationOf(row.installation_id);
          const recipient = await teamsConversationOf({ db, connector: teamsCalls, appId: config.TEAMS_APP_ID }, row, installation);
          return teamsCalls.send(installation.service_url ?? '', { ...row, recipient }, original);
        },
      }),
    );
    const box = outbox(() => sender.wake());
    const call = networkCaller(bus);
    const flows = chatFlows({ db, call });
    const chatByDefault = config.CHAT_DEFAULT_CHANNEL === 'chat';
    const notify = chatNotifier({
      outbox: box,
      renderers: { slack: slackRenderer(publicUrl), teams: teamsRenderer(publicUrl) },
      chatByDefault,
    });
    parts.add(startForgetRequestsJob({ db, clock, logger }));
    const users = parts.add(await startUsersConsumer({ bus, db }));
    const content = parts.add(await startContentConsumer({ bus, db, notify }));
    const search = parts.add(await startSearchConsumer({ bus, db, notify }));
    // Stopped before the outbox and the consumers: what a request goes on doing still writes messages.
    const background = parts.add(afterAnswer(logger));
    const platform = { db, config, clock, logger, flows, outbox: box, background };
    const app = slackApp({ ...platform, client: slack });
    const teams = teamsApp({ ...platform, credentials: teamsCredentials, connector: teamsCalls });
    parts.add(
      serveOperations({
        bus,
        service: 'chat',
        requestKeys: runtime.requestKeys,
        operations: chatOperations,
        handlers: createHandlers({ db, bus, clock, call, chatByDefault, slack: app.handle, teams: teams.handle }),
      }),
    );
    logger.info('chat service ready');
    return {
      runtime,
      outbox: sender,
      consumers: { users, content, search },
      /** The platforms' requests still being handled after their answer (tests wait for them first). */
      requests: background,
      stop: parts.stop,
    };
  });
}

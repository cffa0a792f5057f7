import type { ChatNotificationType } from '@kn/contracts';
import type { Executor } from '@kn/db';
import type { ChatSchema } from '../db/schema.ts';
import { chatChoices } from './channels.ts';
import { linksOfUsers, type Platform, TEAMS_NO_TENANT } from './links.ts';
import type { Outbox } from './outbox.ts';

type Question = { id: number; title: string };

/** How each platform says what a notification says (Slack blocks, Teams Adaptive Cards). */
export interface Renderer {
  expertAsked(question: Question, reason: 'published' | 'validation' | 'forwarded', note?: string | null): Record<string, unknown>;
  newSolution(question: Question, solution: { id: number; excerpt: string }): Record<string, unknown>;
  questionNotice(question: Question, what: string): Record<string, unknown>;
}

/** Plain text of a solution's HTML, shortened for a message. */
export function excerpt(text: string, max = 500) {
  const plain = text.replace(/\s+/g, ' ').trim();
  return plain.length <= max ? plain : `${plain.slice(0, max - 1).trimEnd()}…`;
}

/** What a link to a question shows beside its title: its state and how many solutions it has. */
export function stateLine(question: { is_deleted: boolean; solution_count: number }) {
  const state = question.is_deleted ? 'deleted' : question.solution_count ? 'answered' : 'open';
  return `${state} · ${question.solution_count} ${question.solution_count === 1 ? 'solution' : 'solutions'}`;
}

/**
 * Puts one notification of an event into the outbox for every linked chat account of the
 * recipients who want this type in chat. The key (event and link) makes a redelivered event, or
 * a second instance, write nothing twice.
 */
export function chatNotifier(deps: { outbox: Outbox; renderers: Record<Platform, Renderer>; chatByDefault: boolean }) {
  return async (
    tx: Executor<ChatSchema>,
    notification: {
      eventId: string;
      type: ChatNotificationType;
      recipients: number[];
      question: Question;
      render: (r: Renderer) => Record<string, unknown>;
    },
  ) => {
    const links = (await linksOfUsers(tx, [...new Set(notification.recipients)])).filter(
      (l) => chatChoices((l.chat ?? undefined) as Record<string, boolean> | undefined, deps.chatByDefault)[notification.type],
    );
    const messages = links.flatMap((l) => {
      // Teams reaches a person only in a conversation the bot has with them: their recorded personal
      // chat, else one the sender creates (Bot Framework needs the tenant and the serviceUrl for that).
      const creatable = l.platform === 'teams' && !l.conversation_id && l.workspace !== TEAMS_NO_TENANT && !!l.service_url;
      const recipient = l.platform === 'teams' ? (l.conversation_id ?? (creatable ? l.chat_user_id : null)) : l.chat_user_id;
      if (!recipient) return [];
      return [
        {
          key: `${notification.eventId}:${l.installation_id}:${l.chat_user_id}`,
          installationId: l.installation_id,
          recipient,
          ...(creatable ? { personalOf: l.chat_user_id } : {}),
          kind: 'post' as const,
          questionId: notification.question.id,
          payload: notification.render(deps.renderers[l.platform]),
        },
      ];
    });
    return deps.outbox.enqueue(tx, messages);
  };
}
export type ChatNotifier = ReturnType<typeof chatNotifier>;

/** Remembers who a question was put to, so that "not me" passes it to someone else. */
export async function recordAsked(tx: Executor<ChatSchema>, questionId: number, userIds: number[]) {
  if (userIds.length === 0) return;
  await tx
    .insertInto('routings')
    .values([...new Set(userIds)].map((user_id) => ({ question_id: questionId, user_id })))
    .onConflict((c) => c.doNothing())
    .execute();
}

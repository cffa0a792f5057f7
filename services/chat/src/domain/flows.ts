import { type Actor, AppError, conflict } from '@kn/contracts';
import { type Db, isUniqueViolation } from '@kn/db';
import { escapeHtml } from '@kn/service';
import type { ChatSchema } from '../db/schema.ts';
import type { NetworkCaller } from './network.ts';

const TITLE_MAX = 100;

/** A question's title from a chat message: its first line, cut at a word within 100 characters. */
export function titleOf(text: string): string {
  const line = text.trim().split(/\r?\n/, 1)[0]!.replace(/\s+/g, ' ');
  if (line.length <= TITLE_MAX) return line;
  const cut = line.slice(0, TITLE_MAX - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > TITLE_MAX / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** The description: the whole text as paragraphs, and where it came from. */
export function descriptionOf(text: string, source?: { url: string; label: string }): string {
  const paragraphs = text
    .trim()
    .split(/\r?\n\s*\r?\n/)
    .map((p) => `<p>${escapeHtml(p.trim()).replace(/\r?\n/g, '<br>')}</p>`);
  if (source) paragraphs.push(`<p><a href="${escapeHtml(source.url)}">${escapeHtml(source.label)}</a></p>`);
  return paragraphs.join('');
}

/**
 * The question a link points to when it is one of the network's (`PUBLIC_URL/questions/<id>…`):
 * its id, else null. The whole origin must match, so `kn.example.com.evil.test` is not ours.
 */
export function questionIdOf(publicUrl: string, link: string): number | null {
  let url: URL;
  let base: URL;
  try {
    url = new URL(link);
    base = new URL(publicUrl);
  } catch {
    return null;
  }
  if (url.origin !== base.origin) return null;
  const prefix = base.pathname.replace(/\/$/, '');
  const match = /^\/questions\/(\d{1,9})(?:\/|$)/.exec(url.pathname.startsWith(`${prefix}/`) ? url.pathname.slice(prefix.length) : '');
  return match ? Number(match[1]) : null;
}

/** What a chat user can do in the network, always as their linked network user, through the services' own operations. */
export function chatFlows(deps: { db: Db<ChatSchema>; call: NetworkCaller }) {
  const { db, call } = deps;
  return {
    async similar(actor: Actor, text: string) {
      const page = await call('similarToText', actor, { query: { query: text.slice(0, 10000), limit: 5 } });
      return page.items;
    },

    async search(actor: Actor, text: string) {
      const page = await call('listQuestions', actor, { query: { query: text.slice(0, 1000), limit: 5 } });
      return page.items;
    },

    /**
     * Creates and publishes a question; `source` names the click or message it came from, so that
     * a second click asks nothing twice (409). Answers the question and how many experts it went to.
     */
    async ask(actor: Actor, source: string, text: string, from?: { url: string; label: string }) {
      const title = titleOf(text);
      if (!title) throw new AppError(400, 'ValidationError', 'say what you want to ask');
      try {
        await db.insertInto('asks').values({ source, question_id: 0 }).execute();
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict('this was asked already');
        throw err;
      }
      try {
        const question = await call('createQuestion', actor, { body: { title, description: descriptionOf(text, from) } });
        const { number_of_experts } = await call('publishQuestion', actor, { params: { id: question.id } });
        await db.updateTable('asks').set({ question_id: question.id }).where('source', '=', source).execute();
        return { question: { id: question.id, title: question.title }, experts: number_of_experts };
      } catch (err) {
        // Nothing was asked: another click may try again.
        await db.deleteFrom('asks').where('source', '=', source).execute();
        throw err;
      }
    },

    question(actor: Actor, id: number) {
      return call('getQuestion', actor, { params: { id } });
    },

    /** The question a pasted link points to, as this person may see it; null for any other link or a question they may not see. */
    linked(actor: Actor, publicUrl: string, link: string) {
      const id = questionIdOf(publicUrl, link);
      return id === null ? Promise.resolve(null) : call('getQuestion', actor, { params: { id } }).catch(() => null);
    },

    /** Posts a solution from the answer dialog: a draft, then published, as the web app does. */
    async answer(actor: Actor, questionId: number, text: string) {
      const draft = await call('createSolution', actor, { params: { id: questionId }, body: { description: descriptionOf(text) } });
      await call('publishSolution', actor, { params: { id: draft.id } });
      return draft;
    },

    /**
     * "Not me": the question moves on to the best expert it has not been put to yet (the search
     * service's ranking of the question's experts, the asker among the "asked"), as a forward from
     * the person who declined. The decline itself is the content service's (the routing figures
     * count it); a question of one's own, or one no longer open, is still passed on.
     * Answers that expert's id, or null when nobody is left.
     */
    async notMe(actor: Actor, questionId: number) {
      await call('declineQuestion', actor, { params: { id: questionId } }).catch((err: unknown) => {
        if (!(err instanceof AppError && err.status === 409)) throw err;
      });
      await db
        .insertInto('routings')
        .values({ question_id: questionId, user_id: actor.id })
        .onConflict((c) => c.doNothing())
        .execute();
      const experts = await call('getQuestionExperts', actor, { params: { id: questionId }, query: { limit: 50 } });
      const asked = new Set(
        (await db.selectFrom('routings').select('user_id').where('question_id', '=', questionId).execute()).map((r) => r.user_id),
      );
      const next = experts.items.find((e) => !asked.has(e.user.id) && e.user.id !== actor.id && !e.user.is_deleted);
      if (!next) return null;
      await call('forwardQuestion', actor, {
        params: { id: questionId },
        body: { recipient: next.user.id, message: 'Not for me: the knowledge network passes it on to you.' },
      });
      return next.user;
    },

    /**
     * Network people a question may be forwarded to, by name or e-mail, as the caller may see them
     * (the users service decides which addresses it shows): linked to a chat platform or not.
     */
    async colleagues(actor: Actor, query: string) {
      const text = query.trim().slice(0, 200);
      if (!text) return [];
      const page = await call('listUsers', actor, { query: { query: text, limit: 15 } });
      return page.items
        .filter((u) => !u.is_deleted && !u.is_system && u.is_active !== false && u.id !== actor.id)
        .map((u) => ({ id: u.id, name: `${u.firstname} ${u.lastname}`.trim() + (u.email ? ` (${u.email})` : '') }));
    },

    forward(actor: Actor, questionId: number, recipient: number, message: string | null) {
      return call('forwardQuestion', actor, { params: { id: questionId }, body: { recipient, message: message ?? undefined } });
    },

    accept(actor: Actor, solutionId: number) {
      return call('acceptSolution', actor, { params: { id: solutionId } });
    },
  };
}
export type ChatFlows = ReturnType<typeof chatFlows>;

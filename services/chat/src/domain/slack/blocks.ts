import { stateLine } from '../notify.ts';

/** Slack's mrkdwn needs only &, < and > escaped (https://api.slack.com/reference/surfaces/formatting). */
export const mrkdwn = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const section = (text: string) => ({ type: 'section', text: { type: 'mrkdwn', text } });
const button = (actionId: string, text: string, value: string, style?: 'primary' | 'danger') => ({
  type: 'button',
  action_id: actionId,
  text: { type: 'plain_text', text },
  value,
  ...(style ? { style } : {}),
});
const actions = (...elements: unknown[]) => ({ type: 'actions', elements });
const questionLink = (publicUrl: string, q: { id: number; title: string }) =>
  `<${publicUrl}/questions/${q.id}|${mrkdwn(q.title || `#${q.id}`)}>`;

/** A Slack button value holds at most 2,000 characters. */
export const BUTTON_VALUE_MAX = 2000;

export interface Message {
  text: string;
  blocks: unknown[];
}

export function linkPrompt(url: string): Message {
  const text = 'Link your Slack account to the knowledge network first: the app acts only for people it knows.';
  return { text, blocks: [section(`${text}\n<${url}|Sign in and link this account>`)] };
}

export function similarFirst(
  publicUrl: string,
  text: string,
  similar: Array<{ id: number; title: string; solution_count: number }>,
): Message {
  const list = similar.map((q) => `• ${questionLink(publicUrl, q)} (${q.solution_count} solutions)`).join('\n');
  const intro = similar.length ? `These questions may already answer it:\n${list}` : 'No earlier question looks like this one.';
  return {
    text: intro,
    blocks: [section(intro), actions(button('ask_network', 'Ask the network', text.slice(0, BUTTON_VALUE_MAX), 'primary'))],
  };
}

export function searchResults(
  publicUrl: string,
  query: string,
  items: Array<{ id: number; title: string; solution_count: number }>,
): Message {
  const text = items.length
    ? `Questions for “${mrkdwn(query)}”:\n${items.map((q) => `• ${questionLink(publicUrl, q)} (${q.solution_count} solutions)`).join('\n')}`
    : `No question matches “${mrkdwn(query)}”.`;
  return { text, blocks: [section(text)] };
}

export function asked(publicUrl: string, question: { id: number; title: string }, experts: number): Message {
  const text = `Your question ${questionLink(publicUrl, question)} is published and was sent to ${experts} ${experts === 1 ? 'expert' : 'experts'}.`;
  return { text, blocks: [section(text)] };
}

export type ExpertReason = 'published' | 'validation' | 'forwarded';
const REASON: Record<ExpertReason, string> = {
  published: 'A question for you',
  validation: 'Please check whether the solutions of this question are still valid',
  forwarded: 'A question was forwarded to you',
};

/** The direct message of an expert a question was put to: answer, not me, forward. */
export function expertAsked(
  publicUrl: string,
  question: { id: number; title: string },
  reason: ExpertReason,
  note?: string | null,
): Message {
  const text = `${REASON[reason]}: ${questionLink(publicUrl, question)}${note ? `\n> ${mrkdwn(note)}` : ''}`;
  const value = String(question.id);
  return {
    text,
    blocks: [
      section(text),
      actions(
        button('answer', 'Answer', value, 'primary'),
        button('not_me', 'Not me', value),
        button('forward', 'Forward to a colleague', value),
      ),
    ],
  };
}

export function expertDone(publicUrl: string, question: { id: number; title: string }, what: string): Message {
  const text = `${questionLink(publicUrl, question)}: ${mrkdwn(what)}`;
  return { text, blocks: [section(text)] };
}

export function notice(text: string): Message {
  return { text, blocks: [section(mrkdwn(text))] };
}

/** A link to a question, for a share or an expiry. */
export function questionNotice(publicUrl: string, question: { id: number; title: string }, what: string): Message {
  const text = `${mrkdwn(what)}: ${questionLink(publicUrl, question)}`;
  return { text, blocks: [section(text)] };
}

export function newSolution(
  publicUrl: string,
  question: { id: number; title: string },
  solution: { id: number; excerpt: string },
): Message {
  const text = `A new solution to your question ${questionLink(publicUrl, question)}:\n> ${mrkdwn(solution.excerpt)}`;
  return { text, blocks: [section(text), actions(button('accept', 'Accept this solution', String(solution.id), 'primary'))] };
}

export function answerModal(question: { id: number; title: string }) {
  return {
    type: 'modal',
    callback_id: 'answer_modal',
    private_metadata: String(question.id),
    title: { type: 'plain_text', text: 'Answer' },
    submit: { type: 'plain_text', text: 'Post solution' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [
      section(`*${mrkdwn(question.title)}*`),
      {
        type: 'input',
        block_id: 'solution',
        label: { type: 'plain_text', text: 'Your solution' },
        element: { type: 'plain_text_input', action_id: 'text', multiline: true },
      },
    ],
  };
}

export function forwardModal(question: { id: number; title: string }) {
  return {
    type: 'modal',
    callback_id: 'forward_modal',
    private_metadata: String(question.id),
    title: { type: 'plain_text', text: 'Forward' },
    submit: { type: 'plain_text', text: 'Forward' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [
      section(`*${mrkdwn(question.title)}*`),
      {
        type: 'input',
        block_id: 'recipient',
        label: { type: 'plain_text', text: 'Colleague' },
        // Anyone in the network, linked to Slack or not: the options come from the network's users.
        element: {
          type: 'external_select',
          action_id: 'colleague',
          min_query_length: 2,
          placeholder: { type: 'plain_text', text: 'Name or e-mail' },
        },
      },
      {
        type: 'input',
        block_id: 'message',
        optional: true,
        label: { type: 'plain_text', text: 'Message' },
        element: { type: 'plain_text_input', action_id: 'text' },
      },
    ],
  };
}

/** Slack shows at most 75 characters of an option. */
const OPTION_TEXT_MAX = 75;

/** A network person as an option of the forward dialog's colleague field. */
export function colleagueOption(person: { id: number; name: string }) {
  const text = person.name.length > OPTION_TEXT_MAX ? `${person.name.slice(0, OPTION_TEXT_MAX - 1)}…` : person.name;
  return { text: { type: 'plain_text' as const, text }, value: String(person.id) };
}

export function unfurl(question: { title: string; is_deleted: boolean; solution_count: number }) {
  return { title: question.title, text: stateLine(question) };
}

import { type Renderer, stateLine } from '../notify.ts';

/** Adaptive Cards (https://adaptivecards.io, version 1.4 as Teams renders it) of the Teams app. */
const card = (body: unknown[], actions: unknown[] = []) => ({
  contentType: 'application/vnd.microsoft.card.adaptive',
  content: { $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4', body, actions },
});
const text = (t: string, extra: Record<string, unknown> = {}) => ({ type: 'TextBlock', text: t, wrap: true, ...extra });
const submit = (title: string, data: Record<string, unknown>) => ({ type: 'Action.Submit', title, data });
const open = (title: string, url: string) => ({ type: 'Action.OpenUrl', title, url });

export interface TeamsMessage {
  text: string;
  attachments?: unknown[];
}

export const questionUrl = (publicUrl: string, id: number) => `${publicUrl}/questions/${id}`;

export function linkPrompt(url: string): TeamsMessage {
  const t = 'Link your Teams account to the knowledge network first: the app acts only for people it knows.';
  return { text: t, attachments: [card([text(t)], [open('Sign in and link this account', url)])] };
}

export function notice(t: string): TeamsMessage {
  return { text: t };
}

type Q = { id: number; title: string; solution_count: number };

export function similarFirst(publicUrl: string, asked: string, similar: Q[]): TeamsMessage {
  const intro = similar.length ? 'These questions may already answer it:' : 'No earlier question looks like this one.';
  const lines = similar.map((q) => text(`[${q.title}](${questionUrl(publicUrl, q.id)}) (${q.solution_count} solutions)`));
  return { text: intro, attachments: [card([text(intro), ...lines], [submit('Ask the network', { action: 'ask_network', text: asked })])] };
}

export function searchResults(publicUrl: string, query: string, items: Q[]): TeamsMessage {
  const intro = items.length ? `Questions for “${query}”:` : `No question matches “${query}”.`;
  return {
    text: intro,
    attachments: [
      card([text(intro), ...items.map((q) => text(`[${q.title}](${questionUrl(publicUrl, q.id)}) (${q.solution_count} solutions)`))]),
    ],
  };
}

export function asked(publicUrl: string, question: { id: number; title: string }, experts: number): TeamsMessage {
  return {
    text: `Your question “${question.title}” is published and was sent to ${experts} ${experts === 1 ? 'expert' : 'experts'}: ${questionUrl(publicUrl, question.id)}`,
  };
}

/** The dataset of the expert card's colleague field: the network's people (`application/search` invokes). */
export const COLLEAGUES_DATASET = 'kn.colleagues';

/** Teams cards as notifications: the expert's card holds the answer field, so answering needs no dialog. */
export function teamsRenderer(publicUrl: string): Renderer {
  const REASON = {
    published: 'A question for you',
    validation: 'Please check whether the solutions of this question are still valid',
    forwarded: 'A question was forwarded to you',
  } as const;
  return {
    expertAsked: (question, reason, note) => ({
      text: `${REASON[reason]}: ${question.title}`,
      attachments: [
        card(
          [
            text(REASON[reason], { weight: 'Bolder' }),
            text(`[${question.title}](${questionUrl(publicUrl, question.id)})`),
            ...(note ? [text(note, { isSubtle: true })] : []),
            { type: 'Input.Text', id: 'solution', isMultiline: true, placeholder: 'Your solution' },
            // Anyone in the network, in Teams or not: Teams asks the bot for the choices as the person types.
            {
              type: 'Input.ChoiceSet',
              id: 'colleague',
              style: 'filtered',
              placeholder: 'Or forward it to a colleague: name or e-mail',
              choices: [],
              'choices.data': { type: 'Data.Query', dataset: COLLEAGUES_DATASET },
            },
            { type: 'Input.Text', id: 'note', placeholder: 'A note for your colleague (optional)', maxLength: 500 },
          ],
          [
            submit('Answer', { action: 'answer', question: question.id }),
            submit('Not me', { action: 'not_me', question: question.id }),
            submit('Forward', { action: 'forward', question: question.id }),
          ],
        ),
      ],
    }),
    newSolution: (question, solution) => ({
      text: `A new solution to your question “${question.title}”`,
      attachments: [
        card(
          [
            text(`A new solution to your question [${question.title}](${questionUrl(publicUrl, question.id)}):`),
            text(solution.excerpt, { isSubtle: true }),
          ],
          [submit('Accept this solution', { action: 'accept', solution: solution.id })],
        ),
      ],
    }),
    questionNotice: (question, what) => ({ text: `${what}: ${question.title} ${questionUrl(publicUrl, question.id)}` }),
  };
}

/** A question as a card of the compose box: a search result, or a pasted link unfurled. */
function composeCard(publicUrl: string, q: { id: number; title: string }, line: string) {
  return {
    ...card([text(q.title, { weight: 'Bolder' }), text(line, { isSubtle: true })], [open('Open', questionUrl(publicUrl, q.id))]),
    preview: { contentType: 'application/vnd.microsoft.card.thumbnail', content: { title: q.title, text: line } },
  };
}

/** A message-extension result: one question as a card in the compose box's list. */
export const searchResult = (publicUrl: string, q: Q) => composeCard(publicUrl, q, `${q.solution_count} solutions`);

/** A link to a question, pasted into a message: its title, state and number of solutions. */
export const unfurl = (publicUrl: string, q: Q & { is_deleted: boolean }) => composeCard(publicUrl, q, stateLine(q));

/** A compose-box answer of the message extension: these cards (none: nothing to show). */
export const composeResult = (attachments: unknown[]) => ({ composeExtension: { type: 'result', attachmentLayout: 'list', attachments } });

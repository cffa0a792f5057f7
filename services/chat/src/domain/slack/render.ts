import type { Renderer } from '../notify.ts';
import * as blocks from './blocks.ts';

/** Notifications as Slack messages (text for notifications and screen readers, blocks for the buttons). */
export function slackRenderer(publicUrl: string): Renderer {
  return {
    expertAsked: (question, reason, note) => ({ ...blocks.expertAsked(publicUrl, question, reason, note) }),
    newSolution: (question, solution) => ({ ...blocks.newSolution(publicUrl, question, solution) }),
    questionNotice: (question, what) => ({ ...blocks.questionNotice(publicUrl, question, what) }),
  };
}

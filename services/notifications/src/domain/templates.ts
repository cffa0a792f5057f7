import type { AnalyticsDigest, NotificationType } from '@kn/contracts';
import { escapeHtml } from '@kn/service';

type Texts = Record<NotificationType, (actor: string, title: string) => string>;
export type Lang = 'en' | 'de';

const en: Texts = {
  new_comment_to_your_question: (a, t) => `${a} commented on your question "${t}"`,
  new_comment_to_question: (a, t) => `${a} commented on the question "${t}" you follow`,
  new_comment_to_solution: (a, t) => `${a} commented on a solution to "${t}"`,
  new_comment_to_your_solution: (a, t) => `${a} commented on your solution to "${t}"`,
  new_question_random_user: (_a, t) => `You might be able to solve "${t}"`,
  new_question: (_a, t) => `You were selected as an expert for "${t}"`,
  question_forwarded: (a, t) => `${a} recommends you as an expert for "${t}"`,
  new_solution: (a, t) => `${a} posted a solution to "${t}"`,
  solution_rated_by_question_poser: (a, t) => `${a} rated your solution to "${t}"`,
  solution_rated: (a, t) => `${a} rated your solution to "${t}"`,
  solution_from_comment: (a, t) => `${a} turned your comment on "${t}" into a solution`,
  new_solution_to_your_question: (a, t) => `${a} solved your question "${t}"`,
  question_edited: (a, t) => `${a} edited your question "${t}"`,
  solution_edited: (a, t) => `${a} edited a solution to "${t}"`,
  validation_request: (a, t) => `${a} asks you to validate your solution to "${t}"`,
  validation_confirmation: (a, t) => `${a} validated a solution to "${t}"`,
  tag_subscription: (_a, t) => `A question of interest to you: "${t}"`,
  mention_in_question: (a, t) => `${a} mentioned you in the question "${t}"`,
  mention_in_solution: (a, t) => `${a} mentioned you in a solution to "${t}"`,
  mention_in_comment: (a, t) => `${a} mentioned you in a comment on "${t}"`,
  share_question: (a, t) => `${a} shared the question "${t}" with you`,
  share_solution: (a, t) => `${a} shared a solution to "${t}" with you`,
  validation_new_expert: (_a, t) => `You were selected as an expert to validate the solutions to "${t}"`,
  question_changed_to_solution_author: (a, t) => `${a} changed the question "${t}" you answered`,
  solution_changed_to_question_poser: (a, t) => `${a} changed a solution to your question "${t}"`,
  solution_changed_to_solution_rater: (a, t) => `${a} changed a solution you rated on "${t}"`,
  solution_expired: (_a, t) => `Your solution to "${t}" has expired; please validate it`,
};

const de: Texts = {
  new_comment_to_your_question: (a, t) => `${a} hat Ihre Frage „${t}“ kommentiert`,
  new_comment_to_question: (a, t) => `${a} hat die Frage „${t}“ kommentiert, der Sie folgen`,
  new_comment_to_solution: (a, t) => `${a} hat eine Lösung zu „${t}“ kommentiert`,
  new_comment_to_your_solution: (a, t) => `${a} hat Ihre Lösung zu „${t}“ kommentiert`,
  new_question_random_user: (_a, t) => `Vielleicht können Sie „${t}“ lösen`,
  new_question: (_a, t) => `Sie wurden als Experte für „${t}“ ausgewählt`,
  question_forwarded: (a, t) => `${a} empfiehlt Sie als Experten für „${t}“`,
  new_solution: (a, t) => `${a} hat eine Lösung zu „${t}“ veröffentlicht`,
  solution_rated_by_question_poser: (a, t) => `${a} hat Ihre Lösung zu „${t}“ bewertet`,
  solution_rated: (a, t) => `${a} hat Ihre Lösung zu „${t}“ bewertet`,
  solution_from_comment: (a, t) => `${a} hat Ihren Kommentar zu „${t}“ in eine Lösung umgewandelt`,
  new_solution_to_your_question: (a, t) => `${a} hat Ihre Frage „${t}“ gelöst`,
  question_edited: (a, t) => `${a} hat Ihre Frage „${t}“ bearbeitet`,
  solution_edited: (a, t) => `${a} hat eine Lösung zu „${t}“ bearbeitet`,
  validation_request: (a, t) => `${a} bittet Sie, Ihre Lösung zu „${t}“ zu validieren`,
  validation_confirmation: (a, t) => `${a} hat eine Lösung zu „${t}“ validiert`,
  tag_subscription: (_a, t) => `Eine Frage, die Sie interessieren könnte: „${t}“`,
  mention_in_question: (a, t) => `${a} hat Sie in der Frage „${t}“ erwähnt`,
  mention_in_solution: (a, t) => `${a} hat Sie in einer Lösung zu „${t}“ erwähnt`,
  mention_in_comment: (a, t) => `${a} hat Sie in einem Kommentar zu „${t}“ erwähnt`,
  share_question: (a, t) => `${a} hat die Frage „${t}“ mit Ihnen geteilt`,
  share_solution: (a, t) => `${a} hat eine Lösung zu „${t}“ mit Ihnen geteilt`,
  validation_new_expert: (_a, t) => `Sie wurden als Experte zur Validierung der Lösungen zu „${t}“ ausgewählt`,
  question_changed_to_solution_author: (a, t) => `${a} hat die Frage „${t}“ geändert, die Sie beantwortet haben`,
  solution_changed_to_question_poser: (a, t) => `${a} hat eine Lösung zu Ihrer Frage „${t}“ geändert`,
  solution_changed_to_solution_rater: (a, t) => `${a} hat eine Lösung zu „${t}“ geändert, die Sie bewertet haben`,
  solution_expired: (_a, t) => `Ihre Lösung zu „${t}“ ist abgelaufen; bitte validieren Sie sie`,
};

const words = {
  en: {
    poser: 'The question poser',
    system: 'Knowledge Network',
    someone: 'Someone',
    open: 'Open',
    why: 'You receive this email because of your notification settings. Change them in your email settings.',
    digestSubject: (network: string, month: string) => `${network}: your notifications of ${month}`,
    digestIntro: (n: number) => `You have ${n} unread notification${n === 1 ? '' : 's'} from last month:`,
  },
  de: {
    poser: 'Der Fragesteller',
    system: 'Knowledge Network',
    someone: 'Jemand',
    open: 'Öffnen',
    why: 'Sie erhalten diese E-Mail aufgrund Ihrer Benachrichtigungseinstellungen. Sie können sie in Ihren E-Mail-Einstellungen ändern.',
    digestSubject: (network: string, month: string) => `${network}: Ihre Benachrichtigungen aus ${month}`,
    digestIntro: (n: number) => `Sie haben ${n} ungelesene Benachrichtigung${n === 1 ? '' : 'en'} aus dem letzten Monat:`,
  },
};

export const lang = (code: string | null | undefined): Lang => (code === 'de' ? 'de' : 'en');

/** Who is named as the cause: a person, the anonymous poser, or the system. */
export function actorName(
  language: Lang,
  actor: { firstname: string; lastname: string } | null | undefined,
  kind: 'user' | 'poser' | 'system',
) {
  if (kind === 'poser') return words[language].poser;
  if (kind === 'system') return words[language].system;
  return actor ? `${actor.firstname} ${actor.lastname}`.trim() : words[language].someone;
}

export function notificationText(language: Lang, type: NotificationType, actor: string, title: string) {
  return (language === 'de' ? de : en)[type](actor, title);
}

export interface Mail {
  subject: string;
  text: string;
  html: string;
}

export function notificationMail(language: Lang, network: string, content: string, link: string): Mail {
  const w = words[language];
  return {
    subject: `${network}: ${content}`,
    text: `${content}\n\n${w.open}: ${link}\n\n--\n${w.why}\n`,
    html:
      `<!doctype html><html lang="${language}"><body><p>${escapeHtml(content)}</p>` +
      `<p><a href="${escapeHtml(link)}">${w.open}</a></p><hr><p style="color:#666;font-size:12px">${escapeHtml(w.why)}</p></body></html>`,
  };
}

export function digestMail(language: Lang, network: string, month: string, items: Array<{ content: string; link: string }>): Mail {
  const w = words[language];
  return {
    subject: w.digestSubject(network, month),
    text: `${w.digestIntro(items.length)}\n\n${items.map((i) => `- ${i.content}\n  ${i.link}`).join('\n')}\n\n--\n${w.why}\n`,
    html:
      `<!doctype html><html lang="${language}"><body><p>${escapeHtml(w.digestIntro(items.length))}</p><ul>` +
      items.map((i) => `<li><a href="${escapeHtml(i.link)}">${escapeHtml(i.content)}</a></li>`).join('') +
      `</ul><hr><p style="color:#666;font-size:12px">${escapeHtml(w.why)}</p></body></html>`,
  };
}

const digestWords = {
  en: {
    subject: (network: string, week: string) => `${network}: the week from ${week} in figures`,
    flow: 'Questions',
    asked: 'asked',
    answered: 'answered',
    accepted: 'accepted',
    median: 'median time to the first solution',
    unanswered: 'without a solution now',
    withheld: 'Some figures are withheld: they would be over fewer than five people.',
    health: 'Content health',
    expiring: 'solutions expiring within 30 days',
    expired: 'solutions expired',
    validation: 'validation requests waiting',
    unaccepted: 'questions without an accepted solution after 14 days',
    gaps: 'Tags to look at',
    gap: (g: AnalyticsDigest['gaps'][number]) => `${g.tag}: ${g.asked} asked, ${g.answered} answered, ${g.experts} expert(s)`,
    open: 'Open the analytics',
    why: 'You receive this email because you asked for the weekly analytics digest. Turn it off in your settings.',
  },
  de: {
    subject: (network: string, week: string) => `${network}: die Woche ab ${week} in Zahlen`,
    flow: 'Fragen',
    asked: 'gestellt',
    answered: 'beantwortet',
    accepted: 'akzeptiert',
    median: 'Median bis zur ersten Lösung',
    unanswered: 'jetzt ohne Lösung',
    withheld: 'Einige Zahlen werden nicht gezeigt: sie beträfen weniger als fünf Personen.',
    health: 'Aktualität der Inhalte',
    expiring: 'Lösungen, die in 30 Tagen ablaufen',
    expired: 'abgelaufene Lösungen',
    validation: 'offene Validierungsanfragen',
    unaccepted: 'Fragen ohne akzeptierte Lösung nach 14 Tagen',
    gaps: 'Schlagwörter mit Lücken',
    gap: (g: AnalyticsDigest['gaps'][number]) => `${g.tag}: ${g.asked} gestellt, ${g.answered} beantwortet, ${g.experts} Experte(n)`,
    open: 'Zur Analyse',
    why: 'Sie erhalten diese E-Mail, weil Sie die wöchentliche Zusammenfassung der Analyse bestellt haben. Sie können sie in Ihren Einstellungen abbestellen.',
  },
};

/** A duration in seconds as people read it: minutes, hours or days. */
function duration(seconds: number | null) {
  if (seconds === null) return '–';
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 2 * 86_400) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} d`;
}

/** The weekly analytics digest: the week's flow, content health and gaps as the manager may see them. */
export function analyticsDigestMail(language: Lang, network: string, digest: AnalyticsDigest, link: string): Mail {
  const w = digestWords[language];
  const n = (v: number | null) => (v === null ? '–' : String(v));
  const sections: Array<[string, string[]]> = [
    [
      w.flow,
      [
        `${n(digest.flow.asked)} ${w.asked}, ${n(digest.flow.answered)} ${w.answered}, ${n(digest.flow.accepted)} ${w.accepted}`,
        `${w.median}: ${duration(digest.flow.first_solution_p50_s)}`,
        `${n(digest.flow.unanswered)} ${w.unanswered}`,
        ...(digest.flow.suppressed ? [w.withheld] : []),
      ],
    ],
    [
      w.health,
      [
        `${digest.health.expiring} ${w.expiring}`,
        `${digest.health.expired} ${w.expired}`,
        `${digest.health.validation_requested} ${w.validation}`,
        `${digest.health.unaccepted} ${w.unaccepted}`,
      ],
    ],
    ...(digest.gaps.length ? [[w.gaps, digest.gaps.map(w.gap)] as [string, string[]]] : []),
  ];
  return {
    subject: w.subject(network, digest.week),
    text: `${sections.map(([title, lines]) => `${title}\n${lines.map((l) => `- ${l}`).join('\n')}`).join('\n\n')}\n\n${w.open}: ${link}\n\n--\n${w.why}\n`,
    html:
      `<!doctype html><html lang="${language}"><body>` +
      sections
        .map(([title, lines]) => `<h2>${escapeHtml(title)}</h2><ul>${lines.map((l) => `<li>${escapeHtml(l)}</li>`).join('')}</ul>`)
        .join('') +
      `<p><a href="${escapeHtml(link)}">${escapeHtml(w.open)}</a></p><hr><p style="color:#666;font-size:12px">${escapeHtml(w.why)}</p></body></html>`,
  };
}

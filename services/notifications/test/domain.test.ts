import { createHmac } from 'node:crypto';
import { backoff } from '@kn/bus';
import { previousMonth } from '../src/domain/digest.ts';
import { monthRange } from '../src/domain/email.ts';
import { notificationUrl } from '../src/domain/notify.ts';
import { disguiseEmail } from '../src/domain/present.ts';
import { emailSettingFor, NETWORK_DEFAULTS, wantsEmail } from '../src/domain/settings.ts';
import { actorName, analyticsDigestMail, digestMail, notificationMail, notificationText } from '../src/domain/templates.ts';
import { sign } from '../src/domain/webhooks.ts';

const user = (email_settings: Record<string, unknown> | null, email = 'jane@example.com') => ({ email, is_deleted: false, email_settings });

test('email is sent only when the network, email_enabled and the type setting allow it', () => {
  expect(wantsEmail(NETWORK_DEFAULTS, user(null), 'new_solution')).toBe(true);
  expect(wantsEmail(NETWORK_DEFAULTS, user(null), 'question_edited')).toBe(false);
  expect(wantsEmail(NETWORK_DEFAULTS, user(null), 'new_comment_to_solution')).toBe(false);
  expect(wantsEmail(NETWORK_DEFAULTS, user({ new_solution: 'off' }), 'new_solution')).toBe(false);
  expect(wantsEmail(NETWORK_DEFAULTS, user({ email_enabled: false }), 'new_solution')).toBe(false);
  expect(wantsEmail({ ...NETWORK_DEFAULTS, email_delivery_enabled: false }, user(null), 'new_solution')).toBe(false);
  expect(wantsEmail(NETWORK_DEFAULTS, user(null, 'imported-7@example.invalid'), 'new_solution')).toBe(false);
  expect(wantsEmail(NETWORK_DEFAULTS, undefined, 'new_solution')).toBe(true);
  expect(emailSettingFor('solution_changed_to_solution_rater')).toBe('solution_edited');
  expect(emailSettingFor('solution_expired')).toBe('validation_request');
});

test('texts in en and de; the anonymous poser and the system are not named', () => {
  expect(notificationText('en', 'new_solution', 'Jane Doe', 'Build cache?')).toBe('Jane Doe posted a solution to "Build cache?"');
  expect(notificationText('de', 'share_question', 'Jane Doe', 'Build cache?')).toBe(
    'Jane Doe hat die Frage „Build cache?“ mit Ihnen geteilt',
  );
  expect(actorName('en', { firstname: 'Jane', lastname: 'Doe' }, 'poser')).toBe('The question poser');
  expect(actorName('de', { firstname: 'Jane', lastname: 'Doe' }, 'poser')).toBe('Der Fragesteller');
  expect(actorName('en', { firstname: 'Jane', lastname: 'Doe' }, 'user')).toBe('Jane Doe');
  const mail = notificationMail('en', 'KN', 'Jane <b> posted', 'http://x/questions/1');
  expect(mail.text).toContain('Jane <b> posted');
  expect(mail.html).toContain('Jane &lt;b&gt; posted');
  expect(digestMail('de', 'KN', '2026-10', [{ content: 'a', link: 'l' }]).text).toContain('1 ungelesene Benachrichtigung aus');
});

test('backoff doubles and is capped; months; urls; disguise; signature', () => {
  expect([1, 2, 3, 4].map((a) => backoff(a, 100, 500))).toEqual([100, 200, 400, 500]);
  expect(previousMonth(new Date('2026-01-10T00:00:00Z'))).toBe('2025-12');
  expect(monthRange('2025-12')).toEqual({ from: new Date('2025-12-01T00:00:00Z'), to: new Date('2026-01-01T00:00:00Z') });
  expect(notificationUrl({ question_id: 3, target_type: 'question', target_id: 3 })).toBe('/questions/3');
  expect(notificationUrl({ question_id: 3, target_type: 'solution', target_id: 9 })).toBe('/questions/3#solution-9');
  expect(disguiseEmail('jane.doe@example.com')).toBe('j***@example.com');
  expect(sign('{"a":1}', 's')).toBe(`sha256=${createHmac('sha256', 's').update('{"a":1}').digest('hex')}`);
});

test('the weekly analytics digest: figures in the reader’s language, withheld ones as a dash, escaped', () => {
  const digest = {
    week: '2026-11-30',
    flow: { asked: 12, answered: 9, accepted: 4, first_solution_p50_s: 3 * 3600, unanswered: null, suppressed: true },
    health: { expiring: 2, expired: 1, validation_requested: 0, unaccepted: 5 },
    gaps: [{ tag: '<hops>', asked: 6, answered: 2, experts: 1 }],
  };
  const en = analyticsDigestMail('en', 'KN', digest, 'https://kn.example/analytics');
  expect(en.subject).toBe('KN: the week from 2026-11-30 in figures');
  expect(en.text).toContain('- 12 asked, 9 answered, 4 accepted');
  expect(en.text).toContain('median time to the first solution: 3 h');
  expect(en.text).toContain('- – without a solution now');
  expect(en.text).toContain('fewer than five people');
  expect(en.text).toContain('<hops>: 6 asked, 2 answered, 1 expert(s)');
  expect(en.html).toContain('&lt;hops&gt;');
  expect(en.html).not.toContain('<hops>');
  const de = analyticsDigestMail(
    'de',
    'KN',
    { ...digest, gaps: [], flow: { ...digest.flow, suppressed: false } },
    'https://kn.example/analytics',
  );
  expect(de.subject).toBe('KN: die Woche ab 2026-11-30 in Zahlen');
  expect(de.text).toContain('12 gestellt');
  expect(de.text).not.toContain('Schlagwörter');
});

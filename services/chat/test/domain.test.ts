import { webApi } from '@slack/bolt';
import { channelsOf, chatChoices, joinChannel, splitChannel } from '../src/domain/channels.ts';
import { descriptionOf, questionIdOf, titleOf } from '../src/domain/flows.ts';
import { stateLine } from '../src/domain/notify.ts';
import { RetryLater } from '../src/domain/outbox.ts';
import { colleagueOption, mrkdwn } from '../src/domain/slack/blocks.ts';
import { slackFailure } from '../src/domain/slack/web-api.ts';

describe('channels', () => {
  test.each(['email', 'chat', 'both', 'none'] as const)('%s splits into its two halves and joins back', (channel) => {
    const { email, chat } = splitChannel(channel);
    expect(joinChannel(email, chat)).toBe(channel);
  });

  test("the person's own choice wins, the network's default fills the rest", () => {
    expect(chatChoices({ new_question: false }, true)).toMatchObject({ new_question: false, question_forwarded: true });
    expect(chatChoices(undefined, false)).toMatchObject({ new_question: false, share_question: false });
  });

  test('e-mail switched off altogether leaves only chat', () => {
    const email = { new_question: 'on', validation_request: 'on' };
    expect(channelsOf(email, chatChoices({}, true), false)).toMatchObject({ new_question: 'chat' });
    expect(channelsOf(email, chatChoices({}, false), true)).toMatchObject({ new_question: 'email', share_question: 'none' });
  });
});

describe('a question from a chat message', () => {
  test('the title is the first line, cut at a word within 100 characters', () => {
    expect(titleOf('  How do I   descale?\nMore detail')).toBe('How do I descale?');
    const long = `${'word '.repeat(30)}end`;
    const title = titleOf(long);
    expect(title.length).toBeLessThanOrEqual(100);
    expect(title.endsWith('word…')).toBe(true);
  });

  test('the description keeps paragraphs, escapes markup and names the source', () => {
    expect(descriptionOf('a <b>\n\nsecond', { url: 'https://x.slack.com/archives/C1/p1', label: 'thread' })).toBe(
      '<p>a &lt;b&gt;</p><p>second</p><p><a href="https://x.slack.com/archives/C1/p1">thread</a></p>',
    );
  });
});

describe('Slack', () => {
  test('mrkdwn escapes only what Slack reads as markup', () => {
    expect(mrkdwn('a < b & c > d *bold*')).toBe('a &lt; b &amp; c &gt; d *bold*');
  });

  test('429 waits for Retry-After; a 5xx with or without it; other answers are given up', () => {
    const limited = slackFailure(Object.assign(new Error('limited'), { code: webApi.ErrorCode.RateLimitedError, retryAfter: 7 }));
    expect(limited).toBeInstanceOf(RetryLater);
    expect(limited).toMatchObject({ statusCode: 429, retryAfterMs: 7000 });
    const busy = slackFailure(
      Object.assign(new Error('busy'), { code: webApi.ErrorCode.HTTPError, statusCode: 503, headers: { 'retry-after': '3' } }),
    );
    expect(busy).toMatchObject({ statusCode: 503, retryAfterMs: 3000 });
    const down = slackFailure(Object.assign(new Error('down'), { code: webApi.ErrorCode.HTTPError, statusCode: 502, headers: {} }));
    expect(down).toMatchObject({ statusCode: 502, retryAfterMs: null });
    expect(
      slackFailure(Object.assign(new Error('bad'), { code: webApi.ErrorCode.HTTPError, statusCode: 400, headers: {} })),
    ).not.toBeInstanceOf(RetryLater);
    expect(slackFailure(Object.assign(new Error('channel_not_found'), { code: webApi.ErrorCode.PlatformError }))).not.toBeInstanceOf(
      RetryLater,
    );
  });
});

describe('links to questions', () => {
  test('a link of the network names its question; the whole origin and the path below PUBLIC_URL must match', () => {
    expect(questionIdOf('https://kn.example.com', 'https://kn.example.com/questions/42')).toBe(42);
    expect(questionIdOf('https://kn.example.com/', 'https://kn.example.com/questions/42/edit?x=1#a')).toBe(42);
    expect(questionIdOf('https://corp.example/kn', 'https://corp.example/kn/questions/7')).toBe(7);
    expect(questionIdOf('https://corp.example/kn', 'https://corp.example/questions/7')).toBeNull();
    expect(questionIdOf('https://kn.example.com', 'https://kn.example.com.evil.test/questions/42')).toBeNull();
    expect(questionIdOf('https://kn.example.com', 'http://kn.example.com/questions/42')).toBeNull();
    expect(questionIdOf('https://kn.example.com', 'https://kn.example.com/questions/42abc')).toBeNull();
    expect(questionIdOf('https://kn.example.com', 'not a link')).toBeNull();
  });

  test('its state line: deleted, answered or open, and the solutions counted', () => {
    expect(stateLine({ is_deleted: false, solution_count: 0 })).toBe('open · 0 solutions');
    expect(stateLine({ is_deleted: false, solution_count: 1 })).toBe('answered · 1 solution');
    expect(stateLine({ is_deleted: true, solution_count: 2 })).toBe('deleted · 2 solutions');
  });
});

test('a colleague option of the Slack dialog holds at most 75 characters and carries the network user id', () => {
  const option = colleagueOption({ id: 12, name: `Maximiliane ${'Mustermann-'.repeat(10)}` });
  expect(option.text.text).toHaveLength(75);
  expect(option.value).toBe('12');
});

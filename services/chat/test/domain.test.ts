import { webApi } from '@slack/bolt';
import { channelsOf, chatChoices, joinChannel, splitChannel } from '../src/domain/channels.ts';
import { descriptionOf, titleOf } from '../src/domain/flows.ts';
import { RetryLater } from '../src/domain/outbox.ts';
import { mrkdwn } from '../src/domain/slack/blocks.ts';
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

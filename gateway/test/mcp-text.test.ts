import { AppError } from '@kn/contracts';
import { clip, cursorOf, nextCursor, offsetOf, plainText } from '../src/mcp/text.ts';
import { toHtml } from '../src/mcp/tools.ts';

describe('plainText: sanitized HTML as a model reads it', () => {
  test('blocks and breaks become lines, list items dashes, tags go, entities are decoded', () => {
    expect(plainText('<p>The build is <strong>slow</strong> &amp; I&#39;m stuck.</p><ul><li>one</li><li>two</li></ul>x<br>y')).toBe(
      "The build is slow & I'm stuck.\n\n- one\n- two\nx\ny",
    );
    expect(plainText('<h2>Title</h2>\n\n\n\n<p>a&nbsp;&nbsp;b &#x1F37A; &unknown;</p>')).toBe('Title\n\na b 🍺 &unknown;');
    expect(plainText('<p>a</p><script>alert(1)</script><style>p{}</style>')).toBe('a');
    expect(plainText(null)).toBe('');
  });

  test('an entity beyond Unicode stays as written', () => {
    expect(plainText('&#1114112; &#0;')).toBe('&#1114112; &#0;');
  });
});

describe('clip', () => {
  test('keeps a text within the bound, ending a cut one in …, counting code points', () => {
    expect(clip('short', 10)).toBe('short');
    expect(clip('one two three four', 9)).toBe('one two…');
    expect(Array.from(clip('🍺'.repeat(20), 5))).toHaveLength(5);
  });
});

describe('cursors', () => {
  test('a cursor stands for an offset; the next one exists while items remain', () => {
    expect(offsetOf(cursorOf(40))).toBe(40);
    expect(offsetOf(undefined)).toBe(0);
    expect(nextCursor(0, 10, 25)).toBe(cursorOf(10));
    expect(nextCursor(20, 5, 25)).toBeUndefined();
  });

  test('a cursor this server did not make is a validation error naming the cursor', () => {
    for (const bad of ['not-ours', cursorOf(-1), Buffer.from('{"o":1.5}').toString('base64url'), Buffer.from('[]').toString('base64url')]) {
      let error: unknown;
      try {
        offsetOf(bad);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).errors?.[0]?.path).toBe('cursor');
    }
  });
});

describe('toHtml: what an assistant writes, as the web app sends it', () => {
  test('plain text becomes escaped paragraphs with line breaks; HTML stays as it is', () => {
    expect(toHtml('If a < b & "quotes"\nnext line\n\nsecond')).toBe(
      '<p>If a &lt; b &amp; &quot;quotes&quot;<br>next line</p><p>second</p>',
    );
    expect(toHtml('<p>already HTML</p>')).toBe('<p>already HTML</p>');
  });
});

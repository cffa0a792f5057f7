import { useEffect, useRef, useState } from 'preact/hooks';
import { kn, type User } from './api.ts';
import type { MessageKey } from './i18n/en.ts';
import { t } from './i18n.ts';

/*
 * The editor of descriptions and solutions: Markdown typed (with buttons that type it), HTML sent.
 * marked is loaded only when an editor is first shown, so the app's first load does not carry it.
 * What it makes is the person's own text and is sanitised by the API like any other description;
 * the preview keeps to the same rules already: HTML typed as such stays text, and links lead only
 * to web or mail addresses.
 *
 * Mentions: typing @ and the start of a name offers people of the network (GET /users); choosing
 * one types `@[Name](mention:12)`, which becomes the API's mention markup,
 * `<span data-mention-user-id="12">@Name</span>`: the API notifies that person
 * (mention_in_question, mention_in_solution), and pages show it as a link to their profile.
 */

type Marked = typeof import('marked');
let loading: Promise<Marked> | null = null;
const markedModule = () => {
  loading ??= import('marked').then((m) => {
    const asText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    m.marked.use({
      gfm: true,
      breaks: true,
      renderer: {
        html: ({ text }) => asText(text),
        link: ({ href, text }) => {
          const mention = MENTION_HREF.exec(href);
          return mention ? `<span data-mention-user-id="${mention[1]}">@${asText(text)}</span>` : false;
        },
      },
      walkTokens: (token) => {
        if ((token.type === 'link' || token.type === 'image') && !/^(https?:|mailto:|\/(?!\/)|#)/i.test(token.href))
          token.href = token.type === 'link' && MENTION_HREF.test(token.href) ? token.href : '#';
      },
    });
    return m;
  });
  return loading;
};

const MENTION_HREF = /^mention:(\d{1,15})$/;
/** `@` and the start of a name just before the caret: what mention completion looks for. */
const MENTION_TYPED = /(?:^|\s)@([\p{L}\p{N}][\p{L}\p{N}.' -]{0,39})$/u;
const MENTIONS_OFFERED = 6;

/** Markdown as HTML (for the API, which sanitises it; and for the preview). */
export async function markdownToHtml(text: string): Promise<string> {
  if (!text.trim()) return '';
  const { marked } = await markedModule();
  return (await marked.parse(text, { async: true })).trim();
}

/** What each button types around the selection (or in place of it). */
const FORMATS = [
  ['bold', '**', '**'],
  ['italic', '_', '_'],
  ['code', '`', '`'],
  ['link', '[', '](https://)'],
  ['list', '\n- ', ''],
] as const;

export function Editor({
  id,
  label,
  value,
  onInput,
  rows = 8,
  required,
}: {
  id: string;
  label: string;
  value: string;
  onInput: (text: string) => void;
  rows?: number;
  required?: boolean;
}) {
  const [preview, setPreview] = useState<string | null>(null);
  const area = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    void markedModule();
  }, []);
  const format = (before: string, after: string) => {
    const el = area.current;
    if (!el) return;
    const { selectionStart: start, selectionEnd: end } = el;
    const next = value.slice(0, start) + before + value.slice(start, end) + after + value.slice(end);
    onInput(next);
    requestAnimationFrame(() => {
      el.focus();
      el.setSelectionRange(start + before.length, end + before.length);
    });
  };
  const showPreview = async () => setPreview(await markdownToHtml(value));
  const mention = useMentions(value, area);
  return (
    <div class="editor">
      <label for={id}>{label}</label>
      <div class="editor-bar" role="toolbar" aria-label={t('editor.toolbar')} aria-controls={id}>
        {FORMATS.map(([name, before, after]) => (
          <button
            key={name}
            type="button"
            class={`format format-${name}`}
            disabled={preview !== null}
            onClick={() => format(before, after)}
          >
            {t(`editor.${name}` as MessageKey)}
          </button>
        ))}
        <button
          type="button"
          class="toggle"
          aria-pressed={preview !== null}
          onClick={() => (preview === null ? void showPreview() : setPreview(null))}
        >
          {t('editor.preview')}
        </button>
      </div>
      <textarea
        id={id}
        ref={area}
        rows={rows}
        required={required}
        hidden={preview !== null}
        aria-describedby={`${id}-hint`}
        value={value}
        onInput={(e) => {
          onInput(e.currentTarget.value);
          mention.typed(e.currentTarget);
        }}
        onKeyDown={(e) => {
          // Down arrow from the text to the people offered.
          if (e.key === 'ArrowDown' && mention.people.length) {
            e.preventDefault();
            document.getElementById(`${id}-mention-0`)?.focus();
          }
        }}
      />
      {mention.people.length > 0 && preview === null && (
        <ul class="mentions" aria-label={t('editor.mentions')}>
          {mention.people.map((u, i) => (
            <li key={u.id}>
              <button
                type="button"
                class="secondary"
                id={`${id}-mention-${i}`}
                onClick={() => {
                  const next = mention.choose(u);
                  if (next !== null) onInput(next);
                }}
              >
                {t('editor.mention', { name: `${u.firstname} ${u.lastname}`.trim() })}
              </button>
            </li>
          ))}
        </ul>
      )}
      {preview !== null && (
        <section class="editor-preview" aria-label={t('editor.previewOf', { label })}>
          {/* The person's own text as marked made it (raw HTML kept as text, links checked): the API sanitises what is sent. */}
          <div class="content" dangerouslySetInnerHTML={{ __html: preview || `<p>${t('common.none')}</p>` }} />
        </section>
      )}
      <p id={`${id}-hint`} class="hint">
        {t('editor.hint')}
      </p>
    </div>
  );
}

/**
 * People to mention for the `@name` just typed (a prefix search of the users API, the newest
 * answer only), and the text with the chosen one's mention in place of `@name`.
 */
function useMentions(value: string, area: { current: HTMLTextAreaElement | null }) {
  const [people, setPeople] = useState<User[]>([]);
  const [at, setAt] = useState<{ start: number; end: number } | null>(null);
  const asked = useRef(0);
  const typed = (el: HTMLTextAreaElement) => {
    const end = el.selectionStart;
    const found = MENTION_TYPED.exec(el.value.slice(0, end));
    const round = ++asked.current;
    if (!found) {
      setPeople([]);
      setAt(null);
      return;
    }
    setAt({ start: end - found[1]!.length - 1, end });
    void kn()
      .call('listUsers', { query: { query: found[1]!, limit: MENTIONS_OFFERED } as never })
      .then(({ items }) => round === asked.current && setPeople(items))
      .catch(() => round === asked.current && setPeople([]));
  };
  const choose = (u: User) => {
    if (!at) return null;
    const text = `@[${`${u.firstname} ${u.lastname}`.trim().replace(/[[\]]/g, '')}](mention:${u.id}) `;
    const next = value.slice(0, at.start) + text + value.slice(at.end);
    asked.current++;
    setPeople([]);
    setAt(null);
    const caret = at.start + text.length;
    requestAnimationFrame(() => {
      area.current?.focus();
      area.current?.setSelectionRange(caret, caret);
    });
    return next;
  };
  return { people, typed, choose };
}

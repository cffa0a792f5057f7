import { useEffect, useRef, useState } from 'preact/hooks';
import type { MessageKey } from './i18n/en.ts';
import { t } from './i18n.ts';

/*
 * The editor of descriptions and solutions: Markdown typed (with buttons that type it), HTML sent.
 * marked is loaded only when an editor is first shown, so the app's first load does not carry it.
 * What it makes is the person's own text and is sanitised by the API like any other description;
 * the preview keeps to the same rules already: HTML typed as such stays text, and links lead only
 * to web or mail addresses.
 */

type Marked = typeof import('marked');
let loading: Promise<Marked> | null = null;
const markedModule = () => {
  loading ??= import('marked').then((m) => {
    const asText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    m.marked.use({
      gfm: true,
      breaks: true,
      renderer: { html: ({ text }) => asText(text) },
      walkTokens: (token) => {
        if ((token.type === 'link' || token.type === 'image') && !/^(https?:|mailto:|\/(?!\/)|#)/i.test(token.href)) token.href = '#';
      },
    });
    return m;
  });
  return loading;
};

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
        onInput={(e) => onInput(e.currentTarget.value)}
      />
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

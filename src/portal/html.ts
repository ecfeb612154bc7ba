/**
 * @module
 * Safe HTML building for the server-rendered portal: the `html` template tag escapes every value
 * unless it is already `Html`, so no page can splice user text (account names, query text,
 * result cells) into markup by accident.
 */

/** Markup known to be safe (built by `html` or `raw`). */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text
  }
}

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Escapes text for element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)
}

/** Values a template accepts: text is escaped; Html is kept; lists are concatenated; nullish and false vanish. */
export type HtmlValue = Html | string | number | bigint | boolean | null | undefined | readonly HtmlValue[]

function render(value: HtmlValue): string {
  if (value instanceof Html) return value.text
  if (value === null || value === undefined || value === false) return ''
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(render).join('')
  return escapeHtml(String(value))
}

export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): Html {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!
  return new Html(out)
}

/** Trusted markup (static strings and the output of our own renderers only). */
export function raw(text: string): Html {
  return new Html(text)
}

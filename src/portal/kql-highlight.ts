/**
 * @module
 * A small, forgiving KQL highlighter for the portal (no editor library, no CDN): splits text into
 * comments, strings, numbers and timespans, keywords, function calls, pipes and operators, and
 * wraps each in a `<span class="k-…">`. It never fails: text it does not recognise stays plain, and
 * the spans concatenated give back the input exactly.
 */
import { JOIN_KINDS, TABULAR_OPERATORS } from '../kql/index.js'
import { escapeHtml, Html } from './html.js'

export type KqlTokenClass = 'comment' | 'string' | 'number' | 'keyword' | 'function' | 'pipe' | 'operator' | 'plain'

export interface KqlToken {
  readonly text: string
  readonly kind: KqlTokenClass
}

/** The tabular operators the engine parses after a pipe (also the Explore editor's completion after `|`). */
export const PIPE_OPERATORS: ReadonlySet<string> = new Set(TABULAR_OPERATORS)

/**
 * Query operators and their keywords (also the Explore editor's completion list): the engine's operators and
 * join kinds, the words inside operators, and the operators it refuses (still highlighted as KQL).
 */
export const KEYWORDS: ReadonlySet<string> = new Set([
  ...TABULAR_OPERATORS,
  ...JOIN_KINDS,
  'fork',
  'facet',
  'range',
  'print',
  'by',
  'asc',
  'desc',
  'nulls',
  'first',
  'last',
  'kind',
  'on',
  'let',
  'set',
  'with',
  'from',
  'to',
  'step',
  'datatable',
  'in',
  'in~',
  '!in',
  '!in~',
  'between',
  '!between',
  'and',
  'or',
  'has',
  'has_cs',
  '!has',
  '!has_cs',
  'hasprefix',
  'hassuffix',
  '!hasprefix',
  '!hassuffix',
  'contains',
  'contains_cs',
  '!contains',
  '!contains_cs',
  'startswith',
  'startswith_cs',
  '!startswith',
  'endswith',
  'endswith_cs',
  '!endswith',
  'matches',
  'regex',
  'has_any',
  'has_all',
  'true',
  'false',
  'materialize',
  'externaldata',
  'reduce',
  'consume',
  'of',
  'declare',
  'query_parameters',
  'typeof',
  'bagexpansion',
  'withsource',
  'isfuzzy',
  'hint.strategy',
  'hint.shufflekey',
  'hint.num_partitions',
])

const TIMESPAN_UNITS =
  /^(d|h|m|s|ms|microsecond|microseconds|tick|ticks|day|days|hour|hours|hr|hrs|min|minute|minutes|sec|second|seconds|millisecond|milliseconds)\b/

/** Splits KQL text into classified tokens; their texts concatenate to the input. */
export function tokenizeKql(text: string): KqlToken[] {
  const out: KqlToken[] = []
  let i = 0
  const push = (kind: KqlTokenClass, end: number) => {
    const last = out[out.length - 1]
    const piece = text.slice(i, end)
    if (last && last.kind === kind && kind === 'plain') out[out.length - 1] = { text: last.text + piece, kind }
    else out.push({ text: piece, kind })
    i = end
  }
  while (i < text.length) {
    const c = text[i]!
    const rest = text.slice(i)
    if (rest.startsWith('//')) {
      const nl = text.indexOf('\n', i)
      push('comment', nl === -1 ? text.length : nl)
    } else if (rest.startsWith('```')) {
      const close = text.indexOf('```', i + 3)
      push('string', close === -1 ? text.length : close + 3)
    } else if (/^[hH]?@?["']/.test(rest)) {
      push('string', stringEnd(text, i))
    } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(text[i + 1] ?? ''))) {
      const m = /^(0x[0-9a-fA-F]+|[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)/.exec(rest)!
      let end = i + m[0].length
      const unit = TIMESPAN_UNITS.exec(text.slice(end))
      if (unit) end += unit[0].length
      push('number', end)
    } else if (/[A-Za-z_!]/.test(c)) {
      const m = /^!?[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z_][A-Za-z0-9_]*)*(?:~)?(?:\.[A-Za-z_]+)?/.exec(rest)
      if (!m) {
        push('operator', i + 1)
        continue
      }
      // Hyphenated words (mv-expand) and dotted hints are one keyword; otherwise the plain identifier.
      let word = m[0]
      if (!KEYWORDS.has(word)) word = /^!?[A-Za-z_][A-Za-z0-9_]*~?/.exec(rest)![0]
      if (word.startsWith('!') && !KEYWORDS.has(word)) {
        push('operator', i + 1)
        continue
      }
      if (KEYWORDS.has(word)) push('keyword', i + word.length)
      else if (/^\s*\(/.test(text.slice(i + word.length))) push('function', i + word.length)
      else push('plain', i + word.length)
    } else if (c === '|') {
      push('pipe', i + 1)
    } else if (/[=<>!~+\-*/%,;:()[\]{}.]/.test(c)) {
      push('operator', i + 1)
    } else {
      push('plain', i + 1)
    }
  }
  return out
}

/** End (exclusive) of the string literal starting at `start`; an unterminated string runs to the line's end. */
function stringEnd(text: string, start: number): number {
  let i = start
  if (text[i] === 'h' || text[i] === 'H') i++
  const verbatim = text[i] === '@'
  if (verbatim) i++
  const quote = text[i]!
  i++
  while (i < text.length) {
    const c = text[i]!
    if (c === '\n') return i
    if (!verbatim && c === '\\') {
      i += 2
      continue
    }
    if (c === quote) {
      if (verbatim && text[i + 1] === quote) {
        i += 2
        continue
      }
      return i + 1
    }
    i++
  }
  return text.length
}

const CLASS: Readonly<Record<KqlTokenClass, string | undefined>> = {
  comment: 'k-cmt',
  string: 'k-str',
  number: 'k-num',
  keyword: 'k-kw',
  function: 'k-fn',
  pipe: 'k-pipe',
  operator: 'k-op',
  plain: undefined,
}

/** Highlighted, escaped markup for KQL text (put it inside `<pre><code>`). */
export function highlightKql(text: string): Html {
  return new Html(
    tokenizeKql(text)
      .map((t) => {
        const cls = CLASS[t.kind]
        return cls ? `<span class="${cls}">${escapeHtml(t.text)}</span>` : escapeHtml(t.text)
      })
      .join(''),
  )
}

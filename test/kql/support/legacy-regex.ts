/**
 * @module
 * The RE2 → JavaScript RegExp translation the engine used before issue 15 moved every regex to a
 * real RE2 implementation (src/kql/functions/regex.ts). Kept only as the reference the property
 * tests compare the RE2 engine against on the conformance cases' regexes. Never used by the server.
 */
const JS_SYNTAX_CHARS = new Set(['^', '$', '\\', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '/'])

const POSIX_CLASSES: Readonly<Record<string, string>> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
}

const UNICODE_CATEGORIES = new Set([
  'L',
  'Ll',
  'Lm',
  'Lo',
  'Lt',
  'Lu',
  'M',
  'Mc',
  'Me',
  'Mn',
  'N',
  'Nd',
  'Nl',
  'No',
  'P',
  'Pc',
  'Pd',
  'Pe',
  'Pf',
  'Pi',
  'Po',
  'Ps',
  'S',
  'Sc',
  'Sk',
  'Sm',
  'So',
  'Z',
  'Zl',
  'Zp',
  'Zs',
  'C',
  'Cc',
  'Cf',
  'Co',
  'Cs',
  'Any',
])

function escapeLiteral(c: string, inClass: boolean): string {
  if (inClass) return c === ']' || c === '\\' || c === '^' || c === '-' || c === '[' ? '\\' + c : c
  return JS_SYNTAX_CHARS.has(c) ? '\\' + c : c
}

function unicodeProperty(name: string): string {
  if (UNICODE_CATEGORIES.has(name)) return name === 'Any' ? 'Any' : name
  return `Script=${name}`
}

interface TranslatedRegex {
  readonly source: string
  readonly flags: string
}

/** Translates RE2 syntax into a JavaScript `u`-mode pattern plus the flags it implies. */
export function translateRe2(pattern: string): TranslatedRegex {
  const flags = new Set<string>()
  let out = ''
  let inClass = false
  let classStart = false
  let lastWasClassEscape = false
  // whether the previous token can take a quantifier (so `{2}` is a quantifier, not text)
  let quantifiable = false
  let i = 0
  const n = pattern.length
  while (i < n) {
    const c = pattern[i]!
    if (c === '\\') {
      const d = pattern[i + 1]
      if (d === undefined) throw new SyntaxError('trailing backslash')
      i += 2
      let emitted: string
      let classEscape = false
      switch (d) {
        case 'Q': {
          const end = pattern.indexOf('\\E', i)
          const literal = end < 0 ? pattern.slice(i) : pattern.slice(i, end)
          i = end < 0 ? n : end + 2
          emitted = [...literal].map((ch) => escapeLiteral(ch, inClass)).join('')
          break
        }
        case 'A':
          emitted = inClass ? 'A' : '(?<![\\s\\S])'
          break
        case 'z':
          emitted = inClass ? 'z' : '(?![\\s\\S])'
          break
        case 'C':
          emitted = inClass ? '\\s\\S' : '[\\s\\S]'
          break
        case 'a':
          emitted = '\\x07'
          break
        case 'p':
        case 'P': {
          let name: string
          if (pattern[i] === '{') {
            const end = pattern.indexOf('}', i)
            if (end < 0) throw new SyntaxError('unterminated \\p{')
            name = pattern.slice(i + 1, end)
            i = end + 1
          } else {
            name = pattern[i] ?? ''
            i++
          }
          const negated = name.startsWith('^')
          emitted = `\\${(d === 'P') !== negated ? 'P' : 'p'}{${unicodeProperty(negated ? name.slice(1) : name)}}`
          classEscape = true
          break
        }
        case 'x': {
          if (pattern[i] === '{') {
            const end = pattern.indexOf('}', i)
            if (end < 0) throw new SyntaxError('unterminated \\x{')
            emitted = `\\u{${pattern.slice(i + 1, end)}}`
            i = end + 1
          } else {
            emitted = '\\x' + pattern.slice(i, i + 2)
            i += 2
          }
          break
        }
        case 'd':
        case 'D':
        case 'w':
        case 'W':
        case 's':
        case 'S':
          emitted = '\\' + d
          classEscape = true
          break
        default:
          if (/[A-Za-z0-9]/.test(d)) emitted = '\\' + d
          else emitted = escapeLiteral(d, inClass)
      }
      if (inClass && lastWasClassEscape && emitted === '-') emitted = '\\-'
      out += emitted
      lastWasClassEscape = inClass && classEscape
      quantifiable = true
      classStart = false
      continue
    }
    if (inClass) {
      if (c === '[' && pattern[i + 1] === ':') {
        const end = pattern.indexOf(':]', i + 2)
        const name = end < 0 ? '' : pattern.slice(i + 2, end)
        const negated = name.startsWith('^')
        const cls = POSIX_CLASSES[negated ? name.slice(1) : name]
        if (cls !== undefined && !negated) {
          out += cls
          i = end + 2
          lastWasClassEscape = true
          classStart = false
          continue
        }
      }
      if (c === ']' && !classStart) {
        inClass = false
        out += ']'
        quantifiable = true
      } else if (c === '-' && lastWasClassEscape) {
        out += '\\-'
      } else if (c === '[') {
        out += '\\['
      } else {
        out += c
      }
      lastWasClassEscape = false
      classStart = false
      i++
      continue
    }
    switch (c) {
      case '[':
        inClass = true
        classStart = true
        out += '['
        if (pattern[i + 1] === '^') {
          out += '^'
          i++
        }
        if (pattern[i + 1] === ']') {
          // a leading ']' is literal in RE2
          out += '\\]'
          i++
          classStart = false
        }
        i++
        lastWasClassEscape = false
        continue
      case '(': {
        if (pattern[i + 1] === '?') {
          if (pattern[i + 2] === 'P' && pattern[i + 3] === '<') {
            out += '(?<'
            i += 4
            quantifiable = false
            continue
          }
          const m = /^\(\?([imsU-]*)(\)|:)/.exec(pattern.slice(i))
          if (m && m[1] !== '') {
            const [on] = m[1]!.split('-')
            for (const f of on ?? '') if (f !== 'U') flags.add(f)
            i += m[0].length
            if (m[2] === ':') out += '(?:'
            quantifiable = false
            continue
          }
        }
        out += '('
        i++
        quantifiable = false
        continue
      }
      case '{': {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i))
        if (m && quantifiable) {
          out += m[0]
          i += m[0].length
          if (pattern[i] === '?') {
            out += '?'
            i++
          }
          quantifiable = false
          continue
        }
        out += '\\{'
        i++
        quantifiable = true
        continue
      }
      case '}':
        out += '\\}'
        i++
        quantifiable = true
        continue
      case ']':
        out += '\\]'
        i++
        quantifiable = true
        continue
      case '*':
      case '+':
      case '?':
        out += c
        i++
        quantifiable = false
        continue
      case '|':
        out += c
        i++
        quantifiable = false
        continue
      case '/':
        out += '\\/'
        i++
        quantifiable = true
        continue
      default:
        out += c
        i++
        quantifiable = c !== '^' && c !== '$'
    }
  }
  if (inClass) throw new SyntaxError('missing ]')
  return { source: out, flags: [...flags].join('') }
}

const REGEX_CACHE = new Map<string, RegExp>()
const REGEX_CACHE_LIMIT = 256

/**
 * Compiles an RE2 pattern (Kusto's regex dialect) into a JavaScript RegExp with the given extra
 * flags (e.g. 'g'). Throws KqlError('semantic') naming `fn` for an invalid pattern. Cached.
 */
export function legacyCompileRegex(pattern: string, extraFlags: string = '', fn: string = 'regex'): RegExp {
  const key = `${extraFlags}\u0000${pattern}`
  const cached = REGEX_CACHE.get(key)
  if (cached) {
    cached.lastIndex = 0
    return cached
  }
  let re: RegExp
  try {
    const t = translateRe2(pattern)
    re = new RegExp(t.source, uniqueFlags(t.flags + extraFlags + 'u'))
  } catch {
    try {
      // a pattern our translation rejects may still be fine for the non-unicode engine
      re = new RegExp(pattern.replace(/\(\?P</g, '(?<'), uniqueFlags(extraFlags))
    } catch (error) {
      throw new SyntaxError(`${fn}: invalid regular expression ${JSON.stringify(pattern)}: ${(error as Error).message}`)
    }
  }
  if (REGEX_CACHE.size >= REGEX_CACHE_LIMIT) REGEX_CACHE.clear()
  REGEX_CACHE.set(key, re)
  return re
}

function uniqueFlags(flags: string): string {
  return [...new Set(flags)].join('')
}

/** The number of capture groups of a compiled regex. */
export function captureGroupCount(re: RegExp): number {
  return (new RegExp(`${re.source}|`, re.flags.replace('g', '').replace('y', '')).exec('')?.length ?? 1) - 1
}

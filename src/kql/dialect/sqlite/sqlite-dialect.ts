/**
 * @module
 * The SQLite dialect hooks. Booleans are 0/1 integers, integers bind as bigint (a JavaScript
 * number binds as REAL), and there is no NaN (a NaN result becomes NULL, so real arithmetic is
 * guarded by kql_refuse()). String operators that SQLite cannot match exactly call kql_match(),
 * registered from ./sqlite-functions.ts on the query worker's connection.
 */
import type { SqlDialect, StringMatchOp } from '../../sql/sql-dialect.js'
import type { KqlType, KqlValue } from '../../types.js'

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`
const isAscii = (s: string): boolean => /^[\x00-\x7f]*$/.test(s)
/** A LIKE pattern matching `s` literally (escape character backslash). */
const likeEscape = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`)

/**
 * Non-ASCII characters whose JavaScript case mapping reaches ASCII, with the ASCII text it
 * reaches: toLowerCase (contains, startswith, endswith, the first branch of =~), toUpperCase (the
 * second branch of =~) and the `iu` regex folding of has. Only text holding one of them can match
 * an ASCII needle that holds that text, without also matching SQLite's ASCII-only LIKE. The lists
 * are pinned by postgres-dialect.test.ts (every code point).
 */
const LOWERS: readonly (readonly [string, string])[] = [
  ['\u0130', 'i'],
  ['\u212A', 'k'],
]
const UPPERS: readonly (readonly [string, string])[] = [
  ['\u00DF', 'ss'],
  ['\u0131', 'i'],
  ['\u017F', 's'],
  ['\uFB00', 'ff'],
  ['\uFB01', 'fi'],
  ['\uFB02', 'fl'],
  ['\uFB03', 'ffi'],
  ['\uFB04', 'ffl'],
  ['\uFB05', 'st'],
  ['\uFB06', 'st'],
]
/** The `iu` regular expression's simple case folding of `has` (hasTermRegex). */
const FOLDS: readonly (readonly [string, string])[] = [
  ['\u017F', 's'],
  ['\u212A', 'k'],
]

/** The special characters that could stand for part of `needle` (lower-cased ASCII). */
function specialsFor(needle: string, ...lists: readonly (readonly (readonly [string, string])[])[]): string {
  const lower = needle.toLowerCase()
  return lists
    .flat()
    .filter(([c, ascii]) => {
      // U+0130 lowers to i + U+0307: that i can only be the needle's last character
      if (c === '\u0130') return lower.endsWith(ascii)
      return lower.includes(ascii)
    })
    .map(([c]) => c)
    .join('')
}

/** A GLOB pattern matching `s` literally. */
const globEscape = (s: string): string => s.replace(/[*?[]/g, (c) => `[${c}]`)

/**
 * ASCII needles: SQLite's LIKE folds ASCII case only. A LIKE match is a match for the evaluator
 * too (the matched characters are ASCII, which JavaScript lowers the same way), and a LIKE miss
 * is a miss unless the text holds one of the few non-ASCII characters whose case mapping reaches
 * ASCII: only those rows ask kql_match(). The has family needs whole terms: on ASCII text GLOB
 * patterns with [0-9A-Za-z] boundaries decide after LIKE found the substring, kql_match() on
 * other text.
 */
function asciiNeedle(op: StringMatchOp, text: string, needle: string, bind: (value: string) => string, match: () => string): string {
  const like = (pattern: string): string =>
    needle.includes('%') || needle.includes('_') || needle.includes('\\')
      ? `${text} LIKE ${bind(pattern)} ESCAPE '\\'`
      : `${text} LIKE ${bind(pattern)}`
  /** Text long enough to hold the needle once case-mapped, and holding one of `chars`. */
  const holds = (chars: string, minBytes: number): string => {
    const test = chars.length === 1 ? `instr(${text}, ${bind(chars)}) > 0` : `${text} GLOB ${bind(`*[${chars}]*`)}`
    // minBytes is computed from the needle's length (not user text): inlined as a number
    return minBytes > 1 ? `octet_length(${text}) >= ${minBytes} AND ${test}` : test
  }
  switch (op) {
    case 'contains':
    case 'startswith':
    case 'endswith':
    case '=~': {
      const e = likeEscape(needle)
      const pattern = op === 'contains' ? `%${e}%` : op === 'startswith' ? `${e}%` : op === 'endswith' ? `%${e}` : e
      const specials = op === '=~' ? specialsFor(needle, LOWERS, UPPERS) : specialsFor(needle, LOWERS)
      if (specials === '') return `(${like(pattern)})`
      // a character maps to at most three (ﬃ → FFI), so the text has at least a third of the needle's length
      return `(${like(pattern)} OR (${holds(specials, Math.ceil(needle.length / 3))} AND ${match()}))`
    }
    default: {
      const cs = op.endsWith('_cs')
      const base = cs ? op.slice(0, -3) : op
      const term = cs ? needle : needle.toLowerCase()
      const alnum = (c: string): boolean => /^[0-9A-Za-z]$/.test(c)
      const other = cs ? '[^0-9A-Za-z]' : '[^0-9a-z]'
      const left = base !== 'hassuffix' && alnum(term[0]!) ? ['', `*${other}`] : ['*']
      const right = base !== 'hasprefix' && alnum(term[term.length - 1]!) ? ['', `${other}*`] : ['*']
      const subject = cs ? text : `lower(${text})`
      const globs = left.flatMap((l) => right.map((r) => `${subject} GLOB ${bind(`${l}${globEscape(term)}${r}`)}`))
      // has matches with the `iu` regex folding (ſ → s, K → k); hasprefix / hassuffix lower the
      // text (İ → i + U+0307, K → k), so a term can end in the i of a U+0130 (issue 17)
      const specials = cs ? '' : specialsFor(needle, base === 'has' ? FOLDS : LOWERS)
      const substring = like(`%${likeEscape(needle)}%`)
      const necessary = specials === '' ? substring : `(${substring} OR ${holds(specials, 1)})`
      return `(${necessary} AND (CASE WHEN length(${text}) = octet_length(${text}) THEN (${globs.join(' OR ')}) ELSE ${match()} END))`
    }
  }
}

export const sqliteDialect: SqlDialect = {
  name: 'sqlite',
  quoteIdentifier: quote,
  placeholder: () => '?',
  numberedParameters: false,
  param: (placeholder) => placeholder,
  encodeParam(type: KqlType, value: KqlValue): unknown {
    switch (type) {
      case 'bool':
        return value ? 1n : 0n
      case 'int':
      case 'long':
        return BigInt(value as number)
      case 'datetime':
      case 'timespan':
        return value as bigint
      default:
        return value
    }
  },
  nullOf: () => 'NULL',
  trueSql: '1',
  falseSql: '0',
  hasNaN: false,
  isNaN: () => '0',
  nanSql: 'NULL',
  guardRealResult: (expr, operandsNotNull) =>
    `COALESCE(${expr}, ${operandsNotNull === undefined ? 'kql_refuse()' : `CASE WHEN ${operandsNotNull} THEN kql_refuse() END`})`,
  guardLongResult: (expr) => `kql_int64(${expr})`,
  readColumn: (sql, type) =>
    type === 'real' || type === 'decimal' ? `(CASE WHEN typeof(${sql}) = 'text' THEN kql_refuse() ELSE ${sql} END)` : sql,
  // both operands are INTEGER: SQLite truncates toward zero and gives NULL for a zero divisor
  integerDivide: (a, b) => `(${a} / ${b})`,
  // a zero divisor gives NULL where JavaScript gives ±Infinity or NaN: guardRealResult refuses it
  realDivide: (a, b) => `(${a} / ${b})`,
  toReal: (x) => `CAST(${x} AS REAL)`,
  nullSafeEquals: (a, b) => `${a} IS ${b}`,
  stringMatch(op, text, needle, bind) {
    const match = (): string => `kql_match('${op}', ${text}, ${bind(needle)})`
    switch (op) {
      // byte-exact native forms (valid UTF-8 text has no lone surrogates, so code points and
      // UTF-16 code units give the same substrings)
      case 'contains_cs':
        return `(instr(${text}, ${bind(needle)}) > 0)`
      case 'startswith_cs': {
        const n = bind(needle)
        return `(substr(${text}, 1, length(${n})) = ${n})`
      }
      case 'endswith_cs': {
        const n = bind(needle)
        return `(substr(${text}, -length(${n})) = ${n})`
      }
      default:
        break
    }
    // SQLite refuses LIKE patterns over 50,000 bytes
    if (!isAscii(needle) || needle.length > 10_000) return match()
    return asciiNeedle(op, text, needle, bind, match)
  },
  inIgnoreCase: (text, needles, bind) => `(kql_lower(${text}) IN (${needles.map((n) => bind(n.toLowerCase())).join(', ')}))`,
  stringSortKey: (x) => `kql_utf16(${x})`,
  // SQLite's AVG of no values is NULL (it has no NaN): decoded as NaN, Kusto's 0 / 0. Integers:
  // the exact SUM rounded once and divided once, as the evaluator does (AVG would go on in
  // doubles past int64; SUM fails with "integer overflow" there, a refusal answered in memory)
  average: (x, integral) => ({ sql: integral ? `(CAST(SUM(${x}) AS REAL) / COUNT(${x}))` : `AVG(${x})`, nullIsNaN: true }),
  // SQLite's SUM of integers fails with "integer overflow" (a refusal, query-source.ts)
  sum: (x) => `SUM(${x})`,
}

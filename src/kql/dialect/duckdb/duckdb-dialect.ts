/**
 * @module
 * The DuckDB dialect hooks (the columnar tier, docs/design/columnar.md). Parameters are numbered
 * and cast (`$1::BIGINT`) as on PostgreSQL. DuckDB doubles follow IEEE 754 (x / 0 is ±Infinity,
 * ∞ − ∞ is NaN), NaN equals itself and orders above every number, as PostgreSQL's. Integer `//`
 * truncates toward zero and gives NULL for a zero divisor; 64-bit overflow fails the statement
 * ("Out of Range Error"), which the source reports as a refusal, so the engine answers in memory.
 * Case-insensitive operators are pushed only for ASCII needles through the exact JavaScript case
 * mappings (DuckDB's lower() and ILIKE follow Unicode's tables, not JavaScript's); a has-term over
 * non-ASCII text calls error('kql_refuse'), a refusal.
 */
import type { SqlDialect } from '../../sql/sql-dialect.js'
import type { KqlType, KqlValue } from '../../types.js'

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`

/** How each KQL type is held in DuckDB (and in Parquet segments): ticks as BIGINT, dynamic as JSON text. */
export const DUCKDB_TYPES: Readonly<Record<KqlType, string>> = {
  bool: 'BOOLEAN',
  int: 'INTEGER',
  long: 'BIGINT',
  real: 'DOUBLE',
  decimal: 'DOUBLE',
  string: 'VARCHAR',
  datetime: 'BIGINT',
  timespan: 'BIGINT',
  guid: 'VARCHAR',
  dynamic: 'VARCHAR',
}

/** The message of the error() a pushed statement raises where only the evaluator can answer. */
export const DUCKDB_REFUSAL = 'kql_refuse'
const refuse = `error('${DUCKDB_REFUSAL}')`

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'
const LOWER = 'abcdefghijklmnopqrstuvwxyz'

/**
 * Where JavaScript's toLowerCase() reaches ASCII from a non-ASCII character: only U+212A KELVIN
 * SIGN (→ k) and U+0130 (→ i + U+0307); pinned over every code point by postgres-dialect.test.ts.
 * SQL text is UTF-8, so the characters are written as they are.
 */
const lowerAscii = (t: string): string => `translate(${t}, '${UPPER}\u212A', '${LOWER}k')`
const lowerForSearch = (t: string): string => `replace(${lowerAscii(t)}, '\u0130', 'i\u0307')`

/** Where JavaScript's toUpperCase() of a non-ASCII character is all ASCII (same test pins it). */
const UPPER_SPECIALS: readonly (readonly [string, string])[] = [
  ['\u00DF', 'SS'],
  ['\uFB00', 'FF'],
  ['\uFB01', 'FI'],
  ['\uFB02', 'FL'],
  ['\uFB03', 'FFI'],
  ['\uFB04', 'FFL'],
  ['\uFB05', 'ST'],
  ['\uFB06', 'ST'],
]
const upperAscii = (t: string): string =>
  UPPER_SPECIALS.reduce((acc, [from, to]) => `replace(${acc}, '${from}', '${to}')`, `translate(${t}, '${LOWER}\u017F\u0131', '${UPPER}SI')`)

const isAscii = (s: string): boolean => /^[\x00-\x7f]*$/.test(s)
const isAsciiAlnum = (c: string): boolean => /^[0-9A-Za-z]$/.test(c)
/** `text` is all ASCII: DuckDB's strlen counts bytes, length counts code points. */
const asciiText = (text: string): string => `strlen(${text}) = length(${text})`

/**
 * Text for a case-insensitive term search: every way the evaluator can see an ASCII letter in a
 * character (toLowerCase(): A-Z, U+212A → k, U+0130 → i + U+0307; the /iu regular expression's
 * case folding: A-Z, U+212A → k, U+017F → s) written as that letter; every other character as it
 * is, so non-ASCII characters stay term boundaries for an ASCII GLOB class.
 */
const foldForTerms = (t: string): string => `replace(translate(${t}, '${UPPER}\u212A\u017F', '${LOWER}ks'), '\u0130', 'i\u0307')`

/** Characters GLOB gives a meaning to: a term holding one is matched by the regular expression. */
const GLOB_SPECIAL = /[*?[\]\\]/

/**
 * has / hasprefix / hassuffix (and _cs) for an ASCII term: on ASCII text a term boundary is a
 * character outside 0-9A-Za-z, so a GLOB over the text padded with spaces (or, for a term GLOB
 * would read as a pattern, an RE2 expression) answers exactly; other text refuses.
 *
 * The GLOB is the only conjunct DuckDB can evaluate inside the Parquet scan (over a column's
 * dictionary, not per row): a conjunct that can fail (the refusal's error(), regexp_matches) stays
 * above the scan, so there it sees only the rows whose text holds the term (has-count on 10M rows,
 * CPU: 59 ms with the substring test + regular expression above the scan, 44 ms with the GLOB,
 * 38 ms for the hand-written ASCII regular expression). The case-insensitive form matches
 * foldForTerms(text): on any text the GLOB then holds for every row the evaluator matches, so a row
 * it leaves out is a non-match, and the non-ASCII rows it keeps refuse.
 */
function termMatch(op: string, text: string, needle: string, bind: (value: string) => string): string | undefined {
  if (!isAscii(needle) || needle.length > 1000) return undefined
  const cs = op.endsWith('_cs')
  const base = cs ? op.slice(0, -3) : op
  if (base !== 'has' && base !== 'hasprefix' && base !== 'hassuffix') return undefined
  const startsTerm = base !== 'hassuffix' && isAsciiAlnum(needle[0] ?? '')
  const endsTerm = base !== 'hasprefix' && isAsciiAlnum(needle[needle.length - 1] ?? '')
  const onlyAscii = `(CASE WHEN ${asciiText(text)} THEN TRUE ELSE ${refuse} END)`
  if (/^[\x20-\x7e]*$/.test(needle) && !GLOB_SPECIAL.test(needle)) {
    const other = cs ? '[!0-9A-Za-z]' : '[!0-9a-z]'
    const pattern = `*${startsTerm ? other : ''}${cs ? needle : needle.toLowerCase()}${endsTerm ? other : ''}*`
    return `((' ' || ${cs ? text : foldForTerms(text)} || ' ') GLOB ${bind(pattern)} AND ${onlyAscii})`
  }
  const body = [...needle]
    .map((c) => {
      if (/[A-Za-z]/.test(c)) return cs ? c : `[${c.toLowerCase()}${c.toUpperCase()}]`
      if (/[0-9]/.test(c)) return c
      return `\\${c}`
    })
    .join('')
  const other = '[^0-9A-Za-z]'
  const before = startsTerm ? `(^|${other})` : ''
  const after = endsTerm ? `($|${other})` : ''
  const substring = cs ? `contains(${text}, ${bind(needle)})` : `contains(${lowerAscii(text)}, ${bind(needle.toLowerCase())})`
  // a cheap substring test first (a term match needs the substring), so most rows never reach the
  // regular expression; non-ASCII text may hold the term through a case mapping (K → k) without
  // the substring: those rows always reach the CASE
  return `((${substring} OR NOT (${asciiText(text)})) AND (CASE WHEN ${asciiText(text)} THEN regexp_matches(${text}, ${bind(before + body + after)}) ELSE ${refuse} END))`
}

export const duckdbDialect: SqlDialect = {
  name: 'duckdb',
  quoteIdentifier: quote,
  placeholder: (n) => `$${n}`,
  numberedParameters: true,
  param: (placeholder, type) => `${placeholder}::${DUCKDB_TYPES[type]}`,
  encodeParam(type: KqlType, value: KqlValue): unknown {
    if (value === null || value === undefined) return null
    switch (type) {
      case 'int':
      case 'long':
        return BigInt(value as number | bigint)
      case 'datetime':
      case 'timespan':
        return value as bigint
      default:
        return value
    }
  },
  nullOf: (type) => `CAST(NULL AS ${DUCKDB_TYPES[type]})`,
  trueSql: 'TRUE',
  falseSql: 'FALSE',
  hasNaN: true,
  isNaN: (x) => `(${x} = 'NaN'::DOUBLE)`,
  nanSql: `'NaN'::DOUBLE`,
  // IEEE doubles: overflow gives ±Infinity and invalid operations NaN, as in JavaScript
  guardRealResult: (expr) => expr,
  // BIGINT overflow fails the statement, but the optimizer moves constants across comparisons
  // (`n + c < 0` → `n < -c`) and so skips the overflow: the result is checked in HUGEINT first
  guardLongResult: (expr, operands) =>
    operands
      ? `(CASE WHEN (CAST(${operands.a} AS HUGEINT) ${operands.op} ${operands.b}) BETWEEN -9223372036854775808 AND 9223372036854775807 THEN ${expr} ELSE ${refuse} END)`
      : expr,
  // DOUBLE holds NaN and ±Infinity: a stored column reads as it is
  readColumn: (sql) => sql,
  // // on integers truncates toward zero; NULLIF makes a zero divisor NULL explicitly
  integerDivide: (a, b) => `(${a} // NULLIF(${b}, 0))`,
  realDivide: (a, b) => `(${a} / ${b})`,
  toReal: (x) => `CAST(${x} AS DOUBLE)`,
  nullSafeEquals: (a, b) => `${a} IS NOT DISTINCT FROM ${b}`,
  stringMatch(op, text, needle, bind) {
    switch (op) {
      case 'contains_cs':
        return `contains(${text}, ${bind(needle)})`
      case 'startswith_cs':
        return `starts_with(${text}, ${bind(needle)})`
      case 'endswith_cs':
        return `ends_with(${text}, ${bind(needle)})`
      case 'contains':
      case 'startswith':
      case 'endswith': {
        if (!isAscii(needle)) return undefined
        const n = bind(needle.toLowerCase())
        // U+0130 lowers to i + U+0307: only a needle ending in i can match its i
        const t = needle.toLowerCase().endsWith('i') ? lowerForSearch(text) : lowerAscii(text)
        if (op === 'contains') return `contains(${t}, ${n})`
        return op === 'startswith' ? `starts_with(${t}, ${n})` : `ends_with(${t}, ${n})`
      }
      case '=~': {
        // JavaScript: a === b || equal toLowerCase() || equal toUpperCase()
        if (!isAscii(needle)) return undefined
        return `(${lowerAscii(text)} = ${bind(needle.toLowerCase())} OR ${upperAscii(text)} = ${bind(needle.toUpperCase())})`
      }
      default:
        return termMatch(op, text, needle, bind)
    }
  },
  inIgnoreCase: (text, needles, bind) =>
    needles.every(isAscii) ? `(${lowerAscii(text)} IN (${needles.map((n) => bind(n.toLowerCase())).join(', ')}))` : undefined,
  // VARCHAR orders by UTF-8 bytes (code points), not UTF-16 units: string sorts stay in memory
  stringSortKey: () => undefined,
  // AVG(DOUBLE) is the sum in doubles over the count; SUM(BIGINT) is an exact HUGEINT
  average: (x, integral) => ({
    sql: integral
      ? `(CASE WHEN COUNT(${x}) = 0 THEN 'NaN'::DOUBLE ELSE CAST(SUM(${x}) AS DOUBLE) / COUNT(${x}) END)`
      : `COALESCE(AVG(${x}), 'NaN'::DOUBLE)`,
    nullIsNaN: false,
  }),
  // an exact HUGEINT: decodeValue's longFrom() wraps it to 64 bits, as the evaluator's sum does
  sum: (x) => `SUM(${x})`,
}

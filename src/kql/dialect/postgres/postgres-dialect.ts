/**
 * @module
 * The PostgreSQL dialect hooks. Parameters are numbered and cast (`$1::bigint`), so their type
 * never depends on context. Real columns may hold NaN, which PostgreSQL orders above every number
 * and calls equal to itself: comparisons and sort keys guard it. Data exceptions (overflow, a zero
 * divisor) fail the statement; storage reports them as SqlRefusalError and the engine answers in
 * memory. Case-insensitive string operators are pushed only for ASCII needles, through the exact
 * case mappings below (lower() and ILIKE follow the server's locale, not .NET or JavaScript).
 */
import type { SqlDialect } from '../../sql/sql-dialect.js'
import type { KqlType, KqlValue } from '../../types.js'

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`

const PG_TYPES: Record<KqlType, string> = {
  bool: 'boolean', int: 'integer', long: 'bigint', real: 'double precision', decimal: 'double precision',
  string: 'text', datetime: 'bigint', timespan: 'bigint', guid: 'text', dynamic: 'text',
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'
const LOWER = 'abcdefghijklmnopqrstuvwxyz'

/**
 * Where JavaScript's toLowerCase() can produce ASCII from a non-ASCII character: only U+212A
 * KELVIN SIGN (→ k) and U+0130 (→ i + U+0307). Pinned by postgres-dialect.test.ts over every code
 * point, so an ASCII needle matches the mapped text exactly when it matches the lowered text.
 */
const lowerAscii = (t: string): string => `translate(${t}, U&'${UPPER}\\212A', '${LOWER}k')`
const lowerForSearch = (t: string): string => `replace(${lowerAscii(t)}, U&'\\0130', U&'i\\0307')`

/**
 * Where JavaScript's toUpperCase() of a non-ASCII character is all ASCII: ß, ı, ſ and the
 * ligatures U+FB00–FB06 (also pinned by the test).
 */
const UPPER_SPECIALS: readonly (readonly [string, string])[] = [
  ['\\00DF', 'SS'], ['\\FB00', 'FF'], ['\\FB01', 'FI'], ['\\FB02', 'FL'], ['\\FB03', 'FFI'], ['\\FB04', 'FFL'], ['\\FB05', 'ST'], ['\\FB06', 'ST'],
]
const upperAscii = (t: string): string =>
  UPPER_SPECIALS.reduce((acc, [from, to]) => `replace(${acc}, U&'${from}', '${to}')`, `translate(${t}, U&'${LOWER}\\017F\\0131', '${UPPER}SI')`)

const isAscii = (s: string): boolean => /^[\x00-\x7f]*$/.test(s)

export const postgresDialect: SqlDialect = {
  name: 'postgres',
  quoteIdentifier: quote,
  placeholder: (n) => `$${n}`,
  numberedParameters: true,
  param: (placeholder, type) => `${placeholder}::${PG_TYPES[type]}`,
  encodeParam(type: KqlType, value: KqlValue): unknown {
    switch (type) {
      case 'int': case 'long': return String(BigInt(value as number))
      case 'datetime': case 'timespan': return String(value as bigint)
      default: return value
    }
  },
  nullOf: (type) => `CAST(NULL AS ${PG_TYPES[type]})`,
  trueSql: 'TRUE',
  falseSql: 'FALSE',
  hasNaN: true,
  isNaN: (x) => `(${x} = 'NaN'::double precision)`,
  nanSql: `'NaN'::double precision`,
  // PostgreSQL keeps NaN and fails on overflow (a refusal): nothing to guard
  guardRealResult: (expr) => expr,
  integerDivide: (a, b) => `(${a} / NULLIF(${b}, 0))`,
  // a zero divisor fails the statement (22012): the engine then answers in memory (±Infinity, NaN)
  realDivide: (a, b) => `(${a} / ${b})`,
  toReal: (x) => `CAST(${x} AS double precision)`,
  nullSafeEquals: (a, b) => `${a} IS NOT DISTINCT FROM ${b}`,
  stringMatch(op, text, needle, bind) {
    switch (op) {
      case 'contains_cs': return `(strpos(${text}, ${bind(needle)}) > 0)`
      case 'startswith_cs': {
        const n = bind(needle)
        return `(left(${text}, length(${n})) = ${n})`
      }
      case 'endswith_cs': {
        const n = bind(needle)
        return `(right(${text}, length(${n})) = ${n})`
      }
      case 'contains': case 'startswith': case 'endswith': {
        if (!isAscii(needle)) return undefined
        const n = bind(needle.toLowerCase())
        const t = lowerForSearch(text)
        if (op === 'contains') return `(strpos(${t}, ${n}) > 0)`
        return op === 'startswith' ? `(left(${t}, length(${n})) = ${n})` : `(right(${t}, length(${n})) = ${n})`
      }
      case '=~': {
        // JavaScript: a === b || same length and equal toLowerCase() || equal toUpperCase()
        if (!isAscii(needle)) return undefined
        return `(${lowerAscii(text)} = ${bind(needle.toLowerCase())} OR ${upperAscii(text)} = ${bind(needle.toUpperCase())})`
      }
      default:
        // has/hasprefix/hassuffix: term boundaries are Unicode letters and digits; kept in memory
        return undefined
    }
  },
  inIgnoreCase: (text, needles, bind) =>
    needles.every(isAscii) ? `(${lowerAscii(text)} IN (${needles.map((n) => bind(n.toLowerCase())).join(', ')}))` : undefined,
  stringSortKey: () => undefined,
  // the evaluator divides the (exact) sum by the count in doubles; AVG(bigint) would be numeric
  average: (x) => ({ sql: `(CASE WHEN COUNT(${x}) = 0 THEN 'NaN'::double precision ELSE CAST(SUM(${x}) AS double precision) / COUNT(${x}) END)`, nullIsNaN: false }),
  sum: (x) => `SUM(${x})`,
}

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
  bool: 'boolean',
  int: 'integer',
  long: 'bigint',
  real: 'double precision',
  decimal: 'double precision',
  string: 'text',
  datetime: 'bigint',
  timespan: 'bigint',
  guid: 'text',
  dynamic: 'text',
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
  ['\\00DF', 'SS'],
  ['\\FB00', 'FF'],
  ['\\FB01', 'FI'],
  ['\\FB02', 'FL'],
  ['\\FB03', 'FFI'],
  ['\\FB04', 'FFL'],
  ['\\FB05', 'ST'],
  ['\\FB06', 'ST'],
]
const upperAscii = (t: string): string =>
  UPPER_SPECIALS.reduce(
    (acc, [from, to]) => `replace(${acc}, U&'${from}', '${to}')`,
    `translate(${t}, U&'${LOWER}\\017F\\0131', '${UPPER}SI')`,
  )

const isAscii = (s: string): boolean => /^[\x00-\x7f]*$/.test(s)
const isAsciiAlnum = (c: string): boolean => /^[0-9A-Za-z]$/.test(c)

/**
 * has / has_cs / hasprefix / hassuffix (and _cs) for an ASCII term: a term boundary is a letter
 * or digit in the evaluator's Unicode sense, which on ASCII text is 0-9, A-Z and a-z, so a regular
 * expression over ASCII text answers exactly. Non-ASCII text fails the statement with a division
 * by zero (a data exception, so a refusal): the engine then answers in memory.
 */
function termMatch(op: string, text: string, needle: string, bind: (value: string) => string): string | undefined {
  if (!isAscii(needle) || needle.length > 1000) return undefined
  const cs = op.endsWith('_cs')
  const base = cs ? op.slice(0, -3) : op
  if (base !== 'has' && base !== 'hasprefix' && base !== 'hassuffix') return undefined
  const body = [...needle]
    .map((c) => {
      if (/[A-Za-z]/.test(c)) return cs ? c : `[${c.toLowerCase()}${c.toUpperCase()}]`
      if (/[0-9]/.test(c)) return c
      return `\\${c}`
    })
    .join('')
  // boundaries only on a side where the term itself starts or ends with a letter or digit
  // the class is spelled out: ranges in a PostgreSQL bracket expression may follow the collation
  const other = `[^0123456789${UPPER}${LOWER}]`
  const before = base !== 'hassuffix' && isAsciiAlnum(needle[0]!) ? `(^|${other})` : ''
  const after = base !== 'hasprefix' && isAsciiAlnum(needle[needle.length - 1]!) ? `($|${other})` : ''
  return `(CASE WHEN octet_length(${text}) = length(${text}) THEN ${text} ~ ${bind(before + body + after)} ELSE 1 / (length(${text}) - length(${text})) = 1 END)`
}

export const postgresDialect: SqlDialect = {
  name: 'postgres',
  quoteIdentifier: quote,
  placeholder: (n) => `$${n}`,
  numberedParameters: true,
  param: (placeholder, type) => `${placeholder}::${PG_TYPES[type]}`,
  encodeParam(type: KqlType, value: KqlValue): unknown {
    switch (type) {
      case 'int':
      case 'long':
        return String(BigInt(value as number))
      case 'datetime':
      case 'timespan':
        return String(value as bigint)
      default:
        return value
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
  // bigint overflow raises 22003 (a refusal): nothing to guard
  guardLongResult: (expr) => expr,
  readColumn: (sql) => sql,
  integerDivide: (a, b) => `(${a} / NULLIF(${b}, 0))`,
  // a zero divisor fails the statement (22012): the engine then answers in memory (±Infinity, NaN)
  realDivide: (a, b) => `(${a} / ${b})`,
  toReal: (x) => `CAST(${x} AS double precision)`,
  nullSafeEquals: (a, b) => `${a} IS NOT DISTINCT FROM ${b}`,
  stringMatch(op, text, needle, bind) {
    switch (op) {
      case 'contains_cs':
        return `(strpos(${text}, ${bind(needle)}) > 0)`
      case 'startswith_cs': {
        const n = bind(needle)
        return `(left(${text}, length(${n})) = ${n})`
      }
      case 'endswith_cs': {
        const n = bind(needle)
        return `(right(${text}, length(${n})) = ${n})`
      }
      case 'contains':
      case 'startswith':
      case 'endswith': {
        if (!isAscii(needle)) return undefined
        const n = bind(needle.toLowerCase())
        // U+0130 lowers to i + U+0307: only a needle ending in i can match its i
        const t = needle.toLowerCase().endsWith('i') ? lowerForSearch(text) : lowerAscii(text)
        if (op === 'contains') return `(strpos(${t}, ${n}) > 0)`
        return op === 'startswith' ? `(left(${t}, length(${n})) = ${n})` : `(right(${t}, length(${n})) = ${n})`
      }
      case '=~': {
        // JavaScript: a === b || same length and equal toLowerCase() || equal toUpperCase()
        if (!isAscii(needle)) return undefined
        return `(${lowerAscii(text)} = ${bind(needle.toLowerCase())} OR ${upperAscii(text)} = ${bind(needle.toUpperCase())})`
      }
      default:
        return termMatch(op, text, needle, bind)
    }
  },
  inIgnoreCase: (text, needles, bind) =>
    needles.every(isAscii) ? `(${lowerAscii(text)} IN (${needles.map((n) => bind(n.toLowerCase())).join(', ')}))` : undefined,
  stringSortKey: () => undefined,
  // AVG(double precision) is the sum in doubles over the count, as the evaluator's; AVG(bigint)
  // would be numeric, so integers divide their (exact) sum as a double by the count
  average: (x, integral) => ({
    sql: integral
      ? `(CASE WHEN COUNT(${x}) = 0 THEN 'NaN'::double precision ELSE CAST(SUM(${x}) AS double precision) / COUNT(${x}) END)`
      : `COALESCE(AVG(${x}), 'NaN'::double precision)`,
    nullIsNaN: false,
  }),
  // SUM(bigint) is numeric and never overflows; as bigint it raises 22003 (a refusal) beyond int64
  sum: (x, integral) => (integral ? `CAST(SUM(${x}) AS bigint)` : `SUM(${x})`),
}

/**
 * @module
 * The SQLite dialect hooks. Booleans are 0/1 integers, integers bind as bigint (a JavaScript
 * number binds as REAL), and there is no NaN (a NaN result becomes NULL, so real arithmetic is
 * guarded by kql_refuse()). String operators that SQLite cannot match exactly call kql_match(),
 * registered from ./sqlite-functions.ts on the query worker's connection.
 */
import type { SqlDialect } from '../../sql/sql-dialect.js'
import type { KqlType, KqlValue } from '../../types.js'

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`
const isAscii = (s: string): boolean => /^[\x00-\x7f]*$/.test(s)
/** A LIKE pattern matching `s` literally (escape character backslash). */
const likeEscape = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`)

export const sqliteDialect: SqlDialect = {
  name: 'sqlite',
  quoteIdentifier: quote,
  placeholder: () => '?',
  numberedParameters: false,
  param: (placeholder) => placeholder,
  encodeParam(type: KqlType, value: KqlValue): unknown {
    switch (type) {
      case 'bool': return value ? 1n : 0n
      case 'int': case 'long': return BigInt(value as number)
      case 'datetime': case 'timespan': return value as bigint
      default: return value
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
      case 'contains_cs': return `(instr(${text}, ${bind(needle)}) > 0)`
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
    // An ASCII needle: SQLite's LIKE folds ASCII case only. A LIKE match is a match for the
    // evaluator too (the matched characters are ASCII, which JavaScript lowers the same way);
    // on ASCII text a LIKE miss is a miss. Only non-ASCII text that LIKE misses asks kql_match().
    const ascii = `length(${text}) = octet_length(${text})`
    switch (op) {
      case 'contains': case 'startswith': case 'endswith': case '=~': {
        const pattern = op === 'contains' ? `%${likeEscape(needle)}%` : op === 'startswith' ? `${likeEscape(needle)}%` : op === 'endswith' ? `%${likeEscape(needle)}` : likeEscape(needle)
        return `(CASE WHEN ${text} LIKE ${bind(pattern)} ESCAPE '\\' THEN 1 WHEN ${ascii} THEN 0 ELSE ${match()} END)`
      }
      default:
        // has and its kin: on ASCII text the term (case folded) occurs as a substring, so a LIKE
        // miss rules the row out before the function is called
        return `(CASE WHEN ${ascii} AND NOT (${text} LIKE ${bind(`%${likeEscape(needle)}%`)} ESCAPE '\\') THEN 0 ELSE ${match()} END)`
    }
  },
  inIgnoreCase: (text, needles, bind) => `(kql_lower(${text}) IN (${needles.map((n) => bind(n.toLowerCase())).join(', ')}))`,
  stringSortKey: (x) => `kql_utf16(${x})`,
  // SQLite's AVG of no values is NULL (it has no NaN): decoded as NaN, Kusto's 0 / 0
  average: (x) => ({ sql: `AVG(${x})`, nullIsNaN: true }),
  sum: (x) => `SUM(${x})`,
}

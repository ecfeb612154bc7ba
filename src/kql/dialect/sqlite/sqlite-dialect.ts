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
    const n = bind(needle)
    switch (op) {
      // byte-exact native forms (valid UTF-8 text has no lone surrogates, so code points and
      // UTF-16 code units give the same substrings)
      case 'contains_cs': return `(instr(${text}, ${n}) > 0)`
      case 'startswith_cs': return `(substr(${text}, 1, length(${n})) = ${n})`
      case 'endswith_cs': return `(substr(${text}, -length(${n})) = ${n})`
      default: return `kql_match('${op}', ${text}, ${n})`
    }
  },
  inIgnoreCase: (text, needles, bind) => `(kql_lower(${text}) IN (${needles.map((n) => bind(n.toLowerCase())).join(', ')}))`,
  stringSortKey: (x) => `kql_utf16(${x})`,
  // SQLite's AVG of no values is NULL (it has no NaN): decoded as NaN, Kusto's 0 / 0
  average: (x) => ({ sql: `AVG(${x})`, nullIsNaN: true }),
  sum: (x) => `SUM(${x})`,
}

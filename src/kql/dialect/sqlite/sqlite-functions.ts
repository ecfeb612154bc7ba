/**
 * @module
 * The SQL functions pushed-down SQLite statements call (pure JavaScript; the query worker
 * registers them on its read-only connection). Each one calls the very code the in-memory
 * evaluator runs, so a filter answers the same in SQL and in memory by construction: SQLite's own
 * LIKE and lower() fold ASCII only, and has/contains follow JavaScript's Unicode case rules.
 */
import { stringMatcher } from '../../exec/compile-string-ops.js'
import { SqlRefusalError } from '../../kql-error.js'

export interface SqliteFunction {
  readonly name: string
  /** Deterministic functions may be evaluated once for constant arguments (never kql_refuse). */
  readonly deterministic: boolean
  /** Integer arguments arrive as bigint (REALs stay numbers), so INTEGER and REAL can be told apart. */
  readonly safeIntegers?: boolean
  readonly impl: (...args: never[]) => unknown
}

const MATCHERS = new Map<string, (text: string) => boolean>()

/** kql_match(op, text, needle): the evaluator's string operator `op` with a constant needle, as 1/0. */
function match(op: string, text: string | null, needle: string | null): number {
  const key = `${op}\u0000${needle ?? ''}`
  let m = MATCHERS.get(key)
  if (!m) {
    if (MATCHERS.size > 1000) MATCHERS.clear()
    m = stringMatcher(op, needle ?? '')
    MATCHERS.set(key, m)
  }
  return m(text ?? '') ? 1 : 0
}

/** Ordinal UTF-16 order (.NET, JavaScript) as bytes: UTF-16BE compares code unit by code unit. */
function utf16Key(text: string | null): Buffer {
  const s = text ?? ''
  const out = Buffer.allocUnsafe(s.length * 2)
  for (let i = 0; i < s.length; i++) out.writeUInt16BE(s.charCodeAt(i), i * 2)
  return out
}

/**
 * kql_int64(x): x when it is an INTEGER. SQLite turns integer arithmetic that leaves int64 into a
 * REAL, where Kusto's long wraps around: the statement stops and the engine answers in memory.
 */
function int64(x: bigint | number | null): bigint | null {
  if (x === null || typeof x === 'bigint') return x
  throw new SqlRefusalError('long arithmetic left the 64-bit range in SQLite; evaluated in memory instead')
}

export const SQLITE_FUNCTIONS: readonly SqliteFunction[] = [
  { name: 'kql_int64', deterministic: false, safeIntegers: true, impl: int64 as (...args: never[]) => unknown },
  { name: 'kql_match', deterministic: true, impl: match as (...args: never[]) => unknown },
  { name: 'kql_lower', deterministic: true, impl: ((s: string | null) => (s ?? '').toLowerCase()) as (...args: never[]) => unknown },
  { name: 'kql_utf16', deterministic: true, impl: utf16Key as (...args: never[]) => unknown },
  {
    // a value SQLite cannot hold (NaN): the statement stops and the engine answers in memory
    name: 'kql_refuse',
    deterministic: false,
    impl: (() => {
      throw new SqlRefusalError('SQLite cannot represent this value (NaN); evaluated in memory instead')
    }) as (...args: never[]) => unknown,
  },
]

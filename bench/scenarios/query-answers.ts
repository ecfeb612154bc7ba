/**
 * @module
 * Comparing answers to the same query row by row (kql-shared-segments): rows in the JSON wire form
 * the query endpoints return (`results` keyed by column name, `columns` with KQL types), reduced to
 * a canonical form: longs as decimal text, datetimes as ISO text, reals as numbers compared with a
 * relative tolerance (DuckDB's parallel aggregation adds in no fixed order, so the last bits of a
 * sum or avg may differ between two runs of one query), rows in a canonical order unless the query
 * orders them. Rows hand-written SQL returned are brought to the wire form first (`wireAnswer`).
 */
import { type KqlType, toWireValue } from '../../src/kql/index.js'

export interface WireColumn {
  readonly name: string
  readonly type: KqlType
}

/** An answer as POST /oi-api/warm-queries returns it. */
export interface Answer {
  readonly columns: readonly WireColumn[]
  readonly results: readonly Record<string, unknown>[]
}

/** Reals equal within this relative difference count as the same value (and are counted as inexact). */
export const REAL_TOLERANCE = 1e-9

type Canon = string | number | boolean | null | readonly Canon[] | { readonly [k: string]: Canon }

const isReal = (type: KqlType): boolean => type === 'real' || type === 'decimal'

function canonValue(type: KqlType, value: unknown): Canon {
  if (value === null || value === undefined) return null
  if (type === 'long' || type === 'int') return typeof value === 'string' ? value : String(BigInt(value as number | bigint))
  if (isReal(type)) return typeof value === 'number' ? value : String(value)
  if (type === 'dynamic') return canonDynamic(value)
  return value as Canon
}

function canonDynamic(value: unknown): Canon {
  if (Array.isArray(value)) return value.map(canonDynamic)
  if (typeof value === 'bigint') return String(value)
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, canonDynamic(v)]))
  return value as Canon
}

/** Rows as arrays of canonical values, in column order. */
export function canonRows(answer: Answer): Canon[][] {
  return answer.results.map((row) => answer.columns.map((c) => canonValue(c.type, row[c.name])))
}

/** Hand-written SQL's rows (arrays in the answer's column order, engine values: ticks, bigints, doubles) in the wire form. */
export function wireAnswer(columns: readonly WireColumn[], rows: readonly (readonly unknown[])[]): Answer {
  return {
    columns,
    results: rows.map((row) => Object.fromEntries(columns.map((c, i) => [c.name, toWireValue(c.type, row[i] as never)]))),
  }
}

/** Counts reals that matched within the tolerance but not bit for bit. */
export interface Inexact {
  count: number
  maxRelative: number
}

function sameValue(a: Canon, b: Canon, inexact: Inexact): boolean {
  if (typeof a === 'number' && typeof b === 'number') {
    if (Object.is(a, b)) return true
    const relative = Math.abs(a - b) / Math.max(1, Math.abs(a), Math.abs(b))
    if (relative > REAL_TOLERANCE) return false
    inexact.count++
    inexact.maxRelative = Math.max(inexact.maxRelative, relative)
    return true
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameValue(x, b[i] as Canon, inexact))
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const x = a as { readonly [k: string]: Canon }
    const y = b as { readonly [k: string]: Canon }
    const keys = Object.keys(x)
    return keys.length === Object.keys(y).length && keys.every((k) => k in y && sameValue(x[k]!, y[k]!, inexact))
  }
  return a === b
}

/** The order key of a row of an unordered answer: its values except reals (the group keys of a summarize), then all. */
function orderKey(columns: readonly WireColumn[], row: readonly Canon[]): string {
  return JSON.stringify([row.filter((_, i) => !isReal(columns[i]!.type) && columns[i]!.type !== 'dynamic'), row])
}

/**
 * Where `actual` differs from `expected` (undefined when they hold the same rows): same column
 * names and types, same row count, then row by row, after sorting both when `ordered` is false.
 */
export function answerDifference(expected: Answer, actual: Answer, ordered: boolean, inexact: Inexact): string | undefined {
  const names = (a: Answer) => a.columns.map((c) => `${c.name}:${c.type}`).join(', ')
  if (names(expected) !== names(actual)) return `columns differ: expected (${names(expected)}), got (${names(actual)})`
  const sort = (rows: Canon[][]) =>
    ordered
      ? rows
      : rows
          .map((r) => [orderKey(expected.columns, r), r] as const)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([, r]) => r)
  const e = sort(canonRows(expected))
  const a = sort(canonRows(actual))
  if (e.length !== a.length) return `${a.length} rows, expected ${e.length}`
  for (let i = 0; i < e.length; i++)
    if (!e[i]!.every((v, k) => sameValue(v, a[i]![k]!, inexact)))
      return `row ${i} differs: expected ${JSON.stringify(e[i])}, got ${JSON.stringify(a[i])}`
  return undefined
}

/**
 * Where an answer to `top k by <column>` is not a valid one (undefined when it is): `all` holds
 * every candidate row in the query's order (the hand-written SQL without its LIMIT). Rows tied on
 * the sort column at the cut may be any of the tied rows (Kusto and SQL leave the choice open), so
 * the answer must have the first k sort values of `all`, in order, and only rows `all` holds, each
 * at most as often as there.
 */
export function topDifference(all: Answer, actual: Answer, k: number, column: string): string | undefined {
  const index = actual.columns.findIndex((c) => c.name === column)
  if (index < 0) return `no column ${column}`
  const names = (a: Answer) => a.columns.map((c) => `${c.name}:${c.type}`).join(', ')
  if (names(all) !== names(actual)) return `columns differ: expected (${names(all)}), got (${names(actual)})`
  const want = canonRows(all)
  const got = canonRows(actual)
  if (got.length !== Math.min(k, want.length)) return `${got.length} rows, expected ${Math.min(k, want.length)}`
  const sortValues = (rows: Canon[][]) => JSON.stringify(rows.slice(0, k).map((r) => r[index]))
  if (sortValues(got) !== sortValues(want)) return `${column} values ${sortValues(got)}, expected ${sortValues(want)}`
  const available = new Map<string, number>()
  for (const r of want) available.set(JSON.stringify(r), (available.get(JSON.stringify(r)) ?? 0) + 1)
  for (const r of got) {
    const key = JSON.stringify(r)
    const left = available.get(key) ?? 0
    if (left === 0) return `row ${key} is not a row of the query's candidates`
    available.set(key, left - 1)
  }
  return undefined
}

/**
 * @module
 * compileQuery(): parse and bind one query text into a reusable CompiledQuery whose execute()
 * runs the plan (table scans through the caller's SqlSource, the rest in memory).
 */
import type { DiscoveredSchema, PendingDiscovery } from './binder/bind-context.js'
import { type BoundQuery, bindScript } from './binder/binder.js'
import { DEFAULT_LIBRARY, type FunctionLibrary } from './binder/function-library.js'
import { DIALECTS } from './dialect/dialects.js'
import type { CompiledQuery, CompileOptions, ExecuteOptions, QueryResult, SqlSource } from './engine-types.js'
import { compileExpr } from './exec/compile-expr.js'
import { createRunner, isSourceFailure } from './exec/evaluator.js'
import { DEFAULT_SEED, seededRandom } from './exec/random.js'
import type { Row } from './exec/rows.js'
import { compareNonNull, keyOf } from './exec/value-ops.js'
import { KqlError } from './kql-error.js'
import type { PlanColumn, PlanNode } from './plan/plan.js'
import { expandedPlanSize, MAX_PLAN_OPERATORS } from './plan/plan-size.js'
import type { KqlColumn, KqlSchema } from './schema.js'
import { pushDown } from './sql/push-down.js'
import type { Script } from './syntax/ast.js'
import { parseQuery } from './syntax/parser.js'
import type { DynamicValue, KqlType, KqlValue } from './types.js'

/** Longest query text accepted (a guard against pathological input, not a Kusto limit). */
export const MAX_QUERY_LENGTH = 1_000_000

export interface CompileInternals {
  /** Function library override (tests). */
  readonly library?: FunctionLibrary
}

/** A compiled query that also exposes its plans (for tests and benchmarks). */
export interface CompiledPlanQuery extends CompiledQuery {
  /** The bound plan (what the query means). */
  readonly plan: PlanNode
  /** The plan that runs: `plan` with the parts the dialect answers exactly replaced by SqlQuery nodes. */
  readonly executable: PlanNode
}

/**
 * Compiles a KQL query against a schema. MUST throw KqlError (never another error) for any text
 * that is not a valid, supported query; the message carries line and column.
 */
export function compileQuery(text: string, schema: KqlSchema, options: CompileOptions & CompileInternals): CompiledPlanQuery {
  if (typeof text !== 'string') throw new KqlError('syntax', 'the query must be a string')
  if (text.length > MAX_QUERY_LENGTH) throw new KqlError('syntax', `the query is longer than ${MAX_QUERY_LENGTH} characters`)
  let bound: BoundQuery
  let script: Script
  const library = options.library ?? DEFAULT_LIBRARY
  try {
    script = parseQuery(text)
    bound = bindScript(script, text, schema, library)
  } catch (error) {
    throw asKqlError(error)
  }
  const plan = bound.plan
  const operators = expandedPlanSize(plan)
  if (operators > MAX_PLAN_OPERATORS)
    throw new KqlError(
      'unsupported',
      `the query expands to ${operators >= 1e9 ? 'more than a billion' : operators.toLocaleString('en-US')} operators after let and union expansion; the plan-size limit is ${MAX_PLAN_OPERATORS.toLocaleString('en-US')}`,
    )
  const dialect = DIALECTS[options.dialect]
  const push = (p: PlanNode): PlanNode => (options.pushdown === false || !dialect ? p : pushDown(p, dialect))
  let executable: PlanNode
  try {
    executable = push(plan)
  } catch (error) {
    throw asKqlError(error)
  }
  const columns: KqlColumn[] = plan.columns.map((c) => ({ name: c.name, type: c.type }))
  const visualization = bound.visualization
  const dynamicSchema = bound.pending.length > 0
  return {
    text,
    columns,
    tables: bound.tables,
    plan,
    executable,
    ...(visualization ? { visualization } : {}),
    ...(dynamicSchema ? { dynamicSchema } : {}),
    async execute(source: SqlSource | undefined, exec: ExecuteOptions): Promise<QueryResult> {
      const random = seededRandom(exec.seed ?? DEFAULT_SEED)
      const ctx = { now: exec.now, random }
      const runner = createRunner({ source, ctx, signal: exec.signal })
      let rows: Row[]
      let final = bound
      try {
        // data-dependent plugins: run their inputs, then bind again with what they produce
        const discovered = new Map<number, DiscoveredSchema>()
        for (let round = 0; final.pending.length > 0; round++) {
          if (round > 64) throw new KqlError('runtime', 'too many data-dependent plugins (bag_unpack, pivot) in one query')
          const next = final.pending[0]!
          discovered.set(next.key, await discover(next, await runner.run(next.input), ctx))
          final = bindScript(script, text, schema, library, discovered)
        }
        rows = await runner.run(final === bound ? executable : push(final.plan))
      } catch (error) {
        // cancellation and database failures are not query errors: pass them through unchanged
        if (exec.signal?.aborted && error === exec.signal.reason) throw error
        if (isSourceFailure(error)) throw error
        throw asKqlError(error, 'runtime')
      }
      const cap = Math.max(0, Math.floor(exec.rowCap))
      const truncated = rows.length > cap
      return {
        columns: final === bound ? columns : final.plan.columns.map((c) => ({ name: c.name, type: c.type })),
        rows: truncated ? rows.slice(0, cap) : rows,
        truncated,
        ...(visualization ? { visualization } : {}),
      }
    },
  }
}

/** The type bag_unpack gives a property: its values' common type, else dynamic. */
function slotType(v: DynamicValue): KqlType | undefined {
  if (v === null) return undefined
  if (typeof v === 'string') return 'string'
  if (typeof v === 'boolean') return 'bool'
  if (typeof v === 'number') return Number.isInteger(v) ? 'long' : 'real'
  return 'dynamic'
}

/** Looks at a plugin's input rows and says which columns it produces. */
async function discover(p: PendingDiscovery, rows: readonly Row[], ctx: { now: bigint; random: () => number }): Promise<DiscoveredSchema> {
  if (p.kind === 'bag') {
    const types = new Map<string, KqlType | null>()
    const ignored = new Set(p.ignored)
    const f = compileExpr(p.bag, { ctx, subqueries: new Map() })
    rows.forEach((r, i) => {
      const bag = f(r, i, rows)
      if (bag === null || typeof bag !== 'object' || Array.isArray(bag)) return
      for (const [k, v] of Object.entries(bag as Record<string, DynamicValue>)) {
        if (ignored.has(k)) continue
        const t = slotType(v)
        const seen = types.get(k)
        if (seen === undefined) types.set(k, t ?? null)
        else if (t !== undefined && seen !== t) types.set(k, seen === null ? t : 'dynamic')
      }
    })
    const slots: PlanColumn[] = [...types.keys()].sort().map((name) => ({ name, type: types.get(name) ?? 'dynamic' }))
    return { kind: 'bag', slots }
  }
  const f = compileExpr(p.pivot, { ctx, subqueries: new Map() })
  const distinct = new Map<unknown, KqlValue>()
  rows.forEach((r, i) => {
    const v = f(r, i, rows)
    const k = keyOf(v)
    if (!distinct.has(k)) distinct.set(k, v)
  })
  const values = [...distinct.values()].sort((a, b) => {
    if (a === null || b === null) return a === null ? (b === null ? 0 : 1) : -1
    return compareNonNull(p.pivot.type, a, b)
  })
  return { kind: 'pivot', values }
}

/** Anything that escapes as a non-KqlError is an engine bug; it still surfaces as a KqlError. */
function asKqlError(error: unknown, kind: 'semantic' | 'runtime' = 'semantic'): KqlError {
  if (error instanceof KqlError) return error
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    return new KqlError('unsupported', 'the query is nested too deeply')
  }
  const message = error instanceof Error ? error.message : String(error)
  return new KqlError(kind, `internal error: ${message}`)
}

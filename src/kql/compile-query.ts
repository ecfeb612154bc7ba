/**
 * @module
 * compileQuery(): parse and bind one query text into a reusable CompiledQuery whose execute()
 * runs the plan (table scans through the caller's SqlSource, the rest in memory).
 */
import { bindScript } from './binder/binder.js'
import { DEFAULT_LIBRARY, type FunctionLibrary } from './binder/function-library.js'
import type { CompiledQuery, CompileOptions, ExecuteOptions, QueryResult, SqlSource } from './engine-types.js'
import { isSourceFailure, runPlan } from './exec/evaluator.js'
import { DEFAULT_SEED, seededRandom } from './exec/random.js'
import { KqlError } from './kql-error.js'
import type { PlanNode } from './plan/plan.js'
import type { KqlColumn, KqlSchema } from './schema.js'
import { parseQuery } from './syntax/parser.js'

/** Longest query text accepted (a guard against pathological input, not a Kusto limit). */
export const MAX_QUERY_LENGTH = 1_000_000

export interface CompileInternals {
  /** Function library override (tests). */
  readonly library?: FunctionLibrary
}

/** A compiled query that also exposes its plan (for SQL pushdown and tests). */
export interface CompiledPlanQuery extends CompiledQuery {
  readonly plan: PlanNode
}

/**
 * Compiles a KQL query against a schema. MUST throw KqlError (never another error) for any text
 * that is not a valid, supported query; the message carries line and column.
 */
export function compileQuery(text: string, schema: KqlSchema, options: CompileOptions & CompileInternals): CompiledPlanQuery {
  if (typeof text !== 'string') throw new KqlError('syntax', 'the query must be a string')
  if (text.length > MAX_QUERY_LENGTH) throw new KqlError('syntax', `the query is longer than ${MAX_QUERY_LENGTH} characters`)
  let bound
  try {
    const script = parseQuery(text)
    bound = bindScript(script, text, schema, options.library ?? DEFAULT_LIBRARY)
  } catch (error) {
    throw asKqlError(error)
  }
  const plan = bound.plan
  const columns: KqlColumn[] = plan.columns.map((c) => ({ name: c.name, type: c.type }))
  const visualization = bound.visualization
  return {
    text,
    columns,
    tables: bound.tables,
    plan,
    ...(visualization ? { visualization } : {}),
    async execute(source: SqlSource | undefined, exec: ExecuteOptions): Promise<QueryResult> {
      const random = seededRandom(exec.seed ?? DEFAULT_SEED)
      let rows
      try {
        rows = await runPlan(plan, { source, ctx: { now: exec.now, random }, signal: exec.signal })
      } catch (error) {
        // cancellation and database failures are not query errors: pass them through unchanged
        if (exec.signal?.aborted && error === exec.signal.reason) throw error
        if (isSourceFailure(error)) throw error
        throw asKqlError(error, 'runtime')
      }
      const cap = Math.max(0, Math.floor(exec.rowCap))
      const truncated = rows.length > cap
      return {
        columns,
        rows: truncated ? rows.slice(0, cap) : rows,
        truncated,
        ...(visualization ? { visualization } : {}),
      }
    },
  }
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

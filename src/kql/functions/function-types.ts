/**
 * @module
 * The contract between the binder/evaluator and the function library. A function is resolved
 * once per call site at bind time (types known, constant arguments visible), and the bound
 * implementation is then called once per row. See ./README.md for how to add one.
 */
import type { KqlType, KqlValue } from '../types.js'

/** What the binder knows about one argument at a call site. */
export interface ArgInfo {
  readonly type: KqlType
  /** Present when the argument is a constant (literal or foldable), e.g. a regex or format string. */
  readonly constant?: { readonly value: KqlValue }
  /** The argument's source text, for error messages and default column names. */
  readonly text: string
  /** The column name when the argument is a bare column reference (used for default names like `sum_x`). */
  readonly columnName?: string
}

/** Per-query facts a function may read. Pure: no clock or randomness outside this. */
export interface EvalContext {
  /** `now()` for the whole query, in datetime ticks. */
  readonly now: bigint
  /** A deterministic-per-query random source in [0, 1) (rand(), sample). */
  readonly random: () => number
}

/** A scalar function bound at one call site. */
export interface BoundScalar {
  readonly type: KqlType
  /** Called per row with the evaluated arguments (already in the value model of their ArgInfo types). */
  readonly evaluate: (args: readonly KqlValue[], ctx: EvalContext) => KqlValue
}

export interface ScalarFunction {
  /** Name as written in KQL, lower-case; `aliases` for synonyms (`iif` for `iff`). */
  readonly name: string
  readonly aliases?: readonly string[]
  /**
   * Resolves one call site: checks arity and argument types, returns the result type and the
   * implementation. MUST throw KqlError('semantic', ...) naming the function for a wrong arity or
   * argument type (no position: the binder adds it).
   */
  readonly bind: (args: readonly ArgInfo[]) => BoundScalar
  /** false for now(), rand(), ...: never constant-folded. Defaults to true. */
  readonly deterministic?: boolean
}

/** One output column of an aggregate (most have one; arg_max/percentiles have several). */
export interface AggregateOutput {
  readonly name: string
  readonly type: KqlType
}

export interface Accumulator {
  /** Called once per input row with the evaluated arguments. */
  add(args: readonly KqlValue[]): void
  /** One value per output column, in `outputs` order. Called once, after the last add(). */
  result(): readonly KqlValue[]
}

export interface BoundAggregate {
  /**
   * Output columns with Kusto's default names (`count_`, `sum_Value`, `percentile_Value_50`,
   * ...). When the user names the aggregate (`n = count()`), the binder renames a single output.
   */
  readonly outputs: readonly AggregateOutput[]
  readonly create: () => Accumulator
}

export interface AggregateFunction {
  readonly name: string
  readonly aliases?: readonly string[]
  /**
   * `args` excludes a `*` argument; `star` is true when one was written (`arg_max(ts, *)`,
   * `count()` has none). `inputColumns` are the input table's columns, for `*` expansions: when
   * `star` is true, each `add(values)` receives the explicit arguments' values followed by one value
   * per `inputColumns` entry, in that order.
   */
  readonly bind: (
    args: readonly ArgInfo[],
    options: { readonly star: boolean; readonly inputColumns: readonly AggregateOutput[] },
  ) => BoundAggregate
}

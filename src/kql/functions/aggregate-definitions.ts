/**
 * @module
 * How aggregates are defined (split out of aggregate-functions.ts, issue 19 item 6): Kusto's
 * default output names (`sum_x`, `percentile_x_95`; `inferName` reads an expression's first
 * column), the argument checks the families share, number ↔ value conversions for datetimes and
 * timespans, nearest-rank percentiles and `defineAggregate` for one-value-in, one-column-out
 * aggregates.
 */
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import { constantOf, expectArgs, functionError } from './function-definitions.js'
import type { Accumulator, AggregateFunction, AggregateOutput, ArgInfo, BoundAggregate } from './function-types.js'
import type { ParamKind } from './param-kinds.js'
import { FUNCTION_RESULT_NAMES } from './result-names.js'

export type Bag = { [key: string]: DynamicValue }
export type Options = Parameters<AggregateFunction['bind']>[1]

// ---------------------------------------------------------------------------------------------
// Naming
// ---------------------------------------------------------------------------------------------

const IDENT = /^[A-Za-z_][A-Za-z_0-9]*$/

/**
 * One scan of a call's argument text: its parts at top-level commas, and whether its brackets
 * balance outside string literals.
 */
function scanArgs(text: string): { readonly parts: string[]; readonly balanced: boolean } {
  const parts: string[] = []
  let depth = 0
  let quote = ''
  let start = 0
  let balanced = true
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quote) {
      if (c === '\\') i++
      else if (c === quote) quote = ''
      continue
    }
    if (c === '"' || c === "'") quote = c
    else if (c === '(' || c === '[' || c === '{') depth++
    else if (c === ')' || c === ']' || c === '}') {
      depth--
      if (depth < 0) balanced = false
    } else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i))
      start = i + 1
    }
  }
  parts.push(text.slice(start))
  return { parts, balanced: balanced && depth === 0 }
}

/**
 * The result name Kusto infers for an expression (Kusto.Language's GetExpressionResultName): a
 * column's name; `(x)` → x; `d.x` / `d['x']` / `d[0]` → `d_x` / `d_x` / `d_0`; a function call by
 * that function's result-name rule (FUNCTION_RESULT_NAMES: `todouble(x)` → x, `strlen(s)` →
 * strlen_s); anything else (arithmetic, literals) → undefined.
 */
export function inferName(text: string): string | undefined {
  const t = text.trim()
  if (t === '') return undefined
  if (IDENT.test(t)) return t
  const bracket = /^\[\s*(['"])(.*)\1\s*\]$/.exec(t)
  if (bracket) return bracket[2]
  if (t.startsWith('(') && t.endsWith(')')) {
    const inner = scanArgs(t.slice(1, -1))
    if (inner.parts.length === 1 && inner.balanced) return inferName(t.slice(1, -1))
  }
  const path = /^([A-Za-z_][A-Za-z_0-9]*)((?:\.[A-Za-z_][A-Za-z_0-9]*|\[\s*(?:'[^']*'|"[^"]*"|\d+)\s*\])+)$/.exec(t)
  if (path) {
    const parts = [path[1]!]
    const re = /\.([A-Za-z_][A-Za-z_0-9]*)|\[\s*(?:'([^']*)'|"([^"]*)"|(\d+))\s*\]/g
    for (let m = re.exec(path[2]!); m; m = re.exec(path[2]!)) parts.push(m[1] ?? m[2] ?? m[3] ?? m[4]!)
    return parts.join('_')
  }
  const call = /^([A-Za-z_][A-Za-z_0-9]*)\s*\(([\s\S]*)\)$/.exec(t)
  const scanned = call ? scanArgs(call[2]!) : undefined
  if (call && scanned?.balanced) {
    const rule = FUNCTION_RESULT_NAMES[call[1]!]
    if (!rule) return undefined
    const args = call[2]!.trim() === '' ? [] : scanned.parts
    const first = args[0] === undefined ? undefined : (inferName(args[0]) ?? '')
    switch (rule.kind) {
      case 'firstArgument':
        return first
      case 'nameAndFirstArgument':
        return first === undefined ? `${call[1]}_` : `${call[1]}_${first}`
      case 'prefixAndFirstArgument':
        return first === undefined ? `${rule.prefix}_` : `${rule.prefix}_${first}`
      case 'onlyArgument':
        return args.length === 1 ? first : undefined
      case 'prefixOnly':
        return rule.prefix
    }
  }
  return undefined
}

export function argName(arg: ArgInfo | undefined): string | undefined {
  if (!arg) return undefined
  return arg.columnName ?? inferName(arg.text)
}

/** `prefix_name`, or `prefix_` when the argument has no inferable name. */
export function prefixed(prefix: string, arg: ArgInfo | undefined): string {
  return `${prefix}_${argName(arg) ?? ''}`
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

export function isMissing(type: KqlType, v: KqlValue | undefined): boolean {
  return v === null || v === undefined || (type === 'string' && v === '')
}

export function truthy(v: KqlValue | undefined): boolean {
  return v === true
}

export function constantInt(name: string, arg: ArgInfo | undefined, what: string): number | undefined {
  if (!arg) return undefined
  const v = constantOf(arg)
  if (typeof v !== 'number') throw functionError(name, `${what} (${arg.text}) must be a constant number`)
  return v
}

export function one(name: string, type: KqlType): readonly AggregateOutput[] {
  return [{ name, type }]
}

/** Numbers for numeric types; tick counts (as numbers) for datetime and timespan; null otherwise. */
export function asNumber(v: KqlValue | undefined): number | null {
  if (typeof v === 'number') return v
  if (typeof v === 'bigint') return Number(v)
  return null
}

/** A number (ticks for datetime/timespan) back in the value model of `type`. */
export function fromNumber(type: KqlType, n: number | null): KqlValue {
  if (n === null || (Number.isNaN(n) && (type === 'datetime' || type === 'timespan'))) return null
  if (type === 'datetime' || type === 'timespan') return BigInt(Math.round(n))
  if (type === 'int' || type === 'long') return Math.round(n)
  return n
}

// ---------------------------------------------------------------------------------------------
// Definitions: THE way to declare an aggregate (its signature in function-definitions' kind table)
// ---------------------------------------------------------------------------------------------

/** What every aggregate declares: name, parameter kinds and arity (checked before anything else). */
interface AggregateSignature {
  readonly name: string
  readonly aliases?: readonly string[]
  /**
   * Parameter kinds in order, an `…if` variant's predicate included (kind `predicate`: rows
   * where it is not true are skipped); the last kind repeats up to `max`.
   */
  readonly params: readonly ParamKind[]
  /** Minimum argument count; defaults to params.length. */
  readonly min?: number
  /** Maximum argument count; defaults to params.length. */
  readonly max?: number
  /** Minimum argument count when `*` is written (`take_any(*)`); defaults to `min`. */
  readonly minWithStar?: number
}

/** One accumulator per group over the explicit arguments' values (the predicate filters rows). */
interface AccumulatingSpec extends AggregateSignature {
  /** Checks beyond the kinds (constant arguments, ...). */
  readonly check?: (args: readonly ArgInfo[]) => void
  readonly output: (args: readonly ArgInfo[]) => readonly AggregateOutput[]
  /** Builds an accumulator over the (non-predicate) values; `args` are the call's infos. */
  readonly create: (args: readonly ArgInfo[]) => { add(values: readonly KqlValue[]): void; result(): readonly KqlValue[] }
}

/** An aggregate that binds itself once its signature is checked (`*` arguments, several outputs). */
interface BindingSpec extends AggregateSignature {
  readonly bind: AggregateFunction['bind']
}

export type AggregateSpec = AccumulatingSpec | BindingSpec

export function defineAggregate(spec: AggregateSpec): AggregateFunction {
  const min = spec.min ?? spec.params.length
  const max = spec.max ?? spec.params.length
  const predicate = spec.params.indexOf('predicate')
  return {
    name: spec.name,
    ...(spec.aliases ? { aliases: spec.aliases } : {}),
    bind(args, options): BoundAggregate {
      expectArgs(spec.name, args, spec.params, options.star ? (spec.minWithStar ?? min) : min, max)
      if ('bind' in spec) return spec.bind(args, options)
      spec.check?.(args)
      const outputs = spec.output(args)
      const p = predicate >= 0 && predicate < args.length ? predicate : undefined
      return {
        outputs,
        create(): Accumulator {
          const acc = spec.create(args)
          if (p === undefined) return acc
          return {
            add(values) {
              if (truthy(values[p])) acc.add(values)
            },
            result: () => acc.result(),
          }
        },
      }
    },
  }
}

/** Nearest-rank percentile of sorted (value, weight) pairs: P = 0 is the minimum. */
export function nearestRank(sorted: readonly (readonly [KqlValue, number])[], total: number, p: number): KqlValue {
  if (sorted.length === 0 || total <= 0) return null
  if (p <= 0) return sorted[0]![0]
  const rank = Math.max(1, Math.ceil((p / 100) * total - 1e-9))
  let cumulative = 0
  for (const [v, w] of sorted) {
    cumulative += w
    if (cumulative >= rank) return v
  }
  return sorted[sorted.length - 1]![0]
}

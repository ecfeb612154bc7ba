/**
 * @module
 * How a scalar function is defined and checked (issue 19 item 6, split out of function-helpers.ts):
 * errors that name the function, arity and argument-kind checks, constant and `typeof(T)`
 * arguments, `defineScalar` and the typed argument readers.
 *
 * Conventions for callers (kql-core):
 * - A `typeof(T)` argument is passed as `{ type: 'string', constant: { value: 'T' }, text: 'typeof(T)' }`
 *   (T any spelling `parseTypeName` accepts); `typeLiteralArg` reads it.
 * - Regex arguments go through `compileRegex` in ./regex.ts (RE2, linear time), which throws a
 *   KqlError('semantic') naming the function for an invalid pattern.
 */
import { KqlError } from '../kql-error.js'
import { type DynamicValue, type KqlType, type KqlValue, parseTypeName } from '../types.js'
import type { ArgInfo, BoundScalar, EvalContext, ScalarFunction } from './function-types.js'
import { coercer } from './numeric-helpers.js'
import { KINDS, kindAt, NUMERIC_TYPES, type ParamKind } from './param-kinds.js'
import { toBool, toDynamic, toInteger, toNumber, valueToString } from './value-conversions.js'

// ---------------------------------------------------------------------------------------------
// Errors, arity, argument types

/** A semantic error that names the function, e.g. "strlen(): expects 1 argument, got 2". */
export function functionError(name: string, detail: string): KqlError {
  return new KqlError('semantic', `${name}(): ${detail}`)
}

/** Throws unless `min <= args.length <= max`. */
export function checkArity(name: string, args: readonly ArgInfo[], min: number, max: number = min): void {
  if (args.length >= min && args.length <= max) return
  const expected = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`
  const one = expected === '1' || expected === 'at least 1'
  throw functionError(name, `expects ${expected} argument${one ? '' : 's'}, got ${args.length}`)
}

/** Throws unless argument `index` (when present) fits `kind`. */
export function expectKind(name: string, args: readonly ArgInfo[], index: number, kind: ParamKind): void {
  const arg = args[index]
  if (arg && !KINDS[kind].types.includes(arg.type)) {
    const what = kind === 'predicate' ? 'predicate' : `argument #${index + 1}`
    throw functionError(name, `${what} (${arg.text}) must be ${KINDS[kind].label}, got ${arg.type}`)
  }
}

/** Checks arity and every argument against `kinds` (the last `repeat` kinds repeat for variadic tails). */
export function expectArgs(
  name: string,
  args: readonly ArgInfo[],
  kinds: readonly ParamKind[],
  min: number = kinds.length,
  max: number = kinds.length,
  repeat = 1,
): void {
  checkArity(name, args, min, max)
  for (let i = 0; i < args.length; i++) expectKind(name, args, i, kindAt(kinds, i, repeat))
}

/** A constant argument's value, or undefined when the argument is not constant. */
export function constantOf(arg: ArgInfo | undefined): KqlValue | undefined {
  return arg?.constant === undefined ? undefined : arg.constant.value
}

/** The text of a constant string argument, or throws naming the function. */
export function constantString(name: string, args: readonly ArgInfo[], index: number, what: string): string {
  const arg = args[index]
  const value = constantOf(arg)
  if (arg === undefined || value === undefined) throw functionError(name, `${what} (argument #${index + 1}) must be a constant`)
  return valueToString(arg.type, value)
}

/** Reads a `typeof(T)` argument (see the module comment), or throws naming the function. */
export function typeLiteralArg(name: string, arg: ArgInfo | undefined): KqlType {
  const value = constantOf(arg)
  // the constant carries the type name; the source text `typeof(T)` works as a fallback
  const source = typeof value === 'string' ? value : /^\s*typeof\s*\(/i.test(arg?.text ?? '') ? arg!.text : undefined
  const text = source?.replace(/^\s*typeof\s*\(\s*|\s*\)\s*$/gi, '')
  const type = text === undefined ? undefined : parseTypeName(text)
  if (type === undefined) throw functionError(name, `expects a type literal such as typeof(long), got ${arg?.text ?? 'nothing'}`)
  return type
}

export function isNull(value: KqlValue): boolean {
  return value === null || value === undefined
}

// ---------------------------------------------------------------------------------------------
// Defining simple scalar functions

/** What every scalar definition declares: name, parameter kinds, arity and result type. */
interface ScalarSignature {
  readonly name: string
  readonly aliases?: readonly string[]
  /** Parameter kinds in order; the last one (the last `repeat`, as a group) repeats up to `max`. */
  readonly params: readonly ParamKind[]
  /** Minimum argument count; defaults to params.length. */
  readonly min?: number
  /** Maximum argument count; defaults to params.length (Infinity for open-ended lists). */
  readonly max?: number
  /** How many trailing kinds repeat as a group (bag_pack's key, value pairs); defaults to 1. */
  readonly repeat?: number
  readonly result: KqlType | ((args: readonly ArgInfo[]) => KqlType)
  /** false for now(), rand(), ...: never constant-folded. */
  readonly deterministic?: boolean
}

/** The per-row implementation of a bound call. */
export type RowFunction = (values: readonly KqlValue[], ctx: EvalContext) => KqlValue

/** A function that reads its arguments' values as they come (through the readers below). */
interface RawScalarSpec extends ScalarSignature {
  /** Extra bind-time checks and precomputation; returns the per-row implementation. */
  readonly bind: (args: readonly ArgInfo[]) => RowFunction
}

/** A function whose arguments are converted to their parameter kinds before `impl` runs. */
interface ConvertedScalarSpec extends ScalarSignature {
  /**
   * When true (the default) any null argument of a number, integer, long, real, bool, datetime or
   * timespan parameter gives a null result ("" for a string result) without calling `impl`.
   */
  readonly nullInNullOut?: boolean
  /** Called per row with the converted values. `args` are the call site's infos (for constants). */
  readonly impl: (values: readonly KqlValue[], ctx: EvalContext, args: readonly ArgInfo[]) => KqlValue
  /** Optional bind-time hook: validate constants, precompute; may return a specialised impl. */
  readonly prepare?: (args: readonly ArgInfo[]) => ConvertedScalarSpec['impl'] | undefined
}

/** THE way to define a scalar function: one of the two spec shapes above. */
export type ScalarSpec = RawScalarSpec | ConvertedScalarSpec

/** Builds a ScalarFunction from a spec: arity and kinds are checked (one table) before anything else runs. */
export function defineScalar(spec: ScalarSpec): ScalarFunction {
  const min = spec.min ?? spec.params.length
  const max = spec.max ?? spec.params.length
  return {
    name: spec.name,
    ...(spec.aliases ? { aliases: spec.aliases } : {}),
    ...(spec.deterministic === false ? { deterministic: false } : {}),
    bind: (args) => {
      expectArgs(spec.name, args, spec.params, min, max, spec.repeat)
      if ('bind' in spec) {
        const type = typeof spec.result === 'function' ? spec.result(args) : spec.result
        return { type, evaluate: spec.bind(args) }
      }
      return bindConverted(spec, args)
    },
  }
}

function bindConverted(spec: ConvertedScalarSpec, args: readonly ArgInfo[]): BoundScalar {
  const kinds = args.map((_, i) => kindAt(spec.params, i, spec.repeat))
  const coerce = args.map((a, i) => coercer(kinds[i]!, a.type))
  const impl = spec.prepare?.(args) ?? spec.impl
  const type = typeof spec.result === 'function' ? spec.result(args) : spec.result
  const nullOut = spec.nullInNullOut !== false
  const nullable = kinds.map((k) => k !== 'string' && k !== 'scalar' && k !== 'dynamic')
  return {
    type,
    evaluate(values, ctx) {
      const vs: KqlValue[] = new Array(values.length)
      for (let i = 0; i < values.length; i++) {
        const v = coerce[i]!(values[i] ?? null)
        if (nullOut && nullable[i] && v === null) return type === 'string' ? '' : null
        vs[i] = v
      }
      return impl(vs, ctx, args)
    },
  }
}

/** A function of one argument's text (tostring semantics), e.g. strlen, toupper, url_decode. */
export function defineTextFunction(spec: {
  readonly name: string
  readonly aliases?: readonly string[]
  /** `string` (the default) or `scalar` for functions Kusto documents as converting any value. */
  readonly param?: 'string' | 'scalar'
  readonly result: KqlType
  readonly text: (text: string) => KqlValue
}): ScalarFunction {
  return defineScalar({
    name: spec.name,
    ...(spec.aliases ? { aliases: spec.aliases } : {}),
    params: [spec.param ?? 'string'],
    result: spec.result,
    bind: (args) => {
      const read = textReader(args, 0)
      return (values) => spec.text(read(values))
    },
  })
}

/** Reads argument `i` of a row as text (tostring semantics; a missing argument reads as ""). */
export function textReader(args: readonly ArgInfo[], i: number): (values: readonly KqlValue[]) => string {
  const type = args[i]?.type ?? 'string'
  if (type === 'string') return (values) => (values[i] as string | null | undefined) ?? ''
  return (values) => valueToString(type, values[i] ?? null)
}

/** A reader of argument `i` of a row through `convert`, or null; `fallback` when the argument is absent. */
function argumentReader<T>(convert: (type: KqlType, value: KqlValue) => T | null) {
  return (args: readonly ArgInfo[], i: number, fallback: T | null = null): ((values: readonly KqlValue[]) => T | null) => {
    const arg = args[i]
    if (arg === undefined) return () => fallback
    return (values) => convert(arg.type, values[i] ?? null)
  }
}

/** Reads argument `i` of a row as an integer (truncated), or null. */
export const integerReader = argumentReader(toInteger)
/** Reads argument `i` of a row as a number, or null. */
export const numberReader = argumentReader(toNumber)
/** Reads argument `i` of a row as a bool, or null. */
export const boolReader = argumentReader(toBool)

/** Reads argument `i` of a row as a dynamic value. */
export function dynamicReader(args: readonly ArgInfo[], i: number): (values: readonly KqlValue[]) => DynamicValue {
  const type = args[i]?.type ?? 'dynamic'
  return (values) => (type === 'dynamic' ? ((values[i] ?? null) as DynamicValue) : toDynamic(type, values[i] ?? null))
}

/**
 * Kusto's "common type" of several arguments (iff, case, coalesce, max_of, ...): all the same
 * type, or numbers widened int → long → decimal → real. Throws naming the function otherwise.
 * With `allowDynamic`, a dynamic argument makes the result dynamic.
 */
export function commonType(name: string, args: readonly ArgInfo[], indices: readonly number[], allowDynamic = true): KqlType {
  const types = indices.map((i) => args[i]!.type)
  if (types.length === 0) throw functionError(name, 'expects at least one value argument')
  if (allowDynamic && types.includes('dynamic')) return 'dynamic'
  const first = types[0]!
  if (types.every((t) => t === first)) return first
  if (types.every((t) => NUMERIC_TYPES.includes(t))) {
    return types.includes('real') ? 'real' : types.includes('decimal') ? 'decimal' : types.includes('long') ? 'long' : 'int'
  }
  const list = indices.map((i) => `${args[i]!.text} (${args[i]!.type})`).join(', ')
  throw functionError(name, `arguments must have the same type, got ${list}`)
}

/** Converts a value from an argument's type to the common type chosen by `commonType`. */
export function toCommon(target: KqlType, from: KqlType, value: KqlValue): KqlValue {
  if (value === null || value === undefined) return target === 'string' ? '' : null
  if (target === from) return value
  if (target === 'dynamic') return toDynamic(from, value)
  return value
}

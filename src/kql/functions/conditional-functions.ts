/**
 * @module
 * KQL conditional and null-testing functions (see ./README.md): iff/iif, case, coalesce,
 * max_of/min_of, not, isnull/isnotnull, isempty/isnotempty, assert. Results of iff/case/coalesce/
 * max_of/min_of take the arguments' common type (numbers widen; a dynamic argument makes the
 * result dynamic).
 */
import { KqlError } from '../kql-error.js'
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import { boolReader, commonType, defineScalar, expectKind, functionError, textReader, toCommon } from './function-definitions.js'
import type { ArgInfo, ScalarFunction } from './function-types.js'
import { ORDERABLE_TYPES } from './param-kinds.js'
import { compareValues } from './value-conversions.js'

/** Reads a predicate: true only for a true bool (null and false both choose the other branch). */
function predicate(args: readonly ArgInfo[], i: number): (values: readonly KqlValue[]) => boolean {
  const read = boolReader(args, i)
  return (values) => read(values) === true
}

const iff = defineScalar({
  name: 'iff',
  aliases: ['iif'],
  params: ['bool', 'scalar', 'scalar'],
  result: (args) => commonType('iff', args, [1, 2]),
  bind: (args) => {
    const type = commonType('iff', args, [1, 2])
    const cond = predicate(args, 0)
    const t1 = args[1]!.type,
      t2 = args[2]!.type
    return (values) => (cond(values) ? toCommon(type, t1, values[1] ?? null) : toCommon(type, t2, values[2] ?? null))
  },
})

const caseFn: ScalarFunction = {
  name: 'case',
  bind: (args) => {
    if (args.length < 3 || args.length % 2 === 0)
      throw functionError(
        'case',
        `expects pairs of predicate and value followed by an else value (an odd number, at least 3), got ${args.length}`,
      )
    const valueIndices: number[] = []
    const preds: ((values: readonly KqlValue[]) => boolean)[] = []
    for (let i = 0; i < args.length - 1; i += 2) {
      // predicates at even positions, the else value last: pairs the kind table cannot say
      expectKind('case', args, i, 'bool')
      preds.push(predicate(args, i))
      valueIndices.push(i + 1)
    }
    valueIndices.push(args.length - 1)
    const type = commonType('case', args, valueIndices)
    const last = args.length - 1
    return {
      type,
      evaluate: (values) => {
        for (let k = 0; k < preds.length; k++) {
          if (preds[k]!(values)) return toCommon(type, args[2 * k + 1]!.type, values[2 * k + 1] ?? null)
        }
        return toCommon(type, args[last]!.type, values[last] ?? null)
      },
    }
  },
}

function allIndices(args: readonly ArgInfo[]): number[] {
  return args.map((_, i) => i)
}

const coalesce = defineScalar({
  name: 'coalesce',
  params: ['scalar'],
  min: 2,
  max: 64,
  result: (args) => commonType('coalesce', args, allIndices(args)),
  bind: (args) => {
    const type = commonType('coalesce', args, allIndices(args))
    return (values) => {
      for (let i = 0; i < values.length; i++) {
        const v = values[i]
        if (v === null || v === undefined || (v === '' && args[i]!.type === 'string')) continue
        return toCommon(type, args[i]!.type, v)
      }
      return type === 'string' ? '' : null
    }
  },
})

function extremeOf(name: string, sign: 1 | -1): ScalarFunction {
  return defineScalar({
    name,
    params: ['scalar'],
    min: 2,
    max: 64,
    result: (args) => commonType(name, args, allIndices(args)),
    bind: (args) => {
      const type = commonType(name, args, allIndices(args))
      if (type !== 'dynamic' && !ORDERABLE_TYPES.includes(type)) throw functionError(name, `arguments of type ${type} cannot be compared`)
      return (values) => {
        let best: KqlValue = null
        for (let i = 0; i < values.length; i++) {
          const v = toCommon(type, args[i]!.type, values[i] ?? null)
          // non-null values take precedence over nulls
          if (v === null || v === undefined) continue
          if (best === null || sign * compareValues(type, v, best) > 0) best = v
        }
        return best === null && type === 'string' ? '' : best
      }
    },
  })
}

const not = defineScalar({
  name: 'not',
  params: ['bool'],
  result: 'bool',
  bind: (args) => {
    const read = boolReader(args, 0)
    return (values) => {
      const b = read(values)
      return b === null ? null : !b
    }
  },
})

function isNullValue(type: KqlType, value: KqlValue): boolean {
  // strings are never null: "" is a value
  if (type === 'string') return false
  return value === null || value === undefined
}

function isEmptyValue(type: KqlType, value: KqlValue): boolean {
  if (value === null || value === undefined) return true
  if (type === 'string') return value === ''
  if (type === 'dynamic') return (value as DynamicValue) === ''
  return false
}

function nullTest(name: string, aliases: readonly string[] | undefined, test: (type: KqlType, value: KqlValue) => boolean): ScalarFunction {
  return defineScalar({
    name,
    ...(aliases ? { aliases } : {}),
    params: ['scalar'],
    result: 'bool',
    bind: (args) => {
      const type = args[0]!.type
      return (values) => test(type, values[0] ?? null)
    },
  })
}

const assertFn = defineScalar({
  name: 'assert',
  params: ['bool', 'string'],
  result: 'bool',
  bind: (args) => {
    const cond = boolReader(args, 0)
    const message = textReader(args, 1)
    return (values) => {
      if (cond(values) !== true) throw new KqlError('runtime', `assert(): assertion failed: ${message(values)}`)
      return true
    }
  },
})

export const conditionalFunctions: readonly ScalarFunction[] = [
  iff,
  caseFn,
  coalesce,
  extremeOf('max_of', 1),
  extremeOf('min_of', -1),
  not,
  nullTest('isnull', undefined, isNullValue),
  nullTest('isnotnull', ['notnull'], (t, v) => !isNullValue(t, v)),
  nullTest('isempty', undefined, isEmptyValue),
  nullTest('isnotempty', ['notempty'], (t, v) => !isEmptyValue(t, v)),
  assertFn,
]

/**
 * @module
 * Property-bag functions (split out of dynamic-functions.ts, issue 19 item 6): bag_pack,
 * bag_pack_columns, pack_all, bag_merge, bag_set_key, bag_has_key, bag_remove_keys, bag_zip,
 * and the key paths they read (a root-level name or JSONPath `$.a.b`).
 */
import type { DynamicValue, KqlValue } from '../types.js'
import { defineScalar, expectKind, functionError } from './function-definitions.js'
import type { ArgInfo, ScalarFunction } from './function-types.js'
import { asArray, asBag, asDynamic, coercer } from './numeric-helpers.js'

type Bag = { [key: string]: DynamicValue }

/**
 * Parses a bag key: a plain root-level name, or JSONPath (`$.a.b`, `$['a']["b"]`). Array
 * indexing and the bare root `$` are not supported (null).
 */
export function parseKeyPath(key: string): string[] | null {
  if (!key.startsWith('$')) return [key]
  const out: string[] = []
  let i = 1
  while (i < key.length) {
    const ch = key[i]
    if (ch === '.') {
      let j = i + 1
      while (j < key.length && key[j] !== '.' && key[j] !== '[') j++
      if (j === i + 1) return null
      out.push(key.slice(i + 1, j))
      i = j
    } else if (ch === '[') {
      const q = key[i + 1]
      if (q !== "'" && q !== '"') return null
      const end = key.indexOf(q + ']', i + 2)
      if (end < 0) return null
      out.push(key.slice(i + 2, end))
      i = end + 2
    } else {
      return null
    }
  }
  return out.length ? out : null
}

function cloneBag(b: Bag): Bag {
  return { ...b }
}

/** A copy of the bag with the value at `path` set (intermediate bags are created or copied). */
function setPath(bag: Bag, path: readonly string[], value: DynamicValue): Bag {
  const root = cloneBag(bag)
  let cur = root
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i]!
    const next = asBag(cur[k] ?? null)
    const copy = next ? cloneBag(next) : {}
    cur[k] = copy
    cur = copy
  }
  cur[path[path.length - 1]!] = value
  return root
}

/** A copy of the bag without the value at `path` (unchanged when the path does not exist). */
function removePath(bag: Bag, path: readonly string[]): Bag {
  const [head, ...rest] = path
  if (head === undefined || !(head in bag)) return bag
  const copy = cloneBag(bag)
  if (rest.length === 0) {
    delete copy[head]
    return copy
  }
  const inner = asBag(bag[head] ?? null)
  if (!inner) return bag
  copy[head] = removePath(inner, rest)
  return copy
}

function hasPath(bag: Bag, path: readonly string[]): boolean {
  let cur: DynamicValue = bag
  for (const k of path) {
    const b = asBag(cur)
    if (!b || !(k in b)) return false
    cur = b[k]!
  }
  return true
}

/** A converter of one argument into dynamic, by its static type. */
export function toDyn(arg: ArgInfo): (v: KqlValue) => DynamicValue {
  const t = arg.type
  return (v) => asDynamic(t, v ?? null)
}

export const bagPack = defineScalar({
  name: 'bag_pack',
  aliases: ['pack', 'pack_dictionary'],
  params: ['string', 'scalar'],
  min: 0,
  max: Infinity,
  repeat: 2,
  result: 'dynamic',
  bind(args) {
    if (args.length % 2 !== 0) throw functionError('bag_pack', `expects an even number of arguments (key, value pairs), got ${args.length}`)
    const keys = args.map((a) => coercer('string', a.type))
    const conv = args.map(toDyn)
    return (values) => {
      const out: Bag = {}
      for (let i = 0; i + 1 < values.length; i += 2) out[keys[i]!(values[i] ?? '') as string] = conv[i + 1]!(values[i + 1] ?? null)
      return out
    }
  },
})

export const bagPackColumns = defineScalar({
  name: 'bag_pack_columns',
  params: ['scalar'],
  min: 1,
  max: Infinity,
  result: 'dynamic',
  bind(args) {
    const names = args.map((a) => {
      if (!a.columnName) throw functionError('bag_pack_columns', `argument ${a.text} must be a column reference`)
      return a.columnName
    })
    const conv = args.map(toDyn)
    return (values) => {
      const out: Bag = {}
      values.forEach((v, i) => {
        out[names[i]!] = conv[i]!(v ?? null)
      })
      return out
    }
  },
})

/**
 * pack_all([ignore_null_empty]): a bag of every column of the row. Convention for the binder
 * (kql-core): pass the user's optional bool argument first (no `columnName`), then one argument
 * per input column, in column order, each with `columnName` set; values follow the same order.
 */
export const packAll: ScalarFunction = {
  name: 'pack_all',
  bind(args) {
    const hasFlag = args.length > 0 && args[0]!.columnName === undefined
    // the binder passes the columns as arguments after the optional flag (see above): no fixed signature
    if (hasFlag) expectKind('pack_all', args, 0, 'bool')
    const columns = hasFlag ? args.slice(1) : args
    if (columns.some((c) => c.columnName === undefined)) throw functionError('pack_all', 'expects at most one argument (ignore_null_empty)')
    const conv = columns.map(toDyn)
    const offset = hasFlag ? 1 : 0
    return {
      type: 'dynamic',
      evaluate(values) {
        const ignore = hasFlag && values[0] === true
        const out: Bag = {}
        columns.forEach((c, i) => {
          const v = conv[i]!(values[i + offset] ?? null)
          if (ignore && (v === null || v === '')) return
          out[c.columnName!] = v
        })
        return out
      },
    }
  },
}

export const bagMerge = defineScalar({
  name: 'bag_merge',
  params: ['dynamic'],
  min: 2,
  max: 64,
  result: 'dynamic',
  bind() {
    return (values) => {
      const out: Bag = {}
      for (const v of values) {
        const b = asBag(v ?? null)
        if (!b) continue
        for (const [k, x] of Object.entries(b)) if (!(k in out)) out[k] = x
      }
      return out
    }
  },
})

export const bagSetKey = defineScalar({
  name: 'bag_set_key',
  params: ['dynamic', 'string', 'scalar'],
  result: 'dynamic',
  bind(args) {
    const value = toDyn(args[2]!)
    const key = coercer('string', args[1]!.type)
    return ([b, k, v]) => {
      const bag = asBag(b ?? null)
      const path = parseKeyPath(key(k ?? '') as string)
      if (!bag || !path) return null
      return setPath(bag, path, value(v ?? null))
    }
  },
})

export const bagHasKey = defineScalar({
  name: 'bag_has_key',
  params: ['dynamic', 'string'],
  result: 'bool',
  impl: ([b, k]) => {
    const bag = asBag(b)
    const path = parseKeyPath(k as string)
    if (!bag || !path) return null
    return hasPath(bag, path)
  },
})

export const bagRemoveKeys = defineScalar({
  name: 'bag_remove_keys',
  params: ['dynamic', 'dynamic'],
  result: 'dynamic',
  impl: ([b, ks]) => {
    const bag = asBag(b)
    const keys = asArray(ks)
    if (!bag || !keys) return null
    let out = bag
    for (const k of keys) {
      if (typeof k !== 'string') continue
      const path = parseKeyPath(k)
      if (path) out = removePath(out, path)
    }
    return out === bag ? cloneBag(bag) : out
  },
})

export const bagZip = defineScalar({
  name: 'bag_zip',
  params: ['dynamic', 'dynamic'],
  result: 'dynamic',
  nullInNullOut: false,
  impl: ([k, v]) => {
    const keys = asArray(k ?? null)
    if (!keys) return null
    const values = asArray(v ?? null)
    const out: Bag = {}
    keys.forEach((key, i) => {
      if (typeof key === 'string') out[key] = values ? (values[i] ?? null) : null
    })
    return out
  },
})

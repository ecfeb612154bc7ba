/**
 * @module
 * The function library's lookup tables. Names are matched as Kusto does: exactly, lower-case.
 */
import { aggregateFunctions } from './aggregate-functions.js'
import { conditionalFunctions } from './conditional-functions.js'
import { conversionFunctions } from './conversion-functions.js'
import { datetimeFunctions } from './datetime-functions.js'
import { dynamicFunctions } from './dynamic-functions.js'
import { encodingFunctions } from './encoding-functions.js'
import type { AggregateFunction, ScalarFunction } from './function-types.js'
import { geoFunctions } from './geo-functions.js'
import { hashFunctions } from './hash-functions.js'
import { ipFunctions } from './ip-functions.js'
import { mathFunctions } from './math-functions.js'
import { seriesFunctions } from './series-functions.js'
import { sketchAggregates } from './sketch-aggregates.js'
import { stringFunctions } from './string-functions.js'

function index<T extends { readonly name: string; readonly aliases?: readonly string[] }>(
  families: readonly (readonly T[])[],
): ReadonlyMap<string, T> {
  const map = new Map<string, T>()
  for (const family of families) {
    for (const fn of family) {
      for (const name of [fn.name, ...(fn.aliases ?? [])]) {
        if (map.has(name)) throw new Error(`KQL function ${name} is defined twice`)
        map.set(name, fn)
      }
    }
  }
  return map
}

const SCALARS = index<ScalarFunction>([
  stringFunctions,
  conversionFunctions,
  encodingFunctions,
  ipFunctions,
  hashFunctions,
  conditionalFunctions,
  datetimeFunctions,
  mathFunctions,
  dynamicFunctions,
  seriesFunctions,
  geoFunctions,
])
const AGGREGATES = index<AggregateFunction>([aggregateFunctions, sketchAggregates])

export function lookupScalar(name: string): ScalarFunction | undefined {
  return SCALARS.get(name)
}

export function lookupAggregate(name: string): AggregateFunction | undefined {
  return AGGREGATES.get(name)
}

export function scalarNames(): readonly string[] {
  return [...SCALARS.keys()]
}

export function aggregateNames(): readonly string[] {
  return [...AGGREGATES.keys()]
}

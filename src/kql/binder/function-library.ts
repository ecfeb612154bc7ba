/**
 * @module
 * The binder's view of the function library: the registry by default, replaceable in tests so
 * operators can be exercised with a few stand-in functions.
 */

import type { AggregateFunction, ScalarFunction } from '../functions/function-types.js'
import { aggregateNames, lookupAggregate, lookupScalar, scalarNames } from '../functions/registry.js'

export interface FunctionLibrary {
  lookupScalar(name: string): ScalarFunction | undefined
  lookupAggregate(name: string): AggregateFunction | undefined
  scalarNames(): readonly string[]
  aggregateNames(): readonly string[]
}

export const DEFAULT_LIBRARY: FunctionLibrary = { lookupScalar, lookupAggregate, scalarNames, aggregateNames }

/** A library that consults `first` before `fallback` (tests add functions the registry lacks). */
export function layeredLibrary(first: FunctionLibrary, fallback: FunctionLibrary = DEFAULT_LIBRARY): FunctionLibrary {
  return {
    lookupScalar: (n) => first.lookupScalar(n) ?? fallback.lookupScalar(n),
    lookupAggregate: (n) => first.lookupAggregate(n) ?? fallback.lookupAggregate(n),
    scalarNames: () => [...new Set([...first.scalarNames(), ...fallback.scalarNames()])],
    aggregateNames: () => [...new Set([...first.aggregateNames(), ...fallback.aggregateNames()])],
  }
}

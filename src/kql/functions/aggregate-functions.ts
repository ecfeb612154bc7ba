/**
 * @module
 * KQL aggregate functions (see ./README.md).
 */
import type { AggregateFunction } from './function-types.js'

export const aggregateFunctions: readonly AggregateFunction[] = []

/**
 * @module
 * KQL conditional functions (see ./README.md).
 */
import type { ScalarFunction } from './function-types.js'

export const conditionalFunctions: readonly ScalarFunction[] = []

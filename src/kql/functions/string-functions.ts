/**
 * @module
 * KQL string functions (see ./README.md).
 */
import type { ScalarFunction } from './function-types.js'

export const stringFunctions: readonly ScalarFunction[] = []

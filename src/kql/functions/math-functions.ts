/**
 * @module
 * KQL math functions (see ./README.md).
 */
import type { ScalarFunction } from './function-types.js'

export const mathFunctions: readonly ScalarFunction[] = []

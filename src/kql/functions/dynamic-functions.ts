/**
 * @module
 * KQL dynamic functions (see ./README.md).
 */
import type { ScalarFunction } from './function-types.js'

export const dynamicFunctions: readonly ScalarFunction[] = []

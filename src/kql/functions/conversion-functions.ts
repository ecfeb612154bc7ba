/**
 * @module
 * KQL conversion functions (see ./README.md).
 */
import type { ScalarFunction } from './function-types.js'

export const conversionFunctions: readonly ScalarFunction[] = []

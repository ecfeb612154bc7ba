/**
 * @module
 * KQL hash functions (see ./README.md).
 */
import type { ScalarFunction } from './function-types.js'

export const hashFunctions: readonly ScalarFunction[] = []

/**
 * @module
 * KQL encoding functions (see ./README.md).
 */
import type { ScalarFunction } from './function-types.js'

export const encodingFunctions: readonly ScalarFunction[] = []

/**
 * @module
 * KQL ip functions (see ./README.md).
 */
import type { ScalarFunction } from './function-types.js'

export const ipFunctions: readonly ScalarFunction[] = []

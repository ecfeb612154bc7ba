/**
 * @module
 * KQL datetime functions (see ./README.md).
 */
import type { ScalarFunction } from './function-types.js'

export const datetimeFunctions: readonly ScalarFunction[] = []

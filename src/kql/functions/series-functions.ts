/**
 * @module
 * KQL series functions (see ./README.md).
 */
import type { ScalarFunction } from './function-types.js'

export const seriesFunctions: readonly ScalarFunction[] = []

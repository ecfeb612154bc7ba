/**
 * @module
 * Workspace tables for the KQL engine's tests, written as `{ column: type }` (one table per line
 * instead of a dozen): binder, compile-query, push-down and property tests share it.
 */
import type { KqlColumn, KqlTable, KqlType } from '../../src/kql/index.js'

/** The hidden `_rowid` column a stored table has (named explicitly, left out of `*`). */
export const ROWID: readonly KqlColumn[] = [{ name: '_rowid', type: 'long' }]

/**
 * A table named `name` (physical `sqlName`) with `columns` in the order written; integer-like
 * column names would be reordered by JavaScript, so tests do not use them. `more` adds hidden
 * columns or physical column names.
 */
export function kqlTable(
  name: string,
  sqlName: string,
  columns: Readonly<Record<string, KqlType>>,
  more: Pick<KqlTable, 'hiddenColumns' | 'sqlColumns'> = {},
): KqlTable {
  return { name, sqlName, columns: Object.entries(columns).map(([n, type]) => ({ name: n, type })), ...more }
}

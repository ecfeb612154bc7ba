/**
 * @module
 * The first-phase SQL of a table scan: a plain `SELECT "c1", "c2", ... FROM "sqlName"` (the
 * reference the pushdown is tested against; split out of evaluator.ts, issue 19 item 6).
 */
import type * as P from '../plan/plan.js'
import { scaledColumn } from '../plan/scan-scale.js'

/** Quotes an identifier for SQLite and PostgreSQL alike: double quotes, embedded quotes doubled. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

/** The first-phase SQL of a table scan. */
export function scanSql(node: P.TableScan): string {
  return `SELECT ${node.sqlColumns.map((c, i) => scaledColumn(quoteIdentifier(c), node.sqlScale?.[i])).join(', ')} FROM ${quoteIdentifier(node.sqlName)}`
}

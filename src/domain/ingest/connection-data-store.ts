/**
 * @module
 * What ingest, the live stream's replay and corrections need from the connection tables.
 */
import type { KqlValue } from '../../kql/index.js'
import type { ConnectionTable } from '../workspace-config/config-store.js'
import type { TypedRow } from './row-validation.js'

export interface StoredRow {
  readonly rowId: number
  readonly ingestedAt: number
  /** Typed values in the table's declared column order. */
  readonly values: readonly KqlValue[]
}

export interface ConnectionDataStore {
  /**
   * Inserts rows (typed, in the table's column order) inside the caller's transaction. Row ids are
   * allocated from the workspace's row counter, so they are unique across the workspace's
   * connections and increase in commit order (the live stream's event ids).
   */
  insertRows(table: ConnectionTable, rows: readonly TypedRow[], ingestedAt: number): Promise<{ firstRowId: number; lastRowId: number }>
  /**
   * The last row id handed out in the workspace (0 before any row): every row up to it is
   * committed, because ids are reserved under the counter's lock in commit order (live stream).
   */
  latestRowId(workspaceId: string): Promise<number>
  /** Rows with a row id in (afterRowId, upToRowId], oldest first. */
  rowsAfter(table: ConnectionTable, afterRowId: number, limit: number, upToRowId?: number): Promise<StoredRow[]>
  /** One row; with `forUpdate` (inside a transaction) it stays locked until commit (PostgreSQL; SQLite's transaction already holds the write lock). */
  row(table: ConnectionTable, rowId: number, options?: { forUpdate?: boolean }): Promise<StoredRow | undefined>
  /**
   * Rows stored in the connection's table. Rows are never deleted (a correction edits in place), so
   * for a push connection this is every row it ever received.
   */
  rowCount(table: ConnectionTable): Promise<number>
  /** Sets some columns of one row; returns false when the row does not exist. */
  updateRow(table: ConnectionTable, rowId: number, values: ReadonlyMap<string, KqlValue>): Promise<boolean>
}

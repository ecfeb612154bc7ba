/**
 * @module
 * What exports need from persistence: the rows of connection tables in a time window, read in
 * order (timestamp, then row id) in bounded chunks, and the records of the files written.
 */
import type { KqlValue } from '../../kql/index.js'
import type { ConnectionTable } from '../workspace-config/index.js'
import type { ExportFormat } from './export-request.js'

/** A row's place in the export order. */
export interface WindowKey {
  readonly timestamp: bigint
  readonly rowId: number
}

export interface ExportWindow {
  /** Inclusive, datetime ticks. */
  readonly from: bigint
  /** Exclusive, datetime ticks. */
  readonly to: bigint
  /**
   * Only rows with an id up to this one: the newest committed row when the export started. Row ids
   * increase in commit order, so rows committed while the export runs never shift it.
   */
  readonly maxRowId: number
}

export interface WindowRow {
  readonly key: WindowKey
  /** Current values (corrections update rows in place) in the table's declared column order. */
  readonly values: readonly KqlValue[]
}

export type ExportStorageKind = 'directory' | 's3'

export interface ExportFileRecord {
  readonly id: string
  readonly workspaceId: string
  readonly accountId: string
  readonly storage: ExportStorageKind
  /** `<workspace id>/<file id>.<ext>`: the path under the export directory, or the object key. */
  readonly objectKey: string
  readonly format: ExportFormat
  /** The name offered to the browser (Content-Disposition). */
  readonly fileName: string
  readonly sizeBytes: number
  readonly sha256: string
  readonly createdAt: number
  readonly expiresAt: number
  /** Set once the file is complete and the export recorded; until then it is never served. */
  readonly completedAt: number | undefined
}

export interface ExportStore {
  /** The newest committed row id of the workspace (0 when it has none). */
  rowIdBound(workspaceId: string): Promise<number>
  /** Rows of `table` in the window, counted up to `limit` (counting stops there). */
  countWindow(table: ConnectionTable, window: ExportWindow, limit: number): Promise<number>
  /** The key of the row at 0-based `offset` of the tables' rows in the window, merged in order. */
  keyAt(tables: readonly ConnectionTable[], window: ExportWindow, offset: number): Promise<WindowKey | undefined>
  /** Up to `limit` rows of `table` in the window from `start` on (inclusive or not), in order. */
  readWindow(table: ConnectionTable, window: ExportWindow, start: WindowKey, inclusive: boolean, limit: number): Promise<WindowRow[]>

  /** Records a complete file (inside the transaction that records the export). */
  insertFile(record: ExportFileRecord): Promise<void>
  fileById(id: string): Promise<ExportFileRecord | undefined>
  /** Records whose expiry is at or before `before`, oldest first. */
  expiredFiles(before: number, limit: number): Promise<ExportFileRecord[]>
  /** Returns false when the record was already gone. */
  deleteFile(id: string): Promise<boolean>
}

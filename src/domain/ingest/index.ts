/**
 * @module
 * Ingest: typed rows into connection tables (spec 1; design §4). Other features import from here,
 * never from the files behind it.
 */
export type { ConnectionDataStore, StoredRow } from './connection-data-store.js'
export {
  createIngestService,
  type ImportOptions,
  type IngestResult,
  type IngestService,
  type IngestServiceDeps,
  type InTransactionHook,
  MAX_PUSH_ROWS,
  type UnreadPushBody,
} from './ingest-service.js'
export { type RowProblem, readTypedRows, type TypedRow, toColumnValue, typeRow, typeRows } from './row-validation.js'

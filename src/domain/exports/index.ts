/**
 * @module
 * Cold exports: CSV or JSONL files behind a time-limited URL (spec 2.4-2.5, 4.2, 8). Other features
 * import from here, never from the files behind it.
 */
export type { ExportFileStorage } from './export-file-storage.js'
export { createExportService, type Download, type ExportResult, type ExportService, type ExportServiceDeps } from './export-service.js'
export type { ExportStore } from './export-store.js'

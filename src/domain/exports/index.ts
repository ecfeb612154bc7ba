/**
 * @module
 * Cold exports: CSV or JSONL files behind a time-limited URL (spec 2.4-2.5, 4.2, 8). Other features
 * import from here, never from the files behind it.
 */
export { DOWNLOAD_PATH_PREFIX } from './download-signature.js'
export type { ExportFileStorage } from './export-file-storage.js'
export { EXPORT_FORMATS, EXPORT_ROW_CAP, PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX, parseIsoTime } from './export-request.js'
export {
  createExportService,
  type Download,
  type ExportResult,
  type ExportService,
  type ExportServiceDeps,
  type ExportTarget,
} from './export-service.js'
export type { ExportStore } from './export-store.js'

/**
 * @module
 * Cold-data export (spec 1, 2.4, 2.5, 4.2, 8; design §5). The rows of a data connection, a
 * surface, or one connection of a surface in the window `[from, to)`, ordered by timestamp then
 * row id, capped at 25,000 (`truncated` when the window held more); the file is page `page` of that
 * capped set, streamed chunk by chunk into storage before the response returns, and reached through
 * a download URL that expires 15 minutes after issue. Every export is recorded as a decision.
 */
import { setImmediate as nextTurn } from 'node:timers/promises'
import { formatDateTime } from '../../kql/index.js'
import type { Clock } from '../../shared/clock.js'
import { newId } from '../../shared/ids.js'
import { type Caller, connectionAllowed, surfaceAllowed } from '../access/index.js'
import type { ActivityLog, Actor } from '../activity/index.js'
import { ForbiddenError, NotFoundError, NotProvisionedError } from '../errors.js'
import type { Stores } from '../stores.js'
import type { ConfigService, ConnectionTable, WorkspaceConfig } from '../workspace-config/index.js'
import type { DownloadSigner } from './download-signature.js'
import { createRowEncoder, type ExportColumn, type RowEncoder } from './export-encoding.js'
import type { ExportFileStorage, ExportFileWriter, OpenedFile } from './export-file-storage.js'
import { DOWNLOAD_URL_LIFETIME_MS, EXPORT_ROW_CAP, type ExportFormat, type ExportRequest, pageSlice } from './export-request.js'
import type { ExportFileRecord, ExportWindow, WindowKey, WindowRow } from './export-store.js'

export type ExportTarget =
  | { readonly kind: 'data-connection'; readonly connection: string }
  | { readonly kind: 'surface'; readonly surface: string }
  | { readonly kind: 'surface-connection'; readonly surface: string; readonly connection: string }

/** Spec 2.5 / design §5, plus the file id (for the activity log and support). */
export interface ExportResult {
  readonly fileId: string
  readonly downloadUrl: string
  /** ms since the epoch. */
  readonly expiresAt: number
  readonly format: ExportFormat
  readonly page: number
  readonly pageSize: number
  readonly pageCount: number
  readonly rowCount: number
  readonly totalRows: number
  readonly truncated: boolean
}

export interface Download {
  readonly fileName: string
  readonly contentType: string
  /** Strong validator of the (immutable) file, for If-Range. */
  readonly etag: string
  readonly file: OpenedFile
}

export const CONTENT_TYPES = {
  csv: 'text/csv; charset=utf-8; header=present',
  jsonl: 'application/x-ndjson; charset=utf-8',
} as const satisfies Record<ExportFormat, string>

const EXTENSIONS = { csv: 'csv', jsonl: 'jsonl' } as const satisfies Record<ExportFormat, string>

/** Expired files stay this long before the sweeper deletes them, so a download that passed its
 * expiry check just before the deadline can still open the file. */
export const SWEEP_GRACE_MS = 60_000

/** A file without a record this old (far longer than any export takes) was left by a stopped process. */
export const STRAY_AGE_MS = 60 * 60_000

export interface ExportServiceDeps {
  /** Connection tables (`config`) and the export windows and file records (`exports`). */
  readonly stores: Pick<Stores, 'config' | 'exports' | 'transaction'>
  readonly config: ConfigService
  readonly files: ExportFileStorage
  readonly activity: ActivityLog
  readonly clock: Clock
  /** Verifies our own download URLs (directory storage); undefined when the bucket serves files. */
  readonly signer: DownloadSigner | undefined
  /** Rows per database read and per write to storage (default 2500: few round trips, short event-loop stretches). */
  readonly chunkRows?: number
  /** Told about a sweep that failed (the sweeper carries on at its next run). */
  readonly onSweepError?: (error: unknown) => void
}

interface Source {
  readonly lookup: string
  readonly table: ConnectionTable
}

interface Plan {
  readonly sources: readonly Source[]
  /** Name in the file name: the connection, the surface, or `surface.connection`. */
  readonly name: string
  /** Surface exports add a column naming each row's connection. */
  readonly connectionColumn: string | undefined
}

interface Cursor {
  readonly index: number
  readonly source: Source
  rows: readonly WindowRow[]
  at: number
  next: WindowKey
  inclusive: boolean
  exhausted: boolean
}

const before = (a: WindowKey, b: WindowKey): boolean => a.timestamp < b.timestamp || (a.timestamp === b.timestamp && a.rowId < b.rowId)

function compactTime(ticks: bigint): string {
  return formatDateTime(ticks).replace(/[-:]/g, '')
}

/** The declared contract of cold exports (spec 2.4, 2.5, 4.2, 8); `createExportService` is checked against it. */
export interface ExportService {
  /**
   * Writes page `request.page` of the window `[from, to)` of a connection, a surface or one
   * connection of a surface, ordered by timestamp then row id and capped at EXPORT_ROW_CAP
   * (`truncated` when the window held more), into a new file, and returns its download URL, which
   * MUST expire DOWNLOAD_URL_LIFETIME_MS after issue (spec 2.5). The export MUST be recorded as a
   * decision. Throws NotProvisionedError (503) when exports are switched off, ForbiddenError outside
   * the token's scopes, NotFoundError for an unknown connection or surface, or a connection that is
   * not part of the surface.
   */
  create(caller: Caller, target: ExportTarget, request: ExportRequest): Promise<ExportResult>
  /**
   * Authorises a download through our own signed URL and opens the file. MUST refuse an altered or
   * expired URL with ForbiddenError (checked when the download starts); NotFoundError when the file
   * is gone; NotProvisionedError when exports are switched off.
   */
  openDownload(fileId: string, expires: unknown, signature: unknown): Promise<Download>
  /**
   * Deletes files whose links expired more than SWEEP_GRACE_MS ago, and files without a record
   * older than STRAY_AGE_MS. Returns how many files were deleted.
   */
  sweep(): Promise<number>
  /** Sweeps now and then every `intervalMs` (60 s by default) until stopSweeper(). */
  startSweeper(intervalMs?: number): void
  /** Stops the timer and waits for a sweep in progress. */
  stopSweeper(): Promise<void>
}

export function createExportService(deps: ExportServiceDeps): ExportService {
  const { stores, config, files, activity, clock, signer } = deps
  const chunkRows = deps.chunkRows ?? 2500

  async function enabledConfig(workspaceId: string): Promise<WorkspaceConfig> {
    const { document } = await config.current(workspaceId)
    if (!document.settings.capabilities.exports)
      throw new NotProvisionedError("exports are switched off in this workspace's settings (settings.capabilities.exports)")
    return document
  }

  async function plan(caller: Caller, target: ExportTarget): Promise<Plan> {
    const document = await enabledConfig(caller.workspaceId)
    const tables = new Map((await stores.config.connectionTables(caller.workspaceId)).map((t) => [t.lookup, t]))
    const sourceOf = (lookup: string): Source => {
      const table = tables.get(lookup)
      if (!table || !document.connections.some((c) => c.lookup === lookup))
        throw new NotFoundError(`no data connection "${lookup}" in this workspace`)
      return { lookup, table }
    }
    const surfaceOf = (lookup: string) => {
      if (!surfaceAllowed(caller.scopes, lookup)) throw new ForbiddenError(`this token is restricted to other surfaces than "${lookup}"`)
      const surface = document.surfaces.find((s) => s.lookup === lookup)
      if (!surface) throw new NotFoundError(`no surface "${lookup}" in this workspace`)
      return surface
    }
    const columnName = (sources: readonly Source[]) =>
      sources.some((s) => s.table.columns.some((c) => c.name === 'connection')) ? '_connection' : 'connection'

    switch (target.kind) {
      case 'data-connection': {
        if (!connectionAllowed(caller.scopes, document, target.connection))
          throw new ForbiddenError(`this token is restricted to other connections than "${target.connection}"`)
        return { sources: [sourceOf(target.connection)], name: target.connection, connectionColumn: undefined }
      }
      case 'surface': {
        const surface = surfaceOf(target.surface)
        const allowed = surface.connections.filter((c) => connectionAllowed(caller.scopes, document, c))
        if (surface.connections.length > 0 && allowed.length === 0)
          throw new ForbiddenError(`this token may read none of the connections of surface "${surface.lookup}"`)
        const sources = allowed.filter((c) => tables.has(c)).map(sourceOf)
        return { sources, name: surface.lookup, connectionColumn: columnName(sources) }
      }
      case 'surface-connection': {
        const surface = surfaceOf(target.surface)
        if (!surface.connections.includes(target.connection))
          throw new NotFoundError(`surface "${surface.lookup}" has no connection "${target.connection}"`)
        if (!connectionAllowed(caller.scopes, document, target.connection))
          throw new ForbiddenError(`this token is restricted to other connections than "${target.connection}"`)
        const sources = [sourceOf(target.connection)]
        return { sources, name: `${surface.lookup}.${target.connection}`, connectionColumn: columnName(sources) }
      }
    }
  }

  /** The file's columns, and per source an encoder and a projection of its values onto them. */
  function layout(
    format: ExportFormat,
    p: Plan,
  ): { header: string; encoders: RowEncoder[]; projections: ((values: readonly unknown[]) => unknown[])[] } {
    const columns: ExportColumn[] = p.connectionColumn ? [{ name: p.connectionColumn, type: 'string' }] : []
    for (const source of p.sources) {
      for (const column of source.table.columns)
        if (!columns.some((c) => c.name === column.name)) columns.push({ name: column.name, type: column.type })
    }
    const encoders: RowEncoder[] = []
    const projections: ((values: readonly unknown[]) => unknown[])[] = []
    for (const source of p.sources) {
      // A column may have another type in another connection of a surface: each source encodes
      // its own values with its own types.
      const own = new Map(source.table.columns.map((c, i) => [c.name, { index: i, type: c.type }]))
      encoders.push(
        createRowEncoder(
          format,
          columns.map((c) => ({ name: c.name, type: own.get(c.name)?.type ?? c.type })),
        ),
      )
      const picks = columns.map((c) => (c.name === p.connectionColumn ? -1 : (own.get(c.name)?.index ?? -2)))
      const identity = picks.length === source.table.columns.length && picks.every((pick, i) => pick === i)
      projections.push(
        identity
          ? (values) => values as unknown[]
          : (values) => picks.map((i) => (i === -1 ? source.lookup : i === -2 ? undefined : values[i])),
      )
    }
    const header = createRowEncoder(format, columns).header
    return { header, encoders, projections }
  }

  /** Writes `count` rows from `start` on, merged across the sources in (timestamp, row id) order. */
  async function writeRows(
    writer: ExportFileWriter,
    p: Plan,
    window: ExportWindow,
    start: WindowKey,
    count: number,
    encode: (index: number, row: WindowRow) => string,
  ): Promise<void> {
    const cursors: Cursor[] = p.sources.map((source, index) => ({
      index,
      source,
      rows: [],
      at: 0,
      next: start,
      inclusive: true,
      exhausted: false,
    }))
    let written = 0
    let text = ''
    let pending = 0
    while (written < count) {
      for (const cursor of cursors) {
        if (cursor.at < cursor.rows.length || cursor.exhausted) continue
        const limit = Math.min(chunkRows, count - written)
        cursor.rows = await stores.exports.readWindow(cursor.source.table, window, cursor.next, cursor.inclusive, limit)
        cursor.at = 0
        if (cursor.rows.length < limit) cursor.exhausted = true
        if (cursor.rows.length > 0) {
          cursor.next = cursor.rows.at(-1)!.key
          cursor.inclusive = false
        }
      }
      let best: Cursor | undefined
      for (const cursor of cursors) {
        const head = cursor.rows[cursor.at]
        if (head && (!best || before(head.key, best.rows[best.at]!.key))) best = cursor
      }
      if (!best) break
      text += encode(best.index, best.rows[best.at]!)
      best.at++
      written++
      if (++pending === chunkRows) {
        await writer.write(text)
        text = ''
        pending = 0
        // Reads of a SQLite chunk are synchronous: let other requests run between chunks.
        await nextTurn()
      }
    }
    if (text) await writer.write(text)
  }

  function actorOf(caller: Caller): Actor {
    return {
      id: caller.accountId,
      name: caller.accountName,
      via: caller.via === 'mcp' ? 'mcp' : caller.tokenId === undefined ? 'portal' : 'api',
    }
  }

  /**
   * Writes page `request.page` of the capped window into a new file and returns its download URL.
   * 503 when exports are switched off; 403 outside the token's scopes; 404 for an unknown
   * connection or surface, or a connection that does not belong to the surface.
   */
  async function create(caller: Caller, target: ExportTarget, request: ExportRequest): Promise<ExportResult> {
    const p = await plan(caller, target)
    const { format } = request
    const contentType = CONTENT_TYPES[format]
    const workspaceId = caller.workspaceId
    const fileId = newId('exp')
    const startedAt = clock.now()
    // The record is committed once the file is complete, with the decision record. A process that
    // stops before that leaves a file without a record, which the sweeper finds in storage (strays).
    let record: ExportFileRecord = {
      id: fileId,
      workspaceId,
      accountId: caller.accountId,
      storage: files.kind,
      objectKey: `${workspaceId}/${fileId}.${EXTENSIONS[format]}`,
      format,
      fileName: `${p.name}_${compactTime(request.from)}_${compactTime(request.to)}_page-${request.page}.${EXTENSIONS[format]}`,
      sizeBytes: 0,
      sha256: '',
      createdAt: startedAt,
      expiresAt: startedAt + DOWNLOAD_URL_LIFETIME_MS,
      completedAt: undefined,
    }
    let writer: ExportFileWriter | undefined
    try {
      writer = await files.create(record.objectKey, contentType)
      const window: ExportWindow = { from: request.from, to: request.to, maxRowId: await stores.exports.rowIdBound(workspaceId) }
      let windowRows = 0
      for (const source of p.sources) {
        if (windowRows > EXPORT_ROW_CAP) break
        windowRows += await stores.exports.countWindow(source.table, window, EXPORT_ROW_CAP + 1)
      }
      const truncated = windowRows > EXPORT_ROW_CAP
      const totalRows = Math.min(windowRows, EXPORT_ROW_CAP)
      const slice = pageSlice(totalRows, request.page, request.pageSize)
      const { header, encoders, projections } = layout(format, p)
      if (header) await writer.write(header)
      if (slice.rowCount > 0) {
        const start = await stores.exports.keyAt(
          p.sources.map((s) => s.table),
          window,
          slice.offset,
        )
        if (start)
          await writeRows(writer, p, window, start, slice.rowCount, (i, row) => encoders[i]!.encode(projections[i]!(row.values) as never))
      }
      const facts = await writer.finish()
      const issuedAt = clock.now()
      const link = files.link(record, contentType, issuedAt)
      record = { ...record, ...facts, completedAt: issuedAt, expiresAt: link.expiresAt }
      const paging = {
        page: request.page,
        pageSize: request.pageSize,
        pageCount: slice.pageCount,
        rowCount: slice.rowCount,
        totalRows,
        truncated,
      }
      const result: ExportResult = { fileId, downloadUrl: link.url, expiresAt: link.expiresAt, format, ...paging }
      await stores.transaction(async (tx) => {
        await tx.exports.insertFile(record)
        await activity.recordDecision(
          {
            workspaceId,
            entityType: 'export',
            entityId: fileId,
            actionType: 'created',
            actor: actorOf(caller),
            details: {
              tokenId: caller.tokenId ?? null,
              target: target.kind,
              ...(target.kind === 'data-connection' ? {} : { surface: target.surface }),
              connections: p.sources.map((s) => s.lookup),
              format,
              from: formatDateTime(request.from),
              to: formatDateTime(request.to),
              ...paging,
              sizeBytes: facts.sizeBytes,
              sha256: facts.sha256,
              expiresAt: new Date(link.expiresAt).toISOString(),
            },
          },
          tx,
        )
      })
      return result
    } catch (error) {
      await writer?.abort()
      await files.remove(record).catch(() => {})
      throw error
    }
  }

  /**
   * Authorises a download through our own signed URL and opens the file. 403 when the URL was
   * altered or has expired (checked now, when the request starts: a download that started in time
   * runs to its end); 404 when the file is gone; 503 when exports are switched off.
   */
  async function openDownload(fileId: string, expires: unknown, signature: unknown): Promise<Download> {
    if (!signer) throw new NotFoundError('export files are served by the export bucket; use the downloadUrl the export returned')
    const check = signer.verify(fileId, expires, signature, clock.now())
    if (check === 'altered')
      throw new ForbiddenError('this download link is not valid: it was altered or not issued by this server; export again for a new link')
    if (check === 'expired')
      throw new ForbiddenError(
        `this download link expired at ${new Date(Number(expires)).toISOString()} (links last 15 minutes); export again for a new link`,
      )
    const record = await stores.exports.fileById(fileId)
    if (!record || record.completedAt === undefined)
      throw new NotFoundError('this export file no longer exists; export again for a new link')
    await enabledConfig(record.workspaceId)
    const file = await files.open(record)
    if (!file) throw new NotFoundError('this export file no longer exists; export again for a new link')
    return { fileName: record.fileName, contentType: CONTENT_TYPES[record.format], etag: `"${record.sha256.slice(0, 32)}"`, file }
  }

  /**
   * Deletes files whose links expired more than SWEEP_GRACE_MS ago, and strays: files without a
   * record (left by a process that stopped mid-export) last modified more than STRAY_AGE_MS ago
   * by the file system's clock. Returns how many files were deleted.
   */
  async function sweep(): Promise<number> {
    const cutoff = clock.now() - SWEEP_GRACE_MS
    let removed = 0
    for (;;) {
      const expired = await stores.exports.expiredFiles(cutoff, 100)
      for (const file of expired) {
        await files.remove(file)
        if (await stores.exports.deleteFile(file.id)) removed++
      }
      if (expired.length < 100) break
    }
    for (const stray of await files.strays(Date.now() - STRAY_AGE_MS)) {
      if (stray.finished && (await stores.exports.fileById(stray.fileId))) continue
      await stray.remove()
      removed++
    }
    return removed
  }

  let timer: NodeJS.Timeout | undefined
  let running: Promise<unknown> = Promise.resolve()
  const runSweep = () => {
    running = running.then(sweep).catch((error: unknown) => deps.onSweepError?.(error))
  }

  return {
    create,
    openDownload,
    sweep,
    startSweeper(intervalMs = 60_000) {
      if (timer) return
      runSweep()
      timer = setInterval(runSweep, intervalMs)
      timer.unref()
    },
    async stopSweeper() {
      if (timer) clearInterval(timer)
      timer = undefined
      await running
    },
  }
}

/**
 * @module
 * The columnar tier in a server process (docs/design/columnar.md): one DuckDB instance per process
 * (its own threads, `threads` and `memory_limit` set from the configuration), the segment store on
 * the main database, query sources for the query pool, and the background compactor. Only the
 * process holding the compactor lease compacts (PostgreSQL: an advisory lock, as pull connectors
 * have; SQLite: the one process); it removes orphan files when it takes the lease, since only a
 * compactor leaves them.
 *
 * Every interval the compactor stages the rows that arrived (columnar-store.ts), writes a segment
 * while one is due and merges small segments (compaction-policy.ts: full segments, or a tail grown
 * older than tailAgeMs; size-tiered merges).
 */
import { mkdirSync } from 'node:fs'
import { DuckDBInstance } from '@duckdb/node-api'
import type { ConnectorLease, ConnectorLeases } from '../../domain/connectors/connector-supervisor.js'
import type { ConnectionTable } from '../../domain/workspace-config/config-store.js'
import type { KqlColumn } from '../../kql/index.js'
import { type Clock, systemClock } from '../../shared/clock.js'
import { quoteIdent, type SqlDb, toNumber } from '../sql/sql-db.js'
import { type ColumnarQuerySource, type ColumnarStore, createColumnarStore } from './columnar-store.js'
import { compactionDue } from './compaction-policy.js'

export interface ColumnarSettings {
  readonly dir: string
  readonly threads: number
  readonly memoryLimit: string
  readonly segmentRows: number
  /** Pause between compactor passes (each stages new rows and compacts what is due). */
  readonly intervalMs: number
  /** A tail whose oldest row is this old is compacted though it is not full (default 60 s). */
  readonly tailAgeMs?: number
}

/** The default of ColumnarSettings.tailAgeMs. */
export const DEFAULT_TAIL_AGE_MS = 60_000

/** What the compactor has done for one connection table (logs, CLI, portal). */
export interface TableProgress {
  readonly workspaceId: string
  readonly lookup: string
  readonly sqlName: string
  readonly segments: number
  /** Rows in segments. */
  readonly compactedRows: number
  /** Rows not compacted yet (read from the row store by every query). */
  readonly tailRows: number
  readonly watermark: number
  /** When the watermark last moved (ms since the epoch); undefined before the first segment. */
  readonly lastCompactedAt: number | undefined
}

export interface ColumnarLog {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
}

export interface ColumnarService {
  readonly store: ColumnarStore
  /** A DuckDB source whose views of these tables read segments + tail (one per running query). */
  openSource(tables: readonly { readonly sqlName: string; readonly columns: readonly KqlColumn[] }[]): Promise<ColumnarQuerySource>
  /** Compacts every table until no rows are left above the watermarks (due or not), then merges small segments; returns rows compacted. */
  compactAll(): Promise<number>
  /** One pass of the background compactor (without its lease): the segments due, then merges; returns rows compacted. */
  compactDue(): Promise<number>
  /** Per connection table (of one workspace, when given). */
  progress(workspaceId?: string): Promise<TableProgress[]>
  /** Starts the background compactor (only the lease holder compacts). */
  start(leases: ConnectorLeases, log?: ColumnarLog): void
  close(): Promise<void>
}

type Row = Record<string, unknown>

/**
 * `rowStore`: the SQLite file or the PostgreSQL URL of `db`; the compactor (and on SQLite a
 * query's tail) then reads rows in worker threads with connections of their own (row-export.ts).
 * `clock`: the one ingest stamps rows with (a tail's age is measured against it).
 */
export async function openColumnarService(
  db: SqlDb,
  settings: ColumnarSettings,
  rowStore: { readonly sqliteFile: string } | { readonly postgresUrl: string },
  clock: Clock = systemClock,
): Promise<ColumnarService> {
  mkdirSync(settings.dir, { recursive: true, mode: 0o700 })
  const duck = await DuckDBInstance.create(':memory:', {
    threads: String(settings.threads),
    memory_limit: settings.memoryLimit,
  })
  const store = createColumnarStore(db, duck, {
    dir: settings.dir,
    segmentRows: settings.segmentRows,
    now: () => clock.now(),
    // the compactor's own instance (in its worker thread) has the same limit as the queries'
    compactorMemory: settings.memoryLimit,
    ...rowStore,
  })
  const policy = { segmentRows: settings.segmentRows, tailAgeMs: settings.tailAgeMs ?? DEFAULT_TAIL_AGE_MS }
  let timer: NodeJS.Timeout | undefined
  let lease: ConnectorLease | undefined
  let running: Promise<unknown> | undefined
  let closed = false

  async function tables(): Promise<ConnectionTable[]> {
    const rows = await db.all<Row>('SELECT workspace_id, lookup, sql_name, columns FROM connection_tables ORDER BY sql_name')
    return rows.map((r) => ({
      workspaceId: String(r['workspace_id']),
      lookup: String(r['lookup']),
      sqlName: String(r['sql_name']),
      columns: JSON.parse(String(r['columns'])),
    }))
  }

  /** One table: segments while due, then merges. `force`: every row above the watermark. */
  async function compactTable(table: ConnectionTable, force: boolean, log?: ColumnarLog): Promise<number> {
    let total = 0
    for (;;) {
      if (closed) return total
      const started = Date.now()
      const reason = compactionDue(await store.stage(table), policy, clock.now(), force)
      if (!reason) break
      const result = await store.compact(table)
      if (!result) break
      total += result.segment.rowCount
      log?.info(
        { table: table.sqlName, rows: result.segment.rowCount, reason, watermark: result.segment.maxRowId, ms: Date.now() - started },
        'columnar: segment written',
      )
    }
    // small segments (tails compacted for their age) merged into larger ones
    for (;;) {
      if (closed) return total
      const started = Date.now()
      const merged = await store.merge(table)
      if (!merged) break
      log?.info(
        { table: table.sqlName, rows: merged.segment.rowCount, segments: merged.replaced.length, ms: Date.now() - started },
        'columnar: segments merged',
      )
    }
    return total
  }

  async function compactAll(force: boolean, log?: ColumnarLog): Promise<number> {
    let total = 0
    for (const table of await tables()) total += await compactTable(table, force, log)
    return total
  }

  async function pass(leases: ConnectorLeases, log?: ColumnarLog): Promise<void> {
    if (!lease) {
      lease = await leases.tryAcquire('provenant-columnar', 'compactor')
      if (!lease) return
      const held = lease
      void held.lost.then(() => {
        if (lease === held) lease = undefined
      })
      const removed = await store.removeOrphans()
      if (removed.length > 0)
        log?.warn({ files: removed.length }, 'columnar: removed segment files no manifest row names (left by a crash)')
    }
    await compactAll(false, log)
  }

  return {
    store,
    async openSource(list) {
      return store.openQuerySource(list.map((t) => ({ workspaceId: '', lookup: '', sqlName: t.sqlName, columns: t.columns as never })))
    },
    compactAll: () => compactAll(true),
    compactDue: () => compactAll(false),
    async progress(workspaceId) {
      const out: TableProgress[] = []
      for (const table of await tables()) {
        if (workspaceId !== undefined && table.workspaceId !== workspaceId) continue
        const segments = await store.segments(table.sqlName)
        const mark = await db.get<Row>('SELECT last_rowid, updated_at FROM columnar_watermarks WHERE sql_name = ?', [table.sqlName])
        const watermark = mark ? toNumber(mark['last_rowid']) : 0
        const tail = await db.get<Row>(`SELECT COUNT(*) AS n FROM ${quoteIdent(table.sqlName)} WHERE _rowid > ?`, [watermark])
        out.push({
          workspaceId: table.workspaceId,
          lookup: table.lookup,
          sqlName: table.sqlName,
          segments: segments.length,
          compactedRows: segments.reduce((n, s) => n + s.rowCount, 0),
          tailRows: toNumber(tail?.['n'] ?? 0),
          watermark,
          lastCompactedAt: mark ? toNumber(mark['updated_at']) : undefined,
        })
      }
      return out
    },
    start(leases, log) {
      const loop = (): void => {
        if (closed) return
        running = pass(leases, log)
          .catch((error: unknown) => log?.warn({ err: error }, 'columnar: compaction pass failed (retried next interval)'))
          .finally(() => {
            running = undefined
            if (!closed) timer = setTimeout(loop, settings.intervalMs).unref()
          })
      }
      timer = setTimeout(loop, settings.intervalMs).unref()
    },
    async close() {
      closed = true
      clearTimeout(timer)
      await running
      await lease?.release()
      await store.close()
      duck.closeSync()
    },
  }
}

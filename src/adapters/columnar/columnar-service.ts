/**
 * @module
 * The columnar tier in a server process (docs/design/columnar.md): one DuckDB instance per process
 * (its own threads, `threads` and `memory_limit` set from the configuration; what it spills past
 * the limit goes to a directory of this process's own under the segments directory, up to
 * `max_temp_directory_size`), the segment store on the main database, query sources for the query
 * pool, and the background compactor. Only the
 * process holding the compactor lease compacts (PostgreSQL: an advisory lock, as pull connectors
 * have; SQLite: the one process); it removes orphan files when it takes the lease, since only a
 * compactor leaves them.
 *
 * Every interval the compactor stages the rows that arrived (columnar-store.ts), writes a segment
 * while one is due and merges small segments (compaction-policy.ts: full segments, or a tail grown
 * older than tailAgeMs; size-tiered merges).
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import type { ConnectorLease, ConnectorLeases } from '../../domain/connectors/connector-supervisor.js'
import { QueryEngineLimitError } from '../../domain/queries/query-executor.js'
import type { ConnectionTable } from '../../domain/workspace-config/config-store.js'
import type { KqlColumn } from '../../kql/index.js'
import { type Clock, systemClock } from '../../shared/clock.js'
import { quoteIdent, type SqlDb, toNumber } from '../sql/sql-db.js'
import { type ColumnarQuerySource, type ColumnarStore, createColumnarStore } from './columnar-store.js'
import { spillLimitSql } from './columnar-worker-client.js'
import { compactionDue } from './compaction-policy.js'
import { duckdbLimitOf } from './duckdb-query-source.js'

export interface ColumnarSettings {
  readonly dir: string
  readonly threads: number
  readonly memoryLimit: string
  /** DuckDB's max_temp_directory_size: what one process may spill to disk (default DEFAULT_SPILL_LIMIT). */
  readonly spillLimit?: string
  readonly segmentRows: number
  /** Pause between compactor passes (each stages new rows and compacts what is due). */
  readonly intervalMs: number
  /** A tail whose oldest row is this old is compacted though it is not full (default 60 s). */
  readonly tailAgeMs?: number
}

/** The default of ColumnarSettings.tailAgeMs. */
export const DEFAULT_TAIL_AGE_MS = 60_000

/** What a process may spill unless PROVENANT_COLUMNAR_SPILL says otherwise (docs/configuration.md). */
export const DEFAULT_SPILL_LIMIT = '4GB'

/** The spill directories of every process, under the segments directory (a dot name: never a table). */
const SPILL = '.spill'

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
  const spillLimit = settings.spillLimit ?? DEFAULT_SPILL_LIMIT
  const spillDir = openSpillDir(settings.dir)
  // an in-memory database spills to `.tmp` in the working directory, up to 90% of that disk, unless told
  const duck = await DuckDBInstance.create(':memory:', {
    threads: String(settings.threads),
    memory_limit: settings.memoryLimit,
    temp_directory: spillDir,
  })
  const setup = await duck.connect()
  try {
    await setup.run(spillLimitSql(spillLimit))
  } finally {
    setup.closeSync()
  }
  /** DuckDB's out-of-memory and out-of-spill-space failures as the query port's error (a 400, not a 500). */
  const limited = (error: unknown): unknown => {
    const limit = duckdbLimitOf(error)
    if (limit === undefined) return error
    return new QueryEngineLimitError(limit, limit === 'memory' ? settings.memoryLimit : spillLimit, { cause: error })
  }
  const store = createColumnarStore(db, duck, {
    dir: settings.dir,
    segmentRows: settings.segmentRows,
    now: () => clock.now(),
    // the compactor's own instance (in its worker thread) has the queries' limits and spills
    // under this process's directory (removed with it)
    compactorMemory: settings.memoryLimit,
    compactorSpill: { dir: join(spillDir, 'compactor'), limit: spillLimit },
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
      let source: ColumnarQuerySource
      try {
        // reads the tail into DuckDB: the first place a query can run out of memory
        source = await store.openQuerySource(
          list.map((t) => ({ workspaceId: '', lookup: '', sqlName: t.sqlName, columns: t.columns as never })),
        )
      } catch (error) {
        throw limited(error)
      }
      return {
        async query(sql, params, columns, budget) {
          try {
            return await source.query(sql, params, columns, budget)
          } catch (error) {
            throw limited(error)
          }
        },
        interrupt: () => source.interrupt(),
        close: () => source.close(),
      }
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
      rmSync(spillDir, { recursive: true, force: true })
    },
  }
}

/**
 * This process's spill directory, `<dir>/.spill/<host>-<pid>` (0700), emptied: the segments
 * directory may be shared by several processes, so each spills into its own. Directories that
 * earlier processes on this host left (a crash, a kill) are removed when their pid is gone; those
 * of other hosts are left to their own processes.
 */
function openSpillDir(segmentsDir: string): string {
  const parent = join(segmentsDir, SPILL)
  const host = hostname().replace(/[^A-Za-z0-9.-]/g, '_')
  const own = join(parent, `${host}-${process.pid}`)
  mkdirSync(parent, { recursive: true, mode: 0o700 })
  for (const name of readdirSync(parent)) {
    const pid = name.startsWith(`${host}-`) ? Number(name.slice(host.length + 1)) : Number.NaN
    if (Number.isInteger(pid) && (pid === process.pid || !alive(pid))) rmSync(join(parent, name), { recursive: true, force: true })
  }
  mkdirSync(own, { mode: 0o700 })
  return own
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

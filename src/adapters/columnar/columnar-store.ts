/**
 * @module
 * The columnar tier's segment store (docs/design/columnar.md): compacts a connection table's rows
 * into immutable Parquet segment files, keeps their manifest and the compaction watermark in the
 * main database, and opens DuckDB query sources whose views read the segments plus the
 * uncompacted tail (and the rows corrected in place) from the row store.
 *
 * Rows above the watermark are staged as CSV (row-export.ts) into a staging file per table, a
 * few at a time as they arrive (`stage`), so the compactor knows the tail's size without counting
 * it and writes a segment from the file when it is due (`compact`; when: compaction-policy.ts).
 * Segment files are written by the columnar worker thread (columnar-worker.ts) at a lower
 * CPU priority, with a DuckDB instance of its own.
 *
 * Crash safety: a segment file is written under a temporary name, fsynced and renamed before the
 * one transaction that records its manifest row and moves the watermark. A crash before that
 * commit leaves a file without a manifest row (an orphan, deleted by `removeOrphans()` at start);
 * after it, the rows are in exactly one segment. The watermark only moves forward, guarded by its
 * previous value, so two compactors never record the same rows twice. A staging file is only a
 * copy of row-store rows above the watermark: a crash leaves it behind (removed once an hour old),
 * and one that is missing or shorter than written is thrown away and staged again.
 */
import { randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api'
import type { ConnectionTable } from '../../domain/workspace-config/config-store.js'
import { DUCKDB_TYPES, type KqlColumn } from '../../kql/index.js'
import { encodeInt64 } from '../sql/column-codec.js'
import { quoteIdent, type SqlDb, toNumber } from '../sql/sql-db.js'
import { COLUMNAR_WORKER_NICE, createColumnarWorker } from './columnar-worker-client.js'
import { chooseMerge } from './compaction-policy.js'
import { createDuckdbQuerySource, type DuckdbQuerySource } from './duckdb-query-source.js'
import { duckdbColumnDefs } from './duckdb-values.js'
import { createDbRowExporter, createWorkerRowExporter, type ExportResult, readCsvSql } from './row-export.js'

export interface Segment {
  readonly id: string
  readonly workspaceId: string
  readonly sqlName: string
  readonly fileName: string
  readonly rowCount: number
  readonly minRowId: number
  readonly maxRowId: number
  readonly minTimestamp: bigint | null
  readonly maxTimestamp: bigint | null
  readonly columns: readonly KqlColumn[]
  readonly createdAt: number
}

export interface CompactionResult {
  readonly segment: Segment
}

/** The rows above a table's watermark the compactor has staged for its next segment. */
export interface StagedTail {
  /** How many (at most segmentRows; rows that arrived since are not counted yet). */
  readonly rows: number
  /** The lowest `_ingested_at` among them (ms since the epoch); undefined when there are none. */
  readonly oldestIngestedAt: number | undefined
}

export interface MergeResult {
  readonly segment: Segment
  /** The segments it replaced (their files are deleted after retireDelayMs). */
  readonly replaced: readonly Segment[]
}

export interface CheckReport {
  /** Manifest rows whose file is missing. */
  readonly missing: readonly string[]
  /** Files no manifest row names (left by a crash between write and commit). */
  readonly orphans: readonly string[]
  /** Manifest rows whose file holds another number of rows. */
  readonly mismatched: readonly string[]
}

export interface ColumnarStoreOptions {
  /** Where segment files live: `<dir>/<sqlName>/<segment id>.parquet`. */
  readonly dir: string
  /** Rows per compacted segment at most (default 1,000,000). */
  readonly segmentRows?: number
  /** memory_limit of the compactor's DuckDB instance (in its worker thread; default 1GB). */
  readonly compactorMemory?: string
  /** Where that instance spills (default `<dir>/.spill/compactor`) and how much at most (default 4GB). */
  readonly compactorSpill?: { readonly dir: string; readonly limit: string }
  /**
   * How long a merged-away segment file stays on disk after the manifest stops naming it (default
   * 60 s, twice the query time cap): a query that opened its view before the merge still reads it.
   * A crash before the delete leaves an orphan that cleanup removes.
   */
  readonly retireDelayMs?: number
  readonly now?: () => number
  /**
   * The SQLite database file, when the row store is SQLite (given only then): rows are then read
   * by worker threads with a read-only connection of their own, off the event loop (without it,
   * through `db`).
   */
  readonly sqliteFile?: string
  /**
   * The PostgreSQL database, when the row store is PostgreSQL: the compactor's worker thread then
   * reads its pages over a connection of its own (without it, through `db`).
   */
  readonly postgresUrl?: string
}

export interface ColumnarQuerySource extends DuckdbQuerySource {
  close(): void
}

export interface ColumnarStore {
  /**
   * Stages the rows that arrived above the watermark since the last call (up to segmentRows in
   * all) and says how many are staged: the compactor's measure of the tail, without a count.
   */
  stage(table: ConnectionTable): Promise<StagedTail>
  /**
   * Moves the oldest uncompacted rows (at most segmentRows: those staged, topped up) into a new
   * segment; undefined when there are none.
   */
  compact(table: ConnectionTable): Promise<CompactionResult | undefined>
  /** Merges the run of adjacent small segments chooseMerge (compaction-policy.ts) picks into one; undefined when there is none. */
  merge(table: ConnectionTable): Promise<MergeResult | undefined>
  segments(sqlName?: string): Promise<Segment[]>
  watermark(sqlName: string): Promise<number>
  /** Compares segment files with the manifest. */
  check(): Promise<CheckReport>
  /** Deletes files no manifest row names (only those at least minAgeMs old); returns their paths. */
  removeOrphans(minAgeMs?: number): Promise<string[]>
  /** A DuckDB source over these tables: views of their names read segments + tail + overlay. */
  openQuerySource(tables: readonly ConnectionTable[]): Promise<ColumnarQuerySource>
  /** Stops the worker threads (if any were started) and deletes the staging files. */
  close(): Promise<void>
}

type Row = Record<string, unknown>

/**
 * Staging files (CSV pages of row-store rows on their way into DuckDB) live here, under the
 * segments directory (same disk; a dot name, so never taken for a table). Each is deleted after
 * use; one left by a crash is removed by removeOrphans once it is an hour old.
 */
const STAGING = '.staging'
const STAGING_MAX_AGE_MS = 3_600_000

const sqlString = (s: string): string => `'${s.replace(/'/g, "''")}'`
const tempName = (id: string): string => `.${id}.parquet.tmp`

function segmentOf(r: Row): Segment {
  const optionalBig = (v: unknown): bigint | null => (v === null || v === undefined ? null : BigInt(v as number | bigint | string))
  return {
    id: String(r['id']),
    workspaceId: String(r['workspace_id']),
    sqlName: String(r['sql_name']),
    fileName: String(r['file_name']),
    rowCount: toNumber(r['row_count']),
    minRowId: toNumber(r['min_rowid']),
    maxRowId: toNumber(r['max_rowid']),
    minTimestamp: optionalBig(r['min_timestamp']),
    maxTimestamp: optionalBig(r['max_timestamp']),
    columns: JSON.parse(String(r['columns'])) as KqlColumn[],
    createdAt: toNumber(r['created_at']),
  }
}

/** A table's staging file: rows (from, last] of the row store as CSV, appended as they arrive. */
interface Staged {
  readonly file: string
  /** The watermark when staging began: the segment's rows start above it. */
  readonly from: number
  /** The columns the lines were written with (a column added since restarts the staging). */
  readonly columnsKey: string
  rows: number
  first: number | undefined
  last: number
  oldest: number | undefined
  bytes: number
}

export function createColumnarStore(db: SqlDb, duck: DuckDBInstance, options: ColumnarStoreOptions): ColumnarStore {
  const segmentRows = options.segmentRows ?? 1_000_000
  const retireDelayMs = options.retireDelayMs ?? 60_000
  const now = options.now ?? Date.now
  const tableDir = (sqlName: string): string => join(options.dir, sqlName)
  // a query's tail has a reader of its own (SQLite: a second worker), so it never waits behind a segment write
  const { sqliteFile, postgresUrl } = options
  const compactor = createColumnarWorker({
    sqliteFile,
    postgresUrl,
    nice: COLUMNAR_WORKER_NICE,
    duckdb: {
      memoryLimit: options.compactorMemory ?? '1GB',
      spillDir: options.compactorSpill?.dir ?? join(options.dir, '.spill', 'compactor'),
      spillLimit: options.compactorSpill?.limit ?? '4GB',
    },
  })
  const compactorRows =
    sqliteFile !== undefined || postgresUrl !== undefined ? createWorkerRowExporter(compactor, db.engine.csvPage) : createDbRowExporter(db)
  const tailRows =
    sqliteFile !== undefined
      ? createWorkerRowExporter(createColumnarWorker({ sqliteFile, nice: COLUMNAR_WORKER_NICE }), db.engine.csvPage)
      : createDbRowExporter(db)
  const stagingFile = (): string => {
    const dir = join(options.dir, STAGING)
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    return join(dir, `${randomUUID()}.csv`)
  }
  const staged = new Map<string, Staged>()
  /** One compactor step at a time per table (stage, compact, merge). */
  const locks = new Map<string, Promise<unknown>>()
  function locked<T>(sqlName: string, step: () => Promise<T>): Promise<T> {
    const run = (locks.get(sqlName) ?? Promise.resolve()).then(step, step)
    const settled = run.then(
      () => {},
      () => {},
    )
    locks.set(sqlName, settled)
    void settled.then(() => {
      if (locks.get(sqlName) === settled) locks.delete(sqlName)
    })
    return run
  }

  async function watermark(sqlName: string): Promise<number> {
    const r = await db.get<Row>('SELECT last_rowid FROM columnar_watermarks WHERE sql_name = ?', [sqlName])
    return r ? toNumber(r['last_rowid']) : 0
  }

  /**
   * Rows of the row store (keyset pages from `after`, at most `limit`; `extra` rows first) into a
   * staging CSV file (row-export.ts), then `use(read_csv source)`; the file is deleted after.
   */
  async function withStagedRows<T>(
    table: ConnectionTable,
    after: number,
    limit: number,
    extra: { where: string; params: readonly unknown[] } | undefined,
    use: (source: string | undefined, exported: ExportResult) => Promise<T>,
  ): Promise<T> {
    const file = stagingFile()
    try {
      const exported = await tailRows.exportRows(table, file, after, limit, extra)
      return await use(exported.count > 0 ? readCsvSql(file, table.columns) : undefined, exported)
    } finally {
      rmSync(file, { force: true })
    }
  }

  /** Row-store rows into a DuckDB temp table `name` (created here, empty when there are none). */
  async function copyRows(
    connection: DuckDBConnection,
    name: string,
    table: ConnectionTable,
    after: number,
    limit: number,
    extra?: { where: string; params: readonly unknown[] },
  ): Promise<ExportResult> {
    return withStagedRows(table, after, limit, extra, async (source, exported) => {
      await connection.run(
        source === undefined
          ? `CREATE OR REPLACE TEMP TABLE ${quoteIdent(name)} (${duckdbColumnDefs(table.columns)})`
          : `CREATE OR REPLACE TEMP TABLE ${quoteIdent(name)} AS SELECT * FROM ${source}`,
      )
      return exported
    })
  }

  const dropStaged = (sqlName: string): void => {
    const s = staged.get(sqlName)
    staged.delete(sqlName)
    if (s) rmSync(s.file, { force: true })
  }

  /** The file holds exactly what was appended (a removeOrphans elsewhere may have deleted it). */
  const intact = (s: Staged): boolean => (existsSync(s.file) ? statSync(s.file).size === s.bytes : s.bytes === 0)

  /** Tops up the table's staging file to segmentRows rows with the rows that arrived since. */
  async function stageUnlocked(table: ConnectionTable): Promise<Staged> {
    const from = await watermark(table.sqlName)
    const columnsKey = JSON.stringify(table.columns)
    let s = staged.get(table.sqlName)
    // another compactor moved the watermark, a column was added, or the file is gone: start again
    if (s && (s.from !== from || s.columnsKey !== columnsKey || !intact(s))) {
      dropStaged(table.sqlName)
      s = undefined
    }
    if (!s) {
      s = { file: stagingFile(), from, columnsKey, rows: 0, first: undefined, last: from, oldest: undefined, bytes: 0 }
      staged.set(table.sqlName, s)
    }
    if (s.rows < segmentRows) {
      const exported = await compactorRows.exportRows(table, s.file, s.last, segmentRows - s.rows)
      s.rows += exported.count
      s.first ??= exported.first
      s.last = exported.last
      s.bytes += exported.bytes
      if (exported.oldest !== undefined) s.oldest = Math.min(s.oldest ?? exported.oldest, exported.oldest)
    }
    return s
  }

  function stage(table: ConnectionTable): Promise<StagedTail> {
    return locked(table.sqlName, async () => {
      const s = await stageUnlocked(table)
      return { rows: s.rows, oldestIngestedAt: s.oldest }
    })
  }

  function compact(table: ConnectionTable): Promise<CompactionResult | undefined> {
    return locked(table.sqlName, () => compactUnlocked(table))
  }

  async function compactUnlocked(table: ConnectionTable): Promise<CompactionResult | undefined> {
    const s = await stageUnlocked(table)
    if (s.rows === 0) return undefined
    // the staged rows go into this segment or are staged again by the next call
    staged.delete(table.sqlName)
    const id = randomUUID()
    const dir = tableDir(table.sqlName)
    const fileName = `${id}.parquet`
    const hasTimestamp = table.columns.some((c) => c.name === 'timestamp' && c.type === 'datetime')
    const columns = table.columns.map((c) => ({ name: c.name, type: c.type }))
    let stats: { min: bigint | null; max: bigint | null }
    try {
      if (!intact(s)) return undefined
      // the staged CSV goes straight into the sorted Parquet file (no DuckDB table between)
      stats = await writeSegmentFile(dir, id, readCsvSql(s.file, table.columns), hasTimestamp, 'columnar-mid-segment')
    } finally {
      rmSync(s.file, { force: true })
    }
    const segment: Segment = {
      id,
      workspaceId: table.workspaceId,
      sqlName: table.sqlName,
      fileName,
      rowCount: s.rows,
      minRowId: s.first!,
      maxRowId: s.last,
      minTimestamp: stats.min,
      maxTimestamp: stats.max,
      columns,
      createdAt: now(),
    }
    const from = s.from
    const recorded = await db.transaction(async (tx) => {
      const moved =
        from === 0
          ? (
              await tx.run(
                'INSERT INTO columnar_watermarks (sql_name, workspace_id, last_rowid, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
                [table.sqlName, table.workspaceId, segment.maxRowId, segment.createdAt],
              )
            ).changes
          : (
              await tx.run('UPDATE columnar_watermarks SET last_rowid = ?, updated_at = ? WHERE sql_name = ? AND last_rowid = ?', [
                segment.maxRowId,
                segment.createdAt,
                table.sqlName,
                from,
              ])
            ).changes
      // another compactor moved the watermark first: its segment holds these rows
      if (moved !== 1) return false
      await tx.run(INSERT_SEGMENT, manifestParams(segment))
      failpoint('columnar-mid-manifest')
      return true
    })
    if (!recorded) {
      rmSync(join(dir, fileName), { force: true })
      return undefined
    }
    return { segment }
  }

  /**
   * Writes `source` sorted to a new segment file in the compactor's worker thread: temp name,
   * fsync, rename (failpoint between). Returns the file's `timestamp` range.
   */
  function writeSegmentFile(
    dir: string,
    id: string,
    source: string,
    hasTimestamp: boolean,
    failpointName: string,
  ): Promise<{ min: bigint | null; max: bigint | null }> {
    const temp = join(dir, tempName(id))
    const order = hasTimestamp ? '"timestamp", "_rowid"' : '"_rowid"'
    return compactor.writeSegment({
      dir,
      temp,
      final: join(dir, `${id}.parquet`),
      copy: `COPY (SELECT * FROM ${source} ORDER BY ${order}) TO ${sqlString(temp)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`,
      // from the written file: one column of it, read once (the source may be a CSV to parse again)
      ...(hasTimestamp ? { statsSql: `SELECT min("timestamp"), max("timestamp") FROM read_parquet(${sqlString(temp)})` } : {}),
      failpoint: failpointName,
    })
  }

  const manifestParams = (segment: Segment): unknown[] => [
    segment.id,
    segment.workspaceId,
    segment.sqlName,
    segment.fileName,
    segment.rowCount,
    segment.minRowId,
    segment.maxRowId,
    encodeInt64(db.engine, segment.minTimestamp),
    encodeInt64(db.engine, segment.maxTimestamp),
    JSON.stringify(segment.columns),
    segment.createdAt,
  ]
  const INSERT_SEGMENT = `INSERT INTO columnar_segments (id, workspace_id, sql_name, file_name, row_count, min_rowid, max_rowid, min_timestamp, max_timestamp, columns, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

  function merge(table: ConnectionTable): Promise<MergeResult | undefined> {
    return locked(table.sqlName, () => mergeUnlocked(table))
  }

  async function mergeUnlocked(table: ConnectionTable): Promise<MergeResult | undefined> {
    const list = await segments(table.sqlName)
    const picked = chooseMerge(list, segmentRows)
    if (!picked) return undefined
    const run = list.slice(...picked)
    const id = randomUUID()
    const dir = tableDir(table.sqlName)
    // the union of the merged segments' columns: a column one of them lacks reads as NULL there,
    // as the view reads it from that segment today
    const columns: KqlColumn[] = []
    for (const c of run.flatMap((s) => s.columns)) if (!columns.some((k) => k.name === c.name)) columns.push(c)
    const hasTimestamp = columns.some((c) => c.name === 'timestamp' && c.type === 'datetime')
    const paths = run.map((s) => sqlString(join(dir, s.fileName))).join(', ')
    const select = [
      '"_rowid"',
      '"_ingested_at"',
      // a string column one of them lacks is written as "" (how the view reads it): strings in
      // a segment are never NULL, so the view reads them without COALESCE
      ...columns.map((c) => {
        const v = `CAST(${quoteIdent(c.name)} AS ${DUCKDB_TYPES[c.type]})`
        return `${c.type === 'string' ? `COALESCE(${v}, '')` : v} AS ${quoteIdent(c.name)}`
      }),
    ]
    const source = `(SELECT ${select.join(', ')} FROM read_parquet([${paths}], union_by_name = true))`
    const stats = await writeSegmentFile(dir, id, source, hasTimestamp, 'columnar-mid-merge-file')
    const segment: Segment = {
      id,
      workspaceId: table.workspaceId,
      sqlName: table.sqlName,
      fileName: `${id}.parquet`,
      rowCount: run.reduce((n, s) => n + s.rowCount, 0),
      minRowId: Math.min(...run.map((s) => s.minRowId)),
      maxRowId: Math.max(...run.map((s) => s.maxRowId)),
      minTimestamp: stats.min,
      maxTimestamp: stats.max,
      columns,
      createdAt: now(),
    }
    // one transaction swaps the manifest: the old rows go, the merged one comes; if another
    // merger removed any of them first, nothing changes and the new file is deleted
    const swapped = await db
      .transaction(async (tx) => {
        const ids = run.map((s) => s.id)
        const { changes } = await tx.run(`DELETE FROM columnar_segments WHERE id IN (${ids.map(() => '?').join(', ')})`, ids)
        if (changes !== ids.length) throw new MergeLost()
        await tx.run(INSERT_SEGMENT, manifestParams(segment))
        failpoint('columnar-mid-merge')
        return true
      })
      .catch((error: unknown) => {
        if (error instanceof MergeLost) return false
        throw error
      })
    if (!swapped) {
      rmSync(join(dir, segment.fileName), { force: true })
      return undefined
    }
    failpoint('columnar-merge-committed')
    const retire = (): void => {
      for (const s of run) rmSync(join(dir, s.fileName), { force: true })
    }
    if (retireDelayMs === 0) retire()
    else setTimeout(retire, retireDelayMs).unref()
    return { segment, replaced: run }
  }

  async function segments(sqlName?: string): Promise<Segment[]> {
    const rows =
      sqlName === undefined
        ? await db.all<Row>('SELECT * FROM columnar_segments ORDER BY sql_name, min_rowid', [], { exactIntegers: true })
        : await db.all<Row>('SELECT * FROM columnar_segments WHERE sql_name = ? ORDER BY min_rowid', [sqlName], { exactIntegers: true })
    return rows.map(segmentOf)
  }

  /** Every file under the segments directory, as `<sqlName>/<file>`. */
  function files(): string[] {
    if (!existsSync(options.dir)) return []
    return readdirSync(options.dir)
      .filter((d) => !d.startsWith('.') && statSync(join(options.dir, d)).isDirectory())
      .flatMap((d) => readdirSync(join(options.dir, d)).map((f) => `${d}/${f}`))
  }

  async function check(): Promise<CheckReport> {
    const all = await segments()
    const known = new Set(all.map((s) => `${s.sqlName}/${s.fileName}`))
    const missing = all.filter((s) => !existsSync(join(tableDir(s.sqlName), s.fileName))).map((s) => `${s.sqlName}/${s.fileName}`)
    const orphans = files().filter((f) => !known.has(f))
    const mismatched: string[] = []
    const connection = await duck.connect()
    try {
      for (const s of all) {
        const path = join(tableDir(s.sqlName), s.fileName)
        if (!existsSync(path)) continue
        const r = (await connection.runAndReadAll(`SELECT count(*) FROM read_parquet(${sqlString(path)})`)).getRows()[0]
        if (Number(r?.[0]) !== s.rowCount) mismatched.push(`${s.sqlName}/${s.fileName}`)
      }
    } finally {
      connection.closeSync()
    }
    return { missing, orphans, mismatched }
  }

  async function removeOrphans(minAgeMs = 0): Promise<string[]> {
    const { orphans } = await check()
    // a file younger than minAgeMs may be a running compactor's segment, not yet recorded
    const old = orphans.filter((f) => minAgeMs === 0 || Date.now() - statSync(join(options.dir, f)).mtimeMs >= minAgeMs)
    for (const f of old) rmSync(join(options.dir, f), { force: true })
    // staging files a crash left (a running export's file is seconds old; this compactor's own
    // files, appended to as rows arrive, are kept whatever their age)
    const staging = join(options.dir, STAGING)
    const own = new Set([...staged.values()].map((s) => s.file))
    const stale = existsSync(staging)
      ? readdirSync(staging)
          .map((f) => join(staging, f))
          .filter((f) => !own.has(f) && Date.now() - statSync(f).mtimeMs >= STAGING_MAX_AGE_MS)
      : []
    for (const f of stale) rmSync(f, { force: true })
    return [...old.map((f) => join(options.dir, f)), ...stale]
  }

  async function openQuerySource(tables: readonly ConnectionTable[]): Promise<ColumnarQuerySource> {
    const connection = await duck.connect()
    try {
      for (const table of tables) await defineView(connection, table)
    } catch (error) {
      connection.closeSync()
      throw error
    }
    const source = createDuckdbQuerySource(connection)
    let inFlight = 0
    let closed = false
    return {
      async query(sql, params, columns) {
        if (closed) throw new Error('the query was stopped')
        inFlight++
        try {
          return await source.query(sql, params, columns)
        } finally {
          inFlight--
        }
      },
      interrupt: () => source.interrupt(),
      close() {
        closed = true
        // an interrupt sent before a statement starts is lost: repeat it until none runs, then disconnect
        const finish = (): void => {
          if (inFlight === 0) {
            connection.closeSync()
            return
          }
          source.interrupt()
          setTimeout(finish, 100).unref()
        }
        finish()
      },
    }
  }

  /**
   * The view a query reads as the table: segment rows not corrected since, the corrected rows and
   * the tail from the row store. Columns a segment lacks (added later) read as NULL, or "" for strings.
   */
  async function defineView(connection: DuckDBConnection, table: ConnectionTable): Promise<void> {
    // The rows the segments hold end at the highest max_rowid the manifest lists (a segment and the
    // watermark move in one transaction; a merge keeps the range), so the tail starts there: taken
    // from the same statement as the list, it cannot disagree with it. (Reading the watermark in a
    // statement of its own let a compaction commit in between on PostgreSQL, where each statement
    // of a READ COMMITTED transaction sees its own snapshot: the new segment's rows were then read
    // twice, from the segment and from the tail.)
    const { list, overlay } = await db.transaction(async (tx) => {
      const l = await tx.all<Row>('SELECT * FROM columnar_segments WHERE sql_name = ? ORDER BY min_rowid', [table.sqlName], {
        exactIntegers: true,
      })
      const o = await tx.all<Row>('SELECT rowid FROM columnar_overlay WHERE sql_name = ?', [table.sqlName])
      return { list: l.map(segmentOf), overlay: o.map((r) => toNumber(r['rowid'])) }
    })
    const mark = list.reduce((m, s) => Math.max(m, s.maxRowId), 0)
    const columns = table.columns.map((c) => ({ name: c.name, type: c.type }))
    const tail = `${table.sqlName}__tail`
    const corrected = overlay.filter((id) => id <= mark)
    const { count: tailRows } = await copyRows(
      connection,
      tail,
      table,
      mark,
      Number.POSITIVE_INFINITY,
      corrected.length > 0
        ? { where: '_rowid <= ? AND _rowid IN (SELECT rowid FROM columnar_overlay WHERE sql_name = ?)', params: [mark, table.sqlName] }
        : undefined,
    )
    // A column every segment holds with its current type is read as it is: a CAST or COALESCE in
    // the view keeps DuckDB from pushing filters into the Parquet scan (measured: 1.4x on a
    // one-sensor filter). A column some segment lacks (added after it was written) reads as NULL
    // there, or "" for a string; strings are never NULL in segments or the tail otherwise.
    const plain = (c: KqlColumn): boolean => list.every((s) => s.columns.some((k) => k.name === c.name && k.type === c.type))
    const inSegments = new Set(list.flatMap((s) => s.columns.map((c) => c.name)))
    const select = (source: string, where: string, fromSegments: boolean): string =>
      `SELECT "_rowid", "_ingested_at", ${columns
        .map((c) => {
          if (!fromSegments || plain(c)) return quoteIdent(c.name)
          const v = `CAST(${inSegments.has(c.name) ? quoteIdent(c.name) : 'NULL'} AS ${DUCKDB_TYPES[c.type]})`
          return `${c.type === 'string' ? `COALESCE(${v}, '')` : v} AS ${quoteIdent(c.name)}`
        })
        .join(', ')} FROM ${source}${where}`
    // an empty tail is left out of the view: a UNION ALL above the Parquet scan costs filters
    // evaluated there (has-count: 3x) even when one side has no rows
    const parts = tailRows > 0 || list.length === 0 ? [select(quoteIdent(tail), '', false)] : []
    if (list.length > 0) {
      const paths = list.map((s) => sqlString(join(tableDir(s.sqlName), s.fileName))).join(', ')
      const excluded = corrected.length > 0 ? ` WHERE "_rowid" NOT IN (SELECT "_rowid" FROM ${quoteIdent(tail)})` : ''
      parts.unshift(select(`read_parquet([${paths}], union_by_name = true)`, excluded, true))
    }
    await connection.run(`CREATE OR REPLACE TEMP VIEW ${quoteIdent(table.sqlName)} AS ${parts.join(' UNION ALL ')}`)
  }

  async function close(): Promise<void> {
    // a step still running (its worker is stopped under it) fails; its files are cleaned as a crash's are
    for (const sqlName of [...staged.keys()]) dropStaged(sqlName)
    await Promise.all([compactorRows.close(), compactor.close(), tailRows.close()])
  }

  return { stage, compact, merge, segments, watermark, check, removeOrphans, openQuerySource, close }
}

/** Another merger swapped some of the same segments first. */
class MergeLost extends Error {}

/**
 * Crash-suite failpoints: `PROVENANT_FAILPOINT=<name>` kills the process (SIGKILL, no clean-up)
 * when compaction reaches that point: `columnar-mid-segment` (file written, not renamed or
 * recorded), `columnar-mid-manifest` (inside the manifest transaction, before commit);
 * merging: `columnar-mid-merge-file` (merged file written, not renamed), `columnar-mid-merge` (inside
 * the manifest swap, before commit), `columnar-merge-committed` (swap committed, old files kept).
 */
function failpoint(name: string): void {
  if (process.env['PROVENANT_FAILPOINT'] === name) process.kill(process.pid, 'SIGKILL')
}

/**
 * @module
 * ExportStore over portable SQL. Window reads are keyset-paginated on the connection table's
 * ("timestamp", _rowid) index: each chunk is one bounded query, so an export never holds more than
 * a chunk in memory and never keeps a read transaction (or SQLite's writer lock) open between
 * chunks. Ticks are bound as bigint on both backends.
 */

import type { ExportFormat } from '../../domain/exports/export-request.js'
import type { ExportFileRecord, ExportStore, ExportWindow, WindowKey, WindowRow } from '../../domain/exports/export-store.js'
import { decodeValue } from './column-codec.js'
import { quoteIdent, type SqlDb, toNumber, toOptionalNumber } from './sql-db.js'

type Row = Record<string, unknown>

const WINDOW = '"timestamp" >= ? AND "timestamp" < ? AND _rowid <= ?'
const windowParams = (w: ExportWindow): unknown[] => [w.from, w.to, w.maxRowId]

const ticksOf = (raw: unknown): bigint => (typeof raw === 'bigint' ? raw : BigInt(raw as number | string))

function fileOf(r: Row): ExportFileRecord {
  return {
    id: String(r['id']),
    workspaceId: String(r['workspace_id']),
    accountId: String(r['account_id']),
    storage: String(r['storage']) as ExportFileRecord['storage'],
    objectKey: String(r['object_key']),
    format: String(r['format']) as ExportFormat,
    fileName: String(r['file_name']),
    sizeBytes: toNumber(r['size_bytes']),
    sha256: String(r['sha256']),
    createdAt: toNumber(r['created_at']),
    expiresAt: toNumber(r['expires_at']),
    completedAt: toOptionalNumber(r['completed_at']),
  }
}

export function createSqlExportStore(db: SqlDb): ExportStore {
  return {
    async rowIdBound(workspaceId) {
      const row = await db.get<Row>("SELECT value FROM workspace_counters WHERE workspace_id = ? AND name = 'rows'", [workspaceId])
      return row ? toNumber(row['value']) : 0
    },

    async countWindow(table, window, limit) {
      const row = await db.get<Row>(`SELECT count(*) AS n FROM (SELECT 1 FROM ${quoteIdent(table.sqlName)} WHERE ${WINDOW} LIMIT ?) w`, [
        ...windowParams(window),
        limit,
      ])
      return toNumber(row!['n'])
    },

    async keyAt(tables, window, offset) {
      if (tables.length === 0) return undefined
      let sql: string
      let params: unknown[]
      if (tables.length === 1) {
        sql = `SELECT "timestamp" AS ts, _rowid AS rid FROM ${quoteIdent(tables[0]!.sqlName)} WHERE ${WINDOW} ORDER BY "timestamp", _rowid LIMIT 1 OFFSET ?`
        params = [...windowParams(window), offset]
      } else {
        // The row at `offset` of the merge is among the first offset + 1 rows of each table, so
        // each member is cut there before the merge sorts.
        sql =
          tables
            .map(
              (t, i) =>
                `SELECT ts, rid FROM (SELECT "timestamp" AS ts, _rowid AS rid FROM ${quoteIdent(t.sqlName)} WHERE ${WINDOW} ORDER BY "timestamp", _rowid LIMIT ?) m${i}`,
            )
            .join(' UNION ALL ') + ' ORDER BY ts, rid LIMIT 1 OFFSET ?'
        params = [...tables.flatMap(() => [...windowParams(window), offset + 1]), offset]
      }
      const rows = await db.all<Row>(sql, params, { exactIntegers: true })
      const r = rows[0]
      return r ? { timestamp: ticksOf(r['ts']), rowId: toNumber(r['rid']) } : undefined
    },

    async readWindow(table, window, start: WindowKey, inclusive, limit): Promise<WindowRow[]> {
      const columns = table.columns.map((c) => quoteIdent(c.name)).join(', ')
      const rows = await db.all<Row>(
        `SELECT _rowid, ${columns} FROM ${quoteIdent(table.sqlName)}
         WHERE ${WINDOW} AND "timestamp" >= ? AND ("timestamp" > ? OR _rowid ${inclusive ? '>=' : '>'} ?)
         ORDER BY "timestamp", _rowid LIMIT ?`,
        [...windowParams(window), start.timestamp, start.timestamp, start.rowId, limit],
        { exactIntegers: true },
      )
      const timestampAt = table.columns.findIndex((c) => c.name === 'timestamp')
      return rows.map((r) => {
        const values = table.columns.map((c) => decodeValue(c.type, r[c.name]))
        return { key: { timestamp: values[timestampAt] as bigint, rowId: toNumber(r['_rowid']) }, values }
      })
    },

    async insertFile(f) {
      await db.run(
        `INSERT INTO export_files (id, workspace_id, account_id, storage, object_key, format, file_name, size_bytes, sha256, created_at, expires_at, completed_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          f.id,
          f.workspaceId,
          f.accountId,
          f.storage,
          f.objectKey,
          f.format,
          f.fileName,
          f.sizeBytes,
          f.sha256,
          f.createdAt,
          f.expiresAt,
          f.completedAt ?? null,
        ],
      )
    },
    async fileById(id) {
      const row = await db.get<Row>('SELECT * FROM export_files WHERE id = ?', [id])
      return row && fileOf(row)
    },
    async expiredFiles(before, limit) {
      const rows = await db.all<Row>('SELECT * FROM export_files WHERE expires_at <= ? ORDER BY expires_at LIMIT ?', [before, limit])
      return rows.map(fileOf)
    },
    async deleteFile(id) {
      const { changes } = await db.run('DELETE FROM export_files WHERE id = ?', [id])
      return changes > 0
    },
  }
}

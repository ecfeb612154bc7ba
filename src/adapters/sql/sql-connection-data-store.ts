/**
 * @module
 * ConnectionDataStore over SQL. A batch of rows is inserted by the engine's cheapest path for many
 * rows (`SqlDb.insertMany`: SQLite a cached INSERT of a few dozen rows, PostgreSQL COPY), inside the
 * batch's transaction, after its row ids are reserved from the workspace's counter.
 */
import type { ConnectionDataStore, StoredRow } from '../../domain/ingest/connection-data-store.js'
import type { TypedRow } from '../../domain/ingest/row-validation.js'
import type { ConnectionTable } from '../../domain/workspace-config/config-store.js'
import type { KqlValue } from '../../kql/index.js'
import { decodeValue, encodeValue } from './column-codec.js'
import { reserveCounter } from './sql-change-store.js'
import { quoteIdent, type SqlDb, toNumber } from './sql-db.js'

type Row = Record<string, unknown>

export function createSqlConnectionDataStore(db: SqlDb): ConnectionDataStore {
  const selectList = (table: ConnectionTable) => ['_rowid', '_ingested_at', ...table.columns.map((c) => quoteIdent(c.name))].join(', ')

  function storedRow(table: ConnectionTable, r: Row): StoredRow {
    return {
      rowId: toNumber(r['_rowid']),
      ingestedAt: toNumber(r['_ingested_at']),
      values: table.columns.map((c) => decodeValue(c.type, r[c.name])),
    }
  }

  return {
    async insertRows(table, rows: readonly TypedRow[], ingestedAt) {
      if (rows.length === 0) throw new Error('insertRows needs at least one row')
      if (!db.inTransaction) return db.transaction((tx) => createSqlConnectionDataStore(tx).insertRows(table, rows, ingestedAt))
      const lastRowId = await reserveCounter(db, table.workspaceId, 'rows', rows.length)
      const firstRowId = lastRowId - rows.length + 1
      const types = table.columns.map((c) => c.type)
      const width = types.length + 2
      // one flat array of the rows' parameters: the engine's insertMany takes it as it is
      const values = new Array<unknown>(rows.length * width)
      let next = 0
      for (let r = 0; r < rows.length; r++) {
        const row = rows[r]!
        values[next++] = firstRowId + r
        values[next++] = ingestedAt
        for (let c = 0; c < types.length; c++) values[next++] = encodeValue(db.engine, types[c]!, row[c] ?? null)
      }
      await db.insertMany(table.sqlName, ['_rowid', '_ingested_at', ...table.columns.map((c) => c.name)], values)
      return { firstRowId, lastRowId }
    },
    async latestRowId(workspaceId) {
      const r = await db.get<Row>("SELECT value FROM workspace_counters WHERE workspace_id = ? AND name = 'rows'", [workspaceId])
      return r ? toNumber(r['value']) : 0
    },
    async rowsAfter(table, afterRowId, limit, upToRowId) {
      const rows =
        upToRowId === undefined
          ? await db.all<Row>(
              `SELECT ${selectList(table)} FROM ${quoteIdent(table.sqlName)} WHERE _rowid > ? ORDER BY _rowid LIMIT ?`,
              [afterRowId, limit],
              { exactIntegers: true },
            )
          : await db.all<Row>(
              `SELECT ${selectList(table)} FROM ${quoteIdent(table.sqlName)} WHERE _rowid > ? AND _rowid <= ? ORDER BY _rowid LIMIT ?`,
              [afterRowId, upToRowId, limit],
              { exactIntegers: true },
            )
      return rows.map((r) => storedRow(table, r))
    },
    async rowCount(table) {
      const r = await db.get<Row>(`SELECT count(*) AS n FROM ${quoteIdent(table.sqlName)}`, [])
      return r ? toNumber(r['n']) : 0
    },
    async row(table, rowId, options) {
      const lock = options?.forUpdate && db.engine.rowLocks ? ' FOR UPDATE' : ''
      const rows = await db.all<Row>(`SELECT ${selectList(table)} FROM ${quoteIdent(table.sqlName)} WHERE _rowid = ?${lock}`, [rowId], {
        exactIntegers: true,
      })
      return rows[0] && storedRow(table, rows[0])
    },
    async updateRow(table, rowId, values: ReadonlyMap<string, KqlValue>) {
      const assignments: string[] = []
      const params: unknown[] = []
      for (const column of table.columns) {
        if (!values.has(column.name)) continue
        assignments.push(`${quoteIdent(column.name)} = ?`)
        params.push(encodeValue(db.engine, column.type, values.get(column.name) ?? null))
      }
      if (assignments.length === 0) return true
      const { changes } = await db.run(`UPDATE ${quoteIdent(table.sqlName)} SET ${assignments.join(', ')} WHERE _rowid = ?`, [
        ...params,
        rowId,
      ])
      // the columnar tier reads a row changed in place from here, not from its segment (docs/design/columnar.md)
      if (changes === 1)
        await db.run('INSERT INTO columnar_overlay (sql_name, rowid) VALUES (?, ?) ON CONFLICT DO NOTHING', [table.sqlName, rowId])
      return changes === 1
    },
  }
}

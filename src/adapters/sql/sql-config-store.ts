/**
 * @module
 * ConfigStore over portable SQL, plus the DDL of connection tables (the only dialect-specific
 * part: column types and the row id column).
 */
import type { ConfigChange } from '../../domain/workspace-config/config-diff.js'
import type { ColumnConfig } from '../../domain/workspace-config/config-document.js'
import type { ConfigCommit, ConfigStore, ConnectionTable } from '../../domain/workspace-config/config-store.js'
import { reserveCounter } from './sql-change-store.js'
import { quoteIdent, type SqlDb, toNumber, toOptionalText } from './sql-db.js'

type Row = Record<string, unknown>

const COMMIT_COLUMNS = 'workspace_id, seq, id, parent_id, author_id, author_name, message, created_at, document, approvals, changes'

const commitOf = (r: Row): ConfigCommit => ({
  workspaceId: String(r['workspace_id']),
  seq: toNumber(r['seq']),
  id: String(r['id']),
  parentId: toOptionalText(r['parent_id']),
  authorId: String(r['author_id']),
  authorName: String(r['author_name']),
  message: String(r['message']),
  createdAt: toNumber(r['created_at']),
  document: JSON.parse(String(r['document'])),
  approvals: JSON.parse(String(r['approvals'])),
  changes: JSON.parse(String(r['changes'])) as ConfigChange[],
})

function columnDefinition(db: SqlDb, column: ColumnConfig): string {
  return `${quoteIdent(column.name)} ${db.engine.columnTypes[column.type]}`
}

export function createSqlConfigStore(db: SqlDb): ConfigStore {
  return {
    async head(workspaceId) {
      const r = await db.get<Row>(`SELECT ${COMMIT_COLUMNS} FROM config_commits WHERE workspace_id = ? ORDER BY seq DESC LIMIT 1`, [
        workspaceId,
      ])
      return r && commitOf(r)
    },
    async listCommits(workspaceId, limit) {
      return (
        await db.all<Row>(`SELECT ${COMMIT_COLUMNS} FROM config_commits WHERE workspace_id = ? ORDER BY seq DESC LIMIT ?`, [
          workspaceId,
          limit,
        ])
      ).map(commitOf)
    },
    async commitById(workspaceId, id) {
      const r = await db.get<Row>(`SELECT ${COMMIT_COLUMNS} FROM config_commits WHERE workspace_id = ? AND id = ?`, [workspaceId, id])
      return r && commitOf(r)
    },
    async lockHistory(workspaceId) {
      await reserveCounter(db, workspaceId, 'config-commits')
    },
    async insertCommit(c) {
      await db.run(`INSERT INTO config_commits (${COMMIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
        c.workspaceId,
        c.seq,
        c.id,
        c.parentId ?? null,
        c.authorId,
        c.authorName,
        c.message,
        c.createdAt,
        JSON.stringify(c.document),
        JSON.stringify(c.approvals),
        JSON.stringify(c.changes),
      ])
    },

    async connectionTables(workspaceId) {
      const rows = await db.all<Row>(
        'SELECT workspace_id, lookup, sql_name, columns FROM connection_tables WHERE workspace_id = ? ORDER BY lookup',
        [workspaceId],
      )
      return rows.map(
        (r): ConnectionTable => ({
          workspaceId,
          lookup: String(r['lookup']),
          sqlName: String(r['sql_name']),
          columns: JSON.parse(String(r['columns'])),
        }),
      )
    },
    async createConnectionTable(table) {
      const table_ = quoteIdent(table.sqlName)
      // Row ids come from the workspace's row counter (ConnectionDataStore.insertRows), never reused.
      const rowId = `_rowid ${db.engine.int64Type} PRIMARY KEY`
      const ingested = `_ingested_at ${db.engine.int64Type} NOT NULL`
      const columns = table.columns.map((c) => columnDefinition(db, c))
      await db.exec(`CREATE TABLE ${table_} (${[rowId, ingested, ...columns].join(', ')})`)
      await db.exec(`CREATE INDEX ${quoteIdent(`${table.sqlName}_ts`)} ON ${table_} ("timestamp", _rowid)`)
      await db.run('INSERT INTO connection_tables (workspace_id, lookup, sql_name, columns) VALUES (?, ?, ?, ?)', [
        table.workspaceId,
        table.lookup,
        table.sqlName,
        JSON.stringify(table.columns),
      ])
    },
    async addConnectionColumns(table, added) {
      for (const column of added) await db.exec(`ALTER TABLE ${quoteIdent(table.sqlName)} ADD COLUMN ${columnDefinition(db, column)}`)
      await db.run('UPDATE connection_tables SET columns = ? WHERE workspace_id = ? AND lookup = ?', [
        JSON.stringify(table.columns),
        table.workspaceId,
        table.lookup,
      ])
    },
    async dropConnectionTable(table) {
      await db.exec(`DROP TABLE ${quoteIdent(table.sqlName)}`)
      await db.run('DELETE FROM connection_tables WHERE workspace_id = ? AND lookup = ?', [table.workspaceId, table.lookup])
    },
    async countRows(table) {
      const r = await db.get<Row>(`SELECT COUNT(*) AS n FROM ${quoteIdent(table.sqlName)}`)
      return toNumber(r?.['n'] ?? 0)
    },
  }
}

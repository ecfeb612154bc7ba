/**
 * @module
 * ConnectorStatusStore over portable SQL (both backends). Upserts use INSERT … ON CONFLICT, which
 * SQLite and PostgreSQL both speak.
 */
import type { ConnectorState, ConnectorStatus, ConnectorStatusStore, PullKind } from '../../domain/connectors/connector-status.js'
import { type SqlDb, toNumber, toOptionalNumber, toOptionalText } from './sql-db.js'

type Row = Record<string, unknown>

const statusOf = (r: Row): ConnectorStatus => ({
  workspaceId: String(r['workspace_id']),
  lookup: String(r['lookup']),
  kind: String(r['kind']) as PullKind,
  state: String(r['state']) as ConnectorState,
  lastRunAt: toOptionalNumber(r['last_run_at']),
  lastSuccessAt: toOptionalNumber(r['last_success_at']),
  lastError: toOptionalText(r['last_error']),
  lastErrorAt: toOptionalNumber(r['last_error_at']),
  rowsIngested: toNumber(r['rows_ingested']),
  rowsRejected: toNumber(r['rows_rejected']),
  cursor: toOptionalText(r['cursor']),
  updatedAt: toNumber(r['updated_at']),
})

export function createSqlConnectorStatusStore(db: SqlDb): ConnectorStatusStore {
  async function ensure(workspaceId: string, lookup: string, kind: PullKind, at: number): Promise<void> {
    await db.run(
      `INSERT INTO connector_status (workspace_id, lookup, kind, state, updated_at) VALUES (?, ?, ?, 'starting', ?)
       ON CONFLICT (workspace_id, lookup) DO UPDATE SET kind = excluded.kind`,
      [workspaceId, lookup, kind, at],
    )
  }
  return {
    async update(workspaceId, lookup, kind, patch, at) {
      await ensure(workspaceId, lookup, kind, at)
      const sets: string[] = ['updated_at = ?']
      const params: unknown[] = [at]
      const set = (column: string, value: unknown) => {
        sets.push(`${column} = ?`)
        params.push(value)
      }
      if (patch.state !== undefined) set('state', patch.state)
      if (patch.lastRunAt !== undefined) set('last_run_at', patch.lastRunAt)
      if (patch.lastSuccessAt !== undefined) set('last_success_at', patch.lastSuccessAt)
      if (patch.clearError) {
        set('last_error', null)
        set('last_error_at', null)
      } else {
        if (patch.lastError !== undefined) set('last_error', patch.lastError)
        if (patch.lastErrorAt !== undefined) set('last_error_at', patch.lastErrorAt)
      }
      await db.run(`UPDATE connector_status SET ${sets.join(', ')} WHERE workspace_id = ? AND lookup = ?`, [...params, workspaceId, lookup])
    },
    async advance(workspaceId, lookup, kind, delta, at) {
      await ensure(workspaceId, lookup, kind, at)
      await db.run(
        `UPDATE connector_status SET rows_ingested = rows_ingested + ?, rows_rejected = rows_rejected + ?, cursor = ?, updated_at = ?
          WHERE workspace_id = ? AND lookup = ?`,
        [delta.rowsIngested, delta.rowsRejected, delta.cursor ?? null, at, workspaceId, lookup],
      )
    },
    async get(workspaceId, lookup) {
      const r = await db.get<Row>('SELECT * FROM connector_status WHERE workspace_id = ? AND lookup = ?', [workspaceId, lookup])
      return r && statusOf(r)
    },
    async list(workspaceId) {
      return (await db.all<Row>('SELECT * FROM connector_status WHERE workspace_id = ? ORDER BY lookup', [workspaceId])).map(statusOf)
    },
  }
}

/**
 * @module
 * The KQL schema of a workspace: one table per data connection, by its KQL table name, with the
 * declared columns, plus the hidden `_rowid` and `_ingested_at` columns (named explicitly only).
 */
import type { KqlSchema, KqlTable } from '../../kql/index.js'
import type { ConnectionTable, WorkspaceConfig } from '../workspace-config/index.js'

export interface WorkspaceSchema {
  readonly schema: KqlSchema
  /** Changes whenever a table or column changes: the compiled-plan cache key. */
  readonly version: string
  /** KQL table name → connection lookup. */
  readonly connectionOfTable: ReadonlyMap<string, string>
}

export function workspaceSchema(
  config: WorkspaceConfig,
  tables: readonly ConnectionTable[],
  commitId: string | undefined,
): WorkspaceSchema {
  const byLookup = new Map(tables.map((t) => [t.lookup, t]))
  const kqlTables: KqlTable[] = []
  const connectionOfTable = new Map<string, string>()
  for (const connection of config.connections) {
    const table = byLookup.get(connection.lookup)
    if (!table) continue
    kqlTables.push({
      name: connection.table,
      columns: table.columns.map((c) => ({ name: c.name, type: c.type })),
      hiddenColumns: [
        { name: '_rowid', type: 'long' },
        { name: '_ingested_at', type: 'datetime' },
      ],
      sqlName: table.sqlName,
      // ingestion time is stored in milliseconds since the epoch; KQL reads datetime ticks
      sqlScale: { _ingested_at: 10_000 },
    })
    connectionOfTable.set(connection.table, connection.lookup)
  }
  return { schema: { tables: kqlTables }, version: `${commitId ?? 'none'}:${kqlTables.length}`, connectionOfTable }
}

/**
 * The part of a schema a token's scopes allow (issue 14 item 8): other connections' tables are
 * left out entirely, so to the query they do not exist.
 */
export function scopedSchema(full: WorkspaceSchema, allowedConnections: ReadonlySet<string>): WorkspaceSchema {
  const tables = full.schema.tables.filter((t) => allowedConnections.has(full.connectionOfTable.get(t.name) ?? ''))
  const connectionOfTable = new Map([...full.connectionOfTable].filter(([, connection]) => allowedConnections.has(connection)))
  const key = [...allowedConnections].sort().join(',')
  return { schema: { tables }, version: `${full.version}:scoped:${key}`, connectionOfTable }
}

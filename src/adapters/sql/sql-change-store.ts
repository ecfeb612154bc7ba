/**
 * @module
 * ChangeStore over portable SQL. The per-workspace counter row is updated first in the
 * transaction, so on PostgreSQL concurrent writers queue on its row lock and sequence order is
 * commit order (the change stream relies on that to resume without loss).
 */
import type { ChangeKind, ChangeStore, WorkspaceChange } from '../../domain/changes/workspace-change.js'
import { type SqlDb, toNumber, toOptionalText } from './sql-db.js'

type Row = Record<string, unknown>

const changeOf = (r: Row): WorkspaceChange => ({
  seq: toNumber(r['seq']),
  workspaceId: String(r['workspace_id']),
  kind: r['kind'] as ChangeKind,
  entityType: String(r['entity_type']),
  entityId: String(r['entity_id']),
  action: String(r['action']),
  actorId: String(r['actor_id']),
  actorName: String(r['actor_name']),
  at: toNumber(r['at']),
  commitId: toOptionalText(r['commit_id']),
  summary: String(r['summary']),
})

/**
 * Reserves `count` consecutive values of a per-workspace counter inside the caller's transaction
 * and returns the last one. The row stays locked until commit (PostgreSQL), so values are handed
 * out in commit order.
 */
export async function reserveCounter(db: SqlDb, workspaceId: string, name: string, count = 1): Promise<number> {
  const row = await db.get<Row>(
    `INSERT INTO workspace_counters (workspace_id, name, value) VALUES (?, ?, ?)
     ON CONFLICT (workspace_id, name) DO UPDATE SET value = workspace_counters.value + excluded.value
     RETURNING value`,
    [workspaceId, name, count],
  )
  return toNumber(row!['value'])
}

export function createSqlChangeStore(db: SqlDb): ChangeStore {
  return {
    async append(change) {
      if (!db.inTransaction) return db.transaction((tx) => createSqlChangeStore(tx).append(change))
      const seq = await reserveCounter(db, change.workspaceId, 'changes')
      await db.run(
        `INSERT INTO workspace_changes (workspace_id, seq, kind, entity_type, entity_id, action, actor_id, actor_name, at, commit_id, summary)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          change.workspaceId,
          seq,
          change.kind,
          change.entityType,
          change.entityId,
          change.action,
          change.actorId,
          change.actorName,
          change.at,
          change.commitId ?? null,
          change.summary,
        ],
      )
      return { ...change, seq }
    },
    async since(workspaceId, afterSeq, limit) {
      const rows = await db.all<Row>('SELECT * FROM workspace_changes WHERE workspace_id = ? AND seq > ? ORDER BY seq LIMIT ?', [
        workspaceId,
        afterSeq,
        limit,
      ])
      return rows.map(changeOf)
    },
    async latestSeq(workspaceId) {
      const r = await db.get<Row>("SELECT value FROM workspace_counters WHERE workspace_id = ? AND name = 'changes'", [workspaceId])
      return r ? toNumber(r['value']) : 0
    },
  }
}
